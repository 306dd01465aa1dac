"""The metrics dcgm-exporter collects, and the labels it puts on them (pure).

The GPU Operator runs dcgm-exporter with `DCGM_EXPORTER_COLLECTORS=/etc/dcgm-exporter/dcp-metrics-included.csv`
unless `dcgmExporter.config.name` names a ConfigMap (gpu-operator v26.7.0 assets/state-dcgm-exporter/
0800_daemonset.yaml; controllers/object_controls.go mounts the ConfigMap's `dcgm-metrics.csv` and points
`DCGM_EXPORTER_COLLECTORS` at it). That image default comments out the ECC counters (dcgm-exporter etc/
dcp-metrics-included.csv: `# DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter, ...`), so an alert on them never fires. hpcforge
therefore gives dcgm-exporter its own list, `DCGM_METRICS`: what the alerts and dashboards query is, by construction,
what is collected.

The file's format is dcgm-exporter's (internal/pkg/counters/counter_config.go `ReadCSVFile`/`ExtractCounters`): Go's
encoding/csv with `#` comments, three fields per record (DCGM field name, Prometheus type, help), each trimmed of
spaces; the type one of `promMetricType` (gauge, counter, histogram, summary, label; `label` makes the value a label
of the other metrics). A comma in a help text would make a fourth field, and the exporter would refuse the file.

The names are DCGM field names (dcgm_fields.h, `DCGM_FI_*`); every one below is listed, enabled or commented out,
in dcgm-exporter's etc/dcp-metrics-included.csv or etc/default-counters.csv. `DCGM_EXP_XID_ERRORS_TOTAL` is the
exporter's own counter (4.6.0-4.8.3 internal/pkg/collector/xid_total_collector.go: XIDs counted from DCGM's history
since the exporter started, one series per GPU and `xid`; commented out in its default CSV). The XID alert uses it
rather than `DCGM_FI_DEV_XID_ERRORS`, which holds the last XID until the driver or DCGM restarts (NVIDIA/DCGM#277,
NVIDIA/dcgm-exporter#500): an alert on that gauge fires for ever after one XID, and misses the same XID again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PromType = Literal["gauge", "counter", "label"]


@dataclass(frozen=True)
class DcgmMetric:
    field: str
    type: PromType
    help: str


DCGM_METRICS: tuple[DcgmMetric, ...] = (
    # clocks, temperature, power
    DcgmMetric("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock (MHz)."),
    DcgmMetric("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock (MHz)."),
    DcgmMetric("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (C)."),
    DcgmMetric("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (C)."),
    DcgmMetric("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (W)."),
    DcgmMetric("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Energy consumed since boot (mJ)."),
    # utilization and memory
    DcgmMetric("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (%)."),
    DcgmMetric("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (%)."),
    DcgmMetric("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (MiB)."),
    DcgmMetric("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (MiB)."),
    DcgmMetric("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    DcgmMetric("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor pipe is active."),
    DcgmMetric("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active."),
    # interconnect
    DcgmMetric("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "PCIe retries."),
    DcgmMetric("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "PCIe bytes transmitted per second."),
    DcgmMetric("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "PCIe bytes received per second."),
    DcgmMetric("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "NVLink bandwidth counter (all lanes)."),
    # faults: what the alerts watch
    DcgmMetric("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error."),
    DcgmMetric("DCGM_EXP_XID_ERRORS_TOTAL", "counter", "XID errors since the exporter started (label xid)."),
    DcgmMetric("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Single-bit volatile ECC errors."),
    DcgmMetric("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Double-bit volatile ECC errors."),
    DcgmMetric("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Rows remapped for uncorrectable errors."),
    DcgmMetric("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Rows remapped for correctable errors."),
    DcgmMetric("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether a row remapping has failed."),
    # a label of every metric
    DcgmMetric("DCGM_FI_DRIVER_VERSION", "label", "Driver version."),
)

METRICS_CONFIG_MAP = "hpcforge-dcgm-metrics"
"""The ConfigMap (in the operator's namespace) that the chart creates from `dcgmExporter.config.data`."""

GPU_LABELS: frozenset[str] = frozenset(
    {"gpu", "UUID", "pci_bus_id", "device", "modelName", "GPU_I_PROFILE", "GPU_I_ID", "hostname"}
) | {m.field for m in DCGM_METRICS if m.type == "label"}
"""The labels dcgm-exporter 4.6.0-4.8.3 puts on a GPU metric: internal/pkg/rendermetrics/render_metrics.go
`metricLabels` (the release commit 7ad5832 of NVIDIA/dcgm-exporter#711): gpu, the UUID label, pci_bus_id, device,
modelName, GPU_I_PROFILE/GPU_I_ID on MIG devices, and `hostname` (the node's name: NODE_NAME in Kubernetes mode,
internal/pkg/hostname/hostname.go). It was `Hostname` before NVIDIA/dcgm-exporter#655 (merged 2026-05-12, first
released in 4.6.0-4.8.3): a query or alert that still says `Hostname` gets nothing. The `label`-type fields of
DCGM_METRICS (DCGM_FI_DRIVER_VERSION) are labels too."""

KUBERNETES_LABELS: frozenset[str] = frozenset({"pod", "namespace", "container"})
"""Added in Kubernetes mode (`DCGM_EXPORTER_KUBERNETES=true`, which the operator sets) to the GPUs a pod holds
(internal/pkg/transformation/kubernetes.go)."""

XID_LABEL = "xid"
"""The XID of a `DCGM_EXP_XID_ERRORS_TOTAL` series (xid_total_collector.go `GetMetrics`)."""

HPC_JOB_LABEL = "hpc_job"
"""Added with HPC job mapping (`--hpc-job-mapping-dir`/`DCGM_HPC_JOB_MAPPING_DIR`) to a GPU listed in a mapping
file, one series per job (internal/pkg/transformation/hpc.go, `hpcJobAttribute`)."""


def dcgm_metrics_csv(metrics: tuple[DcgmMetric, ...] = DCGM_METRICS) -> str:
    """The `dcgm-metrics.csv` of dcgm-exporter; refuses a field that would not be one CSV field of the format."""
    lines = [
        "# hpcforge's dcgm-exporter metrics (components/layers/gpu/dcgm_metrics.py)",
        "# DCGM field, Prometheus type, help",
    ]
    for metric in metrics:
        for value in (metric.field, metric.type, metric.help):
            if not value or any(c in value for c in ',"#\n\r') or value != value.strip():
                raise ValueError(f"dcgm-exporter metric {metric.field!r}: {value!r} cannot be one field of the CSV")
        lines.append(f"{metric.field}, {metric.type}, {metric.help}")
    return "\n".join(lines) + "\n"


__all__ = [
    "DCGM_METRICS",
    "GPU_LABELS",
    "HPC_JOB_LABEL",
    "KUBERNETES_LABELS",
    "METRICS_CONFIG_MAP",
    "XID_LABEL",
    "DcgmMetric",
    "dcgm_metrics_csv",
]
