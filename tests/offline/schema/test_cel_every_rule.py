"""Every CEL rule of every served version of every pinned CRD (../shared/crds) refuses a mutated object.

For each compiled rule, tests/offline/schema/cel_search.py searches, from the CRD's OpenAPI schema alone, for an
object that passes the structural schema and all the CRD's rules (as a create and as an unchanged update) and a
mutation of it that the rule refuses with its own message (for a transition rule: an update from the passing
object); the mutation passes the schema too unless the rule only restates it (`SCHEMA_REFUSES_TOO`). A rule the
search cannot reach from the minimal object gets a hand-written seed (`SEEDS`, the search goes on from it); a
rule nothing can make refuse is listed in `UNREACHED` with the reason. `--render-charts` and
`./hpcforge admission --objects` judge objects of every pinned kind with these rules, not only the kinds
hpcforge renders (tests/offline/schema/test_cel.py covers those against the rendered objects).
"""

from __future__ import annotations

import collections
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from offline.schema import cel
from offline.schema.crd import CrdIndex, CrdVersion, load_crd_index
from offline.schema.kube import GroupVersionKind
from tests.helpers import require_shared
from tests.offline.schema.cel_search import Found, Hints, Search, Seed, is_rule_message, minimal, only, variants

pytestmark = pytest.mark.schema

Obj = dict[str, Any]
Key = tuple[str, str, str]
"""(CRD file under shared/, kind, rule message)."""


def _workload(condition: str, with_admission: bool = False, **spec: Any) -> Seed:
    """A Workload (its minimal spec plus `spec`) whose status holds the condition `condition` True: the state the
    Workload's transition rules guard; `with_admission`: and an admission with one assignment per pod set."""

    def seed(obj: Obj, schema: Mapping[str, Any]) -> None:
        obj["spec"] = {**minimal(schema["properties"]["spec"]), **spec}
        state = {"type": condition, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "r", "message": "m"}
        obj["status"] = {"conditions": [state]}
        if with_admission:
            assignment = schema["properties"]["status"]["properties"]["admission"]["properties"]["podSetAssignments"]
            pod_sets = len(obj["spec"].get("podSets", []))
            obj["status"]["admission"] = {"clusterQueue": "q", "podSetAssignments": [minimal(assignment["items"])] * pod_sets}

    return seed


PRIORITY_CLASS: dict[str, Any] = {
    "priority": 1,
    "priorityClassRef": {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "a"},
}
WORKLOAD = "crds/kueue-0.19.2/Workload.yaml"

# Hand-written starting points for rules whose condition needs several fields set together, more than the
# search changes at once (it changes one value, then repairs what the other rules refuse). The search goes on
# from the seeded object; each entry must still be needed by one version at least (one the search does without
# fails the test).
SEEDS: dict[Key, Seed] = {
    # kueue v0.19.2 Workload, rules on the root object guarded by
    # `status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True')` (two fields of a list item,
    # five of them required) and by more fields:
    # `... && has(self.status.admission) ? size(self.spec.podSets) == size(self.status.admission.podSetAssignments)`
    (WORKLOAD, "Workload", "podSetAssignments must have the same number of podSets as the spec"): _workload(
        "QuotaReserved", with_admission=True
    ),
    # v1beta1: `... && has(oldSelf.spec.priorityClassSource) && has(self.spec.priorityClassSource) &&
    # (self.spec.priorityClassSource != 'kueue.x-k8s.io/workloadpriorityclass') && has(oldSelf.spec.priorityClassName)`
    (
        WORKLOAD,
        "Workload",
        "priorityClassName is immutable while workload quota reserved and priorityClassSource is not equal to "
        "kueue.x-k8s.io/workloadpriorityclass",
    ): _workload("QuotaReserved", priorityClassSource="scheduling.k8s.io/priorityclass", priorityClassName="a"),
    # v1beta2: `... && has(oldSelf.spec.priorityClassRef) && has(self.spec.priorityClassRef)` (and `.name`: group
    # scheduling.k8s.io, kind PriorityClass); a priorityClassRef needs `spec.priority` (the rule on spec).
    (WORKLOAD, "Workload", "priorityClassRef.group is immutable while workload quota reserved"): _workload(
        "QuotaReserved", **PRIORITY_CLASS
    ),
    (WORKLOAD, "Workload", "priorityClassRef.kind is immutable while workload quota reserved"): _workload(
        "QuotaReserved", **PRIORITY_CLASS
    ),
    (
        WORKLOAD,
        "Workload",
        "priorityClassRef.name is immutable for scheduling.k8s.io/priorityclass while workload quota reserved",
    ): _workload("QuotaReserved", **PRIORITY_CLASS),
}

