"""Tier 4 (real programs): the rendered alert rules and Alertmanager config loaded into Debian's
promtool and amtool-free checks: `promtool check rules` on every rendered PrometheusRule, and
`promtool test rules` with input series under which each alert fires, and under which none does."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.layers.gpu.dcgm_metrics import GPU_LABELS
from components.layers.observability.alerts import RuleSettings, alert_rules, alertmanager_config, rules_file
from components.layers.observability.config import AlertReceiver
from tests.helpers import require_binaries

pytestmark = [pytest.mark.real_daemon]

SETTINGS = RuleSettings(gpus=True, nodes_unavailable_ratio=0.1, backup_max_age_hours=26)


def dcgm_labels(gpu: str, node: str) -> dict[str, str]:
    """The labels dcgm-exporter 4.6.0-4.8.3 puts on a whole GPU's metric in Kubernetes mode (dcgm_metrics.GPU_LABELS,
    from render_metrics.go `metricLabels`; `hostname` is the node's name; no MIG labels on a whole GPU)."""
    labels = {
        "gpu": gpu,
        "UUID": f"GPU-0000000{gpu}-1111-2222-3333-444444444444",
        "pci_bus_id": f"00000000:{0x18 + int(gpu):02X}:00.0",
        "device": f"nvidia{gpu}",
        "modelName": "NVIDIA H100 80GB HBM3",
        "hostname": node,
        "DCGM_FI_DRIVER_VERSION": "590.48.01",
    }
    assert set(labels) == GPU_LABELS - {"GPU_I_PROFILE", "GPU_I_ID"}
    return labels


def dcgm(metric: str, gpu: str, node: str, **extra: str) -> str:
    labels = {**dcgm_labels(gpu, node), **extra}
    return metric + "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def xid_total(gpu: str, node: str, xid: str) -> str:
    """DCGM_EXP_XID_ERRORS_TOTAL of one GPU and XID (xid_total_collector.go: the GPU's labels and `xid`)."""
    return dcgm("DCGM_EXP_XID_ERRORS_TOTAL", gpu, node, xid=xid)


def ksm_job(cronjob: str, minute: int, *, failed_at: int | None = None, until: int = 2000) -> list[dict[str, str]]:
    """The series kube-state-metrics v2.20.0 exports for a CronJob's Job scheduled at `minute` (named, as the CronJob
    controller names it, `<cronjob>-<scheduled minute>`), from then until `until`: `kube_job_created` (its creation
    time), `kube_job_owner` (the CronJob), and, once it failed at `failed_at`, `kube_job_failed` for each condition
    (internal/store/job.go: only a Job with a Failed condition has them; `condition="true"` is 1)."""
    job = f"{cronjob}-{minute}"
    labels = f'namespace="slurm", job_name="{job}"'
    present = until - minute
    series = [
        {"series": f"kube_job_created{{{labels}}}", "values": f"_x{minute} {minute * 60}x{present}"},
        {
            "series": f'kube_job_owner{{{labels}, owner_kind="CronJob", owner_name="{cronjob}", owner_is_controller="true"}}',
            "values": f"_x{minute} 1x{present}",
        },
    ]
    if failed_at is not None:
        for condition, value in (("true", 1), ("false", 0), ("unknown", 0)):
            series.append(
                {
                    "series": f'kube_job_failed{{{labels}, condition="{condition}"}}',
                    "values": f"_x{failed_at} {value}x{until - failed_at}",
                }
            )
    return series


