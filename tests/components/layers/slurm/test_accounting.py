"""Tier 1: Slurm accounting as code: the typed config, the desired-state renderer, the Job's spec
and the reconciler's pure parts (its behaviour against real slurmdbd is in test_real_accounting.py)."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.layers.slurm.accounts import resolve_associations
from components.layers.slurm.accounts_job import SACK_START, accounts_job_spec, sync_command
from components.layers.slurm.sacct import desired_state, render_desired_state
from components.site.loader import ConfigError, load_config
from components.versions import Images
from tests.helpers import REPO, config_values, raw_config

_spec = importlib.util.spec_from_file_location("sacct_sync", REPO / "scripts" / "slurm" / "sacct_sync.py")
assert _spec is not None and _spec.loader is not None
sacct_sync = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sacct_sync)


def prod_with(edit: Callable[[dict[str, Any]], None]) -> Any:
    values = config_values("prod")
    edit(values)
    return load_config(raw_config(values))


def accounts(values: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = values["hpcforge:slurm"]["accounts"]
    return result


BAD = [
    (
        "partition QOS not declared",
        lambda v: v["hpcforge:slurm"]["partitions"][2].update(qos="gold"),
        "hpcforge:slurm.partitions[2].qos: partition 'h100': unknown QOS 'gold' (declared: h100, normal, scavenger)",
    ),
    (
        "partition QOS without accounts",
        lambda v: v["hpcforge:slurm"].pop("accounts"),
        "hpcforge:slurm.partitions[2].qos: partition 'h100': QOS 'h100' is not declared: declare it under slurm.accounts.qos",
    ),
    (
        "user not in the directory",
        lambda v: accounts(v)["users"].append({"name": "mallory", "defaultAccount": "ops"}),
        "hpcforge:slurm.accounts.users[2].name: unknown directory user 'mallory'",
    ),
    (
        "unknown default account",
        lambda v: accounts(v)["users"][0].update(defaultAccount="nowhere"),
        "hpcforge:slurm.accounts.users[0].defaultAccount: user 'alice': unknown account 'nowhere'",
    ),
    (
        "group not in the directory",
        lambda v: accounts(v)["accounts"][1].update(groups=["proj-x"]),
        "hpcforge:slurm.accounts.accounts[1].groups[0]: account 'climate': unknown directory group 'proj-x'",
    ),
    (
        "coordinator without an association",
        lambda v: (accounts(v)["accounts"][3].update(coordinators=["dave"]), accounts(v)["accounts"][3].update(groups=[])),
        "hpcforge:slurm.accounts.accounts[3].coordinators[0]: account 'llm': coordinator 'dave' has no association",
    ),
    (
        "unknown parent",
        lambda v: accounts(v)["accounts"][1].update(parent="sciences"),
        "hpcforge:slurm.accounts.accounts[1].parent: account 'climate': unknown parent 'sciences'",
    ),
    (
        "parent cycle",
        lambda v: accounts(v)["accounts"][0].update(parent="climate"),
        "hpcforge:slurm.accounts.accounts[0].parent: account 'science': the parent chain loops through",
    ),
    (
        "preempt names an unknown QOS",
        lambda v: accounts(v)["qos"][1].update(preempt=["nobody"]),
        "hpcforge:slurm.accounts.qos[1].preempt[0]: QOS 'h100': unknown QOS 'nobody'",
    ),
    (
        "bad TRES name",
        lambda v: accounts(v)["qos"][1].update(maxTresPerUser={"gpus": 8}),
        "hpcforge:slurm.accounts.qos[1].maxTresPerUser: 'gpus' is not a TRES name",
    ),
    (
        "uppercase account name",
        lambda v: accounts(v)["accounts"][0].update(name="Science"),
        "hpcforge:slurm.accounts.accounts[0].name: 'Science' is not a Slurm accounting name",
    ),
    (
        "root declared",
        lambda v: accounts(v)["accounts"].append({"name": "root"}),
        "hpcforge:slurm.accounts.accounts: 'root' is slurmdbd's own root account",
    ),
    (
        "accounts without slurmdbd",
        lambda v: v["hpcforge:slurm"]["accounting"].update(enabled=False),
        "hpcforge:slurm.accounts: Slurm accounts need slurmdbd",
    ),
]


@pytest.mark.parametrize(("edit", "message"), [(edit, message) for _, edit, message in BAD], ids=[case[0] for case in BAD])
def test_bad_accounting_config_is_refused_naming_the_key(edit: Callable[[dict[str, Any]], None], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        prod_with(edit)


def test_associations_come_from_groups_explicit_users_and_the_default_account() -> None:
    dev = load_config(raw_config(config_values("dev")))
    assert dev.slurm.accounts is not None
    assert {user: entry["accounts"] for user, entry in resolve_associations(dev.slurm.accounts, dev.directory).items()} == {
        "alice": ["lab"],
        "bob": ["lab"],
    }
    prod = load_config(raw_config(config_values("prod")))
    assert prod.slurm.accounts is not None
    resolved = resolve_associations(prod.slurm.accounts, prod.directory)
    assert resolved["alice"]["default_account"] == "ops" and resolved["alice"]["admin_level"] == "Operator"
    assert resolved["erin"]["accounts"] == ["genomics", "llm"]  # two project groups
    assert resolved["erin"]["default_account"] == "genomics"  # the first account in the config that matches
    assert set(resolved) == {u.name for u in prod.directory.users}


def test_user_without_any_account_gets_no_association() -> None:
    def edit(values: dict[str, Any]) -> None:
        accounts(values)["accounts"][2].update(groups=[])  # genomics: bob had only this one

    prod = prod_with(edit)
    assert prod.slurm.accounts is not None
    assert "bob" not in resolve_associations(prod.slurm.accounts, prod.directory)


def test_desired_state_makes_every_default_explicit() -> None:
    prod = load_config(raw_config(config_values("prod")))
    assert prod.slurm.accounts is not None
    state = desired_state(prod.slurm.cluster_name, prod.slurm.accounts, prod.directory)
    assert state["cluster"] == "hpc" and state["reserved_users"] == ["root"]
    h100 = next(q for q in state["qos"] if q["name"] == "h100")
    assert h100 == {
        "name": "h100",
        "description": "h100 partition",
        "priority": 100,
        "max_tres_per_user": {"cpu": "360", "gres/gpu": "16"},
        "max_tres_per_job": {},
        "grp_tres": {},
        "max_wall": "2-00:00:00",
        "max_jobs_per_user": None,
        "max_submit_jobs_per_user": None,
        "grp_jobs": None,
        "preempt": ["scavenger"],
        "preempt_mode": "cluster",
    }
    climate = next(a for a in state["accounts"] if a["name"] == "climate")
    assert climate["organization"] == "science" and climate["description"] == "climate"
    text = render_desired_state(prod.slurm.cluster_name, prod.slurm.accounts, prod.directory)
    assert json.loads(text) == state


def test_reconciler_job_runs_the_script_in_the_login_image_with_the_operators_slurm_conf() -> None:
    spec = accounts_job_spec(controller="slurm", slurm_key_secret="slurm-auth-slurm", labels={"app.kubernetes.io/name": "slurm"})
    assert "initContainers" not in spec["template"]["spec"]
    container = spec["template"]["spec"]["containers"][0]
    assert container["image"] == Images.LOGIN.ref
    assert container["command"] == ["/bin/sh", "-c", SACK_START, "sacct-sync", *sync_command()]  # sackd first (auth/slurm)
    assert {"name": "sack", "mountPath": "/run/slurm"} in container["volumeMounts"]
    assert {"name": "sack", "emptyDir": {}} in spec["template"]["spec"]["volumes"]
    assert sync_command(check=True)[-1] == "--check"
    sources = spec["template"]["spec"]["volumes"][0]["projected"]["sources"]
    assert sources[0]["configMap"]["name"] == "slurm-config"
    assert sources[1]["secret"] == {"name": "slurm-auth-slurm", "items": [{"key": "slurm.key", "path": "slurm.key"}]}


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("30", 30), ("1:00:00", 60), ("2-00:00:00", 2880), ("7-0", 10080), ("01:30", 2), ("UNLIMITED", None), ("", None)],
)
def test_reconciler_reads_slurm_times_in_minutes(text: str, minutes: int | None) -> None:
    assert sacct_sync.minutes(text) == minutes


def test_reconciler_compares_tres_with_memory_in_mebibytes() -> None:
    assert sacct_sync.tres("cpu=4,mem=1G,gres/gpu=2") == sacct_sync.tres({"gres/gpu": 2, "cpu": "4", "mem": "1024M"})


class NoJobs:
    def active_jobs(self, **_: str) -> list[str]:
        return []


class JobsOf(NoJobs):
    def __init__(self, user: str) -> None:
        self.user = user

    def active_jobs(self, **query: str) -> list[str]:
        return ["42"] if query.get("user") == self.user else []


def empty_slurmdbd(cluster: str) -> dict[str, Any]:
    return {
        "clusters": {cluster},
        "qos": {"normal": dict.fromkeys(sacct_sync.QOS_FIELDS, "") | {"name": "normal", "preemptmode": "cluster"}},
        "accounts": {
            "root": {"account": "root", "description": "default root account", "organization": "root", "coordinators": ""}
        },
        "account_assoc": {
            "root": {"account": "root", "user": "", "parentname": "", "share": "1", "qos": "normal", "defaultqos": ""}
        },
        "user_assoc": {"root": {"root": {"share": "1"}}},
        "users": {"root": {"user": "root", "defaultaccount": "root", "admin": "Administrator"}},
    }


def test_reconciler_plan_on_an_empty_slurmdbd_creates_parents_before_children() -> None:
    dev = load_config(raw_config(config_values("dev")))
    assert dev.slurm.accounts is not None
    desired = desired_state("devlab", dev.slurm.accounts, dev.directory)
    plan = sacct_sync.make_plan(desired, empty_slurmdbd("devlab"), NoJobs())
    texts = [text for _, text, _ in plan.steps]
    assert texts[0].startswith("qos debug")
    assert texts.index("account lab (parent root, fairshare 1)") < texts.index("user alice in account lab")
    assert "coordinator alice of lab" in texts
    assert not any(symbol == "-" for symbol, _, _ in plan.steps)  # root is never removed


def test_reconciler_keeps_an_undeclared_user_with_active_jobs() -> None:
    dev = load_config(raw_config(config_values("dev")))
    assert dev.slurm.accounts is not None
    desired = desired_state("devlab", dev.slurm.accounts, dev.directory)
    current = copy.deepcopy(empty_slurmdbd("devlab"))
    current["account_assoc"]["old"] = {
        "account": "old",
        "user": "",
        "parentname": "root",
        "share": "1",
        "qos": "",
        "defaultqos": "",
    }
    current["user_assoc"]["carol"] = {"old": {"share": "1"}}
    plan = sacct_sync.make_plan(desired, current, JobsOf("carol"))
    assert ("!", "user carol: not declared, kept while 1 job(s) are active (42)", None) in plan.steps
    assert any(text.startswith("account old: not declared, kept") for _, text, _ in plan.steps)
    plan = sacct_sync.make_plan(desired, current, NoJobs())
    removals = [args for symbol, _, args in plan.steps if symbol == "-"]
    assert ["delete", "user", "where", "name=carol"] in removals
    assert ["delete", "account", "where", "name=old", "cluster=devlab"] in removals


def test_a_large_site_ships_its_desired_state_in_chunks_the_job_reassembles(tmp_path: Path) -> None:
    from benchmarks.sitegen import write_site
    from tests.helpers import run_stack_file

    stack = run_stack_file(write_site(tmp_path / "Pulumi.big.yaml", hosts=10, nodesets=4, users=20_000), "big")
    maps = [r for r in stack.kubernetes_objects() if r.name.startswith("slurm/slurm-accounts-desired-")]
    assert maps and all(not r.inputs.get("data") and r.inputs.get("binaryData") for r in maps)  # gzip parts
    job = next(r for r in stack.kubernetes_objects() if r.name == "slurm/slurm-accounts-sync")
    pod = job.inputs["spec"]["template"]["spec"]
    assert pod["initContainers"][0]["volumeMounts"][-1]["mountPath"] == "/etc/hpcforge/desired"
    assert {"name": "slurm-accounts-desired-assembled", "mountPath": "/etc/hpcforge/desired", "readOnly": True} in pod[
        "containers"
    ][0]["volumeMounts"]
