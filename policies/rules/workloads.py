"""Pod specs and containers of workload objects: core workloads, Slinky CRs, Argo Workflows
templates and objects embedded in AppWrappers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .access import get, items, mapping, text
from .view import ResourceView

_TEMPLATE_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"})

SLINKY_GROUP = "slinky.slurm.net"
ARGO_GROUP = "argoproj.io"
# Slinky CRs: the main container of each kind, its optional sidecars, and which are init containers.
SLINKY_CONTAINERS: Mapping[str, tuple[str, ...]] = {
    "Controller": ("slurmctld", "reconfigure", "logfile"),
    "NodeSet": ("slurmd", "logfile"),
    "LoginSet": ("login", "initconf"),
    "Accounting": ("slurmdbd",),
    "RestApi": ("slurmrestd",),
}


@dataclass(frozen=True)
class PodSpecRef:
    path: str
    spec: Mapping[str, Any]


@dataclass(frozen=True)
class ContainerRef:
    path: str
    """Where the container is, e.g. `spec.template.spec.containers[kube-multus]`."""
    container: Mapping[str, Any]
    init: bool = False

    @property
    def name(self) -> str:
        return text(self.container.get("name")) or "?"


def pod_specs(resource: ResourceView) -> list[PodSpecRef]:
    """The pod specs of a workload object (and of Slinky CRs' `template.spec`)."""
    if not resource.is_object:
        return []
    kind, spec = resource.kind, resource.spec
    found: list[PodSpecRef] = []
    if kind in _TEMPLATE_KINDS and resource.group in ("apps", "batch", ""):
        found.append(PodSpecRef("spec.template.spec", mapping(get(spec, "template", "spec"))))
    elif kind == "CronJob" and resource.group == "batch":
        found.append(
            PodSpecRef("spec.jobTemplate.spec.template.spec", mapping(get(spec, "jobTemplate", "spec", "template", "spec")))
        )
    elif kind == "Pod" and resource.group == "":
        found.append(PodSpecRef("spec", spec))
    elif kind == "PodTemplate" and resource.group == "":
        found.append(PodSpecRef("template.spec", mapping(get(resource.props, "template", "spec"))))
    elif resource.group == SLINKY_GROUP and kind in SLINKY_CONTAINERS:
        found.append(PodSpecRef("spec.template.spec", mapping(get(spec, "template", "spec"))))
    elif resource.group == ARGO_GROUP and kind in WORKFLOW_KINDS:
        # Pod-level settings of Argo Workflows (hostNetwork, volumes); containers are per template.
        path, body = _workflow_spec(resource)
        found.append(PodSpecRef(path, body))
    for prefix, inner in embedded_objects(resource):
        found += [PodSpecRef(f"{prefix}.{ref.path}", ref.spec) for ref in pod_specs(inner)]
    return found


WORKFLOW_KINDS = frozenset({"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"})
# Argo Workflows template fields holding one container, and lists of containers.
_WORKFLOW_CONTAINER = ("container", "script")
_WORKFLOW_CONTAINER_LISTS = (("initContainers", True), ("sidecars", False))


def _workflow_spec(resource: ResourceView) -> tuple[str, Mapping[str, Any]]:
    if resource.kind == "CronWorkflow":
        return "spec.workflowSpec", mapping(resource.spec.get("workflowSpec"))
    return "spec", resource.spec


def embedded_objects(resource: ResourceView) -> list[tuple[str, ResourceView]]:
    """Kubernetes manifests embedded in a wrapper object (AppWrapper components), with their path."""
    found: list[tuple[str, ResourceView]] = []
    if resource.is_object and resource.group == "workload.codeflare.dev" and resource.kind == "AppWrapper":
        for index, component in enumerate(items(resource.spec.get("components"))):
            template = mapping(get(component, "template"))
            api, kind = text(template.get("apiVersion")), text(template.get("kind"))
            if api and kind:
                inner = ResourceView(type=f"kubernetes:{api}:{kind}", name=resource.name, urn=resource.urn, props=template)
                found.append((f"spec.components[{index}].template", inner))
    return found


def _workflow_containers(resource: ResourceView) -> list[ContainerRef]:
    if not (resource.is_object and resource.group == ARGO_GROUP and resource.kind in WORKFLOW_KINDS):
        return []
    path, spec = _workflow_spec(resource)
    found: list[ContainerRef] = []
    for index, template in enumerate(items(spec.get("templates"))):
        body = mapping(template)
        where = f"{path}.templates[{text(body.get('name')) or index}]"
        for key in _WORKFLOW_CONTAINER:
            if isinstance(body.get(key), Mapping):
                found.append(ContainerRef(f"{where}.{key}", {"name": key, **mapping(body.get(key))}))
        for key, init in _WORKFLOW_CONTAINER_LISTS:
            for position, container in enumerate(items(body.get(key))):
                item = mapping(container)
                found.append(ContainerRef(f"{where}.{key}[{text(item.get('name')) or position}]", item, init))
        for position, container in enumerate(items(get(body, "containerSet", "containers"))):
            item = mapping(container)
            found.append(ContainerRef(f"{where}.containerSet.containers[{text(item.get('name')) or position}]", item))
    return found


def containers(resource: ResourceView) -> list[ContainerRef]:
    """Every container of a workload: pod-spec containers and init containers, and Slinky CRs' role
    containers (`spec.slurmd`, ...; the main one always, sidecars when set), merged with a template
    container of the same name."""
    found: list[ContainerRef] = []
    for ref in pod_specs(resource):
        for key, init in (("initContainers", True), ("containers", False)):
            for index, container in enumerate(items(ref.spec.get(key))):
                body = mapping(container)
                label = text(body.get("name")) or str(index)
                found.append(ContainerRef(f"{ref.path}.{key}[{label}]", body, init))
    found += _workflow_containers(resource)
    if resource.is_object and resource.group == SLINKY_GROUP and resource.kind in SLINKY_CONTAINERS:
        roles = SLINKY_CONTAINERS[resource.kind]
        for position, role in enumerate(roles):
            role_body = resource.spec.get(role)
            if role_body is None and position > 0:
                continue  # optional sidecar not configured
            merged = {"name": role, **mapping(role_body)}
            # A template container of the same name is merged into the role container by the operator.
            found = [c for c in found if not (c.name == role and c.path.startswith("spec.template.spec.containers"))]
            template = next(
                (mapping(c) for c in items(get(resource.spec, "template", "spec", "containers")) if get(c, "name") == role),
                None,
            )
            if template is not None:
                merged = {**template, **merged}
            found.append(ContainerRef(f"spec.{role}", merged, init=role == "initconf"))
    return found