# Input series (promtool's expanding notation) under which each alert fires, and what it must say.
FIRING: dict[str, tuple[list[dict[str, str]], str, dict[str, str]]] = {
    # a check's first run, scheduled at 3h, failed at 3h10m: kube-state-metrics has no last_successful_time for it
    "GpuActiveCheckFailed": (
        ksm_job("gpu-check-ib", 180, failed_at=190),
        "3h30m",
        {"namespace": "slurm", "owner_name": "gpu-check-ib", "job_name": "gpu-check-ib-180"},
    ),
    # due at 3h and never started: 1 hour (startingDeadlineSeconds) and 5 minutes later
    "GpuActiveCheckMissed": (
        [{"series": 'kube_cronjob_next_schedule_time{namespace="slurm", cronjob="gpu-check-ib"}', "values": "10800x300"}],
        "4h10m",
        {"namespace": "slurm", "cronjob": "gpu-check-ib"},
    ),
    "SlurmNodesUnavailable": (
        [
            {"series": "slurm_nodes", "values": "10x30"},
            {"series": "slurm_nodes_drain", "values": "1x30"},
            {"series": "slurm_nodes_down", "values": "1x30"},
        ],
        "20m",
        {},
    ),
    "SlurmctldDown": (
        [{"series": 'up{namespace="slurm", job="slurm-controller", instance="a"}', "values": "0x30"}],
        "10m",
        {"namespace": "slurm", "job": "slurm-controller", "instance": "a"},
    ),
    "SlurmdbdDown": (
        [
            {
                "series": 'kube_statefulset_status_replicas_ready{namespace="slurm", statefulset="slurm-accounting"}',
                "values": "0x30",
            }
        ],
        "15m",
        {"namespace": "slurm", "statefulset": "slurm-accounting"},
    ),
    "GpuXidError": (
        # The first XID 79 of GPU 3 since the exporter started: its series appears at 2m.
        [{"series": xid_total("3", "gpu-a100-0", "79"), "values": "_ _ 1 1"}],
        "3m",
        {**dcgm_labels("3", "gpu-a100-0"), "xid": "79"},
    ),
    "GpuEccDoubleBitError": (
        [{"series": dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "0", "gpu-h100-1"), "values": "0 0 0 2 2"}],
        "4m",
        dcgm_labels("0", "gpu-h100-1"),
    ),
    "GpuRowRemapFailure": (
        [{"series": dcgm("DCGM_FI_DEV_ROW_REMAP_FAILURE", "5", "gpu-h100-2"), "values": "0 0 1 1"}],
        "3m",
        dcgm_labels("5", "gpu-h100-2"),
    ),
    "CertificateExpiresSoon": (
        # expires 10 days after the start of the test
        [
            {
                "series": 'certmanager_certificate_expiration_timestamp_seconds{namespace="slurm", name="slurm-ldap-ca"}',
                "values": "864000x120",
            }
        ],
        "90m",
        {"namespace": "slurm", "name": "slurm-ldap-ca"},
    ),
    "ArgoCdAppOutOfSyncOrDegraded": (
        [
            {
                "series": 'argocd_app_info{namespace="argocd", name="traefik", sync_status="OutOfSync", health_status="Healthy"}',
                "values": "1x30",
            }
        ],
        "20m",
        {"namespace": "argocd", "name": "traefik", "sync_status": "OutOfSync", "health_status": "Healthy"},
    ),
    "BackupTooOld": (
        # last success at t=0; 27 hours later the alert holds
        [
            {
                "series": 'kube_cronjob_status_last_successful_time{namespace="database", cronjob="slurm-acct-db-backup"}',
                "values": "0x2000",
            }
        ],
        "27h",
        {"namespace": "database", "cronjob": "slurm-acct-db-backup"},
    ),
    "DirectoryUnreachable": (
        [{"series": 'kube_statefulset_status_replicas_ready{namespace="directory", statefulset="dirsrv"}', "values": "0x30"}],
        "10m",
        {"namespace": "directory", "statefulset": "dirsrv"},
    ),
}

# What the templated descriptions must read at those times (the others are fixed text).
DESCRIPTIONS = {
    "GpuActiveCheckFailed": "The last run of slurm/gpu-check-ib (Job gpu-check-ib-180) failed: a node failed the check"
    " or could not be judged (kubectl -n slurm logs job/gpu-check-ib-180 names each); with action: drain, a failing"
    " node is drained with the reason 'active-check <name>: ...' (sinfo -R) and resumed by the check's next passing"
    " run.",
    "GpuActiveCheckMissed": "slurm/gpu-check-ib has not started the run it was due to start over an hour ago (its"
    " startingDeadlineSeconds): a previous run still running (concurrencyPolicy Forbid), or the CronJob controller"
    " could not create the Job (kubectl -n slurm describe cronjob gpu-check-ib).",
    "SlurmNodesUnavailable": "20% of the Slurm nodes are drained or down (threshold 10%).",
    "GpuXidError": "GPU 3 on gpu-a100-0 reported XID 79.",
    "GpuEccDoubleBitError": "GPU 0 on gpu-h100-1 had double-bit ECC errors: drain the node.",
    "GpuRowRemapFailure": "GPU 5 on gpu-h100-2 could not remap a memory row: replace the GPU.",
    "CertificateExpiresSoon": "Certificate slurm/slurm-ldap-ca expires in 9d 22h 30m 0s.",
    "ArgoCdAppOutOfSyncOrDegraded": "Application traefik is OutOfSync / Healthy.",
    "BackupTooOld": "The last successful run of database/slurm-acct-db-backup is 1d 3h 0m 0s old.",
}

