"""Fail closed (issue 33): random, seeded mutations of prod, diffed in-process, leave no changed resource and no changed
field without a verdict: each has an effect of a rule that answers for it, or an `unassessed` one naming it.

Two sources of change: the recorded resources' inputs mutated directly (many, fast), and prod's stack keys mutated
and the program run again (benchmarks/stackfuzz's base and writer; a few, about 3 s each)."""

from __future__ import annotations

import copy
import random
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.stackfuzz import Mutation, apply, cached_base, leaves
from offline.diff.base import State
from offline.diff.effects import SEVERITIES, UNASSESSED, Impact
from offline.diff.impact import assess
from offline.diff.plan import Plan, make_plan
from offline.diff.verdicts import build
from offline.program.engine import ProgramConfigError, RecordedStack, run_program
from offline.program.stackfile import StackFile, parse_stack_text
from tests.helpers import REPO

SEED = 33


def _silent(plan: Plan, impact: Impact) -> list[str]:
    """Each changed resource or field that no effect answers for (what fail-closed must make impossible)."""
    out = []
    for change in plan.changes:
        mine = [e for e in impact.effects if change.label in e.resources]
        if not mine:
            out.append(f"{change.label}: {change.op}, no effect")
        out += [f"{change.label}: {f.path}" for f in change.fields if not any(e.answers_for(f.path) for e in mine)]
    return out


def _mutated(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + rng.choice((1, 2, 10))
    if isinstance(value, str):
        return value + rng.choice(("-x", "0", " "))
    return "hpcforge-mutated"


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _paths(item, (*path, key))]
    if isinstance(value, list):
        return [p for index, item in enumerate(value) for p in _paths(item, (*path, index))]
    return [path]


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for part in path[:-1]:
        value = value[part]
    value[path[-1]] = new


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def test_random_input_mutations_leave_nothing_silent(prod_stack: RecordedStack) -> None:
    rng = random.Random(SEED)
    base = State.from_recorded(prod_stack, "prod")
    # The recording lists resources in the order their registrations completed, which varies between runs: sorted,
    # the seed picks the same mutations every run.
    base.resources.sort(key=lambda resource: str(resource["urn"]))
    seen: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
    for _ in range(60):
        head = copy.deepcopy(base)
        for resource in rng.sample(head.resources, rng.randint(1, 4)):
            paths = [p for p in _paths(resource["inputs"]) if p]
            for path in rng.sample(paths, min(len(paths), rng.randint(1, 3))):
                _set(resource["inputs"], path, _mutated(_get(resource["inputs"], path), rng))
        if rng.random() < 0.2:
            head.resources.remove(rng.choice(head.resources))
        plan = make_plan(base, head)
        impact = assess(plan)
        assert _silent(plan, impact) == []
        report = build(plan, impact)
        assert all(r["verdict"] in SEVERITIES for r in report["resources"])
        for resource in report["resources"]:
            seen[resource["verdict"]] += 1
    assert seen[UNASSESSED] and sum(seen.values()) > 60


def _stack_mutation(rng: random.Random) -> Mutation:
    config = cached_base("prod")
    candidates = [(p, v) for p, v in leaves(config) if isinstance(v, bool | int | float | str) and v != ""]
    path, value = rng.choice(candidates)
    return Mutation("prod", "value", path, _mutated(value, rng))


def _run(text: str) -> RecordedStack:
    values, secret_keys = parse_stack_text(text, "Pulumi.prod.yaml")
    return run_program(StackFile(name="prod", path=REPO / "Pulumi.prod.yaml", config=values, secret_keys=secret_keys), REPO)


def test_random_stack_key_mutations_leave_nothing_silent() -> None:
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory() as folder:
        # prod written the way the mutations are (inventories into files), unchanged: a leaf set to its own value
        path, value = leaves(cached_base("prod"))[0]
        base = State.from_recorded(_run(apply(Mutation("prod", "value", path, value), Path(folder))), "prod")
    ran = 0
    for _ in range(6):
        mutation = _stack_mutation(rng)
        with tempfile.TemporaryDirectory() as folder:
            try:
                head = _run(apply(mutation, Path(folder)))
            except ProgramConfigError:
                continue  # refused, naming the key: nothing to diff
        plan = make_plan(base, State.from_recorded(head, mutation.describe()))
        assert _silent(plan, assess(plan)) == [], mutation.describe()
        ran += 1
    assert ran >= 2


def test_a_generated_inventory_that_is_not_json_is_still_judged(prod_stack: RecordedStack) -> None:
    """hosts.json and accounts.json are read for the report's entities; text that is not what hpcforge writes (a
    recording edited, or from another version) gives no entities, not a traceback, and the resource keeps a verdict."""
    base = State.from_recorded(prod_stack, "prod")
    head = copy.deepcopy(base)
    edited = []
    for resource in head.resources:
        data = (resource.get("inputs") or {}).get("data") or {}
        for key in ("hosts.json", "accounts.json"):
            if key in data:
                data[key] += "0"
                edited.append(resource["name"])
    assert len(edited) == 2, edited
    plan = make_plan(base, head)
    impact = assess(plan)
    assert {c.name for c in plan.changes} == set(edited) and _silent(plan, impact) == []
