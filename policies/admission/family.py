"""What an admission family is: the interface every package of policies/admission/ that exports a `FAMILY` follows.

A family reproduces how one part of the cluster decides admission (the API server's Pod Security, Argo CD's
AppProjects, an operator's webhooks, ...) over a set of plain object dicts. It gives:

- `judge`: its `Verdict` on each object it judges (and, for Pod Security, the versions it cannot judge: `Judgement.gaps`);
- `updates` (where the upstream refuses changes): its verdicts on the objects a change updates in place;
- `rule`: the security pack's stack rule that reports its refusals (built with `admission_rule`, rule.py);
- its words in the admission report: `title`, `heading`, `summary`;
- `reproduces`: the packages whose `REPRODUCES` pin (pins.py) says which upstream release it follows.

The report (report.py), the rules (rules.py), the pins (pins.py), `./hpcforge admission` (offline/admission/) and the
diff's plan (offline/diff/plan.py) take every family from `families()` (families.py): adding a family is adding a
package that exports one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..rules.access import get, items, mapping, text
from ..rules.podtemplates import group_of, kind_of, name_of, namespace_of
from ..rules.rule import StackRule

ARGOCD_NAMESPACE = "argocd"
ARGO_GROUP = "argoproj.io"


@dataclass(frozen=True)
class Pin:
    """The upstream release a reproduction was written against, tied to the pin in components/versions.py (pins.py)."""

    software: str
    version: str
    """The version the reproduction was written against, as upstream tags it (a leading `v` is ignored)."""
    pinned: tuple[str, ...]
    """Where components/versions.py pins it: `Charts.X` (a ChartPin's version), `Images.X` (an ImagePin's tag) or a
    module constant holding the version."""
    source: str
    """What was read: the upstream repository and tag."""

    def __str__(self) -> str:
        return f"{self.software} {self.version}"


@runtime_checkable
class Verdict(Protocol):
    """One family's answer about one object, in three states: `admitted` is True (admitted), False (refused) or None
    (not judged: what the answer depends on is not among the objects, e.g. the pods behind a webhook's Service)."""

    @property
    def obj(self) -> Mapping[str, Any]:
        """The object the answer is about: a refusal is reported at the resource it came from."""
        ...

    @property
    def admitted(self) -> bool | None: ...

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why it is refused (or not judged), one text each, as the upstream words it; () when admitted."""
        ...

    def lines(self) -> list[str]:
        """Its lines in the admission report: the first starts with its `mark`, the reasons follow, indented."""
        ...


def mark(admitted: bool | None) -> str:
    """The report's mark of a verdict: `ok`, `DENY`, or `??` (not judged)."""
    return {True: "ok  ", False: "DENY", None: "??  "}[admitted]


def application_key(application: Mapping[str, Any]) -> str:
    """An Argo CD Application as `Cluster.synced` names it: `namespace/name`."""
    return f"{namespace_of(application) or ARGOCD_NAMESPACE}/{name_of(application)}"


def namespace_labels(objects: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """Labels per namespace, from Namespace objects (and patches of them, merged in order), and for a
    namespace no object creates, from the `managedNamespaceMetadata` of the Argo CD Application that
    creates it (`CreateNamespace=true`). None: labels not known (a preview value), so its pods cannot
    be judged."""
    labels: dict[str, dict[str, Any] | None] = {}
    managed: dict[str, dict[str, Any]] = {}
    for obj in objects:
        if group_of(obj) == "" and kind_of(obj) == "Namespace":
            found = get(obj, "metadata", "labels")
            known = labels.setdefault(name_of(obj), {})
            if found is not None and not isinstance(found, Mapping):
                labels[name_of(obj)] = None
            elif known is not None:
                known.update(mapping(found))
        elif group_of(obj) == ARGO_GROUP and kind_of(obj) == "Application":
            options = items(get(obj, "spec", "syncPolicy", "syncOptions"))
            destination = text(get(obj, "spec", "destination", "namespace"))
            if destination and "CreateNamespace=true" in options:
                metadata = mapping(get(obj, "spec", "syncPolicy", "managedNamespaceMetadata", "labels"))
                managed.setdefault(destination, {}).update(metadata)
    for namespace, found in managed.items():
        labels.setdefault(namespace, found)
    return labels


def no_chart_values(chart: str) -> Mapping[str, Any] | None:
    """No chart values known (`Cluster.chart_values` by default)."""
    return None


@dataclass(frozen=True)
class Cluster:
    """What the answers depend on beyond the objects judged."""

    synced: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    """Per Argo CD Application (`application_key`), the objects its sync would apply, when known."""
    previous: Sequence[Mapping[str, Any]] = ()
    """The objects deployed before: an object among them is updated, not created."""
    chart_values: Callable[[str], Mapping[str, Any] | None] = no_chart_values
    """The values the stack gives a chart, by the chart's name (None: the stack does not deploy it): where a webhook
    runs, how an operator is configured."""
    kubernetes_version: tuple[int, int] | None = None
    """The cluster's Kubernetes version (None: the one the families reproduce)."""


@dataclass(frozen=True)
class Judgement:
    """A family's verdicts over a set of objects."""

    verdicts: Sequence[Verdict]
    gaps: Sequence[str] = ()
    """What the family cannot judge as the cluster would, and counts as refused (e.g. a Pod Security version that is not
    reproduced), one message each."""


@dataclass(frozen=True)
class Family:
    name: str
    """The family's short name: its package's (`pss`, `slinky`, ...)."""
    order: int
    """Its place in the report, among the rules and in the admission command's first line (lowest first)."""
    title: str
    """How the admission command's first line names what it judges (`Kueue 0.19.2`)."""
    heading: str
    """The line over its verdicts in the report."""
    summary: str
    """Its clause of the report's summary line; `{refused}`, `{total}` and `{unjudged}` are filled in."""
    judge: Callable[[Sequence[Mapping[str, Any]], Cluster], Judgement]
    """Its verdicts on `objects` (each created as it is, or updated from `Cluster.previous` where the family
    judges updates)."""
    rule: StackRule[Any]
    """The security pack's rule that reports its refusals (`admission_rule`); `rule.config` holds its knobs."""
    reproduces: tuple[str, ...] = ()
    """The modules (`policies.admission.kueue`) whose `REPRODUCES` is the upstream release it follows."""
    updates: Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]], Sequence[Verdict]] | None = None
    """Its verdicts on the objects of the second set that the first already has (same kind, namespace and name): the
    UPDATE a change makes (None: the family judges creates only)."""
    gap_summary: str = ""
    """What the summary line calls its gaps (`Pod Security versions not reproduced`)."""
    advice: Callable[[Sequence[Verdict]], list[str]] | None = None
    """Lines printed after the report for its refused verdicts (the config key behind a refused field)."""

    @property
    def pins(self) -> tuple[Pin, ...]:
        """The `REPRODUCES` of each module of `reproduces`, as it is now."""
        return tuple(importlib.import_module(module).REPRODUCES for module in self.reproduces)

    @property
    def upstream(self) -> str:
        """The releases it reproduces, for a refusal's prefix: `slurm-operator 1.2.1`."""
        return ", ".join(str(pin) for pin in self.pins) or self.title
