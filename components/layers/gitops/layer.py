"""GitOps layer: Argo CD (always Pulumi-delivered), the platform AppProject that allows exactly the
planned charts, and the app-of-apps for the site's own applications."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from ...charts import ARGOCD_NAMESPACE, IN_CLUSTER, PLATFORM_PROJECT, ChartDeployer, ChartUse, project_spec
from ...context import DeployContext
from ...k8s.generated import generated_password, generated_secret
from ...k8s.resources import (
    Namespace,
    Port,
    container_resources,
    egress_to_apiserver,
    egress_to_internet,
    ingress_from_namespaces,
)
from ...versions import Charts
from .config import GitOpsConfig

APPS_PROJECT = "site-apps"

CHARTS = (ChartUse("argocd", Charts.ARGO_CD, ARGOCD_NAMESPACE),)

# Argo CD diffs unknown CRD fields structurally; tell it that Slinky's NodeSet pod template is a
# core/v1 PodSpec so that defaulted fields (quantities, ports) do not show as permanent drift.
NODESET_KNOWN_TYPE_FIELDS_KEY = "resource.customizations.knownTypeFields.slinky.slurm.net_NodeSet"
NODESET_KNOWN_TYPE_FIELDS = [{"field": "spec.template.spec", "type": "core/v1/PodSpec"}]


@dataclass(frozen=True)
class GitOpsArgs:
    ctx: DeployContext
    config: GitOpsConfig
    charts: ChartDeployer
    """Pulumi-mode deployer: Argo CD itself is always delivered by Pulumi."""
    platform_charts: Sequence[ChartUse]
    """Every chart the platform delivers (the AppProject allows exactly these in argocd mode)."""
    hostname: str
    ingress_class: str
    issuer: str
    """ClusterIssuer of the UI's certificate (cert-manager's ingress-shim issues it once cert-manager runs;
    in argocd delivery cert-manager is itself an Argo CD Application, so Argo CD cannot wait for it)."""
    depends_on: Sequence[pulumi.Resource] = ()


class GitOps(pulumi.ComponentResource):
    admin_password: pulumi.Output[str]
    url: str
    ready: list[pulumi.Resource]
    """Argo CD and the platform AppProject: depend on these before creating Applications."""

    def __init__(self, name: str, args: GitOpsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:gitops:GitOps", name, None, opts)
        ctx, cfg = args.ctx, args.config
        namespace = Namespace(
            ctx,
            ARGOCD_NAMESPACE,
            component="gitops",
            parent=self,
            allows=[
                egress_to_apiserver(),
                # Git (https/ssh) and Helm/OCI registries.
                egress_to_internet(22, 443),
                ingress_from_namespaces("allow-ingress-from-traefik", ["traefik"], Port(8080)),
            ],
            depends_on=args.depends_on,
        )
        admin = generated_password(ctx, "argocd-admin", length=32, parent=self)
        self.admin_password = pulumi.Output.secret(admin.result)
        # The chart's redis-secret-init Job is a Helm hook (dropped by helm.v4.Chart): create its Secret here.
        redis_secret = generated_secret(
            ctx,
            "argocd-redis",
            "argocd-redis",
            ARGOCD_NAMESPACE,
            "auth",
            length=32,
            component="gitops",
            parent=self,
            app="argocd",
            depends_on=namespace.ready,
            stateful=None,
        ).secret
        replicas = 2 if cfg.argocd.ha else 1
        values: dict[str, Any] = {
            "global": {"domain": args.hostname},
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
                    "argocdServerAdminPassword": admin.bcrypt_hash,
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
                    "ingressClassName": args.ingress_class,
                    "hostname": args.hostname,
                    "tls": True,
                    "annotations": {
                        "cert-manager.io/cluster-issuer": args.issuer,
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
        chart = args.charts.deploy(
            "argocd",
            Charts.ARGO_CD,
            ARGOCD_NAMESPACE,
            values,
            parent=self,
            depends_on=[*namespace.ready, redis_secret],
        )
        self.url = f"https://{args.hostname}"
        self.ready = [chart]

        if ctx.delivery == "argocd":
            self.ready += self._platform_project(ctx, args.platform_charts, chart)
        self._site_apps(ctx, cfg, chart)
        self.register_outputs({"url": self.url, "adminPassword": self.admin_password})

    def _platform_project(self, ctx: DeployContext, uses: Sequence[ChartUse], chart: pulumi.Resource) -> list[pulumi.Resource]:
        delivered = [use for use in uses if use.pin != Charts.ARGO_CD]
        project = k8s.apiextensions.CustomResource(
            f"{ARGOCD_NAMESPACE}/{PLATFORM_PROJECT}",
            api_version="argoproj.io/v1alpha1",
            kind="AppProject",
            metadata=ctx.meta(PLATFORM_PROJECT, "gitops", ARGOCD_NAMESPACE, app="argocd"),
            spec=project_spec(delivered, "Third-party charts of the hpcforge platform (managed by Pulumi)"),
            opts=ctx.opts(self, depends_on=[chart]),
        )
        # Public OCI registries need no repository Secret in Argo CD 3.x: a scheme-less repoURL is OCI.
        return [project]

    def _site_apps(self, ctx: DeployContext, cfg: GitOpsConfig, chart: pulumi.Resource) -> None:
        if not cfg.apps and cfg.root_repo_url is None:
            return
        repos = sorted({app.repo_url for app in cfg.apps} | ({cfg.root_repo_url} if cfg.root_repo_url else set()))
        namespaces = sorted({app.namespace for app in cfg.apps} | {ARGOCD_NAMESPACE})
        project = k8s.apiextensions.CustomResource(
            f"{ARGOCD_NAMESPACE}/{APPS_PROJECT}",
            api_version="argoproj.io/v1alpha1",
            kind="AppProject",
            metadata=ctx.meta(APPS_PROJECT, "gitops", ARGOCD_NAMESPACE, app="argocd"),
            spec={
                "description": "The site's own applications (app-of-apps); no cluster-scoped objects",
                "sourceRepos": repos,
                "destinations": [{"server": IN_CLUSTER, "namespace": ns} for ns in namespaces],
                "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}],
            },
            opts=ctx.opts(self, depends_on=[chart]),
        )
        sync_policy = {
            "automated": {"prune": True, "selfHeal": True},
            "syncOptions": ["CreateNamespace=true"],
            # Namespaces that Argo CD creates for site apps get the same Pod Security baseline as ours.
            "managedNamespaceMetadata": {
                "labels": {
                    "pod-security.kubernetes.io/enforce": "restricted",
                    "pod-security.kubernetes.io/enforce-version": f"v{ctx.kubernetes_version}",
                    "app.kubernetes.io/part-of": "hpcforge",
                    "app.kubernetes.io/managed-by": "argocd",
                }
            },
            "retry": {"limit": cfg.sync_retry_limit, "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m"}},
        }
        for app in cfg.apps:
            k8s.apiextensions.CustomResource(
                f"{ARGOCD_NAMESPACE}/{app.name}",
                api_version="argoproj.io/v1alpha1",
                kind="Application",
                metadata=ctx.meta(app.name, "site-app", ARGOCD_NAMESPACE, app=app.name),
                spec={
                    "project": APPS_PROJECT,
                    "source": {"repoURL": app.repo_url, "path": app.path, "targetRevision": app.target_revision},
                    "destination": {"server": IN_CLUSTER, "namespace": app.namespace},
                    "syncPolicy": sync_policy,
                },
                opts=ctx.opts(self, depends_on=[project]),
            )
        if cfg.root_repo_url:
            k8s.apiextensions.CustomResource(
                f"{ARGOCD_NAMESPACE}/site-root",
                api_version="argoproj.io/v1alpha1",
                kind="Application",
                metadata=ctx.meta("site-root", "site-app", ARGOCD_NAMESPACE, app="site-root"),
                spec={
                    "project": APPS_PROJECT,
                    "source": {"repoURL": cfg.root_repo_url, "path": cfg.root_path, "targetRevision": cfg.root_revision},
                    "destination": {"server": IN_CLUSTER, "namespace": ARGOCD_NAMESPACE},
                    "syncPolicy": {k: v for k, v in sync_policy.items() if k != "managedNamespaceMetadata"},
                },
                opts=ctx.opts(self, depends_on=[project]),
            )
