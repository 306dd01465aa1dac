"""The DevOps layer's objects as plain data (pure: tested directly, no Pulumi): the argo-workflows chart's values,
the namespaces' traffic rules, the software volumes and claims, the WorkflowTemplate and its executor's Role, and
the registry's claim, Deployment, Service and IngressRouteTCP. layer.py registers them."""

from __future__ import annotations

from typing import Any

from ...chart_security import RESTRICTED_CONTAINER_SECURITY
from ...k8s.resources import (
    Allow,
    Port,
    container_resources,
    egress_to_apiserver,
    egress_to_internet,
    egress_to_namespaces,
    ingress_from_namespaces,
)
from ...versions import Images
from .config import DevOpsConfig, NfsShare, PipelineStep, Registry

WORKFLOWS_NAMESPACE = "argo"
REGISTRY_NAMESPACE = "registry"
WORKFLOW_ACCOUNT = "argo-workflow"
SOFTWARE_MOUNT = "/software"
REGISTRY_PORT = 5000
REGISTRY_SELECTOR = {"app.kubernetes.io/name": "registry", "app.kubernetes.io/component": "registry"}
SOFTWARE_CLAIMS = (("software-ro", "ReadOnlyMany", True), ("software-rw", "ReadWriteMany", False))
"""The claims on the software share: name, access mode, read-only (tests read it, the build writes it)."""


# --- namespaces and the chart ----------------------------------------------------------------------------------


def workflows_namespace_allows(cfg: DevOpsConfig) -> list[Allow]:
    """The traffic rules of the workflow controller's namespace: the API server, and Traefik to the UI if it is on."""
    return [
        egress_to_apiserver(),
        *([ingress_from_namespaces("allow-ingress-from-traefik", ["traefik"], Port(2746))] if cfg.ui.enabled else []),
    ]


def lane_namespace_allows(cfg: DevOpsConfig) -> list[Allow]:
    """The traffic rules of the lane's namespace: builds fetch sources and packages from the internet and push
    images to the registry."""
    return [
        egress_to_internet(80, 443),
        egress_to_apiserver(),
        *(
            [egress_to_namespaces("allow-egress-registry", [REGISTRY_NAMESPACE], Port(REGISTRY_PORT))]
            if cfg.registry.enabled
            else []
        ),
    ]


def workflows_values(cfg: DevOpsConfig, *, ingress_class: str, issuer: str) -> dict[str, Any]:
    """The argo-workflows chart's values: minimal CRDs, no workflow RBAC (layer.py creates it in the lane), the UI
    server with its Ingress when it has a hostname."""
    server: dict[str, Any] = {"enabled": cfg.ui.enabled, "resources": container_resources("50m", "128Mi", "512Mi")}
    if cfg.ui.enabled and cfg.ui.hostname:
        server["ingress"] = {
            "enabled": True,
            "ingressClassName": ingress_class,
            "hosts": [cfg.ui.hostname],
            "annotations": {"cert-manager.io/cluster-issuer": issuer},
            "tls": [{"hosts": [cfg.ui.hostname], "secretName": "argo-workflows-server-tls"}],
        }
    return {
        # Full CRDs are installed by a Helm hook Job (dropped by helm.v4.Chart): use the chart's
        # minimal CRDs, which Helm (and helm.v4.Chart) install as ordinary objects.
        "crds": {"install": True, "full": False, "keep": True},
        "images": {"pullPolicy": "IfNotPresent"},
        # No `controller.workflowNamespaces`: the chart would create the workflow ServiceAccount,
        # Role and RoleBinding in the lane's namespace, which the Argo CD AppProject does not
        # list as a destination (the sync is refused). hpcforge creates them itself (layer.py).
        "controller": {"resources": container_resources("100m", "256Mi", "1Gi")},
        "workflow": {"serviceAccount": {"create": False}, "rbac": {"create": False}},
        "executor": {"resources": container_resources("10m", "64Mi", "256Mi")},
        "server": server,
    }


# --- the pipeline ----------------------------------------------------------------------------------------------


