"""Observability layer: kube-prometheus-stack (Prometheus, Alertmanager, Grafana, node exporter,
kube-state-metrics), scrape targets for what the site runs, the alert rules and the dashboards.

Scraped: node exporter and kube-state-metrics (the chart's own monitors); slurmctld through the
ServiceMonitor the Slinky operator makes from the Controller's `spec.metrics` (set by the Slurm
layer when this layer is on); PodMonitors here for cert-manager, Traefik, Argo CD's application
controller and the mariadb-operator; dcgm-exporter (GPU operator) only where nodesets have GPUs.
Prometheus selects every ServiceMonitor, PodMonitor and PrometheusRule (`*SelectorNilUsesHelmValues:
false`). The chart's admission-webhook certificate comes from cert-manager (the site CA ClusterIssuer
`hpcforge-ca`): helm.v4.Chart drops the chart's certificate hook Jobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...k8s.generated import generated_password
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.scope import Scope
from ...versions import Charts
from .alerts import RuleSettings, alert_rules, alertmanager_config
from .config import ObservabilityConfig
from .dashboards import dashboard_files
from .objects import (
    ALERTMANAGER_SECRET,
    DCGM_TARGET,
    GRAFANA_SECRET,
    MONITORING_API,
    NAMESPACE,
    RELEASE,
    SITE_TARGETS,
    chart_values,
    monitoring_namespace_allows,
    pod_monitor_spec,
    scrape_policy_spec,
)

CHARTS = (ChartUse(RELEASE, Charts.KUBE_PROMETHEUS_STACK, NAMESPACE),)


@dataclass(frozen=True)
class ObservabilityArgs:
    ctx: DeployContext
    config: ObservabilityConfig
    charts: ChartDeployer
    rules: RuleSettings
    gpus: bool
    database: bool = True
    """Whether the site runs the database layer (mariadb-operator is scraped only then)."""
    depends_on: Sequence[pulumi.Resource] = ()


class Observability(pulumi.ComponentResource):
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:observability:Observability", name, None, opts)
        ctx, cfg = args.ctx, args.config
        ns = LayerNamespace(
            ctx,
            self,
            NAMESPACE,
            component="observability",
            # node exporter reads the host's /proc and /sys with hostPID/hostNetwork
            pod_security="privileged",
            allows=monitoring_namespace_allows(),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        alerts = ns.scope.secret(ALERTMANAGER_SECRET, {"alertmanager.yaml": alertmanager_config(cfg.receivers)})
        grafana_password = generated_password(ctx, "grafana-admin", length=32, parent=self)
        grafana = ns.scope.secret(GRAFANA_SECRET, {"admin-user": "admin", "admin-password": grafana_password.result})
        values = chart_values(
            cfg, storage_class=ctx.storage_class_for(cfg.storage.storage_class), retain_claims=ctx.protection != "none"
        )
        chart = ns.chart(RELEASE, Charts.KUBE_PROMETHEUS_STACK, values, depends_on=[*ns.ready, alerts, grafana])
        # prometheus-operator's objects, after the chart that brought their CRDs.
        monitoring = ns.scope.but(app=RELEASE, depends_on=(chart,))
        objects: list[pulumi.Resource] = [chart]
        objects.append(self._monitoring_object(monitoring, "PrometheusRule", "hpcforge-site", alert_rules(args.rules)))
        site_targets = [t for t in SITE_TARGETS if args.database or t.namespace != "mariadb-system"]
        targets = [*site_targets, *([DCGM_TARGET] if args.gpus else [])]
        for target in targets:
            spec = pod_monitor_spec(target, cfg.scrape_interval)
            objects.append(self._monitoring_object(monitoring, "PodMonitor", target.name, spec))
        # The scraped namespaces deny ingress by default: admit Prometheus to the metrics port of the
        # scraped pods only (NetworkPolicies add up). dcgm-exporter's namespace belongs to the GPU
        # operator, which may not exist yet: its policy is the GPU layer's.
        for target in site_targets:
            scraped = Scope(ctx, self, target.namespace, "network-policy", app=RELEASE, depends_on=tuple(args.depends_on))
            objects.append(scraped.network_policy(f"allow-ingress-prometheus-{target.name}", scrape_policy_spec(target)))
        dashboards = ns.scope.config_map(
            "hpcforge-dashboards", dashboard_files(gpus=args.gpus), labels={"grafana_dashboard": "1"}
        )
        objects.append(dashboards)
        self.ready = objects
        self.register_outputs({"namespace": NAMESPACE, "monitors": [t.name for t in targets]})

    @staticmethod
    def _monitoring_object(scope: Scope, kind: str, name: str, spec: dict[str, Any]) -> pulumi.Resource:
        """A prometheus-operator custom resource in the monitoring namespace."""
        return scope.custom(MONITORING_API, kind, name, spec, resource_name=f"{NAMESPACE}/{kind.lower()}-{name}")


__all__ = ["CHARTS", "Observability", "ObservabilityArgs"]
