"""How a family's rule runs in the security pack: over the stack's objects (`stack_objects`), a judge yields the refused
objects (`Finding`), and `admission_rule` reports each at the resource its object came from, but those pending and
those the rule's `exempt` knob selects."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from ..rules.access import glob
from ..rules.knobs import ObjectSelector, RuleConfig
from ..rules.podtemplates import kind_of, name_of, namespace_of
from ..rules.rule import StackRule
from ..rules.sources import chart_basename, helm_sources
from ..rules.view import ResourceView, StackView, Violation
from ..rules.wire import Unknown
from .family import application_key

C = TypeVar("C", bound=RuleConfig)


@dataclass(frozen=True)
class StackObjects:
    stack: StackView
    objects: list[Mapping[str, Any]]
    """Whole objects as plain dicts (patches are partial and left out, except Namespace patches, whose labels
    count)."""
    origin: dict[int, ResourceView]
    """The resource each object came from, by the object's id."""

    @cached_property
    def synced(self) -> dict[str, list[Mapping[str, Any]]]:
        """Per Argo CD Application (`namespace/name`), the objects its sync would apply: the resources whose parent
        is the Application or a component under it (computed once, when a rule asks)."""
        apps = {r.urn: r for r in self.stack.objects("argoproj.io", "Application") if r.urn}
        parents = {r.urn: r.parent for r in self.stack.resources if r.urn}
        synced: dict[str, list[Mapping[str, Any]]] = {}
        for resource in self.stack.objects():
            parent = resource.parent
            seen: set[str] = set()
            while parent and parent not in apps and parent not in seen:
                seen.add(parent)
                parent = parents.get(parent, "")
            if parent in apps:
                synced.setdefault(application_key(apps[parent].props), []).append(resource.props)
        return synced

    def violation(self, obj: Mapping[str, Any] | None, message: str) -> Violation:
        """`message` reported at the resource `obj` came from (no URN for any other object)."""
        resource = self.origin.get(id(obj)) if obj is not None else None
        return Violation(message, resource.urn if resource else None)


def stack_objects(stack: StackView) -> StackObjects:
    """The stack's Kubernetes objects as admission judges them (the rules here, and `./hpcforge admission`
    over a recorded stack)."""
    objects: list[Mapping[str, Any]] = []
    origin: dict[int, ResourceView] = {}
    for resource in stack.objects():
        if resource.is_patch and resource.kind != "Namespace":
            continue
        objects.append(resource.props)
        origin[id(resource.props)] = resource
    return StackObjects(stack, objects, origin)


def has_unknown(value: Any) -> bool:
    """Whether a value not known during a preview is anywhere in `value` (the rule cannot judge it)."""
    if isinstance(value, Unknown):
        return True
    if isinstance(value, Mapping):
        return any(has_unknown(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(has_unknown(v) for v in value)
    return False


def stack_chart_values(stack: StackView, chart: str) -> Mapping[str, Any] | None:
    """The values the stack gives chart `chart` (a helm.v4.Chart's or an Argo CD Application's); None without it."""
    for resource in stack.resources:
        for source in helm_sources(resource):
            if chart_basename(source.chart) == chart:
                return source.values
    return None


def _selected(selectors: tuple[ObjectSelector, ...], obj: Mapping[str, Any]) -> bool:
    return any(
        glob(s.namespace, namespace_of(obj)) and glob(s.kind, kind_of(obj)) and glob(s.name, name_of(obj)) for s in selectors
    )


@dataclass(frozen=True)
class Finding:
    """What a rule's judge refuses."""

    obj: Mapping[str, Any] | None
    """The object refused: the refusal is reported at the resource it came from, and the rule's `exempt` knob
    selects it (None: the stack as a whole)."""
    message: str
    pending: bool = False
    """A value the verdict depends on is not known yet (a preview): decided once it is known, not reported."""


Judge = Callable[[StackView, StackObjects, C], Iterator[Finding]]


def admission_rule(name: str, description: str, config: type[C], judge: Judge[C], remediation: str) -> StackRule[C]:
    """A stack rule that reports every `Finding` of `judge` over the stack's objects, but those pending and those
    the config's `exempt` selectors (where the rule has that knob) select."""

    def check(stack: StackView, settings: C) -> list[Violation]:
        found = stack_objects(stack)
        exempt: tuple[ObjectSelector, ...] = getattr(settings, "exempt", ())
        return [
            found.violation(f.obj, f.message)
            for f in judge(stack, found, settings)
            if not f.pending and not (f.obj is not None and _selected(exempt, f.obj))
        ]

    check.__name__ = check.__qualname__ = "check_" + name.replace("-", "_")
    return StackRule(name, description, config, check, remediation)
