"""What every rule family shares: the resource view, secret and unknown markers, config knobs,
pod-spec and container walkers, Helm/Argo CD source walkers and image parsing.

Rules are plain functions over `ResourceView` / `StackView` and a typed config; nothing here imports
pulumi or pulumi_policy (stdlib only), so rules are unit-tested directly and run unchanged inside
the policy packs (see `policies/framework.py`, which builds the views from the Analyzer protocol).

Values inside `ResourceView.props` are plain Python values (dict, list, str, int, float, bool,
None) except for three markers:

- `SecretStr`, `SecretInt`, `SecretFloat`: a value that arrived wrapped in Pulumi's secret
  signature (every leaf under a secret map or list is marked). They are subclasses of `str`,
  `int` and `float`, so rules that do not care about secretness see ordinary values.
- `Unknown`: a value that is not known during a preview (the engine's unknown sentinels); it
  remembers whether it was inside a secret. Rules skip what they cannot know.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Self, TypeVar

# --- Pulumi's wire format -------------------------------------------------------------------------

SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
UNKNOWN_SENTINELS = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",  # boolean
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # number
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",  # string
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",  # array
        "030794c1-ac77-496b-92df-f27374a8bd58",  # asset
        "e48ece36-62e2-4504-bad9-02848725956a",  # archive
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",  # object
    }
)


class SecretStr(str):
    """A string that was a Pulumi secret on the wire."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SecretStr('[secret]')"


class SecretInt(int):
    """An integer that was a Pulumi secret on the wire."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SecretInt([secret])"


class SecretFloat(float):
    """A number that was a Pulumi secret on the wire."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SecretFloat([secret])"


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be known during a preview."""

    secret: bool = False

    def __repr__(self) -> str:
        return "Unknown(secret)" if self.secret else "Unknown()"


def is_secret(value: Any) -> bool:
    """True if `value` arrived as a Pulumi secret (or is an unknown inside a secret)."""
    if isinstance(value, Unknown):
        return value.secret
    return isinstance(value, SecretStr | SecretInt | SecretFloat)


def is_unknown(value: Any) -> bool:
    return isinstance(value, Unknown)


def _number(value: float, secret: bool) -> int | float:
    if value.is_integer():
        return SecretInt(int(value)) if secret else int(value)
    return SecretFloat(value) if secret else value


def from_wire(value: Any, *, in_secret: bool = False, special: Callable[[dict[str, Any]], Any] | None = None) -> Any:
    """Turn a deserialized protobuf Struct value (Pulumi's wire form) into plain values with markers.

    Secret wrappers `{SIG_KEY: SECRET_SIG, "value": v}` disappear and every leaf below them is
    marked; unknown sentinels become `Unknown`; integral numbers become `int` (protobuf has only
    doubles). Other signatures (assets, archives) go to `special` when given, else stay as they are.
    """
    if isinstance(value, Mapping):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            return from_wire(value.get("value"), in_secret=True, special=special)
        if sig is not None and special is not None:
            return special(dict(value))
        return {str(k): from_wire(v, in_secret=in_secret, special=special) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [from_wire(v, in_secret=in_secret, special=special) for v in value]
    if isinstance(value, bool) or value is None:
        return value  # a bool cannot be subclassed: secret booleans stay plain
    if isinstance(value, str):
        if value in UNKNOWN_SENTINELS:
            return Unknown(secret=in_secret)
        return SecretStr(value) if in_secret else value
    if isinstance(value, float):
        return _number(value, in_secret)
    if isinstance(value, int):
        return SecretInt(value) if in_secret else value
    return value


def to_plain(value: Any) -> Any:
    """Copy any Mapping/Sequence tree (e.g. pulumi_policy's proxies) into dicts and lists, keeping markers."""
    if isinstance(value, str | Unknown) or value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): to_plain(value[k]) for k in value}
    if isinstance(value, Sequence):
        return [to_plain(v) for v in value]
    return value