def software_volume_spec(software: NfsShare, *, namespace: str, claim: str, mode: str, read_only: bool) -> dict[str, Any]:
    """The PersistentVolume on the software share, bound to one claim of the lane."""
    return {
        "capacity": {"storage": software.size},
        "accessModes": [mode],
        # The export outlives the cluster: Kubernetes never deletes its data.
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "",
        "nfs": {"server": software.server, "path": software.path, "readOnly": read_only},
        "mountOptions": ["nfsvers=4.1", "hard"],
        "claimRef": {"namespace": namespace, "name": claim},
    }


def software_claim_spec(software: NfsShare, *, volume: str, mode: str) -> dict[str, Any]:
    """The lane's claim of the software share's volume `volume`."""
    return {
        "accessModes": [mode],
        "storageClassName": "",
        "volumeName": volume,
        "resources": {"requests": {"storage": software.size}},
    }


def workflow_role_rules() -> list[dict[str, Any]]:
    """What a workflow pod's executor needs (argo-workflows 1.0.18 templates/controller/workflow-role.yaml:
    report its results as WorkflowTaskResults)."""
    return [{"apiGroups": ["argoproj.io"], "resources": ["workflowtaskresults"], "verbs": ["create", "patch"]}]


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


# --- the registry ----------------------------------------------------------------------------------------------


def registry_service_host(namespace: str = REGISTRY_NAMESPACE) -> str:
    return f"registry.{namespace}.svc.cluster.local"


def registry_namespace_allows() -> list[Allow]:
    return [Allow("allow-ingress-registry", "ingress", (Port(REGISTRY_PORT),))]


def registry_dns_names(registry: Registry, namespace: str = REGISTRY_NAMESPACE) -> list[str]:
    """The names on the registry's certificate: its Service's, and its external hostname if it has one."""
    return [registry_service_host(namespace), f"registry.{namespace}.svc", *([registry.hostname] if registry.hostname else [])]


def registry_claim_spec(registry: Registry, storage_class: str | None) -> dict[str, Any]:
    """The registry's data volume (None `storage_class`: the cluster default)."""
    return {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": registry.storage.size}},
        **({"storageClassName": storage_class} if storage_class else {}),
    }


def registry_deployment_spec(pod_labels: dict[str, str]) -> dict[str, Any]:
    """The registry's Deployment: one pod (Recreate: it holds a ReadWriteOnce volume), serving TLS itself with the
    `registry-tls` certificate, non-root with a read-only root filesystem."""
    return {
        "replicas": 1,
        "strategy": {"type": "Recreate"},
        "selector": {"matchLabels": REGISTRY_SELECTOR},
        "template": {
            "metadata": {"labels": pod_labels},
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
                            {"name": "REGISTRY_HTTP_ADDR", "value": f":{REGISTRY_PORT}"},
                            {"name": "REGISTRY_HTTP_TLS_CERTIFICATE", "value": "/certs/tls.crt"},
                            {"name": "REGISTRY_HTTP_TLS_KEY", "value": "/certs/tls.key"},
                            {"name": "REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY", "value": "/var/lib/registry"},
                            {"name": "REGISTRY_STORAGE_DELETE_ENABLED", "value": "true"},
                        ],
                        "ports": [{"name": "https", "containerPort": REGISTRY_PORT}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": REGISTRY_PORT, "scheme": "HTTPS"}},
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
    }


def registry_service_spec() -> dict[str, Any]:
    return {
        "selector": REGISTRY_SELECTOR,
        "ports": [{"name": "https", "port": REGISTRY_PORT, "targetPort": REGISTRY_PORT}],
    }


def registry_route_spec(hostname: str) -> dict[str, Any]:
    """The IngressRouteTCP that passes TLS for `hostname` through Traefik to the registry."""
    return {
        "entryPoints": ["websecure"],
        "routes": [{"match": f"HostSNI(`{hostname}`)", "services": [{"name": "registry", "port": REGISTRY_PORT}]}],
        # The registry terminates TLS itself with the cert-manager certificate `registry-tls`.
        "tls": {"passthrough": True},
    }
