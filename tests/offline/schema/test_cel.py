"""The CRDs' CEL rules (`x-kubernetes-validations`), evaluated from the CRD files by offline/schema/cel.py.

(a) every rule of every pinned CRD under ../shared/crds compiles (counts by project printed);
(b) every custom resource dev and prod render passes every rule;
(c) every rule that judges a value hpcforge renders refuses a mutated copy of that object (`MUTATIONS`,
    plus a generated mutation for every `self == oldSelf` transition rule);
(d) upstream's own cases, replayed through the generic path: kubernetes-sigs/kueue v0.19.2
    test/integration/singlecluster/webhook/core/clusterqueue_test.go ("Validate ClusterQueue on
    creation": `BeInvalidError` is the CRD's answer), resourceflavor_test.go and localqueue_test.go
    (as transcribed in tests/policies/admission/test_admission_kueue.py), and the Kubernetes `isURL` examples of
    k8s.io/apiserver v0.33.9 pkg/cel/library/urls.go.
"""

from __future__ import annotations

import collections
import copy
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from offline.admission import cel as cel_admission
from offline.program.documents import render_documents
from offline.program.engine import RecordedStack
from offline.schema import cel
from offline.schema.crd import CrdIndex, count_cel_rules, load_crd_index
from offline.schema.kube import GroupVersionKind
from policies.admission import kueue, slinky
from tests.helpers import REPO, require_shared, write_variant
from tests.policies.admission.test_admission_kueue import INTEGRATION_CLUSTER_QUEUES, lq, rf
from tests.policies.admission.test_admission_slinky import CEL_CASES as SLINKY_CEL_CASES
from tests.policies.admission.test_admission_slinky import controller, nodeset, with_spec

pytestmark = pytest.mark.schema

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def index() -> CrdIndex:
    require_shared("crds")
    return load_crd_index(require_shared("crds").parent)


def refusals(index: CrdIndex, obj: Obj, old: Obj | None = None) -> list[str]:
    crd = index.get(GroupVersionKind.of(obj))
    assert crd is not None, GroupVersionKind.of(obj)
    return cel.evaluate(crd.compiled_rules, obj, old)


# --- (a) every rule compiles ----------------------------------------------------------------------------


def test_every_rule_of_every_pinned_crd_compiles(index: CrdIndex) -> None:
    by_project: collections.Counter[str] = collections.Counter()
    expected: collections.Counter[str] = collections.Counter()
    failures = []
    for crd in index.entries.values():
        project = crd.source.split("/")[1]
        expected[project] += count_cel_rules(crd.openapi_schema)
        for rule in crd.compiled_rules.rules:
            by_project[project] += 1
            if rule.compile_error is not None:
                failures.append(f"{crd.gvk} {rule.where}: {rule.compile_error}")
    print("CEL rules compiled, by CRD project:", dict(by_project.most_common()), "total", sum(by_project.values()))
    assert failures == []
    assert by_project == expected  # every x-kubernetes-validations entry was found and compiled: none skipped
    assert sum(by_project.values()) >= 335  # the count issue 29 gives for the pins of 2026-11


def test_a_rule_that_does_not_compile_is_reported_not_skipped() -> None:
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": "self.a +", "message": "m"}]}
    compiled = cel.compile_rules(schema)
    [rule] = compiled.rules
    assert rule.compile_error is not None and "Syntax error" in rule.compile_error
    [message] = cel.evaluate(compiled, {"a": 1})
    assert message.startswith("<root>: rule does not compile: ")


def test_transition_rules_are_told_apart(index: CrdIndex) -> None:
    transition = [
        (str(crd.gvk), rule.where) for crd in index.entries.values() for rule in crd.compiled_rules.rules if rule.transition
    ]
    assert ("kueue.x-k8s.io/v1beta2 LocalQueue", "spec.clusterQueue") in transition
    assert all("oldSelf" in rule.rule for crd in index.entries.values() for rule in crd.compiled_rules.rules if rule.transition)
    assert not any(
        "oldSelf" in rule.rule for crd in index.entries.values() for rule in crd.compiled_rules.rules if not rule.transition
    )


# --- (b) dev and prod pass every rule -------------------------------------------------------------------


STACKS = ["dev", "prod"]


@pytest.fixture(params=STACKS)
def rendered(request: pytest.FixtureRequest, dev_stack: RecordedStack, prod_stack: RecordedStack) -> list[Obj]:
    return [d for _, d in render_documents(dev_stack if request.param == "dev" else prod_stack)]


