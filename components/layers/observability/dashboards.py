"""Grafana dashboards as JSON (pure): site overview, Slurm queue and nodes, GPUs per node and job.

Every query names only metrics that a configured exporter exposes (`EXPORTED`, with its source);
`query_metrics` extracts them so the tests can check that.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..gpu.face import metric_names as dcgm_metric_names
from .alerts import active_check_last_run_failed

# What each exporter exposes, of what the dashboards use (names from each exporter's source):
EXPORTED: dict[str, frozenset[str]] = {
    # SchedMD/slurm src/plugins/metrics/openmetrics/openmetrics.c (Slurm 25.11+; ADD_METRIC names, "slurm_" prefix)
    "slurmctld": frozenset(
        {
            "slurm_nodes",
            "slurm_nodes_alloc",
            "slurm_nodes_idle",
            "slurm_nodes_mixed",
            "slurm_nodes_drain",
            "slurm_nodes_down",
            "slurm_jobs_pending",
            "slurm_jobs_running",
            "slurm_jobs_cpus_alloc",
            "slurm_jobs_gpus_alloc",
            "slurm_node_gpus",
            "slurm_node_gpus_alloc",
            "slurm_node_cpus",
            "slurm_node_cpus_alloc",
            "slurm_partition_jobs_pending",
            "slurm_sched_mean_cycle",
            "slurm_slurmdbd_queue_size",
        }
    ),
    # prometheus/node_exporter 1.x collectors (cpu, meminfo, filesystem)
    "node-exporter": frozenset({"node_cpu_seconds_total", "node_memory_MemAvailable_bytes", "node_memory_MemTotal_bytes"}),
    # kubernetes/kube-state-metrics 2.x
    "kube-state-metrics": frozenset(
        {
            "kube_pod_status_ready",
            "kube_statefulset_status_replicas_ready",
            "kube_cronjob_status_last_successful_time",
            "kube_cronjob_status_last_schedule_time",
            "kube_cronjob_status_active",
            "kube_cronjob_next_schedule_time",
            "kube_job_created",
            "kube_job_owner",
            "kube_job_failed",
        }
    ),
    # cert-manager controller metrics
    "cert-manager": frozenset({"certmanager_certificate_expiration_timestamp_seconds"}),
    # Argo CD application controller
    "argocd": frozenset({"argocd_app_info"}),
    # NVIDIA dcgm-exporter: the fields hpcforge configures it to collect (dcgm_metrics.py)
    "dcgm-exporter": dcgm_metric_names(),
    # Prometheus' own per-target series
    "prometheus": frozenset({"up"}),
}

_PROMQL_WORDS = frozenset(
    {"sum", "by", "bool", "cronjob", "rate", "irate", "increase", "avg", "max", "min", "count", "without", "on", "ignoring", "group_left",
     "group_right", "and", "or", "unless", "time", "clamp_min", "topk", "bottomk", "label_replace", "mode", "idle",
     "instance", "node", "partition", "gpu", "hostname", "namespace", "name", "sync_status", "health_status", "hpc_job",
     "job_name", "owner_name"}
)  # fmt: skip


def query_metrics(expr: str) -> set[str]:
    """Metric names in a PromQL expression (identifiers not followed by `(`, outside label matchers and ranges)."""
    text = re.sub(r"\{[^}]*\}", "", expr)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r'"[^"]*"', "", text)
    text = re.sub(r"\boffset\s+[0-9]+[a-z]+", "", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        word = match.group(0)
        after = text[match.end() :].lstrip()
        if after.startswith("(") or word in _PROMQL_WORDS:
            continue
        names.add(word)
    return names


def _panel(index: int, title: str, exprs: list[tuple[str, str]], kind: str = "timeseries") -> dict[str, Any]:
    return {
        "id": index,
        "type": kind,
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": (index - 1) % 2 * 12, "y": (index - 1) // 2 * 8},
        "targets": [{"refId": chr(65 + i), "expr": expr, "legendFormat": legend} for i, (expr, legend) in enumerate(exprs)],
    }


def _dashboard(uid: str, title: str, panels: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "uid": uid,
        "title": title,
        "tags": ["hpcforge"],
        "timezone": "browser",
        "schemaVersion": 39,
        "refresh": "1m",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"}]},
        "panels": panels,
    }


def dashboards(*, gpus: bool) -> dict[str, dict[str, Any]]:
    """File name -> dashboard; the GPU dashboard only where GPUs exist."""
    result = {
        "site-overview.json": _dashboard(
            "hpcforge-site",
            "Site overview",
            [
                _panel(
                    1,
                    "Slurm nodes by state",
                    [
                        ("slurm_nodes_alloc", "allocated"),
                        ("slurm_nodes_idle", "idle"),
                        ("slurm_nodes_drain", "drain"),
                        ("slurm_nodes_down", "down"),
                    ],
                ),
                _panel(2, "Jobs", [("slurm_jobs_running", "running"), ("slurm_jobs_pending", "pending")]),
                _panel(
                    3,
                    "Node CPU busy",
                    [('1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[5m]))', "{{instance}}")],
                ),
                _panel(
                    4, "Node memory available", [("node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes", "{{instance}}")]
                ),
                _panel(
                    5,
                    "Certificates: days left",
                    [("(certmanager_certificate_expiration_timestamp_seconds - time()) / 86400", "{{namespace}}/{{name}}")],
                ),
                _panel(
                    6,
                    "Argo CD apps not synced",
                    [('count by (sync_status) (argocd_app_info{sync_status!="Synced"})', "{{sync_status}}")],
                ),
            ],
        ),
        "slurm.json": _dashboard(
            "hpcforge-slurm",
            "Slurm queue and nodes",
            [
                _panel(1, "Pending jobs by partition", [("slurm_partition_jobs_pending", "{{partition}}")]),
                _panel(2, "Allocated CPUs", [("slurm_jobs_cpus_alloc", "cpus")]),
                _panel(3, "CPUs per node (allocated / total)", [("slurm_node_cpus_alloc / slurm_node_cpus", "{{node}}")]),
                _panel(4, "Scheduler mean cycle", [("slurm_sched_mean_cycle", "mean cycle")]),
                _panel(5, "Messages queued for slurmdbd", [("slurm_slurmdbd_queue_size", "queue")]),
                _panel(6, "Nodes drained or down", [("slurm_nodes_drain + slurm_nodes_down", "unavailable")]),
            ],
        ),
    }
    if gpus:
        result["gpus.json"] = _dashboard(
            "hpcforge-gpus",
            "GPUs per node and job",
            [
                _panel(1, "GPU utilization", [("DCGM_FI_DEV_GPU_UTIL", "{{hostname}} gpu {{gpu}}")]),
                _panel(2, "GPU utilization per Slurm job", [("avg by (hpc_job) (DCGM_FI_DEV_GPU_UTIL)", "job {{hpc_job}}")]),
                _panel(3, "Framebuffer used", [("DCGM_FI_DEV_FB_USED", "{{hostname}} gpu {{gpu}}")]),
                _panel(4, "GPU temperature", [("DCGM_FI_DEV_GPU_TEMP", "{{hostname}} gpu {{gpu}}")]),
                _panel(5, "GPUs allocated by Slurm per node", [("slurm_node_gpus_alloc / slurm_node_gpus", "{{node}}")]),
                _panel(6, "Last XID per GPU", [("DCGM_FI_DEV_XID_ERRORS", "{{hostname}} gpu {{gpu}}")]),
                # The scheduled active checks: 1 while a check's last run failed (GpuActiveCheckFailed), and the hours
                # since each last passed.
                _panel(
                    7,
                    "Active GPU checks: last run failed (1), hours since the last pass",
                    [
                        (f"count by (owner_name) ({active_check_last_run_failed(None)})", "{{owner_name}} failed"),
                        (
                            '(time() - kube_cronjob_status_last_successful_time{cronjob=~"gpu-check-.*"}) / 3600',
                            "{{cronjob}} hours since pass",
                        ),
                    ],
                ),
            ],
        )
    return result


def dashboard_files(*, gpus: bool) -> dict[str, str]:
    return {name: json.dumps(board, indent=1, sort_keys=True) for name, board in dashboards(gpus=gpus).items()}


__all__ = ["EXPORTED", "dashboard_files", "dashboards", "query_metrics"]
