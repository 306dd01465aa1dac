"""The CRDs' CEL rules in `./hpcforge admission`: every custom resource of the stack (and of the charts,
with `--objects`/`--render-charts`) judged by the `x-kubernetes-validations` of its CRD under shared/crds
(offline/schema/cel.py), as a create, or, with `--previous-config`, as an update of the object the previous stack
file declares (same group, version, kind, namespace and name): that is where transition rules (`oldSelf`,
e.g. Kueue's immutable `LocalQueue.spec.clusterQueue`) run, and unchanged values are ratcheted. An object
whose change touches one of its `replaceOnChanges` paths is replaced by Pulumi (deleted and created again),
so it is judged as a create.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.paths import PROJECT_ROOT
from policies.rules.wire import is_unknown

from ..program.engine import UNKNOWN, UNKNOWN_TEXT
from ..schema import cel
from ..schema.crd import load_crd_index
from ..schema.kube import GroupVersionKind


def shared_dir() -> Path:
    """../shared beside the checkout, or $HPCFORGE_SHARED (as the tests find it)."""
    return Path(os.environ.get("HPCFORGE_SHARED", PROJECT_ROOT.parent / "shared")).resolve()


def _unknown(value: Any) -> bool:
    return is_unknown(value) or value in (UNKNOWN, UNKNOWN_TEXT)


def object_key(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    metadata = obj.get("metadata") or {}
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str(metadata.get("namespace") or ""), str(metadata.get("name")))


@dataclass(frozen=True)
class CelVerdict:
    obj: Mapping[str, Any]
    update: bool
    refusals: tuple[str, ...]

    @property
    def title(self) -> str:
        apiversion, kind, namespace, name = object_key(self.obj)
        where = f"{namespace}/{name}" if namespace else name
        return f"{kind} {where} ({apiversion}, {'update' if self.update else 'create'})"


def changed_paths(old: Any, new: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The paths (keys; list indexes as digits) where `old` and `new` differ."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return [
            p for key in sorted({*old, *new}, key=str) for p in changed_paths(old.get(key), new.get(key), (*prefix, str(key)))
        ]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [p for i, (a, b) in enumerate(zip(old, new, strict=True)) for p in changed_paths(a, b, (*prefix, str(i)))]
    return [] if old == new else [prefix]


def _touches(path: tuple[str, ...], pattern: str) -> bool:
    steps = pattern.replace("[", ".").replace("]", "").split(".")
    return all(p in ("*", q) for p, q in zip(steps, path, strict=False))


def replaced(old: Mapping[str, Any], new: Mapping[str, Any], replace_on_changes: Sequence[str]) -> bool:
    """Whether Pulumi replaces `old` by `new`: a change under (or above) a `replaceOnChanges` path."""
    return any(_touches(path, pattern) for path in changed_paths(old, new) for pattern in replace_on_changes)


def cel_verdicts(
    objects: Sequence[Mapping[str, Any]],
    previous: Sequence[Mapping[str, Any]] = (),
    shared: Path | None = None,
    replace_on_changes: Mapping[tuple[str, str, str, str], Sequence[str]] | None = None,
) -> list[CelVerdict]:
    """A verdict per custom resource of `objects` whose CRD is under `shared`/crds and has CEL rules.
    `replace_on_changes`: per object key (`object_key`), its `replaceOnChanges` paths."""
    folder = shared or shared_dir()
    if not (folder / "crds").is_dir():
        return []
    index = load_crd_index(folder)
    before = {object_key(o): o for o in previous}
    verdicts: list[CelVerdict] = []
    for obj in objects:
        crd = index.get(GroupVersionKind.of(obj))
        if crd is None or not crd.compiled_rules.rules:
            continue
        old = before.get(object_key(obj))
        if old is not None and replaced(old, obj, (replace_on_changes or {}).get(object_key(obj), ())):
            old = None
        refusals = cel.evaluate(crd.compiled_rules, obj, old, unknown=_unknown)
        verdicts.append(CelVerdict(obj, old is not None, tuple(refusals)))
    return verdicts


def report_lines(verdicts: Sequence[CelVerdict]) -> list[str]:
    refused = [v for v in verdicts if v.refusals]
    updates = sum(1 for v in verdicts if v.update)
    lines = [
        f"CRD validation rules (x-kubernetes-validations of shared/crds, evaluated by CEL): {len(verdicts)} custom "
        f"resources judged ({updates} as updates), {len(refused)} refused"
    ]
    for verdict in refused:
        lines.append(f"  REFUSED {verdict.title}")
        lines += [f"    {message}" for message in verdict.refusals]
    return lines