def test_every_custom_resource_passes_every_rule(rendered: list[Obj], index: CrdIndex) -> None:
    judged = 0
    for obj in rendered:
        crd = index.get(GroupVersionKind.of(obj))
        if crd is None:
            continue
        assert cel.evaluate(crd.compiled_rules, obj) == [], (GroupVersionKind.of(obj), obj["metadata"].get("name"))
        assert cel.evaluate(crd.compiled_rules, obj, obj) == []  # and as an unchanged update
        judged += len(cel.applicable(crd.compiled_rules, obj))
    assert judged > 0


# --- (c) a mutated object each rule refuses -------------------------------------------------------------


def _first(items: list[Obj], test: Callable[[Obj], bool]) -> Obj:
    return next(item for item in items if test(item))


def _dag(obj: Obj) -> Obj:
    return _first(obj["spec"]["templates"], lambda t: "dag" in t)


def _task(obj: Obj) -> Obj:
    return _dag(obj)["dag"]["tasks"][0]


def _set(path: str, value: Any) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        *parents, last = path.split(".")
        node = obj
        for step in parents:
            node = node.setdefault(step, {})
        node[last] = value

    return mutate


def _drop(*paths: str) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        for path in paths:
            *parents, last = path.split(".")
            node = obj
            for step in parents:
                node = node[step]
            node.pop(last, None)

    return mutate


def _toleration(**fields: Any) -> Callable[[Obj], None]:
    return lambda obj: obj["spec"].setdefault("tolerations", []).append(fields)


def _all(*mutations: Callable[[Obj], None]) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        for mutation in mutations:
            mutation(obj)

    return mutate


def _task_fields(**fields: Any) -> Callable[[Obj], None]:
    return lambda obj: _task(obj).update(fields)


def _galera(obj: Obj) -> None:
    obj["spec"].update(galera={"enabled": True}, replicas=2, replicasAllowEvenNumber=False)


def _borrowing_without_cohort(obj: Obj) -> None:
    obj["spec"].pop("cohortName", None)
    obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = "1"


