"""DevOps layer: build and test the site's software off the production nodes.

Argo Workflows (its CRDs from the chart without Helm hooks), a namespace with read-only and
read-write volumes on the shared software storage (NFS), a WorkflowTemplate whose build step is
followed by test steps running in parallel, and an in-cluster container registry with TLS from
the internal CA and a persistent volume. The objects are built in objects.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ARGO_API, ChartDeployer, ChartUse
from ...context import DeployContext, Stateful
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.resources import TRAEFIK_API
from ...versions import Charts
from .config import DevOpsConfig
from .objects import (
    REGISTRY_NAMESPACE,
    REGISTRY_PORT,
    SOFTWARE_CLAIMS,
    WORKFLOW_ACCOUNT,
    WORKFLOWS_NAMESPACE,
    lane_namespace_allows,
    registry_claim_spec,
    registry_deployment_spec,
    registry_dns_names,
    registry_namespace_allows,
    registry_route_spec,
    registry_service_host,
    registry_service_spec,
    software_claim_spec,
    software_volume_spec,
    workflow_role_rules,
    workflow_template_spec,
    workflows_namespace_allows,
    workflows_values,
)

CHARTS = (ChartUse("argo-workflows", Charts.ARGO_WORKFLOWS, WORKFLOWS_NAMESPACE),)


@dataclass(frozen=True)
class DevOpsArgs:
    ctx: DeployContext
    config: DevOpsConfig
    charts: ChartDeployer
    ingress_class: str
    issuer: str
    certificate_duration: str
    renew_before: str
    depends_on: Sequence[pulumi.Resource] = ()


class DevOps(pulumi.ComponentResource):
    registry_host: str | None
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: DevOpsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:devops:DevOps", name, None, opts)
        ctx, cfg = args.ctx, args.config
        ns = cfg.namespace
        controller_ns, lane_ns = self._namespaces(args)
        chart = controller_ns.chart(
            "argo-workflows",
            Charts.ARGO_WORKFLOWS,
            workflows_values(cfg, ingress_class=args.ingress_class, issuer=args.issuer),
            depends_on=[*controller_ns.ready, *lane_ns.ready],
        )
        self._workflow_rbac(ctx, ns, lane_ns.ready)
        volumes = self._software_volumes(ctx, cfg, lane_ns.ready)
        template = lane_ns.scope.but(app="argo-workflows").custom(
            ARGO_API, "WorkflowTemplate", cfg.pipeline.name, workflow_template_spec(cfg), depends_on=[chart, *volumes]
        )
        objects: list[pulumi.Resource] = [chart, *volumes, template]
        self.registry_host = None
        if cfg.registry.enabled:
            objects += self._registry(ctx, args)
        self.ready = objects
        self.register_outputs({"workflowTemplate": f"{ns}/{cfg.pipeline.name}", "registry": self.registry_host})

    def _namespaces(self, args: DevOpsArgs) -> tuple[LayerNamespace, LayerNamespace]:
        """The workflow controller's namespace (where the chart goes) and the lane's."""
        ctx, cfg = args.ctx, args.config
        controller_ns = LayerNamespace(
            ctx,
            self,
            WORKFLOWS_NAMESPACE,
            component="workflows",
            allows=workflows_namespace_allows(cfg),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        lane_ns = LayerNamespace(
            ctx,
            self,
            cfg.namespace,
            component="devops",
            # Build images (e.g. Spack's) run as root; baseline still forbids privilege and host access.
            pod_security="baseline",
            allows=lane_namespace_allows(cfg),
            depends_on=args.depends_on,
        )
        return controller_ns, lane_ns

    def _workflow_rbac(self, ctx: DeployContext, ns: str, ready: Sequence[pulumi.Resource]) -> None:
        """The workflow pods' ServiceAccount, Role and RoleBinding in the lane (what the chart would create there)."""
        meta = ctx.meta(WORKFLOW_ACCOUNT, "devops", ns, app="argo-workflows")
        account = k8s.core.v1.ServiceAccount(
            f"{ns}/{WORKFLOW_ACCOUNT}", metadata=meta, opts=ctx.opts(self, depends_on=list(ready))
        )
        role = k8s.rbac.v1.Role(
            f"{ns}/{WORKFLOW_ACCOUNT}", metadata=meta, rules=workflow_role_rules(), opts=ctx.opts(self, depends_on=list(ready))
        )
        k8s.rbac.v1.RoleBinding(
            f"{ns}/{WORKFLOW_ACCOUNT}",
            metadata=meta,
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": WORKFLOW_ACCOUNT},
            subjects=[{"kind": "ServiceAccount", "name": WORKFLOW_ACCOUNT, "namespace": ns}],
            opts=ctx.opts(self, depends_on=[account, role]),
        )

    def _software_volumes(self, ctx: DeployContext, cfg: DevOpsConfig, ready: Sequence[pulumi.Resource]) -> list[pulumi.Resource]:
        """A PersistentVolume on the software share and the lane's claim of it, read-only and read-write."""
        ns, software = cfg.namespace, cfg.software
        volumes: list[pulumi.Resource] = []
        for claim, mode, read_only in SOFTWARE_CLAIMS:
            pv = k8s.core.v1.PersistentVolume(
                f"{ns}-{claim}",
                metadata=ctx.meta(f"{ns}-{claim}", "devops", app="software-storage"),
                spec=software_volume_spec(software, namespace=ns, claim=claim, mode=mode, read_only=read_only),
                opts=ctx.opts(self),
            )
            pvc = k8s.core.v1.PersistentVolumeClaim(
                f"{ns}/{claim}",
                metadata=ctx.meta(claim, "devops", ns, app="software-storage", stateful=Stateful.VOLUME),
                spec=software_claim_spec(software, volume=f"{ns}-{claim}", mode=mode),
                opts=ctx.opts(self, depends_on=[pv, *ready], stateful=Stateful.VOLUME),
            )
            volumes += [pv, pvc]
        return volumes

    def _registry(self, ctx: DeployContext, args: DevOpsArgs) -> list[pulumi.Resource]:
        """The registry: its namespace, certificate, data volume, Deployment and Service, and an IngressRouteTCP
        when it has an external hostname (which is then the registry's address)."""
        cfg = args.config.registry
        ns = REGISTRY_NAMESPACE
        namespace = LayerNamespace(
            ctx, self, ns, component="registry", app="registry", allows=registry_namespace_allows(), depends_on=args.depends_on
        )
        tls = namespace.scope.certificate(
            "registry-tls",
            dns_names=registry_dns_names(cfg),
            issuer=args.issuer,
            duration=args.certificate_duration,
            renew_before=args.renew_before,
        )
        data = k8s.core.v1.PersistentVolumeClaim(
            f"{ns}/registry-data",
            metadata=ctx.meta("registry-data", "registry", ns, app="registry", stateful=Stateful.VOLUME),
            spec=registry_claim_spec(cfg, ctx.storage_class_for(cfg.storage.storage_class)),
            opts=ctx.opts(self, depends_on=namespace.ready, stateful=Stateful.VOLUME),
        )
        deployment = k8s.apps.v1.Deployment(
            f"{ns}/registry",
            metadata=ctx.meta("registry", "registry", ns),
            spec=registry_deployment_spec(ctx.labels("registry", "registry")),
            opts=ctx.opts(self, depends_on=[data, tls]),
        )
        service = k8s.core.v1.Service(
            f"{ns}/registry",
            metadata=ctx.meta("registry", "registry", ns),
            spec=registry_service_spec(),
            opts=ctx.opts(self, depends_on=[deployment]),
        )
        objects: list[pulumi.Resource] = [*namespace.ready, tls, data, deployment, service]
        self.registry_host = f"{registry_service_host(ns)}:{REGISTRY_PORT}"
        if cfg.hostname:
            route = namespace.scope.but(app=None).custom(
                TRAEFIK_API, "IngressRouteTCP", "registry", registry_route_spec(cfg.hostname), depends_on=[service, tls]
            )
            objects.append(route)
            self.registry_host = cfg.hostname
        return objects
