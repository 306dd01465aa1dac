"""offline/diff/slurm_conf.py: the Slurm verdicts come from the outcomes table a real Slurm 26.05.3 produced
(tests/daemons/slurm_change.py; re-run and compared by tests/components/layers/slurm/test_real_slurm_outcomes.py).

Here: the table is the harness's cases (regenerated when they change); every parameter hpcforge writes and every
parameter whose slurm.conf(5) entry warns of a restart or lost jobs has a row; the man page says what is quoted at the
lines cited; the diff rules, given each case as a Controller or ConfigMap change, give the verdict written down in
EXPECTED from the harness's printed table (and cite that case); what no row answers for is unassessed."""

from __future__ import annotations

import copy
import functools
import re
import tarfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from components.layers.slurm.controller import TYPED_CONTROLLER_PARAMETERS
from offline.diff.base import State
from offline.diff.effects import UNASSESSED
from offline.diff.impact import assess
from offline.diff.plan import make_plan
from offline.diff.slurm_conf import MAN_LINES, ConfItem, conf_items, file_items, outcome_table, rows, verdicts
from offline.program.engine import RecordedStack
from tests.daemons.slurm_change import BASE_PARAMETERS, OPERATOR_LINES, PARTITIONS, Change, Files
from tests.daemons.slurm_change_cases import CASES
from tests.helpers import require_shared

EXPECTED: dict[str, tuple[str, str]] = {
    "SchedulerType": ("reload", "singleton-restart"),
    "SelectType": ("outage", "outage"),
    "SelectTypeParameters": ("reload", "singleton-restart"),
    "PriorityType": ("reload", "singleton-restart"),
    "PreemptType": ("reload", "singleton-restart"),
    "PreemptMode": ("reload", "singleton-restart"),
    "AccountingStorageEnforce": ("reload", "singleton-restart"),
    "EnforcePartLimits": ("reload", "singleton-restart"),
    "GresTypes": ("reload", "singleton-restart"),
    "ProctrackType": ("reload", "singleton-restart"),
    "TaskPlugin": ("reload", "singleton-restart"),
    "JobAcctGatherType": ("reload", "singleton-restart"),
    "PrologFlags": ("reload", "singleton-restart"),
    "timeouts-and-weights": ("reload", "singleton-restart"),
    "PrivateData": ("reload", "singleton-restart"),
    "AuthType": ("outage", "outage"),
    "SwitchType": ("reload", "singleton-restart"),
    "SwitchType-off": ("reload", "singleton-restart"),
    "SlurmctldPort": ("outage", "outage"),
    "SlurmdPort": ("outage", "outage"),
    "StateSaveLocation": ("data-loss", "data-loss"),
    "ClusterName": ("outage", "outage"),
    "partition-added": ("reload", "singleton-restart"),
    "partition-removed": ("data-loss", "data-loss"),
    "partition-renamed": ("data-loss", "data-loss"),
    "partition-limits": ("reload", "singleton-restart"),
    "partition-access": ("reload", "singleton-restart"),
    "partition-default": ("reload", "singleton-restart"),
    "nodeset-joins-partition": ("reload", "singleton-restart"),
    "nodeset-leaves-partition": ("reload", "singleton-restart"),
    "nodeset-added": ("reload", "singleton-restart"),
    "nodeset-removed": ("data-loss", "data-loss"),
    "topology.yaml": ("reload", "singleton-restart"),
    "gres.conf-nodes": ("reload", "singleton-restart"),
    "gres.conf-devices": ("outage", "outage"),
    "cgroup.conf": ("reload", "singleton-restart"),
    "NamespaceType": ("reload", "singleton-restart"),
    "prolog-epilog": ("reload", "singleton-restart"),
}
"""Case -> (verdict with inplaceReconfigure, verdict without), read off the harness's printed table before the rules
were written: reconfigure-class changes reload, a recreated slurmctld pod is a singleton restart, jobs killed or
forgotten are data loss, slurmctld down, nodes drained or the operator's fixed ports are an outage."""

SLURM_TARBALL = ("slurm", "slurm-26.05.3.tar.bz2")


@functools.cache
def _man_page() -> str:
    tarball = require_shared(*SLURM_TARBALL)
    with tarfile.open(tarball) as archive:
        member = archive.extractfile("slurm-26.05.3/doc/man/man5/slurm.conf.5")
        assert member is not None
        return member.read().decode()


def _entries(text: str) -> dict[str, str]:
    """Each parameter's entry (`.TP` then `\\fBName\\fR`), up to the next entry or section, groff escapes removed."""
    body = text.split('.SH "NODE CONFIGURATION"', maxsplit=1)[0]
    parts = re.split(r"\n\.TP[^\n]*\n\\fB(\w+)\\fR", body)
    clean = lambda s: re.sub(r"\s+", " ", re.sub(r"\\f[BRIP]", "", s).replace("\\-", "-"))  # noqa: E731
    return {parts[i]: clean(parts[i + 1]) for i in range(1, len(parts), 2)}


