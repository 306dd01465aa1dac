"""Slinky's admission over a whole set of objects: each custom resource, created as it is or updated from the
one deployed before, as the API server (CRD rules) and the webhook answer it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...rules.access import mapping
from ...rules.apimachinery import aggregate_message
from ...rules.podtemplates import display, group_of, kind_of, name_of, namespace_of
from ...rules.wire import is_unknown
from ..family import mark
from .crd import crd_rule_errors
from .scope import CREATE, SLINKY_GROUP, UPDATE, WEBHOOK_NAMES, WebhookScope
from .webhook import NOT_KNOWN, ConfigMaps, validate_create_errors, validate_update_errors


@dataclass(frozen=True)
class Verdict:
    """The API server's answer to one CREATE or UPDATE of a Slinky custom resource."""

    obj: Mapping[str, Any]
    operation: str
    errors: tuple[str, ...] = ()
    """What the webhook refuses it for."""
    rule_errors: tuple[str, ...] = ()
    """What the CRD's CEL rules refuse it for (checked first: the webhook is then not called)."""
    warnings: tuple[str, ...] = field(default=())
    judged: bool = True
    """Whether the webhook was called (False: the chart's values keep it from this namespace, or the CEL
    rules refused first)."""

    @property
    def admitted(self) -> bool:
        return not self.errors and not self.rule_errors

    @property
    def reasons(self) -> tuple[str, ...]:
        return () if self.admitted else (self.message,)

    def lines(self) -> list[str]:
        return [verdict_line(self)]

    @property
    def message(self) -> str:
        if self.rule_errors:
            return f'{kind_of(self.obj)}.{SLINKY_GROUP} "{name_of(self.obj)}" is invalid: ' + "; ".join(self.rule_errors)
        if self.errors:
            webhook = WEBHOOK_NAMES.get(kind_of(self.obj), "?")
            return f'admission webhook "{webhook}" denied the request: {aggregate_message(self.errors)}'
        scope = "" if self.judged else " (CRD rules only: the webhook does not run here)"
        return "admitted" + scope + (f" with warnings: {'; '.join(self.warnings)}" if self.warnings else "")


def is_slinky(obj: Mapping[str, Any]) -> bool:
    return group_of(obj) == SLINKY_GROUP and kind_of(obj) in WEBHOOK_NAMES


def validate_create(obj: Mapping[str, Any], config_maps: ConfigMaps | None = None, scope: WebhookScope | None = None) -> Verdict:
    """A CREATE of `obj`: the CRD's CEL rules, then (where the webhook runs) `ValidateCreate`."""
    rule_errors = tuple(crd_rule_errors(obj))
    if rule_errors or not (scope or WebhookScope()).judges(namespace_of(obj)):
        return Verdict(obj, CREATE, rule_errors=rule_errors, judged=False)
    warnings, errors = validate_create_errors(obj, config_maps)
    return Verdict(obj, CREATE, tuple(errors), (), tuple(warnings))


def validate_update(
    old: Mapping[str, Any], new: Mapping[str, Any], config_maps: ConfigMaps | None = None, scope: WebhookScope | None = None
) -> Verdict:
    """An UPDATE from `old` (as stored) to `new`: the CRD's CEL rules, then `ValidateUpdate`."""
    rule_errors = tuple(crd_rule_errors(new))
    if rule_errors or not (scope or WebhookScope()).judges(namespace_of(new)):
        return Verdict(new, UPDATE, rule_errors=rule_errors, judged=False)
    warnings, errors = validate_update_errors(old, new, config_maps)
    return Verdict(new, UPDATE, tuple(errors), (), tuple(warnings))


def config_maps_of(objects: Iterable[Mapping[str, Any]]) -> ConfigMaps:
    """The ConfigMaps among `objects` as the webhook would find them: their `data` (the webhook reads
    only `configMap.Data`'s keys, not `binaryData`); NOT_KNOWN where the data is not known yet."""
    found: dict[tuple[str, str], Any] = {}
    for obj in objects:
        if group_of(obj) == "" and kind_of(obj) == "ConfigMap":
            data = obj.get("data")
            if is_unknown(data):
                found[(namespace_of(obj), name_of(obj))] = NOT_KNOWN
            else:
                found[(namespace_of(obj), name_of(obj))] = {**mapping(data)}
    return lambda namespace, name: found.get((namespace, name))


def create_verdicts(objects: Sequence[Mapping[str, Any]], scope: WebhookScope | None = None) -> list[Verdict]:
    """Every Slinky custom resource of `objects`, created as it is (with the ConfigMaps among them)."""
    config_maps = config_maps_of(objects)
    return [validate_create(obj, config_maps, scope) for obj in objects if is_slinky(obj)]


def object_key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    return kind_of(obj), namespace_of(obj), name_of(obj)


def update_verdicts(
    old_objects: Sequence[Mapping[str, Any]], new_objects: Sequence[Mapping[str, Any]], scope: WebhookScope | None = None
) -> list[Verdict]:
    """Every Slinky custom resource of `new_objects` that `old_objects` already had (same kind,
    namespace and name): the UPDATE that takes it from the old to the new object. Objects only in
    `new_objects` are CREATEs (`create_verdicts`)."""
    old = {object_key(o): o for o in old_objects if is_slinky(o)}
    config_maps = config_maps_of(new_objects)
    return [
        validate_update(old[object_key(obj)], obj, config_maps, scope)
        for obj in new_objects
        if is_slinky(obj) and object_key(obj) in old
    ]


def verdict_line(verdict: Verdict) -> str:
    return f"  {mark(verdict.admitted)} {verdict.operation} {display(verdict.obj)}: {verdict.message}"
