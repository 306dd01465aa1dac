"""DevOps layer: build and test the site's software off the production nodes.

Argo Workflows (its CRDs from the chart without Helm hooks), a namespace with read-only and
read-write volumes on the shared software storage (NFS), a WorkflowTemplate whose build step is
followed by test steps running in parallel, and an in-cluster container registry with TLS from
the internal CA and a persistent volume.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext, Stateful
from ...k8s.certificates import certificate
from ...k8s.resources import (
    RESTRICTED_CONTAINER_SECURITY,
    Allow,
    Namespace,
    Port,
    container_resources,
    egress_to_apiserver,
    egress_to_internet,
    egress_to_namespaces,
    ingress_from_namespaces,
)
from ...versions import Charts, Images
from .config import DevOpsConfig, PipelineStep

WORKFLOWS_NAMESPACE = "argo"
REGISTRY_NAMESPACE = "registry"
WORKFLOW_ACCOUNT = "argo-workflow"
SOFTWARE_MOUNT = "/software"

CHARTS = (ChartUse("argo-workflows", Charts.ARGO_WORKFLOWS, WORKFLOWS_NAMESPACE),)


def _step_template(step: PipelineStep, claim: str, read_only: bool) -> dict[str, Any]:
    return {
        "name": step.name,
        "container": {
            "image": step.image,
            "command": list(step.command),
            "resources": container_resources(step.cpu, step.memory),
            "volumeMounts": [{"name": claim, "mountPath": SOFTWARE_MOUNT, "readOnly": read_only}],
        },
    }


def workflow_role_rules() -> list[dict[str, Any]]:
    """What a workflow pod's executor needs (argo-workflows 1.0.18 templates/controller/workflow-role.yaml:
    report its results as WorkflowTaskResults)."""
    return [{"apiGroups": ["argoproj.io"], "resources": ["workflowtaskresults"], "verbs": ["create", "patch"]}]


def workflow_template_spec(config: DevOpsConfig) -> dict[str, Any]:
    """The pipeline: build (software read-write), then every test step in parallel (read-only)."""
    pipeline = config.pipeline
    tasks: list[dict[str, Any]] = [{"name": pipeline.build.name, "template": pipeline.build.name}]
    tasks += [{"name": test.name, "template": test.name, "dependencies": [pipeline.build.name]} for test in pipeline.tests]
    return {
        "entrypoint": "pipeline",
        "serviceAccountName": WORKFLOW_ACCOUNT,
        "podGC": {"strategy": "OnWorkflowSuccess"},
        "ttlStrategy": {"secondsAfterCompletion": 86400},
        "volumes": [
            {"name": "software-rw", "persistentVolumeClaim": {"claimName": "software-rw"}},
            {"name": "software-ro", "persistentVolumeClaim": {"claimName": "software-ro", "readOnly": True}},
        ],
        "templates": [
            {"name": "pipeline", "dag": {"tasks": tasks}},
            _step_template(pipeline.build, "software-rw", read_only=False),
            *(_step_template(test, "software-ro", read_only=True) for test in pipeline.tests),
        ],
    }


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
        controller_ns = Namespace(
            ctx,
            WORKFLOWS_NAMESPACE,
            component="workflows",
            parent=self,
            allows=[
                egress_to_apiserver(),
                *([ingress_from_namespaces("allow-ingress-from-traefik", ["traefik"], Port(2746))] if cfg.ui.enabled else []),
            ],
            depends_on=args.depends_on,
        )
        lane_ns = Namespace(
            ctx,
            ns,
            component="devops",
            parent=self,
            # Build images (e.g. Spack's) run as root; baseline still forbids privilege and host access.
            pod_security="baseline",
            # Builds fetch sources and packages from the internet and push images to the registry.
            allows=[
                egress_to_internet(80, 443),
                egress_to_apiserver(),
                *(
                    [egress_to_namespaces("allow-egress-registry", [REGISTRY_NAMESPACE], Port(5000))]
                    if cfg.registry.enabled
                    else []
                ),
            ],
            depends_on=args.depends_on,
        )
        server: dict[str, Any] = {"enabled": cfg.ui.enabled, "resources": container_resources("50m", "128Mi", "512Mi")}
        if cfg.ui.enabled and cfg.ui.hostname:
            server["ingress"] = {
                "enabled": True,
                "ingressClassName": args.ingress_class,
                "hosts": [cfg.ui.hostname],
                "annotations": {"cert-manager.io/cluster-issuer": args.issuer},
                "tls": [{"hosts": [cfg.ui.hostname], "secretName": "argo-workflows-server-tls"}],
            }
        chart = args.charts.deploy(
            "argo-workflows",
            Charts.ARGO_WORKFLOWS,
            WORKFLOWS_NAMESPACE,
            {
                # Full CRDs are installed by a Helm hook Job (dropped by helm.v4.Chart): use the chart's
                # minimal CRDs, which Helm (and helm.v4.Chart) install as ordinary objects.
                "crds": {"install": True, "full": False, "keep": True},
                "images": {"pullPolicy": "IfNotPresent"},
                # No `controller.workflowNamespaces`: the chart would create the workflow ServiceAccount,
                # Role and RoleBinding in the lane's namespace, which the Argo CD AppProject does not
                # list as a destination (the sync is refused). hpcforge creates them itself below.
                "controller": {"resources": container_resources("100m", "256Mi", "1Gi")},
                "workflow": {"serviceAccount": {"create": False}, "rbac": {"create": False}},
                "executor": {"resources": container_resources("10m", "64Mi", "256Mi")},
                "server": server,
            },
            parent=self,
            depends_on=[*controller_ns.ready, *lane_ns.ready],
        )
        self._workflow_rbac(ctx, ns, lane_ns.ready)
        software = cfg.software
        volumes: list[pulumi.Resource] = []
        for claim, mode, read_only in (("software-ro", "ReadOnlyMany", True), ("software-rw", "ReadWriteMany", False)):
            pv = k8s.core.v1.PersistentVolume(
                f"{ns}-{claim}",
                metadata=ctx.meta(f"{ns}-{claim}", "devops", app="software-storage"),
                spec={
                    "capacity": {"storage": software.size},
                    "accessModes": [mode],
                    # The export outlives the cluster: Kubernetes never deletes its data.
                    "persistentVolumeReclaimPolicy": "Retain",
                    "storageClassName": "",
                    "nfs": {"server": software.server, "path": software.path, "readOnly": read_only},
                    "mountOptions": ["nfsvers=4.1", "hard"],
                    "claimRef": {"namespace": ns, "name": claim},
                },
                opts=ctx.opts(self),
            )
            pvc = k8s.core.v1.PersistentVolumeClaim(
                f"{ns}/{claim}",
                metadata=ctx.meta(claim, "devops", ns, app="software-storage", stateful=Stateful.VOLUME),
                spec={
                    "accessModes": [mode],
                    "storageClassName": "",
                    "volumeName": f"{ns}-{claim}",
                    "resources": {"requests": {"storage": software.size}},
                },
                opts=ctx.opts(self, depends_on=[pv, *lane_ns.ready], stateful=Stateful.VOLUME),
            )
            volumes += [pv, pvc]
        template = k8s.apiextensions.CustomResource(
            f"{ns}/{cfg.pipeline.name}",
            api_version="argoproj.io/v1alpha1",
            kind="WorkflowTemplate",
            metadata=ctx.meta(cfg.pipeline.name, "devops", ns, app="argo-workflows"),
            spec=workflow_template_spec(cfg),
            opts=ctx.opts(self, depends_on=[chart, *volumes]),
        )
        objects: list[pulumi.Resource] = [chart, *volumes, template]
        self.registry_host = None
        if cfg.registry.enabled:
            objects += self._registry(ctx, args)
        self.ready = objects
        self.register_outputs({"workflowTemplate": f"{ns}/{cfg.pipeline.name}", "registry": self.registry_host})

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

    def _registry(self, ctx: DeployContext, args: DevOpsArgs) -> list[pulumi.Resource]:
        cfg = args.config.registry
        ns = REGISTRY_NAMESPACE
        service_host = f"registry.{ns}.svc.cluster.local"
        namespace = Namespace(
            ctx,
            ns,
            component="registry",
            parent=self,
            allows=[
                Allow("allow-ingress-registry", "ingress", (Port(5000),)),
            ],
            depends_on=args.depends_on,
        )
        dns_names = [service_host, f"registry.{ns}.svc", *([cfg.hostname] if cfg.hostname else [])]
        tls = certificate(
            ctx,
            self,
            name="registry-tls",
            namespace=ns,
            dns_names=dns_names,
            issuer=args.issuer,
            duration=args.certificate_duration,
            renew_before=args.renew_before,
            component="registry",
            app="registry",
            depends_on=namespace.ready,
        )
        storage_class = ctx.storage_class_for(cfg.storage.storage_class)
        data = k8s.core.v1.PersistentVolumeClaim(
            f"{ns}/registry-data",
            metadata=ctx.meta("registry-data", "registry", ns, app="registry", stateful=Stateful.VOLUME),
            spec={
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": cfg.storage.size}},
                **({"storageClassName": storage_class} if storage_class else {}),
            },
            opts=ctx.opts(self, depends_on=namespace.ready, stateful=Stateful.VOLUME),
        )
        selector = {"app.kubernetes.io/name": "registry", "app.kubernetes.io/component": "registry"}
        deployment = k8s.apps.v1.Deployment(
            f"{ns}/registry",
            metadata=ctx.meta("registry", "registry", ns),
            spec={
                "replicas": 1,
                "strategy": {"type": "Recreate"},
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {"labels": ctx.labels("registry", "registry")},
                    "spec": {
                        "automountServiceAccountToken": False,
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": 1000,
                            "runAsGroup": 1000,
                            "fsGroup": 1000,
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "containers": [
                            {
                                "name": "registry",
                                "image": Images.REGISTRY.ref,
                                "env": [
                                    {"name": "REGISTRY_HTTP_ADDR", "value": ":5000"},
                                    {"name": "REGISTRY_HTTP_TLS_CERTIFICATE", "value": "/certs/tls.crt"},
                                    {"name": "REGISTRY_HTTP_TLS_KEY", "value": "/certs/tls.key"},
                                    {"name": "REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY", "value": "/var/lib/registry"},
                                    {"name": "REGISTRY_STORAGE_DELETE_ENABLED", "value": "true"},
                                ],
                                "ports": [{"name": "https", "containerPort": 5000}],
                                "readinessProbe": {"httpGet": {"path": "/", "port": 5000, "scheme": "HTTPS"}},
                                "resources": container_resources("100m", "256Mi", "1Gi"),
                                "securityContext": {**RESTRICTED_CONTAINER_SECURITY, "readOnlyRootFilesystem": True},
                                "volumeMounts": [
                                    {"name": "data", "mountPath": "/var/lib/registry"},
                                    {"name": "certs", "mountPath": "/certs", "readOnly": True},
                                ],
                            }
                        ],
                        "volumes": [
                            {"name": "data", "persistentVolumeClaim": {"claimName": "registry-data"}},
                            {"name": "certs", "secret": {"secretName": "registry-tls"}},
                        ],
                    },
                },
            },
            opts=ctx.opts(self, depends_on=[data, tls]),
        )
        service = k8s.core.v1.Service(
            f"{ns}/registry",
            metadata=ctx.meta("registry", "registry", ns),
            spec={"selector": selector, "ports": [{"name": "https", "port": 5000, "targetPort": 5000}]},
            opts=ctx.opts(self, depends_on=[deployment]),
        )
        objects: list[pulumi.Resource] = [*namespace.ready, tls, data, deployment, service]
        self.registry_host = f"{service_host}:5000"
        if cfg.hostname:
            objects.append(
                k8s.apiextensions.CustomResource(
                    f"{ns}/registry",
                    api_version="traefik.io/v1alpha1",
                    kind="IngressRouteTCP",
                    metadata=ctx.meta("registry", "registry", ns),
                    spec={
                        "entryPoints": ["websecure"],
                        "routes": [{"match": f"HostSNI(`{cfg.hostname}`)", "services": [{"name": "registry", "port": 5000}]}],
                        # The registry terminates TLS itself with the cert-manager certificate `registry-tls`.
                        "tls": {"passthrough": True},
                    },
                    opts=ctx.opts(self, depends_on=[service, tls]),
                )
            )
            self.registry_host = cfg.hostname
        return objects