# --- small accessors ------------------------------------------------------------------------------


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    """`value` if it is a list (not a string), else an empty list."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    return []


def get(value: Any, *path: str | int) -> Any:
    """`value[path[0]][path[1]]...`, or None as soon as a step is missing."""
    current = value
    for step in path:
        if isinstance(step, int):
            seq = items(current)
            if not -len(seq) <= step < len(seq):
                return None
            current = seq[step]
        else:
            current = mapping(current).get(step)
        if current is None:
            return None
    return current


def text(value: Any) -> str | None:
    """`value` if it is a known string."""
    return value if isinstance(value, str) else None


def glob(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern)


def int_or_percent(value: Any) -> int | str | None:
    """A Kubernetes IntOrString: an int, a 'N%' string, or None when absent/invalid/unknown."""
    if isinstance(value, bool) or value is None or is_unknown(value):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        stripped = value.strip()
        if re.fullmatch(r"[0-9]+%", stripped):
            return stripped
        if stripped.isdigit():
            return int(stripped)
    return None


def resolve_int_or_percent(value: int | str, total: int, *, round_up: bool) -> int:
    """Kubernetes' GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%"))
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None or is_unknown(value):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


# --- config knobs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Knob:
    """One policy-config property: its JSON key, JSON schema (without default) and description."""

    key: str
    schema: Mapping[str, Any]
    description: str
    parse: Callable[[Any], Any] | None = None
    dump: Callable[[Any], Any] | None = None


