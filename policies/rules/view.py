"""The resource view: one resource as a policy sees it (`ResourceView`), the whole stack
(`StackView`) and a stack rule's `Violation`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .access import mapping, text
from .wire import from_wire

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
