"""URN stability: a snapshot of every stack's URNs in the repository, and the comparison against it.

A URN is how Pulumi knows a resource in the stack's state. When a change renames a resource or a
component, or moves it to another parent, its URN changes and `pulumi up` creates a new resource
and deletes the old one (for a Kubernetes object: the live object is deleted; for a generated
password: the key rotates). `tests/urns/<stack>.txt` lists the URNs of each stack; the program tier
compares the program against it:

- a URN in the snapshot that the program no longer registers fails, unless a resource declares
  an alias (`pulumi.Alias`, `ResourceOptions(aliases=...)`) that resolves to it, computed as the
  engine does (defaults from the resource, and the aliases inherited from its parents);
- a URN that is new only prints a note, so that parallel branches adding resources merge cleanly.

`./hpcforge urns --update` rewrites the snapshots; say why in the commit message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.paths import PROJECT_ROOT

from ..program.engine import RecordedResource, RecordedStack, engine_urn

SNAPSHOT_DIR = PROJECT_ROOT / "tests" / "urns"
HEADER = (
    "# URNs this stack registers (offline/urns/snapshot.py). A URN removed here without a pulumi.Alias\n"
    "# deletes the live resource; update with `./hpcforge urns --update` and say why in the commit.\n"
)


def snapshot_path(stack: str, directory: Path = SNAPSHOT_DIR) -> Path:
    return directory / f"{stack}.txt"


def stack_urns(stack: RecordedStack) -> list[str]:
    """Every URN the program registers (the root Stack excepted), sorted."""
    return sorted({r.urn for r in stack.resources})


def read_snapshot(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def write_snapshot(stack: RecordedStack, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "".join(f"{urn}\n" for urn in stack_urns(stack)))


def _spec(alias: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = alias.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def alias_urns(stack: RecordedStack) -> dict[str, str]:
    """Old URN -> the current URN that declares it as an alias.

    As the engine resolves alias specs (pulumi/pulumi pkg/resource/deploy/source_eval.go and
    step_generator.go): an unset name, type, stack or project is the resource's own; an unset
    parent (`parentUrn: ""`) is the resource's parent and every alias of that parent (children
    inherit their parent's aliases); `noParent` means the root. An alias given as a URN is used as is.
    """
    by_urn = {r.urn: r for r in stack.resources}
    cache: dict[str, set[str]] = {}

    def aliases_of(resource: RecordedResource) -> set[str]:
        if resource.urn in cache:
            return cache[resource.urn]
        cache[resource.urn] = set()  # cycle guard
        parent = by_urn.get(resource.parent)
        inherited = aliases_of(parent) if parent is not None else set()
        found: set[str] = set()
        specs: list[Mapping[str, Any]] = [{}]  # the resource itself, under its parent's aliases
        for alias in resource.aliases:
            if isinstance(alias.get("urn"), str) and alias["urn"]:
                found.add(alias["urn"])
            else:
                specs.append(_spec(alias))
        for spec in specs:
            name = str(spec.get("name") or resource.name)
            type_ = str(spec.get("type") or resource.type)
            stack_name = str(spec.get("stack") or stack.stack)
            project = str(spec.get("project") or stack.project)
            if spec.get("noParent"):
                parents = [""]
            elif spec.get("parentUrn"):
                parents = [str(spec["parentUrn"])]
            else:
                parents = [resource.parent, *sorted(inherited)]
            found |= {engine_urn(stack_name, project, p, type_, name) for p in parents}
        found.discard(resource.urn)
        cache[resource.urn] = found
        return found

    result: dict[str, str] = {}
    for resource in stack.resources:
        for old in aliases_of(resource):
            result.setdefault(old, resource.urn)
    return result


@dataclass(frozen=True)
class UrnDiff:
    removed: list[str] = field(default_factory=list)
    """In the snapshot, not registered, and no alias covers it: `pulumi up` would delete it."""
    aliased: dict[str, str] = field(default_factory=dict)
    """In the snapshot, not registered, covered by the alias of the current URN (value)."""
    added: list[str] = field(default_factory=list)
    """Registered, not in the snapshot (new resources; or renames that aliases cover)."""

    @property
    def ok(self) -> bool:
        return not self.removed


def compare(snapshot: Iterable[str], stack: RecordedStack) -> UrnDiff:
    current = set(stack_urns(stack))
    old = set(snapshot)
    aliases = alias_urns(stack)
    gone = sorted(old - current)
    return UrnDiff(
        removed=[u for u in gone if u not in aliases],
        aliased={u: aliases[u] for u in gone if u in aliases},
        added=sorted(current - old),
    )


def report(stack: str, diff: UrnDiff) -> list[str]:
    """Readable lines for a comparison."""
    lines = [f"{stack}: URN removed without an alias (pulumi up would delete it): {u}" for u in diff.removed]
    lines += [f"{stack}: URN renamed, covered by an alias on {new}: {old}" for old, new in diff.aliased.items()]
    lines += [f"{stack}: new URN (not in the snapshot yet): {u}" for u in diff.added]
    return lines