# (kind, rule message) -> a mutation of the rendered object the rule must refuse, as a create.
MUTATIONS: dict[tuple[str, str], Callable[[Obj], None]] = {
    ("WorkflowTemplate", "template must have at most one template type"): lambda o: _dag(o).update(suspend={}),
    ("WorkflowTemplate", "timeout cannot be applied to steps or dag templates"): lambda o: _dag(o).update(timeout="1m"),
    ("WorkflowTemplate", "activeDeadlineSeconds is only valid for leaf templates"): lambda o: _dag(o).update(
        activeDeadlineSeconds=60
    ),
    ("WorkflowTemplate", "cannot use both 'depends' and 'dependencies'"): _task_fields(depends="a", dependencies=["a"]),
    ("WorkflowTemplate", "cannot use 'continueOn' when using 'depends'"): _task_fields(depends="a", continueOn={"failed": True}),
    ("WorkflowTemplate", "task name cannot begin with a digit when using 'depends' or 'dependencies'"): _task_fields(
        name="1st", dependencies=["a"]
    ),
    (
        "MariaDB",
        "An odd number of MariaDB instances (mariadb.spec.replicas) is required to avoid split brain situations for "
        "Galera. Use 'mariadb.spec.replicasAllowEvenNumber: true' to disable this validation.",
    ): _galera,
    ("ClusterQueue", "borrowingLimit must be nil when cohort is empty"): _borrowing_without_cohort,
    ("ClusterQueue", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"): _set(
        "spec.preemption", {"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "LowerPriority"}}
    ),
    ("ClusterQueue", "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"): _set(
        "spec.flavorFungibility", {"preference": "BorrowingOverPreemption", "whenCanBorrow": "MayStopSearch"}
    ),
    ("ClusterQueue", "flavors must have the same number of resources as the coveredResources"): lambda o: o["spec"][
        "resourceGroups"
    ][0]["coveredResources"].append("example.com/widgets"),
    ("ResourceFlavor", "at least one nodeLabel is required when topology is set"): _all(
        _set("spec.topologyName", "default"), _set("spec.nodeLabels", {})
    ),
    ("ResourceFlavor", "operator must be Exists when 'key' is empty, which means 'match all values and all keys'"): _toleration(
        operator="Equal", value="v", effect="NoSchedule"
    ),
    ("ResourceFlavor", "effect must be 'NoExecute' when 'tolerationSeconds' is set"): _toleration(
        key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=5
    ),
    ("ResourceFlavor", "supported toleration values: 'Equal'(default), 'Exists'"): _toleration(
        key="k", operator="In", effect="NoSchedule"
    ),
    ("ResourceFlavor", "a value must be empty when 'operator' is 'Exists'"): _toleration(
        key="k", operator="Exists", value="v", effect="NoSchedule"
    ),
    ("ResourceFlavor", "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"): _toleration(
        key="k", operator="Exists", effect="Sometimes"
    ),
    ("Controller", "slurmKeyRef must be set when external is false"): _drop("spec.slurmKeyRef"),
    ("Controller", "jwtKeyRef or jwtHs256KeyRef must be set when external is false"): _drop(
        "spec.jwtKeyRef", "spec.jwtHs256KeyRef"
    ),
    ("Controller", "externalConfig must be set when external is true"): _set("spec.external", True),
    ("Accounting", "slurmKeyRef must be set when external is false"): _drop("spec.slurmKeyRef"),
    ("Accounting", "jwtKeyRef or jwtHs256KeyRef must be set when external is false"): _drop(
        "spec.jwtKeyRef", "spec.jwtHs256KeyRef"
    ),
    ("Accounting", "externalConfig must be set when external is true"): _set("spec.external", True),
    ("Token", "jwtKeyRef or jwtHs256KeyRef must be set"): _drop("spec.jwtKeyRef"),
    (
        "NodeSet",
        "scheduledUpdate.startTime and scheduledUpdate.duration are required when type is ScheduledUpdate",
    ): _set("spec.updateStrategy", {"type": "ScheduledUpdate", "scheduledUpdate": {}}),
}


# (kind, rule message) -> (old, new) of an update the transition rule must refuse, from the rendered object.
TRANSITIONS: dict[tuple[str, str], Callable[[Obj], tuple[Obj, Obj]]] = {}


def _with_topology(obj: Obj, **spec: Any) -> Obj:
    changed = copy.deepcopy(obj)
    changed["spec"].update({"topologyName": "default", **spec})
    return changed


TRANSITIONS[("ResourceFlavor", "nodeLabels are immutable when topologyName is set")] = lambda o: (
    _with_topology(o, nodeLabels={"pool": "a"}),
    _with_topology(o, nodeLabels={"pool": "b"}),
)
TRANSITIONS[("ResourceFlavor", "tolerations are immutable when topologyName is set")] = lambda o: (
    _with_topology(o, nodeLabels={"pool": "a"}, tolerations=[]),
    _with_topology(o, nodeLabels={"pool": "a"}, tolerations=[{"key": "k", "operator": "Exists"}]),
)
TRANSITIONS[("ResourceFlavor", "topologyName is immutable when topologyName is set")] = lambda o: (
    _with_topology(o, nodeLabels={"pool": "a"}),
    _with_topology(o, nodeLabels={"pool": "a"}, topologyName="other"),
)


def _changed(value: Any) -> Any:
    """A different value of the same type (the generated mutation of a `self == oldSelf` rule)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "-changed"
    if isinstance(value, list):
        return [*value, copy.deepcopy(value[0])] if value else [{}]
    return {**value, "hpcforgeChanged": "x"}


def _set_at(obj: Obj, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = obj
    for step in parents:
        node = node[step]
    node[last] = value


def _get_at(obj: Obj, path: str) -> Any:
    node: Any = obj
    for step in path.split("."):
        node = node[step]
    return node


def _all_rendered(dev_stack: RecordedStack, prod_stack: RecordedStack) -> list[Obj]:
    return [d for stack in (dev_stack, prod_stack) for _, d in render_documents(stack)]


def test_each_rule_that_judges_a_rendered_object_refuses_a_mutation(
    dev_stack: RecordedStack, prod_stack: RecordedStack, index: CrdIndex
) -> None:
    covered: set[tuple[str, str]] = set()
    applying: set[tuple[str, str]] = set()
    for obj in _all_rendered(dev_stack, prod_stack):
        crd = index.get(GroupVersionKind.of(obj))
        if crd is None:
            continue
        kind = obj["kind"]
        for rule, path in cel.applicable(crd.compiled_rules, obj):
            key = (kind, str(rule.message))
            applying.add(key)
            assert key in MUTATIONS, f"{kind} {path}: no mutation for the rule {rule.message!r}"
            mutated = copy.deepcopy(obj)
            MUTATIONS[key](mutated)
            found = cel.evaluate(crd.compiled_rules, mutated)
            assert any(m.endswith(f": {rule.message}") for m in found), (key, found)
            covered.add(key)
        for rule, path in cel.transition_applicable(crd.compiled_rules, obj):
            key = (kind, str(rule.message))
            applying.add(key)
            if rule.rule.strip() == "self == oldSelf":  # generated: change the value the rule keeps fixed
                new = copy.deepcopy(obj)
                _set_at(new, path, _changed(_get_at(obj, path)))
                old = obj
            else:
                assert key in TRANSITIONS, f"{kind} {path}: no update for the transition rule {rule.message!r}"
                old, new = TRANSITIONS[key](obj)
            assert cel.evaluate(crd.compiled_rules, new) == []  # transition rules do not run on a create
            found = cel.evaluate(crd.compiled_rules, new, old)
            assert any(m.endswith(f": {rule.message}") for m in found), (key, found)
            covered.add(key)
    assert covered == applying and len(covered) >= 20
    assert set(MUTATIONS) | set(TRANSITIONS) <= covered, "a table entry for a rule no rendered object reaches"


def test_local_queue_transition_rule_is_generated_and_bites(index: CrdIndex) -> None:
    """kueue localqueue_test.go "Should reject the change of spec.clusterQueue" (a `self == oldSelf` rule)."""
    assert refusals(index, lq("bar"), lq("foo")) == ['spec.clusterQueue: Invalid value: "string": field is immutable']
    assert refusals(index, lq("foo"), lq("foo")) == []
    assert refusals(index, lq("bar")) == []  # a create: transition rules do not run


# --- (d) upstream's own cases -------------------------------------------------------------------------


@pytest.mark.parametrize("name, queue, answer", INTEGRATION_CLUSTER_QUEUES, ids=[c[0] for c in INTEGRATION_CLUSTER_QUEUES])
def test_kueue_cluster_queue_integration_cases(index: CrdIndex, name: str, queue: Obj, answer: str | None) -> None:
    """clusterqueue_test.go: `BeInvalidError` (the CRD: schema and CEL) iff the generic CEL path refuses (the
    schema-only cases are left out of the table)."""
    assert bool(refusals(index, queue)) is (answer == "Invalid"), refusals(index, queue)


def test_kueue_resource_flavor_integration_cases(index: CrdIndex) -> None:
    """resourceflavor_test.go: invalid tolerations are `BeInvalidError`, with these CRD rules; a bad label is the
    webhook's (no CEL refusal); the transition rules of topologyName."""
    tolerations = rf(
        tolerations=[
            {"key": "@abc", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
            {"key": "abc", "operator": "Exists", "value": "v", "effect": "NoSchedule"},
            {"key": "abc", "operator": "Equal", "value": "v", "effect": "not-valid"},
            {"key": "abc", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
        ]
    )
    assert refusals(index, tolerations) == [
        "spec.tolerations: Invalid value: \"array\": a value must be empty when 'operator' is 'Exists'",
        "spec.tolerations: Invalid value: \"array\": supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
    ]
    assert refusals(index, rf({"@abc": "foo"})) == []
    old = rf({"foo": "bar"})
    assert refusals(index, rf({"foo": "bar"}, [{"key": "foo", "value": "bar", "effect": "Invalid"}]), old) == [
        "spec.nodeTaints: Invalid value: \"array\": supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"
    ]
    topology_old, topology_new = rf({"pool": "a"}), rf({"pool": "b"})
    topology_old["spec"]["topologyName"] = topology_new["spec"]["topologyName"] = "default"
    assert refusals(index, topology_new, topology_old) == [
        'spec: Invalid value: "object": nodeLabels are immutable when topologyName is set'
    ]
    assert refusals(index, rf({"pool": "b"}), rf({"pool": "a"})) == []  # without a topology: free


# k8s.io/apiserver v0.33.9 pkg/cel/library/urls.go, the `isURL` examples of its doc comment, and Go's
# net/url ParseRequestURI cases that decide it (an absolute URI or an absolute path).
IS_URL = [
    ("https://user:pass@example.com:80/path?query=val#fragment", True),
    ("/absolute-path", True),
    ("https://a:b:c/", False),
    ("../relative-path", False),
    ("http://[::1]:8080/x", True),
    ("http://[::1/x", False),
    ("example.com", False),
    ("", False),
    ("mailto:someone@example.com", True),
    ("http://exa mple.com/", False),
    ("http://example.com/%zz", False),
    ("ldaps://ldap.example.com:636", True),
]


@pytest.mark.parametrize("text, valid", IS_URL)
def test_is_url_is_kubernetes(text: str, valid: bool) -> None:
    program = cel.environment("string").compile("isURL(self)")
    assert program.eval(data={"self": text}).value() is valid


# --- what the API server does around a rule -------------------------------------------------------------


def _schema(rule: dict[str, Any], node: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = node or {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    return {"type": "object", "properties": {"spec": {**spec, "x-kubernetes-validations": [rule]}}}


def test_message_expression_reason_and_field_path() -> None:
    rule = {
        "rule": "self.a == self.b",
        "messageExpression": "'a is ' + self.a",
        "reason": "FieldValueForbidden",
        "fieldPath": ".a",
        "message": "fallback",
    }
    compiled = cel.compile_rules(_schema(rule))
    assert cel.evaluate(compiled, {"spec": {"a": "x", "b": "y"}}) == ["spec.a: Forbidden: a is x"]
    blank = cel.compile_rules(_schema({**rule, "messageExpression": "''", "reason": "FieldValueRequired"}))
    assert cel.evaluate(blank, {"spec": {"a": "x", "b": "y"}}) == ["spec.a: Required value: fallback"]
    plain = cel.compile_rules(_schema({"rule": "self.a == self.b"}))
    assert cel.evaluate(plain, {"spec": {"a": "x", "b": "y"}}) == ['spec: Invalid value: "object": failed rule: self.a == self.b']


def test_evaluation_errors_are_refusals() -> None:
    compiled = cel.compile_rules(_schema({"rule": "self.b == 'x'", "message": "m"}))
    [message] = cel.evaluate(compiled, {"spec": {"a": "x"}})
    assert message.startswith('spec: Invalid value: "object": ') and message.endswith("evaluating rule: self.b == 'x'")
    assert "b" in message


def test_defaults_apply_before_the_rules() -> None:
    node = {"type": "object", "properties": {"external": {"type": "boolean", "default": False}, "key": {"type": "string"}}}
    compiled = cel.compile_rules(_schema({"rule": "!self.external ? has(self.key) : true", "message": "key"}, node))
    assert cel.evaluate(compiled, {"spec": {}}) == ['spec: Invalid value: "object": key']
    assert cel.evaluate(compiled, {"spec": {"key": "k"}}) == []


def test_optional_old_self_runs_on_create_and_ratcheting_skips_unchanged_values() -> None:
    rule = {"rule": "!oldSelf.hasValue() || self.a == oldSelf.value().a", "message": "a is fixed", "optionalOldSelf": True}
    compiled = cel.compile_rules(_schema(rule))
    assert compiled.rules[0].transition
    assert cel.evaluate(compiled, {"spec": {"a": "x"}}) == []
    assert cel.evaluate(compiled, {"spec": {"a": "y"}}, {"spec": {"a": "x"}}) == ['spec: Invalid value: "object": a is fixed']
    strict = cel.compile_rules(_schema({"rule": "self.a == 'ok'", "message": "not ok"}))
    assert cel.evaluate(strict, {"spec": {"a": "bad"}}) == ['spec: Invalid value: "object": not ok']
    assert cel.evaluate(strict, {"spec": {"a": "bad"}}, {"spec": {"a": "bad"}}) == []  # unchanged: ratcheted


def test_formats_become_cel_types() -> None:
    node: dict[str, Any] = {"type": "string", "format": "duration"}
    compiled = cel.compile_rules(_schema({"rule": "self >= duration('1m')", "message": "short"}, node))
    assert cel.evaluate(compiled, {"spec": "90s"}) == []
    assert cel.evaluate(compiled, {"spec": "30s"}) == ['spec: Invalid value: "string": short']
    node = {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}, "n": {"type": "number"}}}
    compiled = cel.compile_rules(
        _schema({"rule": "self.at < timestamp('2030-01-01T00:00:00Z') && self.n > 0.5", "message": "m"}, node)
    )
    assert cel.evaluate(compiled, {"spec": {"at": "2026-01-01T00:00:00Z", "n": 1}}) == []
    assert cel.evaluate(compiled, {"spec": {"at": "2031-01-01T00:00:00Z", "n": 1}}) == ['spec: Invalid value: "object": m']


def test_escaped_property_names_and_list_library() -> None:
    node = {"type": "object", "properties": {"x-y": {"type": "array", "items": {"type": "integer"}}}}
    compiled = cel.compile_rules(
        _schema({"rule": "self.x__dash__y.isSorted() && self.x__dash__y.sum() < 10", "message": "m"}, node)
    )
    assert cel.evaluate(compiled, {"spec": {"x-y": [1, 2, 3]}}) == []
    assert cel.evaluate(compiled, {"spec": {"x-y": [3, 2]}}) == ['spec: Invalid value: "object": m']


def test_list_map_items_correlate_by_key_for_transition_rules() -> None:
    node = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.size >= oldSelf.size", "message": "may only grow"}],
        },
    }
    compiled = cel.compile_rules({"type": "object", "properties": {"spec": node}})
    old = {"spec": [{"name": "a", "size": 2}, {"name": "b", "size": 2}]}
    new = {"spec": [{"name": "b", "size": 1}, {"name": "a", "size": 3}, {"name": "c", "size": 0}]}
    assert cel.evaluate(compiled, new, old) == ['spec[0]: Invalid value: "object": may only grow']


# --- offline admission: transition rules with --previous-config -------------------------------------------


def test_admission_judges_updates_and_honours_replace_on_changes() -> None:
    shared = require_shared("crds").parent
    [verdict] = cel_admission.cel_verdicts([lq("bar")], [lq("foo")], shared)
    assert verdict.update and verdict.refusals == ('spec.clusterQueue: Invalid value: "string": field is immutable',)
    key = cel_admission.object_key(lq("bar"))
    [replaced] = cel_admission.cel_verdicts([lq("bar")], [lq("foo")], shared, {key: ["spec.clusterQueue"]})
    assert not replaced.update and replaced.refusals == ()  # Pulumi deletes and creates it: no update to judge
    assert cel_admission.report_lines([verdict])[1] == "  REFUSED LocalQueue core/queue-test (kueue.x-k8s.io/v1beta2, update)"


# --- the hand-written ports against the generic path -------------------------------------------------------
# policies/admission/slinky/ `crd_rule_errors` and the `CRD_RULE` refusals of admission_kueue.py stay:
# the policy packs run them under `pulumi preview`/`up` (deploy.yml), where neither ../shared/crds nor the CEL
# runtime is (the packs need stdlib + pyyaml only). Each case their tests hold goes through the generic path
# too, and the two must agree, so a moved pin that changes a rule fails here, naming the rule.


def _generic_pairs(found: list[str]) -> set[tuple[str, str]]:
    """(path, detail) of generic refusals `path: Invalid value: "type": detail`."""
    pairs = set()
    for message in found:
        path, _, rest = message.partition(": Invalid value: ")
        pairs.add((path, rest.split(": ", 1)[1]))
    return pairs


def _port_pairs(found: list[kueue.Refusal]) -> set[tuple[str, str]]:
    return {(r.field, r.detail) for r in found if r.by == kueue.CRD_RULE}


KUEUE_CREATES: list[tuple[str, Obj]] = [
    *((name, queue) for name, queue, _ in INTEGRATION_CLUSTER_QUEUES),
    ("rf empty", rf()),
    ("rf taint", rf({"foo": "bar"}, [{"key": "spot", "value": "true", "effect": "NoSchedule"}])),
    ("rf bad taint effect", rf({"foo": "bar"}, [{"key": "foo", "value": "bar", "effect": "Invalid"}])),
    ("rf topology without labels", {**rf({}), "spec": {"topologyName": "default", "nodeLabels": {}}}),
    *(
        (f"rf toleration {i}", rf(tolerations=[toleration]))
        for i, toleration in enumerate(
            [
                {"operator": "Equal", "value": "v", "effect": "NoSchedule"},
                {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5},
                {"key": "k", "operator": "In", "effect": "NoSchedule"},
                {"key": "k", "operator": "Exists", "value": "v", "effect": "NoSchedule"},
                {"key": "k", "operator": "Exists", "effect": "Sometimes"},
                {"key": "k", "operator": "Exists"},
            ]
        )
    ),
]


@pytest.mark.parametrize("name, obj", KUEUE_CREATES, ids=[c[0] for c in KUEUE_CREATES])
def test_kueue_port_agrees_with_the_crd(index: CrdIndex, name: str, obj: Obj) -> None:
    port = kueue.cluster_queue_refusals(obj) if obj["kind"] == "ClusterQueue" else kueue.resource_flavor_refusals(obj)
    assert _port_pairs(port) == _generic_pairs(refusals(index, obj))


def test_kueue_port_updates_agree_with_the_crd(index: CrdIndex) -> None:
    old, moved = rf({"pool": "a"}), rf({"pool": "b"})
    old["spec"]["topologyName"] = moved["spec"]["topologyName"] = "default"
    renamed = copy.deepcopy(old)
    renamed["spec"]["topologyName"] = "other"
    tolerated = copy.deepcopy(old)
    tolerated["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    for before, after in [(old, moved), (old, renamed), (old, tolerated), (rf({"pool": "a"}), rf({"pool": "b"}))]:
        port = kueue.resource_flavor_update_refusals(before, after)
        assert _port_pairs(port) == _generic_pairs(refusals(index, after, before)), after
    for before, after in [(lq("foo"), lq("bar")), (lq("foo"), lq("foo"))]:
        assert _port_pairs(kueue.local_queue_update_refusals(before, after)) == _generic_pairs(refusals(index, after, before))


@pytest.mark.parametrize("obj, message", SLINKY_CEL_CASES, ids=[f"{c[0]['kind']}-{i}" for i, c in enumerate(SLINKY_CEL_CASES)])
def test_slinky_port_agrees_with_the_crd(index: CrdIndex, obj: Obj, message: str) -> None:
    generic = refusals(index, obj)
    if obj["kind"] == "NodeSet":
        # `has(self.scheduledUpdate.startTime)` without a scheduledUpdate is an evaluation error ("no such key")
        # in Kubernetes, not the rule's message: both refuse, the port words it as the message.
        [error] = generic
        assert error.startswith('spec.updateStrategy: Invalid value: "object": ') and "evaluating rule" in error
        assert slinky.crd_rule_errors(obj) != []
    else:
        assert slinky.crd_rule_errors(obj) == generic and any(g.endswith(message) for g in generic)


def test_slinky_port_admits_what_the_crd_admits(index: CrdIndex) -> None:
    scheduled = with_spec(
        nodeset("n", "c"), "updateStrategy", {"type": "ScheduledUpdate", "scheduledUpdate": {"startTime": "2026-12-01T00:00:00Z"}}
    )
    for obj in (scheduled, {**controller("c"), "spec": {"external": True, "externalConfig": {"host": "h"}}}):
        assert slinky.crd_rule_errors(obj) == refusals(index, obj) == []


def test_offline_admission_judges_custom_resources_as_updates_of_the_previous_stack_file(tmp_path: Path) -> None:
    """`offline admission --previous-config`: every custom resource both stack files declare is an update; a team
    moved to another ClusterQueue changes its LocalQueue's immutable `spec.clusterQueue` (a transition rule),
    which hpcforge's `replaceOnChanges` turns into a replacement, so nothing is refused."""

    def move(values: dict[str, Any]) -> None:
        values["hpcforge:batch"]["teams"][0]["clusterQueue"] = "inference"

    command = [
        sys.executable,
        "-m",
        "offline",
        "admission",
        "--stack",
        "prod",
        "--config",
        str(write_variant(tmp_path, "prod", move)),
    ]
    command += ["--previous-config", str(REPO / "Pulumi.prod.yaml")]
    result = subprocess.run(command, check=False, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("CRD validation rules")]
    judged = int(line.split(": ")[1].split()[0])
    assert judged > 0 and f"({judged - 1} as updates), 0 refused" in line  # the moved LocalQueue: a create


# The doc-comment examples of the Kubernetes libraries offline/schema/cel.py adds (k8s.io/apiserver v0.33.9
# pkg/cel/library/lists.go, regex.go, quantity.go, ip.go, cidr.go, semver.go) and cel-go ext/sets.go.
LIBRARY_EXAMPLES = [
    ("[1, 2, 3].isSorted()", True),
    ("['a', 'c', 'b'].isSorted()", False),
    ("[1, 2, 3].sum()", 6),
    ("[1, 2, 3].min()", 1),
    ("[1, 2, 3].max()", 3),
    ("[1, 2, 2, 3].indexOf(2)", 1),
    ("[1, 2, 2, 3].lastIndexOf(2)", 2),
    ("[1, 2, 3].indexOf(4)", -1),
    ("'abc 123'.find('[0-9]+')", "123"),
    ("'abc 123'.find('xyz')", ""),
    ("'123 abc 456'.findAll('[0-9]+')", ["123", "456"]),
    ("'123 abc 456'.findAll('[0-9]+', 1)", ["123"]),
    ("isQuantity('1.3G')", True),
    ("isQuantity('1.3Gi')", True),
    ("isQuantity('1,3G')", False),
    ("isQuantity('10000k')", True),
    ("isQuantity('200K')", False),
    ("isQuantity('Three')", False),
    ("isIP('127.0.0.1')", True),
    ("isIP('::1')", True),
    ("isIP('127.0.0.256')", False),
    ("isIP('127.0.0.1/24')", False),
    ("isCIDR('192.168.0.0/16')", True),
    ("isCIDR('::1/128')", True),
    ("isCIDR('192.168.0.0/33')", False),
    ("isCIDR('192.168.0.0')", False),
    ("isSemver('1.0.0')", True),
    ("isSemver('1.0.0-alpha+001')", True),
    ("isSemver('v1.0')", False),
    ("sets.contains([1, 2, 3], [2, 3])", True),
    ("sets.contains([1, 2], [3])", False),
    ("sets.equivalent([1, 2], [2, 1, 1])", True),
    ("sets.intersects([1], [2])", False),
]


@pytest.mark.parametrize("expression, expected", LIBRARY_EXAMPLES)
def test_kubernetes_library_examples(expression: str, expected: Any) -> None:
    result = cel.environment("dyn").compile(expression).eval(data={"self": None})
    assert result.plain_value() == expected


def test_empty_list_min_is_an_error() -> None:
    result = cel.environment("dyn").compile("[].min() == 1").eval(data={"self": None})
    assert result.type() == cel.cel.Type.ERROR


def test_metallb_bgp_peer_connect_time(index: CrdIndex) -> None:
    """metallb v0.16.1 api/v1beta2/bgppeer_types.go `ConnectTime`: 1s to 65535s, whole seconds
    (`duration(self).getMilliseconds() % 1000`: cel-go gives the total milliseconds, cel-cpp the
    millisecond part; the remainder by 1000 is the same for the durations the first rule admits)."""

    def peer(connect: str) -> Obj:
        spec = {"myASN": 64500, "peerASN": 64501, "peerAddress": "10.0.0.1", "connectTime": connect}
        return {"apiVersion": "metallb.io/v1beta2", "kind": "BGPPeer", "metadata": {"name": "p", "namespace": "m"}, "spec": spec}

    assert refusals(index, peer("5s")) == []
    assert refusals(index, peer("1m")) == []
    assert refusals(index, peer("1500ms")) == [
        'spec.connectTime: Invalid value: "string": connect time should contain a whole number of seconds'
    ]
    assert refusals(index, peer("500ms")) == [
        'spec.connectTime: Invalid value: "string": connect time should be between 1 seconds to 65535',
        'spec.connectTime: Invalid value: "string": connect time should contain a whole number of seconds',
    ]
    assert refusals(index, peer("20h")) == [
        'spec.connectTime: Invalid value: "string": connect time should be between 1 seconds to 65535'
    ]


def test_values_the_schema_refuses_or_that_are_not_known_are_not_judged() -> None:
    node = {"type": "integer"}
    compiled = cel.compile_rules(_schema({"rule": "self > 1", "message": "small"}, node))
    assert cel.evaluate(compiled, {"spec": "x"}) == []  # a type error: the schema check reports it
    assert cel.evaluate(compiled, {"spec": 0}) == ['spec: Invalid value: "integer": small']
    text = cel.compile_rules(_schema({"rule": "self.startsWith('/')", "message": "slash"}, {"type": "string"}))
    assert cel.evaluate(text, {"spec": "<unknown>"}, unknown=lambda v: v == "<unknown>") == []
    assert cel.evaluate(text, {"spec": "<unknown>"}) == ['spec: Invalid value: "string": slash']


def test_the_root_rule_sees_metadata_name(index: CrdIndex) -> None:
    """gpu-operator v26.7.0 GPUCluster: a singleton named `gpu-cluster` (a rule on the root object)."""

    def cluster(name: str) -> Obj:
        return {"apiVersion": "nvidia.com/v1alpha1", "kind": "GPUCluster", "metadata": {"name": name, "labels": {"a": "b"}}}

    crd = index.get(GroupVersionKind.of(cluster("x")))
    assert crd is not None
    assert refusals(index, cluster("gpu-cluster")) == []
    assert refusals(index, cluster("other")) == [
        "<nil>: Invalid value: \"object\": GPUCluster is a singleton, metadata.name must be 'gpu-cluster'"
    ]