# A healthy site: the same series with good values; no alert may fire at any of these times.
HEALTHY = [
    # a check that runs daily at 3h and passes in 10 minutes (its Jobs: no Failed condition, so no kube_job_failed)
    *ksm_job("gpu-check-ib", 180),
    *ksm_job("gpu-check-ib", 1620),
    {
        "series": 'kube_cronjob_next_schedule_time{namespace="slurm", cronjob="gpu-check-ib"}',
        "values": "10800x180 97200x1440 183600x400",
    },
    {"series": "slurm_nodes", "values": "10x2000"},
    {"series": "slurm_nodes_drain", "values": "1x2000"},
    {"series": "slurm_nodes_down", "values": "0x2000"},
    {"series": "slurm_slurmdbd_queue_size", "values": "0x2000"},
    {"series": 'up{namespace="slurm", job="slurm-controller", instance="a"}', "values": "1x2000"},
    {"series": 'kube_statefulset_status_replicas_ready{namespace="slurm", statefulset="slurm-accounting"}', "values": "1x2000"},
    # one XID 13 (an application's fault) at the start, none since: the old last-XID gauge would still say 13
    {"series": xid_total("3", "gpu-a100-0", "13"), "values": "1x2000"},
    {"series": dcgm("DCGM_FI_DEV_XID_ERRORS", "3", "gpu-a100-0"), "values": "13x2000"},
    {"series": dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "0", "gpu-h100-1"), "values": "5x2000"},
    {"series": dcgm("DCGM_FI_DEV_ROW_REMAP_FAILURE", "5", "gpu-h100-2"), "values": "0x2000"},
    {
        "series": 'certmanager_certificate_expiration_timestamp_seconds{namespace="slurm", name="slurm-ldap-ca"}',
        "values": "9000000x2000",
    },
    {
        "series": 'argocd_app_info{namespace="argocd", name="traefik", sync_status="Synced", health_status="Healthy"}',
        "values": "1x2000",
    },
    # a backup every 24 hours (the timestamp steps up each day)
    {
        "series": 'kube_cronjob_status_last_successful_time{namespace="database", cronjob="slurm-acct-db-backup"}',
        "values": "0x479 86400x480 172800x480 259200x480",
    },
    {"series": 'kube_statefulset_status_replicas_ready{namespace="directory", statefulset="dirsrv"}', "values": "1x2000"},
]


def promtool() -> str:
    return require_binaries("promtool")["promtool"]


def alert_names() -> list[str]:
    return [rule["alert"] for group in alert_rules(SETTINGS)["groups"] for rule in group["rules"]]


def run_promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False)


def test_promtool_accepts_the_rendered_rules(tmp_path: Path) -> None:
    for gpus in (True, False):
        path = tmp_path / f"rules-{gpus}.yaml"
        path.write_text(rules_file(RuleSettings(gpus=gpus)))
        result = run_promtool("check", "rules", str(path), cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout + result.stderr


def test_every_alert_has_a_firing_case() -> None:
    assert sorted(FIRING) == sorted(alert_names())


def test_no_gpu_alerts_without_gpus() -> None:
    names = [rule["alert"] for group in alert_rules(RuleSettings(gpus=False))["groups"] for rule in group["rules"]]
    assert names and not [name for name in names if name.startswith("Gpu")]


def _unit_test(tmp_path: Path, tests: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "rules.yaml").write_text(rules_file(SETTINGS))
    (tmp_path / "tests.yaml").write_text(
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}, sort_keys=False)
    )
    return run_promtool("test", "rules", "tests.yaml", cwd=tmp_path)