# Rules no object can make refuse, with the reason (each must still be unreached: a stale entry fails the test).
UNREACHED: dict[Key, str] = {}

# Rules that refuse only objects the structural schema refuses too (the mutation found breaks the schema; each
# entry must still be needed).
SCHEMA_REFUSES_TOO: dict[Key, str] = {
    ("crds/traefik-41.3.0/APIAuth.yaml", "APIAuth", "trustedIssuers must not be empty when specified"): (
        "`size(self.trustedIssuers) > 0` restates the schema's `minItems: 1` on spec.jwt.trustedIssuers"
    ),
}


@pytest.fixture(scope="module")
def index() -> CrdIndex:
    return load_crd_index(require_shared("crds").parent)


def key(crd: CrdVersion, rule: cel.Rule) -> Key:
    return (crd.source, crd.gvk.kind, rule.message or f"failed rule: {rule.rule}")


def every_rule(index: CrdIndex) -> list[tuple[CrdVersion, cel.Rule]]:
    return [(crd, rule) for _, crd in sorted(index.entries.items(), key=lambda e: str(e[0])) for rule in crd.compiled_rules.rules]


def problems_of(crd: CrdVersion, rule: cel.Rule, found: Found) -> list[str]:
    """What is wrong with a found pair: the valid object refused, or the mutation not refused by this rule."""
    compiled = crd.compiled_rules
    problems = []
    if cel.evaluate(compiled, found.valid) or cel.evaluate(compiled, found.valid, found.valid):
        problems.append(f"the valid object is refused: {cel.evaluate(compiled, found.valid)}")
    schema_errors = [error.message for error in crd.validator.iter_errors(found.valid)]
    if schema_errors:
        problems.append(f"the valid object breaks the schema: {schema_errors}")
    if found.mutation_schema_valid is (key(crd, rule) in SCHEMA_REFUSES_TOO):
        problems.append(
            "stale SCHEMA_REFUSES_TOO entry: a mutation that passes the schema was found"
            if found.mutation_schema_valid
            else "the only mutation found breaks the schema too: list the rule in SCHEMA_REFUSES_TOO"
        )
    findings = cel.evaluate(compiled, found.mutated, found.old)
    own = [f for f in cel.evaluate(only(compiled, rule), found.mutated, found.old) if is_rule_message(rule, f)]
    if not own or not set(own) <= set(findings):
        problems.append(f"the mutation is not refused by the rule: {findings}")
    if (found.old is not None) is not rule.transition:
        problems.append("a transition rule must be judged as an update, any other as a create")
    return problems


@dataclass
class Tally:
    by_search: int = 0
    by_seed: int = 0
    unreached: int = 0


