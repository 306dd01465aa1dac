"""The GitOps layer's objects as pure functions: Argo CD's chart values and namespace allows, the site-apps and
site-root AppProjects, the site apps' namespaces' allows, the sync policy of the site's applications and their
Application specs."""

from __future__ import annotations

from typing import Any

import yaml

from ...charts import IN_CLUSTER
from ...k8s.resources import Allow, Port, container_resources, egress_to_apiserver, egress_to_internet, ingress_from_namespaces
from .config import GitOpsApp, GitOpsConfig

APPS_PROJECT = "site-apps"
ROOT_PROJECT = "site-root"
APPS_NAMESPACE = "site-apps"
"""Where the app-of-apps root puts the site's Application objects (never argocd: an Application there may name any
project, hpcforge-platform included)."""

# Argo CD diffs unknown CRD fields structurally; tell it that Slinky's NodeSet pod template is a
# core/v1 PodSpec so that defaulted fields (quantities, ports) do not show as permanent drift.
NODESET_KNOWN_TYPE_FIELDS_KEY = "resource.customizations.knownTypeFields.slinky.slurm.net_NodeSet"
NODESET_KNOWN_TYPE_FIELDS = [{"field": "spec.template.spec", "type": "core/v1/PodSpec"}]


def argocd_namespace_allows(sso: bool) -> list[Allow]:
    """Argo CD's namespace: the API server, Git (https/ssh) and Helm/OCI registries, and, with single sign-on only
    (the UI is published only then), Traefik to the UI."""
    return [
        egress_to_apiserver(),
        egress_to_internet(22, 443),
        *([ingress_from_namespaces("allow-ingress-from-traefik", ["traefik"], Port(8080))] if sso else []),
    ]


def site_app_namespace_allows() -> list[Allow]:
    """A site app's namespace (hpcforge's, Pod Security restricted, default deny): Traefik in, to any port."""
    return [ingress_from_namespaces("allow-ingress-from-traefik", ["traefik"])]


def argocd_values(
    cfg: GitOpsConfig,
    *,
    hostname: str,
    ingress_class: str,
    issuer: str,
    admin_password_hash: Any,
    sso_client_secret: Any = None,
) -> dict[str, Any]:
    """Argo CD chart values: the admin password given as its bcrypt hash, the server, repo-server and applicationset
    controller doubled when `argocd.ha`, Applications also in the site apps' namespace (APPS_NAMESPACE, for the
    app-of-apps root). With `argocd.sso` (and only then): the UI behind Traefik with a certificate from `issuer`,
    OIDC login (`sso_client_secret`, a secret, into argocd-secret), role:admin for the SSO admin groups, and no local
    admin account."""
    replicas = 2 if cfg.argocd.ha else 1
    sso = cfg.argocd.sso
    cm: dict[str, Any] = {
        NODESET_KNOWN_TYPE_FIELDS_KEY: yaml.safe_dump(NODESET_KNOWN_TYPE_FIELDS, sort_keys=False),
        "admin.enabled": sso is None,
        "exec.enabled": False,
        "timeout.reconciliation": "180s",
    }
    secret: dict[str, Any] = {
        "argocdServerAdminPassword": admin_password_hash,
        # A fixed mtime: the chart's default (now) would show a diff on every preview.
        "argocdServerAdminPasswordMtime": "2026-01-01T00:00:00Z",
    }
    server: dict[str, Any] = {"replicas": replicas, "resources": container_resources("50m", "128Mi", "512Mi")}
    values: dict[str, Any] = {
        "global": {"domain": hostname},
        "crds": {"install": True, "keep": True},
        "redisSecretInit": {"enabled": False},
        "configs": {
            "cm": cm,
            # TLS terminates at Traefik with the cert-manager certificate. The app-of-apps root writes Applications
            # into APPS_NAMESPACE, where only AppProject site-apps admits them (its sourceNamespaces).
            "params": {"server.insecure": True, "application.namespaces": APPS_NAMESPACE},
            "secret": secret,
        },
        "controller": {"replicas": 1, "resources": container_resources("250m", "512Mi", "2Gi")},
        "server": server,
        "repoServer": {"replicas": replicas, "resources": container_resources("100m", "256Mi", "1Gi")},
        "applicationSet": {"replicas": replicas, "resources": container_resources("50m", "64Mi", "256Mi")},
        "notifications": {"enabled": False},
        "dex": {"enabled": False},
        "redis": {"resources": container_resources("50m", "64Mi", "256Mi")},
        "redis-ha": {"enabled": False},
    }
    if sso is not None:
        cm["oidc.config"] = yaml.safe_dump(
            {
                "name": "SSO",
                "issuer": sso.issuer,
                "clientID": sso.client_id,
                "clientSecret": "$oidc.clientSecret",
                "requestedScopes": ["openid", "profile", "email", "groups"],
            },
            sort_keys=False,
        )
        secret["extra"] = {"oidc.clientSecret": sso_client_secret}
        values["configs"]["rbac"] = {
            "policy.default": "",
            "policy.csv": "".join(f"g, {group}, role:admin\n" for group in sso.admin_groups),
        }
        server["ingress"] = {
            "enabled": True,
            "ingressClassName": ingress_class,
            "hostname": hostname,
            "tls": True,
            "annotations": {
                "cert-manager.io/cluster-issuer": issuer,
                "traefik.ingress.kubernetes.io/router.entrypoints": "websecure",
            },
        }
    return values


