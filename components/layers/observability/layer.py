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
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...k8s.certificates import CA_ISSUER
from ...k8s.generated import generated_password
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.resources import ANYWHERE, Allow, Port, config_map, container_resources, egress_to_apiserver, ingress_from_apiserver
from ...versions import Charts
from .alerts import RuleSettings, alert_rules, alertmanager_config
from .config import ObservabilityConfig
from .dashboards import dashboard_files

NAMESPACE = "monitoring"
RELEASE = "kube-prometheus-stack"
# With `alertmanagerSpec.useExistingSecret`, prometheus-operator reads `alertmanager-<Alertmanager name>`; the
# chart names the Alertmanager `<fullname>-alertmanager`, and the fullname of release kube-prometheus-stack is
# the release name.
ALERTMANAGER_SECRET = f"alertmanager-{RELEASE}-alertmanager"
GRAFANA_SECRET = "grafana-admin"
MONITORING_API = "monitoring.coreos.com/v1"

CHARTS = (ChartUse(RELEASE, Charts.KUBE_PROMETHEUS_STACK, NAMESPACE),)


@dataclass(frozen=True)
class PodTarget:
    """Pods that expose Prometheus metrics on a named container port."""

    name: str
    namespace: str
    labels: tuple[tuple[str, str], ...]
    port: str
    path: str = "/metrics"


# Pod labels and metrics port names as the pinned charts set them (cert-manager: the controller's
# `http-metrics` port 9402; Traefik: the `metrics` entry point port; Argo CD: the application
# controller's `metrics` port 8082; mariadb-operator: the operator's `metrics` port).
SITE_TARGETS = (
    PodTarget("cert-manager", "cert-manager", (("app.kubernetes.io/name", "cert-manager"), ("app.kubernetes.io/component", "controller")), "http-metrics"),
    PodTarget("traefik", "traefik", (("app.kubernetes.io/name", "traefik"),), "metrics"),
    PodTarget("argocd-application-controller", "argocd", (("app.kubernetes.io/name", "argocd-application-controller"),), "metrics"),
    PodTarget("mariadb-operator", "mariadb-system", (("app.kubernetes.io/name", "mariadb-operator"),), "metrics"),
)  # fmt: skip
# dcgm-exporter's pods are made by the GPU Operator, not its chart: gpu-operator v26.7.0
# assets/state-dcgm-exporter/0800_daemonset.yaml names the container port `metrics` (9400); `gpu-metrics` is the
# port of its Service (0400_service.yaml), which a PodMonitor cannot select (it matches container ports by name).
DCGM_TARGET = PodTarget("dcgm-exporter", "gpu-operator", (("app", "nvidia-dcgm-exporter"),), "metrics")


def pod_monitor_spec(target: PodTarget, interval: str) -> dict[str, Any]:
    """A PodMonitor's spec (pure)."""
    return {
        "namespaceSelector": {"matchNames": [target.namespace]},
        "selector": {"matchLabels": dict(target.labels)},
        "podMetricsEndpoints": [{"port": target.port, "path": target.path, "interval": interval}],
    }


def scrape_policy_spec(target: PodTarget, monitoring_namespace: str = NAMESPACE) -> dict[str, Any]:
    """A NetworkPolicy admitting Prometheus (pods in the monitoring namespace) to a target's metrics port (pure)."""
    return {
        "podSelector": {"matchLabels": dict(target.labels)},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": monitoring_namespace}}}],
                "ports": [{"port": target.port, "protocol": "TCP"}],
            }
        ],
    }


# Prometheus' and Alertmanager's volumes are not Pulumi resources: prometheus-operator makes a StatefulSet of
# each CR and the StatefulSet controller makes the claims from its volumeClaimTemplates, so Pulumi's
# protect/retainOnDelete cannot reach them. What keeps them is the StatefulSet's
# persistentVolumeClaimRetentionPolicy, which the operator copies from the CR's field of that name
# (prometheus-operator 0.93.1 CRDs Prometheus/Alertmanager; chart values
# prometheus.prometheusSpec / alertmanager.alertmanagerSpec .persistentVolumeClaimRetentionPolicy): with
# Retain, deleting the CR (or the whole chart) or scaling down leaves the claims, and so their volumes, in place.
RETAIN_CLAIMS = {"whenDeleted": "Retain", "whenScaled": "Retain"}


