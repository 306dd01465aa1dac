"""One owner per Kubernetes object: no object applied both by Pulumi and by a chart, or by two charts.

An object that two owners apply is fought over: Pulumi's and Argo CD's (or two Applications') server-side
applies take the fields from each other on every sync, Argo CD's self-heal reverts Pulumi's version and
Pulumi's next `up` reverts Argo CD's, and uninstalling either owner deletes the object under the other
(for a CRD: every custom resource of that kind with it). The owners of a stack's objects:

- `pulumi`: each Kubernetes object hpcforge registers itself (patches excluded: a `...Patch` resource
  changes fields of an object someone else owns, by design);
- each chart release (offline/charts/render.py `RenderedChart`): what an installer applies, its `crds/` and its
  templates (hooks excluded), applied by `helm.v4.Chart` (`pulumi` delivery) or by Argo CD (`argocd`).

The key of an object is its API group, kind, namespace and name: one object is served at several
versions of its group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from ..charts.render import RenderReport
from ..program.engine import RecordedStack

ObjectKey = tuple[str, str, str, str]
"""(API group, kind, namespace or "", name)."""


def object_key(document: Mapping[str, Any]) -> ObjectKey | None:
    """The identity of a Kubernetes object; None when it has no kind or name (not an object)."""
    api_version, kind = document.get("apiVersion"), document.get("kind")
    metadata = document.get("metadata") or {}
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(api_version, str) or not isinstance(kind, str) or not isinstance(name, str):
        return None
    group = api_version.rpartition("/")[0]
    namespace = metadata.get("namespace") or ""
    return group, kind, str(namespace), name


def describe_key(key: ObjectKey) -> str:
    group, kind, namespace, name = key
    kind_text = f"{kind}.{group}" if group else kind
    return f"{kind_text} {namespace}/{name}" if namespace else f"{kind_text} {name}"


def _chart_owner(delivery: str, release: str) -> str:
    return f"Argo CD Application argocd/{release}" if delivery == "argocd" else f"helm.v4.Chart {release}"


def stack_owners(stack: RecordedStack, report: RenderReport | None = None) -> list[tuple[str, Mapping[str, Any]]]:
    """(owner, object) for every object the stack applies: hpcforge's own, then each rendered chart's."""
    owned: list[tuple[str, Mapping[str, Any]]] = [
        (f"pulumi ({resource.type} {resource.name})", resource.inputs)
        for resource in stack.kubernetes_objects()
        if not resource.type.endswith("Patch")
    ]
    for chart in report.charts if report is not None else ():
        owner = _chart_owner(chart.release.delivery, chart.release.release)
        owned += [(owner, document) for document in chart.installed]
    return owned


def duplicate_owners(owned: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """One message per object that more than one owner applies (two Pulumi resources for one object count too)."""
    owners: dict[ObjectKey, list[str]] = {}
    for owner, document in owned:
        key = object_key(document)
        if key is not None:
            owners.setdefault(key, []).append(owner)
    return [
        f"{describe_key(key)} is applied by {len(found)} owners: {'; '.join(found)}"
        for key, found in sorted(owners.items())
        if len(found) > 1
    ]


def print_owners(stack: RecordedStack, report: RenderReport, out: TextIO) -> int:
    """`offline check --render-charts`: every object two owners apply, after the policy summary. Returns how many."""
    duplicated = duplicate_owners(stack_owners(stack, report))
    print("\nOwners (hpcforge's objects and every rendered chart's, offline/policy/owners.py):", file=out)
    for message in duplicated:
        print(f"  TWICE {message}", file=out)
    print(f"Owners summary: {len(duplicated)} object(s) applied by more than one owner", file=out)
    return len(duplicated)