def _freeze(value: Any) -> Any:
    """Config as immutable Python values (protobuf Structs carry every number as a double)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, Mapping):
        return {str(k): _freeze(v) for k, v in value.items()}
    return value


def _thaw(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_json = getattr(value, "to_json", None)
        if callable(to_json):
            return to_json()
    if isinstance(value, list | tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _thaw(v) for k, v in value.items()}
    return value


def knob(
    key: str,
    default: Any,
    schema: Mapping[str, Any],
    description: str,
    *,
    parse: Callable[[Any], Any] | None = None,
    dump: Callable[[Any], Any] | None = None,
) -> Any:
    """A dataclass field that is also a policy-config property (see `RuleConfig`)."""
    meta = {"knob": Knob(key, dict(schema), description, parse, dump)}
    if isinstance(default, dict):
        frozen = dict(default)
        return field(default_factory=lambda: dict(frozen), metadata=meta)
    return field(default=default, metadata=meta)


class RuleConfig:
    """Base of every rule's typed config: a frozen dataclass whose fields are `knob(...)`s.

    `schema()` gives the properties of the policy's config schema (with defaults, which the engine
    fills in); `from_config()` turns the engine's merged config back into the dataclass.
    """

    @classmethod
    def knobs(cls) -> list[tuple[dataclasses.Field[Any], Knob]]:
        assert dataclasses.is_dataclass(cls), f"{cls.__name__} must be a dataclass"
        return [(f, f.metadata["knob"]) for f in dataclasses.fields(cls) if "knob" in f.metadata]

    @classmethod
    def defaults(cls) -> Self:
        return cls()

    @classmethod
    def schema(cls) -> dict[str, dict[str, Any]]:
        properties: dict[str, dict[str, Any]] = {}
        defaults = cls()
        for f, k in cls.knobs():
            value = getattr(defaults, f.name)
            default = k.dump(value) if k.dump else _thaw(value)
            properties[k.key] = {**k.schema, "description": k.description, "default": default}
        return properties

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> Self:
        config = config or {}
        values: dict[str, Any] = {}
        for f, k in cls.knobs():
            if k.key not in config:
                continue
            raw = config[k.key]
            if raw is None:
                values[f.name] = None  # only nullable knobs validate with null
            else:
                values[f.name] = k.parse(raw) if k.parse else _freeze(raw)
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for f, k in self.knobs():
            value = getattr(self, f.name)
            result[k.key] = k.dump(value) if k.dump else _thaw(value)
        return result


STRING_LIST: Mapping[str, Any] = {"type": "array", "items": {"type": "string"}}


@dataclass(frozen=True)
class NoConfig(RuleConfig):
    """For rules without knobs."""


@dataclass(frozen=True)
class ObjectSelector:
    """Selects Kubernetes objects by namespace, kind and name (shell globs; cluster-scoped: namespace '')."""

    namespace: str = "*"
    kind: str = "*"
    name: str = "*"

    SCHEMA: ClassVar[dict[str, Any]] = {
        "namespace": {"type": "string"},
        "kind": {"type": "string"},
        "name": {"type": "string"},
    }

    def matches(self, resource: ResourceView) -> bool:
        return (
            glob(self.namespace, resource.namespace or "")
            and glob(self.kind, resource.kind or "")
            and glob(self.name, resource.object_name or "")
        )

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ObjectSelector:
        return cls(
            namespace=str(value.get("namespace", "*")),
            kind=str(value.get("kind", "*")),
            name=str(value.get("name", "*")),
        )

    def to_json(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "kind": self.kind, "name": self.name}


def selector_list_knob(key: str, description: str, default: tuple[ObjectSelector, ...] = ()) -> Any:
    return knob(
        key,
        default,
        {"type": "array", "items": {"type": "object", "properties": ObjectSelector.SCHEMA, "additionalProperties": False}},
        description,
        parse=lambda raw: tuple(ObjectSelector.from_json(mapping(v)) for v in items(raw)),
    )


# --- the resource view ----------------------------------------------------------------------------

# Components that render Kubernetes objects themselves: their children are upstream's objects, not
# hpcforge's own (under the real engine `helm.v4.Chart` registers each rendered object as a child).
RENDERING_COMPONENTS = frozenset(
    {
        "kubernetes:helm.sh/v4:Chart",
        "kubernetes:helm.sh/v3:Chart",
        "kubernetes:yaml/v2:ConfigGroup",
        "kubernetes:yaml/v2:ConfigFile",
        "kubernetes:yaml:ConfigGroup",
        "kubernetes:yaml:ConfigFile",
        "kubernetes:kustomize/v2:Directory",
        "kubernetes:kustomize:Directory",
    }
)


@dataclass(frozen=True)
class ResourceView:
    """One resource as a policy sees it: type, name, URN, inputs (plain, with markers) and options."""

    type: str
    name: str
    urn: str = ""
    props: Mapping[str, Any] = field(default_factory=dict)
    protect: bool = False
    ignore_changes: tuple[str, ...] = ()
    parent: str = ""
    dependencies: tuple[str, ...] = ()

    @classmethod
    def from_wire(
        cls,
        type_: str,
        name: str,
        raw_props: Mapping[str, Any],
        *,
        urn: str = "",
        protect: bool = False,
        ignore_changes: Sequence[str] = (),
        parent: str = "",
        dependencies: Sequence[str] = (),
    ) -> ResourceView:
        """Build a view from properties in wire form (secret signatures kept), as the engine sends them."""
        return cls(
            type=type_,
            name=name,
            urn=urn,
            props=from_wire(dict(raw_props)),
            protect=protect,
            ignore_changes=tuple(ignore_changes),
            parent=parent,
            dependencies=tuple(dependencies),
        )

    # --- Kubernetes object accessors ---

    @property
    def is_kubernetes(self) -> bool:
        return self.type.startswith("kubernetes:")

    @property
    def is_object(self) -> bool:
        """A Kubernetes object (a manifest with apiVersion and kind), not a chart or a provider."""
        return (
            self.is_kubernetes
            and isinstance(self.props.get("kind"), str)
            and isinstance(self.props.get("apiVersion"), str)
            and not self.type.startswith("kubernetes:helm.sh/")
        )

    @property
    def kind(self) -> str:
        return text(self.props.get("kind")) or ""

    @property
    def api_version(self) -> str:
        return text(self.props.get("apiVersion")) or ""

    @property
    def group(self) -> str:
        """API group ('' for the core group)."""
        api = self.api_version
        return api.split("/", 1)[0] if "/" in api else ""

    def is_kind(self, group: str, kind: str) -> bool:
        return self.is_object and self.group == group and self.kind == kind

    @property
    def metadata(self) -> Mapping[str, Any]:
        return mapping(self.props.get("metadata"))

    @property
    def object_name(self) -> str:
        return text(self.metadata.get("name")) or ""

    @property
    def namespace(self) -> str:
        return text(self.metadata.get("namespace")) or ""

    @property
    def labels(self) -> Mapping[str, Any]:
        return mapping(self.metadata.get("labels"))

    @property
    def annotations(self) -> Mapping[str, Any]:
        return mapping(self.metadata.get("annotations"))

    @property
    def spec(self) -> Mapping[str, Any]:
        return mapping(self.props.get("spec"))

    @property
    def display(self) -> str:
        """`Kind namespace/name` for objects, else the resource name."""
        if self.is_object:
            where = f"{self.namespace}/{self.object_name}" if self.namespace else self.object_name
            return f"{self.kind} {where}"
        return f"{self.type} {self.name}"

    # --- provenance ---

    @property
    def ancestor_types(self) -> tuple[str, ...]:
        """Types of the parents in the URN's qualified type (outermost first)."""
        parts = self.urn.split("::", 3)
        if len(parts) < 3:
            return ()
        return tuple(parts[2].split("$")[:-1])

    @property
    def rendered_by_component(self) -> bool:
        """Rendered by a Chart/ConfigGroup/kustomize component (upstream's object, not hpcforge's)."""
        return any(t in RENDERING_COMPONENTS for t in self.ancestor_types)

    @property
    def is_patch(self) -> bool:
        """A server-side-apply patch (`kubernetes:apps/v1:DeploymentPatch`, ...): a partial object."""
        return self.is_kubernetes and self.type.endswith("Patch")

    @property
    def authored(self) -> bool:
        """A whole Kubernetes object that hpcforge itself authors (not rendered by a chart, not a patch)."""
        return self.is_object and not self.rendered_by_component and not self.is_patch


