"""Issue 33, the rule half: what no rule answers for is `unassessed` (and gates), the operator rules read at their pins
(RestApi, LoginSet, the state volume, mariadb-operator, SR-IOV, the directory), known defects as risks, secrets
compared by digest, and the pins of the rules."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from components import versions
from offline.diff import rule_pins
from offline.diff.base import State
from offline.diff.command import gate, gate_reasons
from offline.diff.effects import UNASSESSED, Impact
from offline.diff.impact import assess
from offline.diff.plan import Plan, make_plan
from offline.diff.report import render_json, render_text
from offline.diff.verdicts import build
from offline.program.engine import RecordedStack, mock_secret
from tests.helpers import REPO

Edit = Callable[[dict[str, Any]], None]


def _diff(stack: RecordedStack, edits: dict[str, Edit], drop: tuple[str, ...] = ()) -> tuple[Plan, Impact]:
    base = State.from_recorded(stack, "main")
    head = copy.deepcopy(base)
    found = set()
    for resource in head.resources:
        if resource["name"] in edits:
            edits[resource["name"]](resource["inputs"])
            found.add(resource["name"])
    assert found == set(edits), set(edits) - found
    head.resources = [r for r in head.resources if r["name"] not in drop]
    plan = make_plan(base, head)
    return plan, assess(plan)


def _set(*path_and_value: Any) -> Edit:
    *path, value = path_and_value

    def edit(inputs: dict[str, Any]) -> None:
        target = inputs
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = value

    return edit


def _by(impact: Impact, words: str) -> list[Any]:
    return [e for e in impact.effects if words in e.what]


# --- 1. fail closed ----------------------------------------------------------------------------------------------------


def test_a_field_no_rule_answers_for_is_unassessed_names_it_and_gates(prod_stack: RecordedStack) -> None:
    plan, impact = _diff(prod_stack, {"slurm/restapi-slurm": _set("spec", "slurmrestd", "hpcforgeUnknownKnob", "on")})
    [effect] = [e for e in impact.effects if e.severity == UNASSESSED]
    assert effect.resources == [plan.changes[0].label]
    assert "RestApi slurm/slurm update" in effect.what and "spec.slurmrestd.hpcforgeUnknownKnob" in effect.what
    assert impact.worst == UNASSESSED
    assert gate(impact, acknowledged=False) == 1 and gate(impact, acknowledged=True) == 0
    assert any("unassessed" in reason and "restapi-slurm" in reason for reason in gate_reasons(impact))
    report = build(plan, impact, gate={"exit": 1, "status": "gated", "reasons": gate_reasons(impact)})
    assert report["counts"]["unassessed"] == 1 and "1 unassessed" in report["summary"]
    assert report["resources"][0]["verdict"] == UNASSESSED
    schema = json.loads((REPO / "offline/diff/report.schema.json").read_text())
    jsonschema.validate(json.loads(render_json(report)), schema)
    assert "unassessed: ~ RestApi slurm/slurm" in render_text(report, plan)


def test_a_field_beside_one_a_rule_answers_for_is_still_unassessed(prod_stack: RecordedStack) -> None:
    """A NodeSet roll answers for the pod revision's fields, not for a field beside them."""
    _plan, impact = _diff(
        prod_stack,
        {"slurm/nodeset-cpu": lambda i: i["spec"].update(hpcforgeUnknownKnob=1, logfile={"path": "/var/log/x"})},
    )
    assert _by(impact, "NodeSet cpu: the operator rolls")
    [effect] = [e for e in impact.effects if e.severity == UNASSESSED]
    assert effect.covers == ("spec.hpcforgeUnknownKnob",)


def test_a_new_namespace_is_none_and_its_objects_answer_for_themselves(prod_stack: RecordedStack) -> None:
    head = State.from_recorded(prod_stack, "main")
    base = copy.deepcopy(head)
    [namespace] = [
        r
        for r in head.resources
        if (r.get("inputs") or {}).get("kind") == "Namespace" and r["inputs"]["metadata"]["name"] == "portal"
    ]
    inside = [r for r in head.resources if ((r.get("inputs") or {}).get("metadata") or {}).get("namespace") == "portal"]
    assert inside  # the namespace is created with objects in it
    gone = {namespace["urn"], *(r["urn"] for r in inside)}
    base.resources = [r for r in base.resources if r["urn"] not in gone]
    plan = make_plan(base, head)
    impact = assess(plan)
    [created] = _by(impact, "namespace portal created")
    assert created.severity == "none" and created.resources == [c.label for c in plan.changes if c.kind == "Namespace"]
    assert not [e for e in impact.effects if e.severity == UNASSESSED and "Namespace portal" in e.what]