def chart_values(cfg: ObservabilityConfig, *, storage_class: str | None, retain_claims: bool = True) -> dict[str, Any]:
    """kube-prometheus-stack values (pure; every key exists in the chart's values.yaml).

    `retain_claims`: the stack protects stateful data (`protection` is not `none`): write the claims' retention.
    """

    def claim(size: str) -> dict[str, Any]:
        spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
        if storage_class:
            spec["storageClassName"] = storage_class
        return {"volumeClaimTemplate": {"spec": spec}}

    prometheus_spec: dict[str, Any] = {
        "retention": cfg.retention,
        "scrapeInterval": cfg.scrape_interval,
        "serviceMonitorSelectorNilUsesHelmValues": False,
        "podMonitorSelectorNilUsesHelmValues": False,
        "ruleSelectorNilUsesHelmValues": False,
        "storageSpec": claim(cfg.storage.size),
        "resources": container_resources("500m", "2Gi", "8Gi"),
    }
    if cfg.retention_size:
        prometheus_spec["retentionSize"] = cfg.retention_size
    alertmanager_spec: dict[str, Any] = {
        "useExistingSecret": True,
        "storage": claim(cfg.alertmanager_storage.size),
        "resources": container_resources("50m", "128Mi", "256Mi"),
    }
    if retain_claims:
        prometheus_spec["persistentVolumeClaimRetentionPolicy"] = dict(RETAIN_CLAIMS)
        alertmanager_spec["persistentVolumeClaimRetentionPolicy"] = dict(RETAIN_CLAIMS)
    return {
        "prometheus": {"prometheusSpec": prometheus_spec},
        "alertmanager": {"alertmanagerSpec": alertmanager_spec},
        "grafana": {
            "enabled": True,
            "resources": container_resources("100m", "128Mi", "512Mi"),
            # the dashboard and datasource sidecars
            "sidecar": {"resources": container_resources("20m", "64Mi", "128Mi")},
            "admin": {"existingSecret": GRAFANA_SECRET, "userKey": "admin-user", "passwordKey": "admin-password"},
        },
        "kube-state-metrics": {"resources": container_resources("50m", "128Mi", "512Mi")},
        "prometheus-node-exporter": {"resources": container_resources("50m", "32Mi", "128Mi")},
        "prometheusOperator": {
            "admissionWebhooks": {
                # cert-manager issues the webhook's certificate (and injects its CA into the webhook
                # configurations) instead of the chart's hook Jobs; from the site's private CA rather than a
                # second, chart-made self-signed root (components/chart_hooks.py).
                "certManager": {
                    "enabled": True,
                    "issuerRef": {"name": CA_ISSUER, "kind": "ClusterIssuer", "group": "cert-manager.io"},
                },
            },
            "resources": container_resources("100m", "128Mi", "512Mi"),
        },
        # Not on this kind of cluster's control plane, or not reachable from a pod: off, so nothing alerts on them.
        "kubeEtcd": {"enabled": False},
        "kubeControllerManager": {"enabled": False},
        "kubeScheduler": {"enabled": False},
        "kubeProxy": {"enabled": False},
    }


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
            allows=[
                egress_to_apiserver(),
                ingress_from_apiserver("allow-ingress-webhook", Port(10250)),
                # Prometheus scrapes every namespace's pods and the nodes (node exporter, kubelet); Alertmanager
                # reaches the receivers (webhooks, SMTP). Pods by namespace: a network plugin where ipBlocks never
                # select pods (Cilium) would not let an ipBlock of every address reach them.
                Allow("allow-egress-scrape-and-notify", "egress", cidrs=(ANYWHERE,), all_namespaces=True),
            ],
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
        objects: list[pulumi.Resource] = [chart]
        objects.append(monitoring_object(ctx, self, "PrometheusRule", "hpcforge-site", alert_rules(args.rules), [chart]))
        site_targets = [t for t in SITE_TARGETS if args.database or t.namespace != "mariadb-system"]
        targets = [*site_targets, *([DCGM_TARGET] if args.gpus else [])]
        for target in targets:
            objects.append(
                monitoring_object(ctx, self, "PodMonitor", target.name, pod_monitor_spec(target, cfg.scrape_interval), [chart])
            )
        # The scraped namespaces deny ingress by default: admit Prometheus to the metrics port of the
        # scraped pods only (NetworkPolicies add up). dcgm-exporter's namespace belongs to the GPU
        # operator, which may not exist yet: its policy is the GPU layer's.
        for target in site_targets:
            objects.append(
                k8s.networking.v1.NetworkPolicy(
                    f"{target.namespace}/allow-ingress-prometheus-{target.name}",
                    metadata=ctx.meta(f"allow-ingress-prometheus-{target.name}", "network-policy", target.namespace, app=RELEASE),
                    spec=scrape_policy_spec(target),
                    opts=ctx.opts(self, depends_on=list(args.depends_on)),
                )
            )
        objects.append(
            config_map(
                ctx,
                "hpcforge-dashboards",
                NAMESPACE,
                dashboard_files(gpus=args.gpus),
                component="observability",
                parent=self,
                labels={"grafana_dashboard": "1"},
                depends_on=ns.ready,
            )
        )
        self.ready = objects
        self.register_outputs({"namespace": NAMESPACE, "monitors": [t.name for t in targets]})


def monitoring_object(
    ctx: DeployContext, parent: pulumi.Resource, kind: str, name: str, spec: dict[str, Any], depends_on: list[pulumi.Resource]
) -> pulumi.Resource:
    """A prometheus-operator custom resource in the monitoring namespace (after the chart brought its CRDs)."""
    return k8s.apiextensions.CustomResource(
        f"{NAMESPACE}/{kind.lower()}-{name}",
        api_version=MONITORING_API,
        kind=kind,
        metadata=ctx.meta(name, "observability", NAMESPACE, app=RELEASE),
        spec=spec,
        opts=ctx.opts(parent, depends_on=depends_on),
    )


__all__ = [
    "CHARTS",
    "DCGM_TARGET",
    "SITE_TARGETS",
    "Observability",
    "ObservabilityArgs",
    "chart_values",
    "pod_monitor_spec",
    "scrape_policy_spec",
]
