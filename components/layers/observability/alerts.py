"""Prometheus alert rules and the Alertmanager configuration, from typed config (pure functions).

Metric names are those the configured exporters expose:
- slurmctld's own OpenMetrics endpoints (Slurm 25.11+, `MetricsType=metrics/openmetrics`, which the
  Slinky Controller sets with `spec.metrics.enabled`): `slurm_nodes`, `slurm_nodes_drain`,
  `slurm_nodes_down`, `slurm_slurmdbd_queue_size` ... (SchedMD/slurm
  src/plugins/metrics/openmetrics/openmetrics.c, `ADD_METRIC(... nodes_drain ...)` etc.); the
  Controller's ServiceMonitor scrapes the `slurm-controller` service (slurm-operator 1.2.1
  internal/builder/controllerbuilder/controller_servicemonitor.go), so `job="slurm-controller"`;
- kube-state-metrics (in kube-prometheus-stack): `kube_statefulset_status_replicas_ready`,
  `kube_cronjob_status_last_successful_time`;
- cert-manager: `certmanager_certificate_expiration_timestamp_seconds`;
- Argo CD's application controller: `argocd_app_info{sync_status, health_status}`;
- NVIDIA dcgm-exporter 4.6.0-4.8.3: `DCGM_EXP_XID_ERRORS_TOTAL` (per GPU and `xid`), `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`,
  `DCGM_FI_DEV_ROW_REMAP_FAILURE`, with the labels `gpu` and `hostname` (components/layers/gpu/dcgm_metrics.py: the
  fields are collected because hpcforge configures them; the label was `Hostname` before that release).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from .config import AlertReceiver


@dataclass(frozen=True)
class RuleSettings:
    slurm_namespace: str = "slurm"
    slurm_controller_job: str = "slurm-controller"
    slurm_accounting: str | None = "slurm-accounting"
    """StatefulSet of slurmdbd (None: no accounting)."""
    gpus: bool = False
    nodes_unavailable_ratio: float = 0.1
    backup_max_age_hours: int = 26
    directory_namespace: str = "directory"
    directory_statefulset: str = "dirsrv"
    argocd_namespace: str = "argocd"


def _alert(name: str, expr: str, duration: str, severity: str, summary: str, description: str) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": duration,
        "labels": {"severity": severity},
        "annotations": {"summary": summary, "description": description},
    }


def slurm_alerts(s: RuleSettings) -> list[dict[str, Any]]:
    """The group `hpcforge.slurm`: nodes unavailable, slurmctld down, slurmdbd down (with accounting)."""
    slurm = [
        _alert(
            "SlurmNodesUnavailable",
            f"(slurm_nodes_drain + slurm_nodes_down) / clamp_min(slurm_nodes, 1) > {s.nodes_unavailable_ratio}",
            "15m",
            "warning",
            "Many Slurm nodes are drained or down",
            "{{ $value | humanizePercentage }} of the Slurm nodes are drained or down "
            f"(threshold {s.nodes_unavailable_ratio:.0%}).",
        ),
        _alert(
            "SlurmctldDown",
            f'up{{namespace="{s.slurm_namespace}", job="{s.slurm_controller_job}"}} == 0 '
            f'or absent(up{{namespace="{s.slurm_namespace}", job="{s.slurm_controller_job}"}})',
            "5m",
            "critical",
            "slurmctld is unreachable",
            "Prometheus cannot scrape slurmctld's metrics: the controller is down or unreachable; no job can start.",
        ),
    ]
    if s.slurm_accounting is not None:
        slurm.append(
            _alert(
                "SlurmdbdDown",
                f'kube_statefulset_status_replicas_ready{{namespace="{s.slurm_namespace}", statefulset="{s.slurm_accounting}"}} < 1 '
                "or slurm_slurmdbd_queue_size > 100",
                "10m",
                "critical",
                "slurmdbd is unreachable",
                "slurmdbd has no ready pod, or slurmctld queues messages for it: accounting records and limits are stale.",
            )
        )
    return slurm


def gpu_alerts(s: RuleSettings) -> list[dict[str, Any]]:
    """The group `hpcforge.gpu` (where dcgm-exporter is scraped): XIDs, ECC, row remapping, failed active checks."""
    return [
        # A new XID in the last 10 minutes: the counter grew, or its series (one per GPU and XID)
        # appeared (increase() cannot see a series' first sample). Not the sticky last-XID gauge
        # (components/layers/gpu/dcgm_metrics.py).
        _alert(
            "GpuXidError",
            "increase(DCGM_EXP_XID_ERRORS_TOTAL[10m]) > 0"
            " or (DCGM_EXP_XID_ERRORS_TOTAL unless DCGM_EXP_XID_ERRORS_TOTAL offset 10m)",
            "0m",
            "warning",
            "GPU XID error",
            "GPU {{ $labels.gpu }} on {{ $labels.hostname }} reported XID {{ $labels.xid }}.",
        ),
        _alert(
            "GpuEccDoubleBitError",
            "increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[10m]) > 0",
            "0m",
            "critical",
            "GPU uncorrectable ECC error",
            "GPU {{ $labels.gpu }} on {{ $labels.hostname }} had double-bit ECC errors: drain the node.",
        ),
        # The scheduled active checks (components/layers/slurm/active_checks.py), one CronJob each: its last
        # scheduled run did not succeed and none is running, i.e. the run ended failed (a node failed the
        # check and was drained, or the run itself broke). Until a later run succeeds.
        _alert(
            "GpuActiveCheckFailed",
            f'(kube_cronjob_status_last_schedule_time{{namespace="{s.slurm_namespace}", cronjob=~"gpu-check-.*"}}'
            f' > kube_cronjob_status_last_successful_time{{namespace="{s.slurm_namespace}", cronjob=~"gpu-check-.*"}})'
            f' and on (namespace, cronjob) (kube_cronjob_status_active{{namespace="{s.slurm_namespace}",'
            ' cronjob=~"gpu-check-.*"} == 0)',
            "5m",
            "warning",
            "A scheduled GPU check failed",
            "The last run of {{ $labels.namespace }}/{{ $labels.cronjob }} failed: the nodes that failed it are"
            " drained with the reason 'active-check <name>: ...' (sinfo -R), and are resumed by the check's next"
            " passing run.",
        ),
        _alert(
            "GpuRowRemapFailure",
            "DCGM_FI_DEV_ROW_REMAP_FAILURE > 0",
            "0m",
            "critical",
            "GPU row remapping failed",
            "GPU {{ $labels.gpu }} on {{ $labels.hostname }} could not remap a memory row: replace the GPU.",
        ),
    ]


def platform_alerts(s: RuleSettings) -> list[dict[str, Any]]:
    """The group `hpcforge.platform`: certificates, Argo CD, backups, the directory."""
    return [
        _alert(
            "CertificateExpiresSoon",
            "certmanager_certificate_expiration_timestamp_seconds - time() < 14 * 86400",
            "1h",
            "warning",
            "Certificate expires within 14 days",
            "Certificate {{ $labels.namespace }}/{{ $labels.name }} expires in {{ $value | humanizeDuration }}.",
        ),
        _alert(
            "ArgoCdAppOutOfSyncOrDegraded",
            f'argocd_app_info{{namespace="{s.argocd_namespace}", sync_status="OutOfSync"}} == 1 '
            f'or argocd_app_info{{namespace="{s.argocd_namespace}", health_status="Degraded"}} == 1',
            "15m",
            "warning",
            "Argo CD application out of sync or degraded",
            "Application {{ $labels.name }} is {{ $labels.sync_status }} / {{ $labels.health_status }}.",
        ),
        _alert(
            "BackupTooOld",
            f'time() - kube_cronjob_status_last_successful_time{{cronjob=~".*backup.*"}} > {s.backup_max_age_hours} * 3600',
            "0m",
            "critical",
            "Backup older than its schedule allows",
            "The last successful run of {{ $labels.namespace }}/{{ $labels.cronjob }} is {{ $value | humanizeDuration }} old.",
        ),
        _alert(
            "DirectoryUnreachable",
            f'kube_statefulset_status_replicas_ready{{namespace="{s.directory_namespace}", '
            f'statefulset="{s.directory_statefulset}"}} < 1',
            "5m",
            "critical",
            "The LDAP directory is unreachable",
            "389ds has no ready pod: logins and job starts of directory users fail.",
        ),
    ]


def alert_rules(settings: RuleSettings) -> dict[str, Any]:
    """The `spec` of the PrometheusRule `hpcforge-site` (groups of alerting rules)."""
    groups: list[dict[str, Any]] = [{"name": "hpcforge.slurm", "rules": slurm_alerts(settings)}]
    if settings.gpus:
        groups.append({"name": "hpcforge.gpu", "rules": gpu_alerts(settings)})
    groups.append({"name": "hpcforge.platform", "rules": platform_alerts(settings)})
    return {"groups": groups}


def rules_file(settings: RuleSettings) -> str:
    """The rules as a Prometheus rule file (what `promtool check rules` reads)."""
    return yaml.safe_dump(alert_rules(settings), sort_keys=False)


def alertmanager_config(receivers: tuple[AlertReceiver, ...]) -> str:
    """alertmanager.yaml: every receiver gets the severities it asked for; with none, alerts stay in the UI.

    The text holds the receivers' secrets: the caller wraps it in a Pulumi secret."""
    config: dict[str, Any] = {
        "route": {
            "receiver": "null",
            "group_by": ["alertname", "namespace"],
            "group_wait": "30s",
            "group_interval": "5m",
            "repeat_interval": "4h",
            "routes": [],
        },
        "receivers": [{"name": "null"}],
    }
    for receiver in receivers:
        entry: dict[str, Any] = {"name": receiver.name}
        if receiver.webhook_url is not None and receiver.slack_channel is not None:
            entry["slack_configs"] = [
                {"api_url": receiver.webhook_url.get_secret_value(), "channel": receiver.slack_channel, "send_resolved": True}
            ]
        elif receiver.webhook_url is not None:
            entry["webhook_configs"] = [{"url": receiver.webhook_url.get_secret_value(), "send_resolved": True}]
        else:
            email: dict[str, Any] = {
                "to": receiver.email_to,
                "from": receiver.email_from,
                "smarthost": receiver.smarthost,
                "send_resolved": True,
            }
            if receiver.auth_username is not None:
                email["auth_username"] = receiver.auth_username
            if receiver.auth_password is not None:
                email["auth_password"] = receiver.auth_password.get_secret_value()
            entry["email_configs"] = [email]
        config["receivers"].append(entry)
        config["route"]["routes"].append(
            {"receiver": receiver.name, "matchers": [f'severity=~"{"|".join(receiver.severities)}"'], "continue": True}
        )
    return yaml.safe_dump(config, sort_keys=False)


__all__ = ["RuleSettings", "alert_rules", "alertmanager_config", "gpu_alerts", "platform_alerts", "rules_file", "slurm_alerts"]