# --- 3. operator rules -------------------------------------------------------------------------------------------------


def test_restapi_removed_says_drains_stop_and_a_roll_in_the_same_change_kills_jobs(prod_stack: RecordedStack) -> None:
    image = _set("spec", "slurmd", "image", "ghcr.io/slinkyproject/slurmd:26.05.4-ubuntu26.04")
    _plan, impact = _diff(prod_stack, {"slurm/nodeset-cpu": image}, drop=("slurm/restapi-slurm",))
    [gone] = _by(impact, "RestApi deleted")
    assert gone.severity == "outage" and "slurmclient_sync.go@v1.2.1:41-47" in gone.evidence
    [roll] = _by(impact, "NodeSet cpu: the operator rolls")
    assert roll.severity == "outage" and "WITHOUT draining" in roll.what and "draining each Slurm node first" not in roll.what
    # With the RestApi kept, the same roll drains first.
    _, kept = _diff(prod_stack, {"slurm/nodeset-cpu": image})
    [drained] = _by(kept, "NodeSet cpu: the operator rolls")
    assert drained.severity == "rolling-drain" and "draining each Slurm node first" in drained.what


def test_a_roll_names_slinky_249_with_its_workaround(prod_stack: RecordedStack) -> None:
    _, impact = _diff(prod_stack, {"slurm/nodeset-cpu": _set("spec", "slurmd", "image", "x:1")})
    [risk] = _by(impact, "slurm-operator #249")
    assert "state=undrain" in risk.what and risk.covers == () and "cpu-0" in risk.nodes


def test_a_loginset_scale_in_deletes_login_pods_with_their_sessions_like_a_roll(prod_stack: RecordedStack) -> None:
    _, impact = _diff(prod_stack, {"slurm/loginset-login": _set("spec", "replicas", 1)})
    [effect] = _by(impact, "scale-in 2 -> 1")
    assert effect.severity == "reload" and "sessions" in effect.what and "login_app.go@v1.2.1" in effect.evidence
    assert effect.rollback.startswith("needs a step") and "warn the users" in effect.rollback
    # A roll of the same login pods ends the same sessions: the same class, the same step.
    _, rolled = _diff(prod_stack, {"slurm/loginset-login": _set("spec", "login", "image", "x:1")})
    [roll] = _by(rolled, "LoginSet")
    assert roll.severity == effect.severity and "sessions" in roll.what and roll.rollback == effect.rollback
    _, out = _diff(prod_stack, {"slurm/loginset-login": _set("spec", "replicas", 3)})
    assert out.worst == "none"


def test_a_controller_state_volume_size_change_is_said_not_applied(prod_stack: RecordedStack) -> None:
    _plan, impact = _diff(
        prod_stack, {"slurm/controller-slurm": _set("spec", "persistence", "resources", "requests", "storage", "100Gi")}
    )
    [effect] = _by(impact, "NOT applied")
    assert effect.severity == "none" and "patch.go@v1.2.1:159-173" in effect.evidence
    assert not _by(impact, "slurmctld restarts") and impact.worst == "none"


def test_mariadb_config_or_resources_restart_the_single_database_pod(prod_stack: RecordedStack) -> None:
    def pool(inputs: dict[str, Any]) -> None:
        inputs["spec"]["myCnf"] = inputs["spec"]["myCnf"].replace("innodb_buffer_pool_size=", "innodb_buffer_pool_size=8")

    for edit in (pool, _set("spec", "resources", "requests", "memory", "12Gi")):
        _, impact = _diff(prod_stack, {"database/mariadb-mariadb": edit})
        [effect] = _by(impact, "deletes the single database pod")
        assert effect.severity == "singleton-restart" and "mariadb_controller_update.go@v26.6.0" in effect.evidence
        assert impact.worst == "singleton-restart"


def test_an_sriov_policy_change_drains_and_may_reboot_its_nodes(prod_stack: RecordedStack) -> None:
    _, impact = _diff(prod_stack, {"nvidia-network-operator/sriov-policy-gpu-a100-ens1f0np0": _set("spec", "numVfs", 4)})
    [effect] = _by(impact, "SR-IOV policy")
    assert effect.severity == "outage" and "reboot" in effect.what and "daemon.go@v1.6.0" in effect.evidence


