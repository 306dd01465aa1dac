"""Typed rule configuration: `knob(...)` fields, `RuleConfig` (policy config schema and parsing)
and object selectors."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self

from .access import glob, items, mapping

if TYPE_CHECKING:
    from .view import ResourceView


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