def test_each_alert_fires_under_its_failure(tmp_path: Path) -> None:
    rules = {rule["alert"]: rule for group in alert_rules(SETTINGS)["groups"] for rule in group["rules"]}
    tests = []
    for name, (series, at, labels) in FIRING.items():
        rule = rules[name]
        tests.append(
            {
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [
                    {
                        "eval_time": at,
                        "alertname": name,
                        "exp_alerts": [
                            {
                                "exp_labels": {**labels, "severity": rule["labels"]["severity"]},
                                "exp_annotations": {
                                    "summary": rule["annotations"]["summary"],
                                    "description": DESCRIPTIONS.get(name, rule["annotations"]["description"]),
                                },
                            }
                        ],
                    }
                ],
            }
        )
    result = _unit_test(tmp_path, tests)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_alert_fires_on_a_healthy_site(tmp_path: Path) -> None:
    checks = [
        {"eval_time": at, "alertname": name, "exp_alerts": []} for name in alert_names() for at in ("20m", "3h", "27h", "30h")
    ]
    result = _unit_test(tmp_path, [{"interval": "1m", "input_series": HEALTHY, "alert_rule_test": checks}])
    assert result.returncode == 0, result.stdout + result.stderr


def test_xid_alert_fires_for_each_new_xid_and_not_for_an_old_one(tmp_path: Path) -> None:
    """The counter of a GPU's XID 79 grows at 30m (a second XID 79, which the last-XID gauge cannot show); a new
    XID 48 on another GPU appears at 45m; both are forgotten 10 minutes later."""
    labels = dcgm_labels("3", "gpu-a100-0")
    series = [
        {"series": xid_total("3", "gpu-a100-0", "79"), "values": "1x29 2x60"},
        {"series": xid_total("1", "gpu-a100-0", "48"), "values": "_x44 1x45"},
    ]
    second = {**labels, "xid": "79", "severity": "warning"}

    def said(gpu: str, xid: str) -> dict[str, str]:
        return {"summary": "GPU XID error", "description": f"GPU {gpu} on gpu-a100-0 reported XID {xid}."}

    new = {**dcgm_labels("1", "gpu-a100-0"), "xid": "48", "severity": "warning"}
    checks = [
        {"eval_time": "25m", "alertname": "GpuXidError", "exp_alerts": []},
        {
            "eval_time": "31m",
            "alertname": "GpuXidError",
            "exp_alerts": [{"exp_labels": second, "exp_annotations": said("3", "79")}],
        },
        {"eval_time": "46m", "alertname": "GpuXidError", "exp_alerts": [{"exp_labels": new, "exp_annotations": said("1", "48")}]},
        {"eval_time": "60m", "alertname": "GpuXidError", "exp_alerts": []},
    ]
    result = _unit_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": checks}])
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_silent_check_would_catch_a_firing_alert(tmp_path: Path) -> None:
    """The silent test bites: the healthy series with the directory down fails it."""
    broken = [s for s in HEALTHY if "dirsrv" not in s["series"]]
    broken.append(
        {"series": 'kube_statefulset_status_replicas_ready{namespace="directory", statefulset="dirsrv"}', "values": "0x2000"}
    )
    checks = [{"eval_time": "20m", "alertname": "DirectoryUnreachable", "exp_alerts": []}]
    result = _unit_test(tmp_path, [{"interval": "1m", "input_series": broken, "alert_rule_test": checks}])
    assert result.returncode != 0


def test_alertmanager_config_routes_each_receiver_its_severities(tmp_path: Path) -> None:
    receivers = (
        AlertReceiver.model_validate({"name": "ops", "webhookUrl": "https://hooks.example.org/T0/B0/x", "slackChannel": "#ops"}),
        AlertReceiver.model_validate(
            {
                "name": "pager",
                "emailTo": "oncall@example.org",
                "emailFrom": "am@example.org",
                "smarthost": "smtp.example.org:587",
                "severities": ["critical"],
            }
        ),
    )
    config = yaml.safe_load(alertmanager_config(receivers))
    assert [r["name"] for r in config["receivers"]] == ["null", "ops", "pager"]
    assert config["route"]["routes"][1] == {"receiver": "pager", "matchers": ['severity=~"critical"'], "continue": True}
    assert config["receivers"][1]["slack_configs"][0]["api_url"] == "https://hooks.example.org/T0/B0/x"