def _ldif(old: str, new: str) -> Edit:
    def edit(inputs: dict[str, Any]) -> None:
        text = inputs["data"]["bootstrap.ldif"]
        assert old in text
        inputs["data"]["bootstrap.ldif"] = text.replace(old, new)

    return edit


def _ldif_name(stack: RecordedStack) -> str:
    return next(
        r.name
        for r in stack.resources
        if r.inputs.get("kind") == "ConfigMap" and "dirsrv-ldif-" in str(r.inputs["metadata"]["name"])
    )


def test_a_directory_suffix_change_leaves_passwords_in_the_old_tree(prod_stack: RecordedStack) -> None:
    _, impact = _diff(prod_stack, {_ldif_name(prod_stack): _ldif("dc=hpc,dc=example,dc=org", "dc=hpc2,dc=example,dc=org")})
    [effect] = _by(impact, "directory suffix")
    assert effect.severity == "data-loss" and "passwords" in effect.what


def test_a_uid_number_change_orphans_the_users_files(prod_stack: RecordedStack) -> None:
    _, impact = _diff(prod_stack, {_ldif_name(prod_stack): _ldif("uidNumber: 10002\n", "uidNumber: 20002\n")})
    [effect] = _by(impact, "uidNumber of")
    assert effect.severity == "data-loss" and "10002 -> 20002" in effect.what and "orphaned" in effect.what


# --- 4. secrets by digest ----------------------------------------------------------------------------------------------


def test_a_changed_secret_shows_as_a_digest_never_its_value(prod_stack: RecordedStack) -> None:
    changed = copy.deepcopy(prod_stack)
    [sssd] = [r for r in changed.resources if r.inputs.get("kind") == "Secret" and "sssd.conf" in str(r.raw_inputs)]
    stamp = "ldap_search_timeout = 17"
    raw = json.dumps(sssd.raw_inputs)
    assert "ldap_uri" in raw
    sssd.raw_inputs = json.loads(raw.replace("ldap_uri", f"{stamp}\\nldap_uri", 1))
    plan = make_plan(State.from_recorded(prod_stack, "main"), State.from_recorded(changed, "head"))
    [change] = plan.changes
    [field] = change.fields
    assert (
        str(field.old).startswith("[secret sha256:") and str(field.new).startswith("[secret sha256:") and field.old != field.new
    )
    report = render_text(build(plan, assess(plan)), plan)
    assert stamp not in report and "ldap_uri" not in report and mock_secret("ldap-bind") not in report
    # Unchanged secrets compare equal; a recording without digests compares as unknown, not changed.
    assert make_plan(State.from_recorded(prod_stack, "a"), State.from_recorded(prod_stack, "b")).empty
    old = State.from_recorded(prod_stack, "old")
    for resource in old.resources:
        resource["inputs"] = json.loads(re.sub(r"\[secret sha256:[0-9a-f]{12}\]", "[secret]", json.dumps(resource["inputs"])))
    assert make_plan(old, State.from_recorded(prod_stack, "head")).empty


# --- 5. the rules' pins ------------------------------------------------------------------------------------------------


def test_every_pinned_rule_exists_and_is_in_step_with_components_versions() -> None:
    import importlib

    for rule in rule_pins.RULE_PINS:
        module, _, name = rule.rpartition(".")
        assert callable(getattr(importlib.import_module(module), name)), rule
    assert rule_pins.out_of_step(versions) == []


@pytest.mark.parametrize("where", ["Charts.SLURM_OPERATOR", "Charts.MARIADB_OPERATOR", "Charts.NETWORK_OPERATOR"])
def test_moving_a_pin_fails_naming_the_rules_to_re_read(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    pin = getattr(versions.Charts, where.split(".")[1])
    head, last = pin.version.rsplit(".", 1)
    monkeypatch.setattr(versions.Charts, where.split(".")[1], dataclasses.replace(pin, version=f"{head}.{int(last) + 1}"))
    messages = rule_pins.out_of_step(versions)
    named = {m.split(" reproduces ")[0] for m in messages}
    assert named == {rule for rule, p in rule_pins.RULE_PINS.items() if where in p.pinned}
    assert all(f"pins {where} at" in m for m in messages)
