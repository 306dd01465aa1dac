"""components/layers/observability/alerts.py: the alert rules built one group at a time (slurm, gpu, platform) and
assembled into the PrometheusRule's spec."""

from __future__ import annotations

from components.layers.observability.alerts import (
    RuleSettings,
    alert_rules,
    gpu_alerts,
    platform_alerts,
    slurm_alerts,
)


def _names(rules: list[dict[str, object]]) -> list[object]:
    return [rule["alert"] for rule in rules]


def test_slurmdbd_is_watched_only_with_accounting() -> None:
    assert "SlurmdbdDown" in _names(slurm_alerts(RuleSettings()))
    assert "SlurmdbdDown" not in _names(slurm_alerts(RuleSettings(slurm_accounting=None)))


def test_the_slurm_rules_name_the_settings() -> None:
    rules = {r["alert"]: r for r in slurm_alerts(RuleSettings(slurm_namespace="hpc", nodes_unavailable_ratio=0.25))}
    assert rules["SlurmNodesUnavailable"]["expr"].endswith("> 0.25")
    assert "25%" in rules["SlurmNodesUnavailable"]["annotations"]["description"]
    assert 'namespace="hpc"' in rules["SlurmctldDown"]["expr"]


def test_gpu_and_platform_groups_use_their_settings() -> None:
    gpu = {r["alert"]: r for r in gpu_alerts(RuleSettings(slurm_namespace="hpc"))}
    assert 'namespace="hpc"' in gpu["GpuActiveCheckFailed"]["expr"]
    platform = {r["alert"]: r for r in platform_alerts(RuleSettings(backup_max_age_hours=5, argocd_namespace="cd"))}
    assert "> 5 * 3600" in platform["BackupTooOld"]["expr"]
    assert 'namespace="cd"' in platform["ArgoCdAppOutOfSyncOrDegraded"]["expr"]


def test_the_gpu_group_only_where_gpus_are_scraped_and_groups_in_order() -> None:
    without = alert_rules(RuleSettings(gpus=False))["groups"]
    assert [g["name"] for g in without] == ["hpcforge.slurm", "hpcforge.platform"]
    with_gpus = alert_rules(RuleSettings(gpus=True))["groups"]
    assert [g["name"] for g in with_gpus] == ["hpcforge.slurm", "hpcforge.gpu", "hpcforge.platform"]
    assert with_gpus[1]["rules"] == gpu_alerts(RuleSettings(gpus=True))


def test_every_rule_has_a_severity_and_a_summary() -> None:
    settings = RuleSettings(gpus=True)
    for rule in [*slurm_alerts(settings), *gpu_alerts(settings), *platform_alerts(settings)]:
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]
