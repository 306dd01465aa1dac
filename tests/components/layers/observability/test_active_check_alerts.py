"""The active GPU checks' alerts through promtool, on series shaped as kube-state-metrics v2.20.0 exports them (issue 35
item 6): GpuActiveCheckFailed follows each check's newest Job, whether or not any run ever succeeded (KSM exports
`kube_cronjob_status_last_successful_time` only after a first success), and GpuActiveCheckMissed a run the CronJob
did not start. The first-run failure is in test_real_alerts.py's FIRING."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.layers.observability.alerts import alert_rules
from tests.components.layers.observability.test_real_alerts import SETTINGS, _unit_test, ksm_job

pytestmark = [pytest.mark.real_daemon]

FAILED = {"namespace": "slurm", "owner_name": "gpu-check-dcgm", "severity": "warning"}


def _said(alert: str, labels: dict[str, str]) -> dict[str, str]:
    """The rule's annotations with its `{{ $labels.x }}` filled in from `labels`."""
    rule = next(r for group in alert_rules(SETTINGS)["groups"] for r in group["rules"] if r["alert"] == alert)
    said = {}
    for key, template in rule["annotations"].items():
        text = template
        for name, value in labels.items():
            text = text.replace("{{ $labels." + name + " }}", value)
        said[key] = text
    return said


def _expect(at: str, alert: str, labels: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "eval_time": at,
        "alertname": alert,
        "exp_alerts": [{"exp_labels": label, "exp_annotations": _said(alert, label)} for label in labels],
    }


def _passes(tmp_path: Path, series: list[dict[str, str]], checks: list[dict[str, Any]]) -> None:
    result = _unit_test(tmp_path, [{"interval": "1m", "input_series": series, "alert_rule_test": checks}])
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_failed_run_after_passes_fires_and_a_later_pass_clears_it_with_the_failed_job_still_listed(
    tmp_path: Path,
) -> None:
    series = [
        *ksm_job("gpu-check-dcgm", 0, until=600),  # passed
        *ksm_job("gpu-check-dcgm", 120, failed_at=150, until=600),  # failed, kept in the failed-jobs history
        *ksm_job("gpu-check-dcgm", 300, until=600),  # passed
    ]
    failed = {**FAILED, "job_name": "gpu-check-dcgm-120"}
    _passes(
        tmp_path,
        series,
        [
            _expect("100m", "GpuActiveCheckFailed", []),
            _expect("140m", "GpuActiveCheckFailed", []),  # running: no Failed condition yet
            _expect("160m", "GpuActiveCheckFailed", [failed]),
            _expect("299m", "GpuActiveCheckFailed", [failed]),
            _expect("310m", "GpuActiveCheckFailed", []),
        ],
    )


def test_each_check_is_judged_by_its_own_newest_job(tmp_path: Path) -> None:
    series = [
        *ksm_job("gpu-check-dcgm", 0, failed_at=20, until=200),
        *ksm_job("gpu-check-ib", 0, until=200),
        *ksm_job("gpu-check-ib", 60, failed_at=70, until=200),
        *ksm_job("gpu-check-ib", 120, until=200),
    ]
    _passes(
        tmp_path,
        series,
        [
            _expect(
                "100m",
                "GpuActiveCheckFailed",
                [
                    {**FAILED, "job_name": "gpu-check-dcgm-0"},
                    {**FAILED, "owner_name": "gpu-check-ib", "job_name": "gpu-check-ib-60"},
                ],
            ),
            _expect("150m", "GpuActiveCheckFailed", [{**FAILED, "job_name": "gpu-check-dcgm-0"}]),
        ],
    )


def test_a_job_of_another_cronjob_or_namespace_is_not_a_check(tmp_path: Path) -> None:
    series = [
        *ksm_job("slurm-acct-db-backup", 0, failed_at=10, until=100),
        *[
            {**s, "series": s["series"].replace('namespace="slurm"', 'namespace="other"')}
            for s in ksm_job("gpu-check-ib", 0, failed_at=10, until=100)
        ],
    ]
    _passes(tmp_path, series, [_expect("60m", "GpuActiveCheckFailed", [])])


def test_a_missed_run_fires_after_the_starting_deadline_and_a_suspended_check_does_not(tmp_path: Path) -> None:
    # gpu-check-ib was due at 60m and never started; gpu-check-nccl is suspended (KSM exports no next schedule time).
    series = [{"series": 'kube_cronjob_next_schedule_time{namespace="slurm", cronjob="gpu-check-ib"}', "values": "3600x200"}]
    missed = {"namespace": "slurm", "cronjob": "gpu-check-ib", "severity": "warning"}
    _passes(
        tmp_path,
        series,
        [
            _expect("119m", "GpuActiveCheckMissed", []),  # 59 minutes late: the controller may still start it
            _expect("126m", "GpuActiveCheckMissed", [missed]),
        ],
    )
