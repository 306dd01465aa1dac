"""`offline diff` on a corpus of realistic changes to prod (tests/offline/diff/diff_corpus.py, and corpus_slurm.py): each case's worst impact is
the one written down for it, its plan names every resource that a render-and-compare of the two states shows
changed, and the unchanged stack diffs empty.

Base prod runs once per session; the head once per case (about 2-4 s each)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from components import versions
from offline.diff.base import State
from offline.diff.effects import SEVERITIES, Impact
from offline.diff.impact import assess
from offline.diff.plan import Plan, make_plan
from offline.program.documents import render_documents
from offline.program.engine import RecordedStack, run_program
from offline.program.stackfile import read_stack_file
from tests.helpers import REPO
from tests.offline.diff.corpus_operators import OPERATOR_CASES
from tests.offline.diff.corpus_slurm import SLURM_CASES
from tests.offline.diff.diff_corpus import CASES, Case, Site

ALL_CASES = (*CASES, *SLURM_CASES, *OPERATOR_CASES)


def _write(site: Site, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hosts.yaml").write_text(site.hosts)
    (folder / "users.yaml").write_text(site.users)
    stack = site.stack.replace("file: inventory/prod/hosts.yaml", f"file: {folder / 'hosts.yaml'}")
    stack = stack.replace("file: inventory/prod/users.yaml", f"file: {folder / 'users.yaml'}")
    path = folder / "Pulumi.prod.yaml"
    path.write_text(stack)
    return path


def _site() -> Site:
    return Site(
        (REPO / "Pulumi.prod.yaml").read_text(),
        (REPO / "inventory/prod/hosts.yaml").read_text(),
        (REPO / "inventory/prod/users.yaml").read_text(),
    )


def _run(path: Path) -> RecordedStack:
    return run_program(read_stack_file(path, name="prod"), REPO)


@pytest.fixture(scope="module")
def base_prod(tmp_path_factory: pytest.TempPathFactory) -> RecordedStack:
    """prod as deployed: the repository's stack and inventory, from a copy laid out as the cases' copies are."""
    return _run(_write(_site(), tmp_path_factory.mktemp("base")))


def _pinned(monkeypatch: pytest.MonkeyPatch, pins: dict[str, tuple[str, str, str]]) -> None:
    for dotted, (attribute, old, new) in pins.items():
        owner_name, name = dotted.split(".")
        owner = getattr(versions, owner_name)
        pin = getattr(owner, name)
        assert getattr(pin, attribute) == old, f"{dotted}.{attribute} is no longer {old!r}"
        bumped = dataclasses.replace(pin, **{attribute: new})
        monkeypatch.setattr(owner, name, bumped)
        # The layers' planned releases (CHARTS) hold the pin from import time.
        for module in [m for n, m in sys.modules.items() if n.startswith("components.layers.")]:
            uses = getattr(module, "CHARTS", None)
            if isinstance(uses, tuple) and any(getattr(u, "pin", None) is pin for u in uses):
                monkeypatch.setattr(
                    module, "CHARTS", tuple(dataclasses.replace(u, pin=bumped) if u.pin is pin else u for u in uses)
                )


def _rendered(stack: RecordedStack) -> dict[str, tuple[str, dict[str, Any]]]:
    """Render path -> (URN, document), as `offline render` writes them."""
    resources = [r for r in stack.resources if r.is_chart or r.is_manifest_file or r.is_kubernetes_object]
    return {path: (r.urn, doc) for r, (path, doc) in zip(resources, render_documents(stack), strict=True)}


def diff_case(
    case: Case, base: RecordedStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Plan, Impact, RecordedStack]:
    site = _site()
    case.edit(site)
    _pinned(monkeypatch, case.pins)
    head = _run(_write(site, tmp_path))
    plan = make_plan(State.from_recorded(base, "prod"), State.from_recorded(head, "edited"))
    return plan, assess(plan), head


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_corpus_change_has_expected_worst_impact_and_plan_covers_render_diff(
    case: Case, base_prod: RecordedStack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, impact, head = diff_case(case, base_prod, tmp_path, monkeypatch)
    detail = "\n".join(f"[{e.severity}] {e.what}" for e in impact.effects)
    assert impact.worst == case.worst, f"{case.id} ({case.what}): worst {impact.worst}, expected {case.worst}\n{detail}"
    if case.id == "unchanged":
        assert plan.empty and not plan.changes and not impact.effects
    else:
        assert not plan.empty, f"{case.id}: the edit changed nothing"
    assert set(case.drained) <= impact.drained_nodes, f"{case.id}: drained {sorted(impact.drained_nodes)}"
    labels = {f"{c.type.rpartition(':')[2]} {c.name}": c for c in plan.changes}
    for resource in case.resources:
        assert resource in labels, f"{case.id}: {resource} not in the plan: {sorted(labels)}"
    by_name = {c.name: c for c in plan.changes}
    for name, op in case.op.items():
        assert by_name[name].op == op
    # Render-and-compare: every rendered file that differs is a resource the plan names.
    before, after = _rendered(base_prod), _rendered(head)
    changed_urns = {before[p][0] if p in before else after[p][0] for p in set(before) ^ set(after)}
    changed_urns |= {after[p][0] for p in set(before) & set(after) if before[p][1] != after[p][1]}
    planned = {c.key for c in plan.changes}
    assert changed_urns <= planned, f"{case.id}: changed in the render but not in the plan: {sorted(changed_urns - planned)}"


def test_corpus_has_at_least_25_changes_against_prod() -> None:
    assert len([c for c in CASES if c.id != "unchanged"]) >= 25


def test_corpus_has_at_least_60_cases_and_every_severity(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: at least 60 cases, their ids unique, each severity expected somewhere; the count per severity printed."""
    assert len(ALL_CASES) >= 60
    assert len({c.id for c in ALL_CASES}) == len(ALL_CASES)
    counts = {s: sum(1 for c in ALL_CASES if c.worst == s) for s in SEVERITIES}
    with capsys.disabled():
        print(f"\ncorpus: {len(ALL_CASES)} cases; " + ", ".join(f"{s} {n}" for s, n in counts.items()))
    assert all(counts.values()), counts
