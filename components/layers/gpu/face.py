"""What the GPU layer publishes to the other layers (they import this module and the GPU config, nothing else of the
layer): the names of the GPU metrics that dcgm-exporter collects, as hpcforge configures it."""

from __future__ import annotations

from .dcgm_metrics import DCGM_METRICS


def metric_names() -> frozenset[str]:
    """The metric families the configured dcgm-exporter exposes (label-type fields are labels, not metrics)."""
    return frozenset(m.field for m in DCGM_METRICS if m.type != "label")
