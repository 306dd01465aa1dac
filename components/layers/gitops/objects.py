"""The GitOps layer's objects as pure functions: Argo CD's chart values and namespace allows, the site-apps
AppProject, the sync policy of the site's applications and their Application specs."""

from __future__ import annotations

from typing import Any

import yaml

from ...charts import ARGOCD_NAMESPACE, IN_CLUSTER
from ...k8s.resources import Allow, Port, container_resources, egress_to_apiserver, egress_to_internet, ingress_from_namespaces
from .config import GitOpsApp, GitOpsConfig

APPS_PROJECT = "site-apps"

# Argo CD diffs unknown CRD fields structurally; tell it that Slinky's NodeSet pod template is a
# core/v1 PodSpec so that defaulted fields (quantities, ports) do not show as permanent drift.
NODESET_KNOWN_TYPE_FIELDS_KEY = "resource.customizations.knownTypeFields.slinky.slurm.net_NodeSet"
NODESET_KNOWN_TYPE_FIELDS = [{"field": "spec.template.spec", "type": "core/v1/PodSpec"}]


def argocd_namespace_allows() -> list[Allow]:
    """Argo CD's namespace: the API server, Git (https/ssh) and Helm/OCI registries, and its UI behind Traefik."""
    return [
        egress_to_apiserver(),
        egress_to_internet(22, 443),
        ingress_from_namespaces("allow-ingress-from-traefik", ["traefik"], Port(8080)),
    ]


def argocd_values(
    cfg: GitOpsConfig, *, hostname: str, ingress_class: str, issuer: str, admin_password_hash: Any
) -> dict[str, Any]:
    """Argo CD chart values: the UI behind Traefik with a certificate from `issuer`, the admin password given
    as its bcrypt hash, and the server, repo-server and applicationset controller doubled when `argocd.ha`."""
    replicas = 2 if cfg.argocd.ha else 1
    return {
        "global": {"domain": hostname},
        "crds": {"install": True, "keep": True},
        "redisSecretInit": {"enabled": False},
        "configs": {
            "cm": {
                NODESET_KNOWN_TYPE_FIELDS_KEY: yaml.safe_dump(NODESET_KNOWN_TYPE_FIELDS, sort_keys=False),
                "admin.enabled": True,
                "exec.enabled": False,
                "timeout.reconciliation": "180s",
            },
            # TLS terminates at Traefik with the cert-manager certificate.
            "params": {"server.insecure": True},
            "secret": {
                "argocdServerAdminPassword": admin_password_hash,
                # A fixed mtime: the chart's default (now) would show a diff on every preview.
                "argocdServerAdminPasswordMtime": "2026-01-01T00:00:00Z",
            },
        },
        "controller": {"replicas": 1, "resources": container_resources("250m", "512Mi", "2Gi")},
        "server": {
            "replicas": replicas,
            "resources": container_resources("50m", "128Mi", "512Mi"),
            "ingress": {
                "enabled": True,
                "ingressClassName": ingress_class,
                "hostname": hostname,
                "tls": True,
                "annotations": {
                    "cert-manager.io/cluster-issuer": issuer,
                    "traefik.ingress.kubernetes.io/router.entrypoints": "websecure",
                },
            },
        },
        "repoServer": {"replicas": replicas, "resources": container_resources("100m", "256Mi", "1Gi")},
        "applicationSet": {"replicas": replicas, "resources": container_resources("50m", "64Mi", "256Mi")},
        "notifications": {"enabled": False},
        "dex": {"enabled": False},
        "redis": {"resources": container_resources("50m", "64Mi", "256Mi")},
        "redis-ha": {"enabled": False},
    }


def apps_project_spec(cfg: GitOpsConfig) -> dict[str, Any]:
    """AppProject `site-apps`: the apps' and the root's repositories, their namespaces and argocd, and no
    cluster-scoped kind but Namespace."""
    repos = sorted({app.repo_url for app in cfg.apps} | ({cfg.root_repo_url} if cfg.root_repo_url else set()))
    namespaces = sorted({app.namespace for app in cfg.apps} | {ARGOCD_NAMESPACE})
    return {
        "description": "The site's own applications (app-of-apps); no cluster-scoped objects",
        "sourceRepos": repos,
        "destinations": [{"server": IN_CLUSTER, "namespace": ns} for ns in namespaces],
        "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}],
    }


def sync_policy(cfg: GitOpsConfig, *, kubernetes_version: str) -> dict[str, Any]:
    """Automated sync with prune and self-heal; the namespaces Argo CD creates get Pod Security `restricted`."""
    return {
        "automated": {"prune": True, "selfHeal": True},
        "syncOptions": ["CreateNamespace=true"],
        # Namespaces that Argo CD creates for site apps get the same Pod Security baseline as ours.
        "managedNamespaceMetadata": {
            "labels": {
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/enforce-version": f"v{kubernetes_version}",
                "app.kubernetes.io/part-of": "hpcforge",
                "app.kubernetes.io/managed-by": "argocd",
            }
        },
        "retry": {"limit": cfg.sync_retry_limit, "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m"}},
    }


def app_spec(app: GitOpsApp, policy: dict[str, Any]) -> dict[str, Any]:
    """A site application in project `site-apps`."""
    return {
        "project": APPS_PROJECT,
        "source": {"repoURL": app.repo_url, "path": app.path, "targetRevision": app.target_revision},
        "destination": {"server": IN_CLUSTER, "namespace": app.namespace},
        "syncPolicy": policy,
    }


def root_app_spec(cfg: GitOpsConfig, policy: dict[str, Any]) -> dict[str, Any]:
    """The app-of-apps root: it syncs Applications into argocd, so it creates no namespace."""
    return {
        "project": APPS_PROJECT,
        "source": {"repoURL": cfg.root_repo_url, "path": cfg.root_path, "targetRevision": cfg.root_revision},
        "destination": {"server": IN_CLUSTER, "namespace": ARGOCD_NAMESPACE},
        "syncPolicy": {k: v for k, v in policy.items() if k != "managedNamespaceMetadata"},
    }


__all__ = [
    "APPS_PROJECT",
    "NODESET_KNOWN_TYPE_FIELDS",
    "NODESET_KNOWN_TYPE_FIELDS_KEY",
    "app_spec",
    "apps_project_spec",
    "argocd_values",
    "root_app_spec",
    "sync_policy",
]