def test_every_rule_of_every_pinned_crd_refuses_a_mutated_object(index: CrdIndex) -> None:
    started = time.monotonic()
    tally = Tally()
    problems: list[str] = []
    unreached: collections.defaultdict[Key, list[str]] = collections.defaultdict(list)
    covered: set[Key] = set()
    seeds_needed: set[Key] = set()
    rules = every_rule(index)
    for crd, rule in rules:
        where = f"{crd.source} {crd.gvk.version} {crd.gvk.kind} {rule.where}: {rule.message or rule.rule}"
        assert rule.compile_error is None, where
        seed = SEEDS.get(key(crd, rule))
        found = Search(crd, rule, seed).run()
        if found is None:
            unreached[key(crd, rule)].append(where)
            tally.unreached += 1
            continue
        covered.add(key(crd, rule))
        problems += [f"{where}: {problem}" for problem in problems_of(crd, rule, found)]
        if seed is None:
            tally.by_search += 1
            continue
        tally.by_seed += 1
        unseeded = Search(crd, rule).run()
        if unseeded is None or not unseeded.mutation_schema_valid:
            seeds_needed.add(key(crd, rule))
    elapsed = time.monotonic() - started
    print(
        f"CEL rules: {len(rules)} in all, {tally.by_search} covered by the search, {tally.by_seed} from a hand-written "
        f"seed, {tally.unreached} unreached; {len(SCHEMA_REFUSES_TOO)} refuse only what the schema refuses ({elapsed:.1f} s)"
    )
    assert problems == []
    assert {k: v for k, v in unreached.items() if k not in UNREACHED} == {}, "reached by no search: list it in UNREACHED"
    assert [k for k in UNREACHED if k not in unreached] == [], "stale UNREACHED entries (now covered)"
    assert set(SEEDS) - seeds_needed == set(), "SEEDS entries the search does without (for every version): remove them"
    assert set(SCHEMA_REFUSES_TOO) <= covered
    assert len(rules) >= 335  # the count issue 29 gives for the pins of 2026-11


# --- the search itself -------------------------------------------------------------------------------------


def _crd(rule: str, node: dict[str, Any]) -> CrdVersion:
    schema = {
        "type": "object",
        "properties": {"spec": {**node, "x-kubernetes-validations": [{"rule": rule, "message": "m"}]}},
    }
    return CrdVersion(GroupVersionKind("example.com", "v1", "Thing"), "Namespaced", "test", schema)


def test_a_rule_no_object_can_break_is_not_reported_covered() -> None:
    crd = _crd("true || self.a == 'x'", {"type": "object", "properties": {"a": {"type": "string"}}})
    [rule] = crd.compiled_rules.rules
    assert Search(crd, rule).run() is None


def test_the_search_fills_required_fields_and_honours_enum_and_pattern() -> None:
    node = {
        "type": "object",
        "required": ["mode", "name"],
        "properties": {
            "mode": {"type": "string", "enum": ["Fast", "Slow"]},
            "name": {"type": "string", "pattern": "^[0-9]+$"},
            "extra": {"type": "integer"},
        },
    }
    crd = _crd("self.mode == 'Fast' || has(self.extra)", node)
    [rule] = crd.compiled_rules.rules
    found = Search(crd, rule).run()
    assert found is not None
    assert found.valid["spec"] == {"mode": "Fast", "name": "1"}
    assert found.mutated["spec"]["mode"] == "Slow" and "extra" not in found.mutated["spec"]


def test_a_transition_rule_is_found_as_an_update() -> None:
    crd = _crd("self == oldSelf", {"type": "object", "properties": {"a": {"type": "string"}}})
    [rule] = crd.compiled_rules.rules
    found = Search(crd, rule).run()
    assert found is not None and found.old == found.valid and found.mutated != found.valid


def test_hints_take_names_and_literals_but_not_regexes() -> None:
    hints = Hints.of("self.a == 'x' && self.n > 3 && self.b.matches(r'''[0-9]+''')")
    assert hints.names[:3] == ("self", "a", "n") and "b" in hints.names
    assert hints.strings == ("x",)
    assert 3 in hints.integers and 4 in hints.integers and 0 not in hints.integers


def test_variants_are_bounded_and_deterministic() -> None:
    node = {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}}
    hints = Hints.of("self.all(x, x.a != '')")
    first = list(variants([], node, hints))
    assert first == list(variants([], node, hints)) and len(first) < 100
    assert all("b" not in item for value in first for item in value)  # a property the rule does not name is left alone