@dataclass(frozen=True)
class Violation:
    message: str
    urn: str | None = None


@dataclass(frozen=True)
class StackView:
    resources: tuple[ResourceView, ...]

    def objects(self, group: str | None = None, kind: str | None = None) -> list[ResourceView]:
        return [
            r for r in self.resources if r.is_object and (group is None or r.group == group) and (kind is None or r.kind == kind)
        ]

    def by_urn(self, urn: str) -> ResourceView | None:
        return next((r for r in self.resources if r.urn == urn), None)


# --- rules ----------------------------------------------------------------------------------------

C = TypeVar("C", bound=RuleConfig)


@dataclass(frozen=True)
class ResourceRule(Generic[C]):
    """A check of one resource: `check(resource, config) -> [message, ...]`."""

    name: str
    description: str
    config: type[C]
    check: Callable[[ResourceView, C], list[str]]
    remediation: str = ""

    def __call__(self, resource: ResourceView, config: C | None = None) -> list[str]:
        return self.check(resource, config if config is not None else self.config())


@dataclass(frozen=True)
class StackRule(Generic[C]):
    """A check of the whole stack: `check(stack, config) -> [Violation, ...]`."""

    name: str
    description: str
    config: type[C]
    check: Callable[[StackView, C], list[Violation]]
    remediation: str = ""

    def __call__(self, stack: StackView, config: C | None = None) -> list[Violation]:
        return self.check(stack, config if config is not None else self.config())


Rule = ResourceRule[Any] | StackRule[Any]


# --- pod specs and containers ---------------------------------------------------------------------

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


# --- Helm and Argo CD sources ---------------------------------------------------------------------

HELM_CHART_TYPES = frozenset({"kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Release"})


@dataclass(frozen=True)
class HelmSource:
    """A Helm chart deployment: a helm.v4.Chart / helm.v3.Release, or an Argo CD Application's Helm source."""

    where: str
    """Path of the source in the resource, e.g. `spec.source` or `chart`."""
    chart: str | None
    version: Any
    repo: str | None
    values: Mapping[str, Any]
    values_path: str