def test_the_table_is_the_harness_cases_run() -> None:
    table = outcome_table()
    assert table["slurm"] == "26.05.3"
    assert [(r["id"], r["what"], r["items"]) for r in table["rows"]] == [(c.id, c.what, list(c.items)) for c in CASES]
    assert set(EXPECTED) == {c.id for c in CASES}


def test_every_parameter_hpcforge_writes_has_a_row() -> None:
    answered = {item for row in rows().values() for item in row["items"]}
    assert set(TYPED_CONTROLLER_PARAMETERS) - answered == set()


def test_every_parameter_the_man_page_warns_about_has_a_row() -> None:
    """Walk slurm.conf(5) of 26.05.3: an entry that says the daemons must restart, that jobs or job records are lost,
    or that jobs are killed or cancelled by the change has a row (the pin moves, the walk runs again)."""
    warns = re.compile(
        r"must be terminated|must be restarted|requires? (a )?(daemon )?restart|restarting all|will be lost|may be lost"
        r"|running and pending job information|are canceled",
        re.I,
    )
    entries = _entries(_man_page())
    noted = {key for key, entry in entries.items() if warns.search(entry)}
    assert {"AuthType", "SelectType", "SwitchType", "StateSaveLocation"} <= noted
    answered = {item for row in rows().values() for item in row["items"]}
    assert noted - answered == set()


def test_the_man_page_says_what_is_quoted_at_the_lines_cited() -> None:
    lines = _man_page().splitlines()
    for key, (number, words) in MAN_LINES.items():
        assert words in lines[number - 1], f"slurm.conf(5) line {number} ({key}) no longer says {words!r}"


# --- items ---------------------------------------------------------------------------------------------------------------


def test_a_renamed_partition_is_one_item_and_a_changed_one_names_its_attributes() -> None:
    old = "PartitionName=gpu Nodes=gpu MaxTime=1 State=UP\nPartitionName=cpu Nodes=cpu,bm MaxTime=1\n"
    new = "PartitionName=accel Nodes=gpu MaxTime=1 State=UP\nPartitionName=cpu Nodes=cpu MaxTime=2 QOS=x\n"
    assert [i.item for i in conf_items(old, new)] == [
        "partition:MaxTime",
        "partition:Nodes-",
        "partition:QOS",
        "partition:renamed",
    ]


def test_gres_conf_host_lists_and_devices_are_told_apart() -> None:
    old = "NodeName=gpu-[0-1] Name=gpu Type=a100 File=/dev/nvidia[0-7]\n"
    assert [i.item for i in file_items("gres.conf", old, old.replace("[0-1]", "[0-3]"))] == ["gres.conf:nodes"]
    assert [i.item for i in file_items("gres.conf", old, old.replace("[0-7]", "[0-3]"))] == ["gres.conf:devices"]
    cores = "NodeName=gpu-[0-1] Name=gpu Type=a100 File=/dev/nvidia0 Cores=0-47\n"
    assert [i.item for i in file_items("gres.conf", cores, cores.replace("0-47", "0-95"))] == ["gres.conf:cores"]
    assert [i.item for i in file_items("gres.conf", cores, cores.replace("a100", "a800"))] == ["gres.conf:types"]
    added = old + "NodeName=gpu-l40s-[0-3] Name=gpu Type=l40s File=/dev/nvidia[0-3]\n"
    assert [i.item for i in file_items("gres.conf", old, added)] == ["gres.conf:nodes"]
    assert [i.item for i in file_items("plugstack.conf", "a\n", "b\n")] == ["file:plugstack.conf"]


def test_what_no_row_answers_for_is_unassessed_and_says_so() -> None:
    found = verdicts(
        [ConfItem("SchedulerTimeSlice", "SchedulerTimeSlice 30 -> 60"), ConfItem("SlurmdTimeout", "x")], "reconfigure"
    )
    by_row = {v.row: v for v in found}
    assert by_row[None].severity == UNASSESSED and by_row[None].items == ("SchedulerTimeSlice",)
    assert "unassessed" in by_row[None].what
    assert by_row["timeouts-and-weights"].severity == "reload"


# --- the rules against the table --------------------------------------------------------------------------------------

_CONTROLLER = "kubernetes:slinky.slurm.net/v1beta1:Controller"
_EXTRA = "slurm/slurm-config-extra"
_SCRIPTS = ("slurm/slurm-prolog-scripts", "slurm/slurm-epilog-scripts")


