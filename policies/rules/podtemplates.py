"""The pods that a Kubernetes object makes, as plain data: for admission (Pod Security) and for
NetworkPolicy reachability (labels and container ports).

Works on plain object dicts (a manifest: apiVersion, kind, metadata, spec). Covers core workloads
(Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, CronJob,
PodTemplate) and the custom resources that an operator turns into pods:

- Slinky slurm-operator 1.2.1 (`slinky.slurm.net/v1beta1`, CRDs in ../shared/crds/slurm-operator-1.2.1):
  Controller, NodeSet, LoginSet, Accounting and RestApi carry `spec.template` (a PodTemplateSpec,
  `x-kubernetes-preserve-unknown-fields`) and one `corev1.Container` per role (`spec.slurmd`,
  `spec.slurmctld`, ...) that the operator merges into the template's container of the same name.
- Kueue AppWrapper (`workload.codeflare.dev`): each `spec.components[].template` is a whole object.
- Argo Workflows (`argoproj.io`): Workflow, WorkflowTemplate, ClusterWorkflowTemplate, CronWorkflow,
  one pod per container template.
- mariadb-operator MariaDB (`k8s.mariadb.com`): `spec.podSecurityContext`, `spec.securityContext`
  (the mariadb container), `spec.initContainers`, `spec.sidecarContainers`, `spec.volumes`,
  `spec.podMetadata.labels` over the operator's own (`app.kubernetes.io/name: mariadb`, `instance: <name>`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .access import get, items, mapping, text

_TEMPLATE_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"})
SLINKY_GROUP = "slinky.slurm.net"
# Slinky CRs: role containers (the first always exists, the others when set) and which are init containers.
SLINKY_ROLES: Mapping[str, tuple[str, ...]] = {
    "Controller": ("slurmctld", "reconfigure", "logfile"),
    "NodeSet": ("slurmd", "logfile"),
    "LoginSet": ("login", "initconf"),
    "Accounting": ("slurmdbd",),
    "RestApi": ("slurmrestd",),
}
SLINKY_INIT_ROLES = frozenset({"initconf"})
# The labels slurm-operator v1.2.1 gives the pods of each CR (internal/builder/labels/labels.go, With<Kind>Labels):
# app.kubernetes.io/name and .../component per kind, .../instance the CR's name, and for a NodeSet
# slinky.slurm.net/cluster its controllerRef's name. The pod's labels are the CR's own labels, then the template's,
# then these (worker_app.go BuildWorkerPodTemplate and the other *_app.go: WithLabels in that order, later wins).
SLINKY_POD_APP: Mapping[str, tuple[str, str]] = {
    "Controller": ("slurmctld", "controller"),
    "NodeSet": ("slurmd", "worker"),
    "LoginSet": ("login", "login"),
    "Accounting": ("slurmdbd", "accounting"),
    "RestApi": ("slurmrestd", "restapi"),
}
_SLURM_USER = {"runAsNonRoot": True, "runAsUser": 401, "runAsGroup": 401}  # internal/builder/common/const.go SlurmUserUid
_SLURMRESTD_USER = {"runAsNonRoot": True, "runAsUser": 65534, "runAsGroup": 65534}  # restapibuilder/restapi_app.go
# What slurm-operator v1.2.1 puts in the pods it builds before merging the CR over it
# (internal/builder/*builder/*_app.go; common/container.go BuildContainer: a strategic merge of the
# CR's container over this base, so a field the CR sets wins and one it leaves out stays).
SLINKY_POD_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "Controller": {"securityContext": {**_SLURM_USER, "fsGroup": 401}},  # controller_app.go
    "Accounting": {"securityContext": {**_SLURM_USER, "fsGroup": 401}},  # accounting_app.go
    "RestApi": {"securityContext": {**_SLURMRESTD_USER, "fsGroup": 65534}},  # restapi_app.go
}
SLINKY_CONTAINER_DEFAULTS: Mapping[tuple[str, str], Mapping[str, Any]] = {
    # workerbuilder/worker_app.go: slurmd runs privileged with these capabilities.
    ("NodeSet", "slurmd"): {
        "securityContext": {"privileged": True, "capabilities": {"add": ["BPF", "NET_ADMIN", "SYS_ADMIN", "SYS_NICE"]}}
    },
    ("Controller", "slurmctld"): {"securityContext": dict(_SLURM_USER)},
    ("Accounting", "slurmdbd"): {"securityContext": dict(_SLURM_USER)},
    ("RestApi", "slurmrestd"): {"securityContext": dict(_SLURMRESTD_USER)},
}


def merge_over(base: Any, patch: Any) -> Any:
    """A strategic merge of `patch` over `base` for the fields that matter here: maps merged key by
    key, anything else (lists included) replaced."""
    if isinstance(base, Mapping) and isinstance(patch, Mapping):
        return {**base, **{k: merge_over(base.get(k), v) for k, v in patch.items()}}
    return patch if patch is not None else base


MARIADB_GROUP = "k8s.mariadb.com"
ARGO_GROUP = "argoproj.io"
WORKFLOW_KINDS = frozenset({"Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"})
APPWRAPPER_GROUP = "workload.codeflare.dev"


def group_of(obj: Mapping[str, Any]) -> str:
    api = text(obj.get("apiVersion")) or ""
    return api.split("/", 1)[0] if "/" in api else ""


def kind_of(obj: Mapping[str, Any]) -> str:
    return text(obj.get("kind")) or ""


def name_of(obj: Mapping[str, Any]) -> str:
    return text(get(obj, "metadata", "name")) or ""


def namespace_of(obj: Mapping[str, Any]) -> str:
    return text(get(obj, "metadata", "namespace")) or ""


def display(obj: Mapping[str, Any]) -> str:
    """`Kind namespace/name` (or `Kind name` when cluster-scoped)."""
    ns = namespace_of(obj)
    return f"{kind_of(obj)} {ns}/{name_of(obj)}" if ns else f"{kind_of(obj)} {name_of(obj)}"


@dataclass(frozen=True)
class Container:
    path: str
    """Where it is in the object, e.g. `spec.template.spec.containers[manager]`."""
    body: Mapping[str, Any]
    kind: str = "containers"
    """`containers`, `initContainers` or `ephemeralContainers` (as upstream's visitor names them)."""

    @property
    def name(self) -> str:
        return text(self.body.get("name")) or "?"


@dataclass(frozen=True)
class PodTemplate:
    """One pod (template) an object makes: its metadata, pod spec and containers."""

    owner: Mapping[str, Any]
    path: str
    """Path of the pod spec in the owner, e.g. `spec.template.spec`."""
    namespace: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    spec: Mapping[str, Any]
    containers: tuple[Container, ...] = field(default_factory=tuple)

    @property
    def where(self) -> str:
        return f"{display(self.owner)} {self.path}"

    def container_ports(self) -> list[tuple[str | None, int, str]]:
        """(name, containerPort, protocol) of every container port (init containers included, as
        sidecars with restartPolicy Always may serve)."""
        found: list[tuple[str | None, int, str]] = []
        for container in self.containers:
            for port in items(container.body.get("ports")):
                number = get(port, "containerPort")
                if isinstance(number, int) and not isinstance(number, bool):
                    found.append((text(get(port, "name")), number, text(get(port, "protocol")) or "TCP"))
        return found


def _pod_containers(spec: Mapping[str, Any], path: str) -> list[Container]:
    found: list[Container] = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in enumerate(items(spec.get(key))):
            body = mapping(container)
            label = text(body.get("name")) or str(index)
            found.append(Container(f"{path}.{key}[{label}]", body, key))
    return found


def _str_map(value: Any) -> Mapping[str, str]:
    return {str(k): v for k, v in mapping(value).items() if isinstance(v, str)}


def _template(owner: Mapping[str, Any], path: str, template: Mapping[str, Any], namespace: str) -> PodTemplate:
    spec = mapping(template.get("spec"))
    metadata = mapping(template.get("metadata"))
    return PodTemplate(
        owner,
        f"{path}.spec",
        namespace,
        _str_map(metadata.get("labels")),
        _str_map(metadata.get("annotations")),
        spec,
        tuple(_pod_containers(spec, f"{path}.spec")),
    )


def _slinky(obj: Mapping[str, Any], namespace: str) -> PodTemplate:
    spec = mapping(obj.get("spec"))
    base = _template(obj, "spec.template", mapping(spec.get("template")), namespace)
    by_name = {c.name: c for c in base.containers if c.kind == "containers"}
    kept = [c for c in base.containers if not (c.kind == "containers" and c.name in SLINKY_ROLES[kind_of(obj)])]
    roles: list[Container] = []
    for position, role in enumerate(SLINKY_ROLES[kind_of(obj)]):
        body = spec.get(role)
        if body is None and position > 0:
            continue  # optional sidecar not configured
        template = by_name.get(role)
        merged = {**(template.body if template else {}), "name": role, **mapping(body)}
        merged = merge_over(SLINKY_CONTAINER_DEFAULTS.get((kind_of(obj), role), {}), merged)
        roles.append(Container(f"spec.{role}", merged, "initContainers" if role in SLINKY_INIT_ROLES else "containers"))
    pod_spec = merge_over(SLINKY_POD_DEFAULTS.get(kind_of(obj), {}), dict(base.spec))
    return PodTemplate(
        obj, base.path, namespace, slinky_pod_labels(obj, base.labels), base.annotations, pod_spec, (*kept, *roles)
    )


def slinky_pod_labels(obj: Mapping[str, Any], template: Mapping[str, str]) -> dict[str, str]:
    """The labels of the pods slurm-operator makes for a Slinky CR (SLINKY_POD_APP), `template` its pod template's."""
    app, component = SLINKY_POD_APP[kind_of(obj)]
    operator = {
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/instance": name_of(obj),
        "app.kubernetes.io/component": component,
    }
    if kind_of(obj) == "NodeSet":
        operator["slinky.slurm.net/cluster"] = text(get(obj, "spec", "controllerRef", "name")) or ""
    return {**_str_map(get(obj, "metadata", "labels")), **template, **operator}


def _mariadb(obj: Mapping[str, Any], namespace: str) -> PodTemplate:
    spec = mapping(obj.get("spec"))
    pod_spec: dict[str, Any] = {
        key: spec[key] for key in ("volumes", "serviceAccountName", "tolerations", "affinity", "nodeSelector") if key in spec
    }
    if "podSecurityContext" in spec:
        pod_spec["securityContext"] = spec["podSecurityContext"]
    found: list[Container] = []
    for index, container in enumerate(items(spec.get("initContainers"))):
        found.append(Container(f"spec.initContainers[{index}]", mapping(container), "initContainers"))
    main = {"name": "mariadb", **{k: spec[k] for k in ("image", "securityContext", "resources") if k in spec}}
    # pkg/builder/container_builder.go mariadbPorts: the `mariadb` port is spec.port (default 3306).
    port = spec.get("port", 3306)
    if isinstance(port, int) and not isinstance(port, bool):
        main["ports"] = [{"name": "mariadb", "containerPort": port}]
    found.append(Container("spec", main, "containers"))
    for index, container in enumerate(items(spec.get("sidecarContainers"))):
        found.append(Container(f"spec.sidecarContainers[{index}]", mapping(container), "containers"))
    metadata = mapping(spec.get("podMetadata"))
    # The operator's own labels (pkg/builder/labels/labels.go at v26.6.0: WithMariaDBSelectorLabels, app `mariadb`,
    # instance: the MariaDB's name), which the podMetadata labels come on top of.
    labels = {"app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": name_of(obj), **_str_map(metadata.get("labels"))}
    return PodTemplate(obj, "spec", namespace, labels, _str_map(metadata.get("annotations")), pod_spec, tuple(found))


def _workflow(obj: Mapping[str, Any], namespace: str) -> list[PodTemplate]:
    """Argo Workflows (CRDs in ../shared/crds/argo-workflows-4.0.6): the controller makes one pod per
    `container`/`script`/`containerSet` template, from the workflow's pod-level fields (`securityContext`,
    `hostNetwork`, `volumes`, `podMetadata`) and the template's (`securityContext`, `volumes`,
    `metadata`, `initContainers`, `sidecars`). The executor's own `init`/`wait` containers are injected
    by the controller from its configuration (not in the object) and are not judged here."""
    spec = mapping(obj.get("spec"))
    prefix = "spec"
    if kind_of(obj) == "CronWorkflow":
        spec, prefix = mapping(spec.get("workflowSpec")), "spec.workflowSpec"
    pod_meta = mapping(spec.get("podMetadata"))
    found: list[PodTemplate] = []
    for index, template in enumerate(items(spec.get("templates"))):
        body = mapping(template)
        where = f"{prefix}.templates[{text(body.get('name')) or index}]"
        containers: list[Container] = []
        for position, item in enumerate(items(body.get("initContainers"))):
            containers.append(Container(f"{where}.initContainers[{position}]", mapping(item), "initContainers"))
        for key in ("container", "script"):
            if isinstance(body.get(key), Mapping):
                containers.append(Container(f"{where}.{key}", {"name": "main", **mapping(body.get(key))}))
        for position, item in enumerate(items(get(body, "containerSet", "containers"))):
            containers.append(Container(f"{where}.containerSet.containers[{position}]", mapping(item)))
        for position, item in enumerate(items(body.get("sidecars"))):
            containers.append(Container(f"{where}.sidecars[{position}]", mapping(item)))
        if not any(c.kind == "containers" for c in containers):
            continue  # steps, dag, resource, suspend, http: no pod of its own
        pod_spec: dict[str, Any] = {key: spec[key] for key in ("hostNetwork", "securityContext", "volumes") if key in spec}
        if isinstance(body.get("securityContext"), Mapping):
            pod_spec["securityContext"] = body["securityContext"]
        if body.get("volumes"):
            pod_spec["volumes"] = [*items(pod_spec.get("volumes")), *items(body.get("volumes"))]
        metadata = mapping(body.get("metadata"))
        labels = {**_str_map(pod_meta.get("labels")), **_str_map(metadata.get("labels"))}
        annotations = {**_str_map(pod_meta.get("annotations")), **_str_map(metadata.get("annotations"))}
        found.append(PodTemplate(obj, where, namespace, labels, annotations, pod_spec, tuple(containers)))
    return found


def pod_templates(obj: Mapping[str, Any]) -> list[PodTemplate]:  # noqa: PLR0911 (one return per workload kind)
    """Every pod (template) that `obj` makes, nested objects (AppWrapper components) included."""
    kind, group = kind_of(obj), group_of(obj)
    spec = mapping(obj.get("spec"))
    namespace = namespace_of(obj)
    if kind == "Pod" and group == "":
        metadata = mapping(obj.get("metadata"))
        return [
            PodTemplate(
                obj,
                "spec",
                namespace,
                _str_map(metadata.get("labels")),
                _str_map(metadata.get("annotations")),
                spec,
                tuple(_pod_containers(spec, "spec")),
            )
        ]
    if kind in _TEMPLATE_KINDS and group in ("apps", "batch", ""):
        return [_template(obj, "spec.template", mapping(spec.get("template")), namespace)]
    if kind == "CronJob" and group == "batch":
        return [
            _template(obj, "spec.jobTemplate.spec.template", mapping(get(spec, "jobTemplate", "spec", "template")), namespace)
        ]
    if kind == "PodTemplate" and group == "":
        return [_template(obj, "template", mapping(obj.get("template")), namespace)]
    if group == SLINKY_GROUP and kind in SLINKY_ROLES:
        return [_slinky(obj, namespace)]
    if group == MARIADB_GROUP and kind == "MariaDB":
        return [_mariadb(obj, namespace)]
    if group == ARGO_GROUP and kind in WORKFLOW_KINDS:
        return _workflow(obj, namespace)
    if group == APPWRAPPER_GROUP and kind == "AppWrapper":
        found: list[PodTemplate] = []
        for index, component in enumerate(items(spec.get("components"))):
            inner = dict(mapping(get(component, "template")))
            if not inner:
                continue
            metadata = dict(mapping(inner.get("metadata")))
            metadata.setdefault("namespace", namespace)
            inner["metadata"] = metadata
            prefix = f"spec.components[{index}].template"
            found += [
                PodTemplate(
                    obj,
                    f"{prefix}.{t.path}",
                    t.namespace,
                    t.labels,
                    t.annotations,
                    t.spec,
                    tuple(Container(f"{prefix}.{c.path}", c.body, c.kind) for c in t.containers),
                )
                for t in pod_templates(inner)
            ]
        return found
    return []
