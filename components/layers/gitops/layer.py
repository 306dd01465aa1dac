"""GitOps layer: Argo CD (always Pulumi-delivered), the platform AppProject that allows exactly the
planned charts, and the app-of-apps for the site's own applications."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from ...charts import ARGO_API, ARGOCD_NAMESPACE, PLATFORM_PROJECT, ChartDeployer, ChartUse, project_spec
from ...context import DeployContext
from ...k8s.generated import generated_password
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.scope import Scope
from ...versions import Charts
from .config import GitOpsConfig
from .objects import APPS_PROJECT, app_spec, apps_project_spec, argocd_namespace_allows, argocd_values, root_app_spec, sync_policy

CHARTS = (ChartUse("argocd", Charts.ARGO_CD, ARGOCD_NAMESPACE),)


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
        namespace = LayerNamespace(
            ctx,
            self,
            ARGOCD_NAMESPACE,
            component="gitops",
            app="argocd",
            allows=argocd_namespace_allows(),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        admin = generated_password(ctx, "argocd-admin", length=32, parent=self)
        self.admin_password = pulumi.Output.secret(admin.result)
        # The chart's redis-secret-init Job is a Helm hook (dropped by helm.v4.Chart): create its Secret here.
        redis_secret = namespace.scope.generated_secret("argocd-redis", "argocd-redis", "auth", length=32, stateful=None).secret
        values = argocd_values(
            cfg,
            hostname=args.hostname,
            ingress_class=args.ingress_class,
            issuer=args.issuer,
            admin_password_hash=admin.bcrypt_hash,
        )
        chart = namespace.chart("argocd", Charts.ARGO_CD, values, depends_on=[*namespace.ready, redis_secret])
        self.url = f"https://{args.hostname}"
        self.ready = [chart]

        scope = namespace.scope
        if ctx.delivery == "argocd":
            self.ready += self._platform_project(scope, args.platform_charts, chart)
        self._site_apps(scope, cfg, chart)
        self.register_outputs({"url": self.url, "adminPassword": self.admin_password})

    def _platform_project(self, scope: Scope, uses: Sequence[ChartUse], chart: pulumi.Resource) -> list[pulumi.Resource]:
        delivered = [use for use in uses if use.pin != Charts.ARGO_CD]
        spec = project_spec(delivered, "Third-party charts of the hpcforge platform (managed by Pulumi)")
        project = scope.custom(ARGO_API, "AppProject", PLATFORM_PROJECT, spec, depends_on=[chart])
        # Public OCI registries need no repository Secret in Argo CD 3.x: a scheme-less repoURL is OCI.
        return [project]

    def _site_apps(self, scope: Scope, cfg: GitOpsConfig, chart: pulumi.Resource) -> None:
        if not cfg.apps and cfg.root_repo_url is None:
            return
        project = scope.custom(ARGO_API, "AppProject", APPS_PROJECT, apps_project_spec(cfg), depends_on=[chart])
        policy = sync_policy(cfg, kubernetes_version=scope.ctx.kubernetes_version)
        applications = [(app.name, app_spec(app, policy)) for app in cfg.apps]
        if cfg.root_repo_url:
            applications.append(("site-root", root_app_spec(cfg, policy)))
        for app_name, spec in applications:
            scope.but(component="site-app", app=app_name).custom(ARGO_API, "Application", app_name, spec, depends_on=[project])
