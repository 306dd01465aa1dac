"""What the GPU layer publishes to the other layers (they import this module and the GPU config, nothing else of the
layer): the names of the GPU metrics that dcgm-exporter collects, as hpcforge configures it, and where a node's DCGM
host engine answers."""

from __future__ import annotations

from .dcgm_metrics import DCGM_METRICS
from .objects import DCGM_PORT, DCGM_SERVICE, NAMESPACE

GPU_OPERATOR_NAMESPACE = NAMESPACE
DCGM_HOSTENGINE_PORT = DCGM_PORT
DCGM_HOSTENGINE = f"{DCGM_SERVICE}.{NAMESPACE}.svc"
"""The DCGM host engine of the node a pod runs on, as `dcgmi --host` takes it (port 5555, dcgmi's default): the
operator's Service nvidia-dcgm sends a client's connections to the endpoint on the client's own node
(`internalTrafficPolicy: Local`, components/layers/gpu/objects.py DCGM_SERVICE)."""


def metric_names() -> frozenset[str]:
    """The metric families the configured dcgm-exporter exposes (label-type fields are labels, not metrics)."""
    return frozenset(m.field for m in DCGM_METRICS if m.type != "label")