def apps_project_spec(cfg: GitOpsConfig) -> dict[str, Any]:
    """AppProject `site-apps`: the apps' and the root's repositories; the apps' own namespaces and nothing else (not
    argocd); only the kinds of `siteAppKinds`; nothing cluster-scoped. Applications in APPS_NAMESPACE (the root's)
    may use it; no other project admits them (Argo CD v3.4.4 pkg/apis/application/v1alpha1/app_project_types.go
    IsAppNamespacePermitted: outside argocd an Application needs its namespace in the project's sourceNamespaces)."""
    repos = sorted({app.repo_url for app in cfg.apps} | ({cfg.root_repo_url} if cfg.root_repo_url else set()))
    namespaces = sorted({app.namespace for app in cfg.apps})
    return {
        "description": "The site's own applications: their namespaces and kinds only, nothing cluster-scoped",
        "sourceRepos": repos,
        "sourceNamespaces": [APPS_NAMESPACE],
        "destinations": [{"server": IN_CLUSTER, "namespace": ns} for ns in namespaces],
        "clusterResourceWhitelist": [],
        "namespaceResourceWhitelist": [
            {"group": group, "kind": kind} for group, kind in (entry.split("/") for entry in cfg.site_app_kinds)
        ],
    }


def root_project_spec(cfg: GitOpsConfig) -> dict[str, Any]:
    """AppProject `site-root`: the app-of-apps root writes Application objects into APPS_NAMESPACE, nothing else."""
    return {
        "description": "The app-of-apps root: Applications in the site apps' namespace only",
        "sourceRepos": [cfg.root_repo_url],
        "destinations": [{"server": IN_CLUSTER, "namespace": APPS_NAMESPACE}],
        "clusterResourceWhitelist": [],
        "namespaceResourceWhitelist": [{"group": "argoproj.io", "kind": "Application"}],
    }


def sync_policy(cfg: GitOpsConfig) -> dict[str, Any]:
    """Automated sync with prune and self-heal. No CreateNamespace: hpcforge creates the apps' namespaces."""
    return {
        "automated": {"prune": True, "selfHeal": True},
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
    """The app-of-apps root, in project `site-root`: it syncs Applications into APPS_NAMESPACE."""
    return {
        "project": ROOT_PROJECT,
        "source": {"repoURL": cfg.root_repo_url, "path": cfg.root_path, "targetRevision": cfg.root_revision},
        "destination": {"server": IN_CLUSTER, "namespace": APPS_NAMESPACE},
        "syncPolicy": policy,
    }


__all__ = [
    "APPS_NAMESPACE",
    "APPS_PROJECT",
    "NODESET_KNOWN_TYPE_FIELDS",
    "NODESET_KNOWN_TYPE_FIELDS_KEY",
    "ROOT_PROJECT",
    "app_spec",
    "apps_project_spec",
    "argocd_namespace_allows",
    "argocd_values",
    "root_app_spec",
    "root_project_spec",
    "site_app_namespace_allows",
    "sync_policy",
]