@dataclass(frozen=True)
class GitSource:
    """An Argo CD Application source that is a Git directory (no `chart`)."""

    where: str
    repo: str | None
    path: str | None
    revision: Any


def is_application(resource: ResourceView) -> bool:
    return resource.is_kind(ARGO_GROUP, "Application")


def application_sources(resource: ResourceView) -> list[tuple[str, Mapping[str, Any]]]:
    spec = resource.spec
    found: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(spec.get("source"), Mapping):
        found.append(("spec.source", mapping(spec.get("source"))))
    for index, source in enumerate(items(spec.get("sources"))):
        found.append((f"spec.sources[{index}]", mapping(source)))
    return found


def _application_values(source: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], str]:
    helm = mapping(source.get("helm"))
    if isinstance(helm.get("valuesObject"), Mapping):
        return mapping(helm.get("valuesObject")), f"{where}.helm.valuesObject"
    raw = helm.get("values")
    if isinstance(raw, str) and raw.strip():
        try:
            import yaml

            parsed = yaml.safe_load(raw)
        except Exception:  # not YAML: nothing to inspect
            parsed = None
        if isinstance(parsed, Mapping):
            return parsed, f"{where}.helm.values"
    return {}, f"{where}.helm.valuesObject"


def helm_sources(resource: ResourceView) -> list[HelmSource]:
    if resource.type in HELM_CHART_TYPES:
        props = resource.props
        chart = text(props.get("chart"))
        return [
            HelmSource(
                where=resource.type.rsplit(":", 1)[-1],
                chart=chart,
                version=props.get("version"),
                repo=text(get(props, "repositoryOpts", "repo")),
                values=mapping(props.get("values")),
                values_path="values",
            )
        ]
    found: list[HelmSource] = []
    if is_application(resource):
        for where, source in application_sources(resource):
            if source.get("chart") is None:
                continue
            values, values_path = _application_values(source, where)
            found.append(
                HelmSource(
                    where=where,
                    chart=text(source.get("chart")),
                    version=source.get("targetRevision"),
                    repo=text(source.get("repoURL")),
                    values=values,
                    values_path=values_path,
                )
            )
    return found


def git_sources(resource: ResourceView) -> list[GitSource]:
    if not is_application(resource):
        return []
    return [
        GitSource(where, text(source.get("repoURL")), text(source.get("path")), source.get("targetRevision"))
        for where, source in application_sources(resource)
        if source.get("chart") is None
    ]


def chart_basename(chart: str | None) -> str:
    """`argo-cd` for `argo-cd`, `oci://ghcr.io/x/argo-cd` or `repo/argo-cd`."""
    if not chart:
        return ""
    return chart.rstrip("/").rsplit("/", 1)[-1]


def walk(value: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    """Every (path, key, value) under a values tree, depth first (list items have key '')."""
    if isinstance(value, Mapping):
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else str(key)
            yield child_path, str(key), child
            yield from walk(child, child_path)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            child_path = f"{path}[{index}]"
            yield child_path, "", child
            yield from walk(child, child_path)


# --- images ---------------------------------------------------------------------------------------

_DIGEST = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$")


@dataclass(frozen=True)
class ImageRef:
    registry: str
    repository: str
    tag: str | None
    digest: str | None

    @property
    def digest_valid(self) -> bool:
        return self.digest is not None and bool(_DIGEST.match(self.digest))


def parse_image(reference: str) -> ImageRef:
    """Split an image reference into registry, repository, tag and digest (Docker's rules)."""
    ref = reference.strip()
    digest: str | None = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    tag: str | None = None
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        ref, tag = ref.rsplit(":", 1)
    first, _, rest = ref.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, repository = first, rest
    else:
        registry, repository = "docker.io", ref
    return ImageRef(registry, repository, tag or None, digest)
