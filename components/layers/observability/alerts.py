"""Prometheus alert rules and the Alertmanager configuration, from typed config (pure functions).

Metric names are those the configured exporters expose:
- slurmctld's own OpenMetrics endpoints (Slurm 25.11+, `MetricsType=metrics/openmetrics`, which the
  Slinky Controller sets with `spec.metrics.enabled`): `slurm_nodes`, `slurm_nodes_drain`,
  `slurm_nodes_down`, `slurm_slurmdbd_queue_size` ... (SchedMD/slurm
  src/plugins/metrics/openmetrics/openmetrics.c, `ADD_METRIC(... nodes_drain ...)` etc.); the
  Controller's ServiceMonitor scrapes the `slurm-controller` service (slurm-operator 1.2.1
  internal/builder/controllerbuilder/controller_servicemonitor.go), so `job="slurm-controller"`;
- kube-state-metrics (in kube-prometheus-stack): `kube_statefulset_status_replicas_ready`,
  `kube_cronjob_status_last_successful_time`, `kube_cronjob_next_schedule_time`, `kube_job_created`, `kube_job_owner`,
  `kube_job_failed`;
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

from ..slurm.face import ACTIVE_CHECK_CRONJOB_PREFIX, ACTIVE_CHECK_STARTING_DEADLINE_SECONDS
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


ACTIVE_CHECK_CRONJOBS = f"{ACTIVE_CHECK_CRONJOB_PREFIX}.+"
"""The CronJobs of the active GPU checks."""


def active_check_jobs(namespace: str | None) -> str:
    """Each Job of an active check's CronJob: its creation time, with the CronJob as `owner_name` (KSM v2.20.0);
    `namespace` None: in any namespace."""
    where = f'namespace="{namespace}"' if namespace else ""
    created = f"kube_job_created{{{where}}}" if where else "kube_job_created"
    return (
        f"{created} * on (namespace, job_name) group_left (owner_name)"
        f' kube_job_owner{{{where + ", " if where else ""}owner_kind="CronJob", owner_name=~"{ACTIVE_CHECK_CRONJOBS}"}}'
    )


def active_check_last_run_failed(namespace: str | None) -> str:
    """The newest Job of each active check's CronJob, where that Job failed (its Failed condition is true): what
    GpuActiveCheckFailed and the GPU dashboard show. A check whose only run failed is caught too."""
    jobs = active_check_jobs(namespace)
    where = f'namespace="{namespace}", ' if namespace else ""
    return (
        f"({jobs}) == on (namespace, owner_name) group_left () max by (namespace, owner_name) ({jobs})"
        f' and on (namespace, job_name) (kube_job_failed{{{where}condition="true"}} == 1)'
    )


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
        # The scheduled active checks (components/layers/slurm/active_checks.py), one CronJob each. What
        # kube-state-metrics v2.20.0 (kube-prometheus-stack 88.5.3 pins chart kube-state-metrics 8.4.0, appVersion
        # 2.20.0) exports for them (internal/store/job.go, cronjob.go): `kube_cronjob_status_last_successful_time`
        # only once a run has succeeded (a check that never passed has none), so the alerts read the Jobs instead:
        # `kube_job_created` (each Job), `kube_job_owner` (its CronJob), `kube_job_failed{condition="true"}` (only
        # for a Job with the Failed condition) and the CronJob's `kube_cronjob_next_schedule_time`.
        _alert(
            "GpuActiveCheckFailed",
            active_check_last_run_failed(s.slurm_namespace),
            "5m",
            "warning",
            "A scheduled GPU check failed",
            "The last run of {{ $labels.namespace }}/{{ $labels.owner_name }} (Job {{ $labels.job_name }}) failed: a"
            " node failed the check or could not be judged (kubectl -n {{ $labels.namespace }} logs"
            " job/{{ $labels.job_name }} names each); with action: drain, a failing node is drained with the reason"
            " 'active-check <name>: ...' (sinfo -R) and resumed by the check's next passing run.",
        ),
        _alert(
            "GpuActiveCheckMissed",
            f'time() - kube_cronjob_next_schedule_time{{namespace="{s.slurm_namespace}", cronjob=~"{ACTIVE_CHECK_CRONJOBS}"}}'
            f" > {ACTIVE_CHECK_STARTING_DEADLINE_SECONDS}",
            "5m",
            "warning",
            "A scheduled GPU check did not run",
            "{{ $labels.namespace }}/{{ $labels.cronjob }} has not started the run it was due to start over an hour"
            " ago (its startingDeadlineSeconds): a previous run still running (concurrencyPolicy Forbid), or the"
            " CronJob controller could not create the Job (kubectl -n {{ $labels.namespace }} describe cronjob"
            " {{ $labels.cronjob }}).",
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
