"""The observability layer's objects as pure functions: its namespace's allows, the kube-prometheus-stack chart's
values, the scrape targets (a PodMonitor's spec each) and the NetworkPolicies that admit Prometheus to them.
layer.py registers them; the alert rules are built in alerts.py, the dashboards in dashboards.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...k8s.certificates import CA_ISSUER
from ...k8s.resources import ANYWHERE, Allow, Port, container_resources, egress_to_apiserver, ingress_from_anywhere
from .config import ObservabilityConfig

NAMESPACE = "monitoring"
RELEASE = "kube-prometheus-stack"
# With `alertmanagerSpec.useExistingSecret`, prometheus-operator reads `alertmanager-<Alertmanager name>`; the
# chart names the Alertmanager `<fullname>-alertmanager`, and the fullname of release kube-prometheus-stack is
# the release name.
ALERTMANAGER_SECRET = f"alertmanager-{RELEASE}-alertmanager"
GRAFANA_SECRET = "grafana-admin"
MONITORING_API = "monitoring.coreos.com/v1"


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


def monitoring_namespace_allows() -> list[Allow]:
    """The monitoring namespace: the API server, prometheus-operator's webhook, and Prometheus scraping every namespace
    and the nodes (node exporter, kubelet) and Alertmanager reaching the receivers (webhooks, SMTP)."""
    return [
        egress_to_apiserver(),
        ingress_from_anywhere("allow-ingress-webhook", Port(10250)),
        Allow("allow-egress-scrape-and-notify", "egress", cidrs=(ANYWHERE,)),
    ]


__all__ = [
    "ALERTMANAGER_SECRET",
    "DCGM_TARGET",
    "GRAFANA_SECRET",
    "MONITORING_API",
    "NAMESPACE",
    "RELEASE",
    "SITE_TARGETS",
    "PodTarget",
    "chart_values",
    "monitoring_namespace_allows",
    "pod_monitor_spec",
    "scrape_policy_spec",
]
