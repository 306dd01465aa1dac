"""Tier 1/2: the observability layer's pure parts and what the program declares for prod and dev
(the promtool proofs of the alert rules are in test_real_alerts.py)."""

from __future__ import annotations

import json
import re

import pytest

from components.layers.observability.alerts import RuleSettings, alert_rules
from components.layers.observability.config import ObservabilityConfig
from components.layers.observability.dashboards import EXPORTED, dashboard_files, query_metrics
from components.layers.observability.objects import SITE_TARGETS, chart_values, pod_monitor_spec
from components.site.loader import ConfigError, load_config
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config, run_stack


@pytest.fixture(scope="module")
def prod_stack() -> RecordedStack:
    return run_stack("prod")


def kinds(stack: RecordedStack, kind: str) -> dict[str, dict[str, object]]:
    return {r.name: r.inputs for r in stack.kubernetes_objects() if r.inputs.get("kind") == kind}


def test_every_dashboard_query_names_only_exported_metrics() -> None:
    exported = set().union(*EXPORTED.values())
    for gpus in (True, False):
        for name, text in dashboard_files(gpus=gpus).items():
            board = json.loads(text)
            for panel in board["panels"]:
                for target in panel["targets"]:
                    unknown = query_metrics(target["expr"]) - exported
                    assert not unknown, f"{name} / {panel['title']}: {sorted(unknown)}"


def test_alert_rules_name_only_exported_metrics() -> None:
    exported = set().union(*EXPORTED.values())
    for group in alert_rules(RuleSettings(gpus=True))["groups"]:
        for rule in group["rules"]:
            assert query_metrics(rule["expr"]) <= exported, rule["alert"]


def test_query_metrics_skips_functions_labels_and_ranges() -> None:
    assert query_metrics('sum by (node) (rate(node_cpu_seconds_total{mode="idle"}[5m])) / slurm_nodes') == {
        "node_cpu_seconds_total",
        "slurm_nodes",
    }


def test_gpu_dashboard_and_monitor_only_with_gpus(prod_stack: RecordedStack) -> None:
    assert "gpus.json" in dashboard_files(gpus=True) and "gpus.json" not in dashboard_files(gpus=False)
    monitors = kinds(prod_stack, "PodMonitor")
    assert "monitoring/podmonitor-dcgm-exporter" in monitors  # prod has GPU nodesets
    dev = run_stack("dev")
    assert not kinds(dev, "PodMonitor")  # dev runs no monitoring


def test_prod_deploys_monitoring_with_rules_and_slurm_metrics(prod_stack: RecordedStack) -> None:
    rules = kinds(prod_stack, "PrometheusRule")["monitoring/prometheusrule-hpcforge-site"]
    names = {rule["alert"] for group in rules["spec"]["groups"] for rule in group["rules"]}  # type: ignore[index]
    assert {"SlurmNodesUnavailable", "SlurmctldDown", "SlurmdbdDown", "GpuXidError", "BackupTooOld"} <= names
    controller = kinds(prod_stack, "Controller")["slurm/controller-slurm"]
    assert controller["spec"]["metrics"] == {"enabled": True, "serviceMonitor": {"enabled": True}}  # type: ignore[index]
    secret = next(
        r for r in prod_stack.kubernetes_objects() if r.name == "monitoring/alertmanager-kube-prometheus-stack-alertmanager"
    )
    assert "hpc-ops@example.org" in json.dumps(secret.inputs)


def test_chart_values_keep_data_and_select_every_monitor() -> None:
    values = chart_values(ObservabilityConfig.model_validate({"retention": "30d", "retentionSize": "45GB"}), storage_class="fast")
    spec = values["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "30d" and spec["retentionSize"] == "45GB"
    assert spec["storageSpec"]["volumeClaimTemplate"]["spec"]["storageClassName"] == "fast"
    assert not spec["serviceMonitorSelectorNilUsesHelmValues"] and not spec["ruleSelectorNilUsesHelmValues"]
    # no hook Jobs: cert-manager issues the webhook certificate, from the site CA rather than a chart-made root
    assert values["prometheusOperator"]["admissionWebhooks"]["certManager"] == {
        "enabled": True,
        "issuerRef": {"name": "hpcforge-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"},
    }
    assert values["alertmanager"]["alertmanagerSpec"]["useExistingSecret"] is True


def test_prod_retains_the_prometheus_and_alertmanager_claims(prod_stack: RecordedStack) -> None:
    # the operator's StatefulSets own these claims, not Pulumi: their retention policy is what protects them
    from tests.offline.admission.test_admission_program import chart_values as deployed_values

    values = deployed_values(prod_stack, "kube-prometheus-stack")
    retain = {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert values["prometheus"]["prometheusSpec"]["persistentVolumeClaimRetentionPolicy"] == retain
    assert values["alertmanager"]["alertmanagerSpec"]["persistentVolumeClaimRetentionPolicy"] == retain


def test_claims_retention_is_left_out_without_protection() -> None:
    values = chart_values(ObservabilityConfig(), storage_class=None, retain_claims=False)
    assert "persistentVolumeClaimRetentionPolicy" not in values["prometheus"]["prometheusSpec"]
    assert "persistentVolumeClaimRetentionPolicy" not in values["alertmanager"]["alertmanagerSpec"]


def test_pod_monitor_selects_its_namespace_and_port() -> None:
    spec = pod_monitor_spec(SITE_TARGETS[0], "30s")
    assert spec["namespaceSelector"] == {"matchNames": ["cert-manager"]}
    assert spec["podMetricsEndpoints"][0]["port"] == "http-metrics"


@pytest.mark.parametrize(
    ("receiver", "message"),
    [
        ({"name": "x"}, "give exactly one of 'webhookUrl' or 'emailTo'"),
        ({"name": "x", "emailTo": "a@b.org"}, "e-mail needs 'smarthost' and 'emailFrom'"),
        ({"name": "x", "webhookUrl": "https://h", "emailTo": "a@b.org"}, "give exactly one"),
    ],
)
def test_bad_receiver_is_refused_naming_the_key(receiver: dict[str, str], message: str) -> None:
    values = config_values("prod")
    values["hpcforge:observability"]["receivers"] = [receiver]
    with pytest.raises(ConfigError, match=r"hpcforge:observability\.receivers\[0\].*" + re.escape(message)):
        load_config(raw_config(values))


def test_scraped_namespaces_admit_prometheus_to_the_metrics_port_only(prod_stack: RecordedStack) -> None:
    policies = kinds(prod_stack, "NetworkPolicy")
    for target in SITE_TARGETS:
        spec = policies[f"{target.namespace}/allow-ingress-prometheus-{target.name}"]["spec"]
        assert spec["podSelector"] == {"matchLabels": dict(target.labels)}  # type: ignore[index]
        rule = spec["ingress"][0]  # type: ignore[index]
        assert rule["ports"] == [{"port": target.port, "protocol": "TCP"}]
        assert rule["from"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]