def _base_files(case: Change) -> Files:
    """The harness's base as the Controller's extraConf would carry it (the operator's NodeSet lines stand for the
    feature NodeSets hpcforge writes there)."""
    params = {**dict(BASE_PARAMETERS), **dict(case.base), "SlurmctldPort": "6817", "SlurmdPort": "6818"}
    params["StateSaveLocation"] = "/var/spool/slurmctld/hpc"
    lines = [line for line in OPERATOR_LINES if line.startswith("NodeSet=")]
    return Files("\n".join([*(f"{k}={v}" for k, v in params.items()), *lines, *PARTITIONS]) + "\n")


def _states(stack: RecordedStack, case: Change, inplace: bool, tmp: Path) -> tuple[State, State]:
    """prod's Controller and Slurm ConfigMaps, before and after `case` (edited as the harness edits its files)."""
    keep = {r["name"] for r in State.from_recorded(stack, "prod").resources if r["type"] == _CONTROLLER} | {_EXTRA, *_SCRIPTS}
    base = State(stack.stack, [r for r in State.from_recorded(stack, "prod").resources if r["name"] in keep], "prod")
    head = copy.deepcopy(base)
    files = _base_files(case)
    edited = copy.deepcopy(files)
    site = SimpleNamespace(new_port=6820, cluster=SimpleNamespace(tmp_dir=tmp), cluster_name="hpc")
    case.edit(edited, site)  # type: ignore[arg-type]
    for state, side in ((base, files), (head, edited)):
        _apply(state, side, inplace)
    return base, head


def _apply(state: State, files: Files, inplace: bool) -> None:
    text = files.slurm_conf
    name = re.search(r"^ClusterName=(.*)$", text, re.M)
    for resource in state.resources:
        inputs: dict[str, Any] = resource["inputs"]
        if resource["type"] == _CONTROLLER:
            inputs["spec"]["extraConf"] = re.sub(r"^ClusterName=.*\n", "", text, flags=re.M)
            inputs["spec"]["inplaceReconfigure"] = inplace
            if name:
                inputs["spec"]["clusterName"] = name.group(1)
        elif resource["name"] == _EXTRA:
            inputs["data"].update(
                {"gres.conf": files.gres_conf, "topology.yaml": files.topology_yaml, "cgroup.conf": files.cgroup_conf}
            )
            if files.job_container_conf is None:
                inputs["data"].pop("job_container.conf", None)
            else:
                inputs["data"]["job_container.conf"] = files.job_container_conf
        elif resource["name"] in _SCRIPTS:
            inputs["data"] = {key: f"{value}# {files.version}\n" for key, value in inputs["data"].items()}


@pytest.mark.parametrize("inplace", [True, False], ids=["inplaceReconfigure", "pod-recreated"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_rules_give_each_harness_case_its_table_verdict(
    prod_stack: RecordedStack, case: Change, inplace: bool, tmp_path: Path
) -> None:
    base, head = _states(prod_stack, case, inplace, tmp_path)
    impact = assess(make_plan(base, head))
    cited = [e for e in impact.effects if "tests/daemons/slurm_change.py case" in e.evidence]
    assert cited, f"{case.id}: no effect cites the table\n" + "\n".join(f"[{e.severity}] {e.what}" for e in impact.effects)
    assert not [e for e in impact.effects if e.what.startswith("unassessed")]
    rows_cited = {re.search(r"slurm_change\.py case (\S+) \(", e.evidence).group(1) for e in cited}  # type: ignore[union-attr]
    assert all(set(rows()[r]["items"]) & set(case.items) for r in rows_cited), rows_cited
    want = EXPECTED[case.id][0 if inplace else 1]
    assert (
        max(
            (e.severity for e in cited),
            key=["none", "reload", "rolling-drain", "singleton-restart", "outage", "unassessed", "data-loss"].index,
        )
        == want
    )


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.id in ("topology.yaml", "gres.conf-nodes", "prolog-epilog")], ids=lambda c: c.id
)
def test_a_referenced_config_map_change_without_inplace_reconfigure_is_not_applied_until_a_restart(
    prod_stack: RecordedStack, case: Change, tmp_path: Path
) -> None:
    """slurm-operator 1.2.1 hashes only its own slurm-config ConfigMap into the slurmctld pod: without inplaceReconfigure
    a topology.yaml, gres.conf or script change recreates nothing and reconfigures nothing (issue 33, found 5)."""
    base, head = _states(prod_stack, case, False, tmp_path)
    plan = make_plan(base, head)
    assert {c.kind for c in plan.changes} == {"ConfigMap"}
    effects = [e for e in assess(plan).effects if "slurm_change.py case" in e.evidence]
    assert len(effects) == len(plan.changes)
    for effect in effects:
        assert "not applied until slurmctld restarts" in effect.what
        assert "controller_config.go@v1.2.1:131-147" in effect.evidence
