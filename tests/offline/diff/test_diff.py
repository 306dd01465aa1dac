"""`offline diff` pieces: the provider's force-new fields, text diffs, slurm.conf items (the Slurm verdicts against the
real daemons' table: tests/offline/diff/test_slurm_conf.py), the bases (recording, render folder, git ref) and the command's exit status (the gate)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from offline.cli import main
from offline.diff.base import CACHE_FORMAT, BaseError, State, base_cache_dir, from_git, load_base, resolve_ref
from offline.diff.effects import hostlist
from offline.diff.impact import assess
from offline.diff.plan import diff_values, force_new_fields, make_plan, text_diff
from offline.diff.slurm_conf import slurm_conf_items
from offline.program import recording
from offline.program.documents import write_render
from offline.program.engine import RecordedStack
from tests.helpers import FIXTURES, REPO


def _state(resources: list[dict], origin: str = "x") -> State:
    return State("prod", resources, origin)


def _k8s(name: str, inputs: dict, **options: object) -> dict:
    return {
        "urn": f"urn:pulumi:prod::hpcforge::kubernetes:any::{name}",
        "type": f"kubernetes:x:{inputs['kind']}",
        "name": name,
        "inputs": inputs,
        "options": options,
    }


# --- the provider's force-new fields (pulumi-kubernetes provider/pkg/provider/diff.go) --------------------------------


def test_job_template_change_replaces_and_deployment_template_change_updates() -> None:
    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}},
    }
    deployment = {**copy.deepcopy(job), "apiVersion": "apps/v1", "kind": "Deployment"}
    new_job, new_deployment = copy.deepcopy(job), copy.deepcopy(deployment)
    new_job["spec"]["template"]["spec"]["containers"][0]["image"] = "b"
    new_deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "b"
    plan = make_plan(_state([_k8s("j", job), _k8s("d", deployment)]), _state([_k8s("j", new_job), _k8s("d", new_deployment)]))
    ops = {c.name: c.op for c in plan.changes}
    assert ops == {"j": "replace", "d": "update"}
    assert "provider: .spec.template cannot change in place (pulumi-kubernetes diff.go)" in plan.changes[0].replace_reasons
    assert plan.changes[0].delete_before_replace  # same name: provider.go Diff deletes first


def test_configmap_data_and_pvc_storage_class_force_replacement_but_pvc_size_does_not() -> None:
    assert ".data" in force_new_fields("kubernetes:core/v1:ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap"})
    assert ".data" not in force_new_fields(
        "kubernetes:core/v1:ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap"}, {"enableConfigMapMutable": True}
    )
    pvc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "p"},
        "spec": {"storageClassName": "a", "resources": {"requests": {"storage": "1Gi"}}},
    }
    grown = copy.deepcopy(pvc)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    moved = copy.deepcopy(pvc)
    moved["spec"]["storageClassName"] = "b"
    assert make_plan(_state([_k8s("p", pvc)]), _state([_k8s("p", grown)])).changes[0].op == "update"
    replaced = make_plan(_state([_k8s("p", pvc)]), _state([_k8s("p", moved)]))
    assert replaced.changes[0].op == "replace"
    assert [e.severity for e in assess(replaced).effects] == ["data-loss"]


def test_protected_resource_replaced_is_refused() -> None:
    pvc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "p"},
        "spec": {"storageClassName": "a"},
    }
    moved = copy.deepcopy(pvc)
    moved["spec"]["storageClassName"] = "b"
    plan = make_plan(_state([_k8s("p", pvc, protect=True)]), _state([_k8s("p", moved, protect=True)]))
    assert plan.changes[0].refusals == ["Pulumi: the resource is protected; the engine refuses to replace it (protect: true)"]


def test_named_list_items_are_matched_by_name() -> None:
    old = {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}
    new = {"containers": [{"name": "b", "image": "2"}, {"name": "a", "image": "1"}]}
    assert diff_values(old, new) == [('containers["b"].image', "1", "2")]


def test_rendered_text_is_shown_as_a_unified_diff() -> None:
    lines = text_diff("A=1\nB=2\nC=3\n", "A=1\nB=5\nC=3\n", "slurm.conf")
    assert lines == ["--- a/slurm.conf", "+++ b/slurm.conf", "@@ -1,3 +1,3 @@", " A=1", "-B=2", "+B=5", " C=3"]


def test_hostlist_compacts_like_slurm() -> None:
    assert hostlist([f"cpu-{i}" for i in range(16)]) == "cpu-[0-15]"
    assert hostlist(["cn001", "cn002", "cn005"]) == "cn[001-002,005]"


# --- slurm.conf items (the restart table became offline/diff/slurm_outcomes.json: tests/offline/diff/test_slurm_conf.py) ---


def test_slurm_conf_items_keys_partition_lines_by_name() -> None:
    items = slurm_conf_items("SlurmdTimeout=600\nPartitionName=gpu Nodes=a MaxTime=1\n# x\n")
    assert items == {"SlurmdTimeout": "600", "PartitionName=gpu": "PartitionName=gpu Nodes=a MaxTime=1"}


# --- bases and the command ---------------------------------------------------------------------------------------------


def _edited_prod(tmp_path: Path, old: str, new: str) -> Path:
    text = (REPO / "Pulumi.prod.yaml").read_text()
    assert old in text
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_render_folder_base_pairs_a_content_hashed_job_with_its_successor(prod_stack: RecordedStack, tmp_path: Path) -> None:
    write_render(prod_stack, tmp_path / "render")
    head = copy.deepcopy(State.from_recorded(prod_stack, "head"))
    for resource in head.resources:
        if resource["name"] == "slurm/slurm-accounts-sync":
            resource["inputs"]["metadata"]["name"] = "slurm-accounts-sync-0123456789"
    plan = make_plan(load_base(str(tmp_path / "render"), "prod"), head)
    assert [(c.op, c.renamed) for c in plan.changes] == [
        (
            "replace",
            (
                prod_stack.find("kubernetes:batch/v1:Job", "slurm/slurm-accounts-sync").inputs["metadata"]["name"],
                "slurm-accounts-sync-0123456789",
            ),
        )
    ]


def test_gate_exit_status(prod_stack: RecordedStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recording = tmp_path / "prod.json"
    recording.write_text(json.dumps({"stack": "prod", "resources": [r.to_json() for r in prod_stack.resources]}))
    shrink = _edited_prod(tmp_path, "storage:\n      size: 100Gi", "storage:\n      size: 50Gi")
    args = ["diff", "--stack", "prod", "--config", str(shrink), "--against", str(recording)]
    assert main(args) == 1
    out = capsys.readouterr()
    assert out.out.startswith("offline diff of stack prod:") and "Worst impact: outage" in out.out
    assert "gate: the worst impact is outage" in out.err
    assert main([*args, "--acknowledge", "--format", "markdown", "--out", str(tmp_path / "r.md")]) == 0
    assert "| layer | create | update | replace | delete | unchanged |" in (tmp_path / "r.md").read_text()
    assert main(["diff", "--stack", "prod", "--against", str(recording)]) == 0
    assert "No changes." in capsys.readouterr().out
    assert main(["diff", "--stack", "prod", "--against", "no-such-ref-j33"]) == 2
    bad = _edited_prod(tmp_path, "clusterName: hpc\n", "clusterName: 7\n")
    assert main(["diff", "--stack", "prod", "--config", str(bad), "--against", str(recording)]) == 2


def test_git_ref_base_runs_that_refs_program(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HPCFORGE_RECORDING_CACHE", "off")  # keep nothing under .offline/
    try:
        state = from_git("HEAD", "prod")
    except BaseError as error:
        if "git" in str(error) and "not a git repository" in str(error):
            pytest.skip(f"not a git checkout: {error}")
        raise
    assert state.origin.startswith("HEAD (")
    assert any(r["type"] == "kubernetes:slinky.slurm.net/v1beta1:Controller" for r in state.resources)
    assert not list(base_cache_dir().glob(f"*{state.origin[6:18]}*"))  # tests/conftest.py's temporary folder
    with pytest.raises(BaseError, match="neither a git ref"):
        from_git("no-such-ref-j33", "prod")


def test_git_bases_are_kept_where_the_environment_says(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A base kept by the user's own `./hpcforge diff --against HEAD` (.offline/diff-base/) is not what the tests
    read: tests/conftest.py points HPCFORGE_DIFF_BASE_DIR at a temporary folder, and `from_git` reads the base kept
    there (a planted one here, so no program runs)."""
    assert not base_cache_dir().is_relative_to(REPO)
    monkeypatch.delenv(recording.ENV_BASE_DIR)
    assert base_cache_dir() == REPO / ".offline" / "diff-base"  # the CLI's default
    commit = resolve_ref("HEAD")
    if not commit:
        pytest.skip("not a git checkout")
    monkeypatch.setenv(recording.ENV_BASE_DIR, str(tmp_path))
    monkeypatch.delenv(recording.ENV_SWITCH, raising=False)
    planted = {"stack": "prod", "resources": [_k8s("planted", {"kind": "ConfigMap"})]}
    (tmp_path / f"{commit}-prod-{CACHE_FORMAT}.json").write_text(json.dumps(planted))
    said: list[str] = []
    state = from_git("HEAD", "prod", progress=said.append)
    assert [r["name"] for r in state.resources] == ["planted"]
    assert state.origin == f"HEAD ({commit[:12]})"
    assert said == [f"base: HEAD ({commit[:12]}), recorded before ({tmp_path / f'{commit}-prod-{CACHE_FORMAT}.json'})"]


def _with_controller(stack: RecordedStack, extra_conf: str, inplace: bool) -> State:
    """prod with its Controller's extraConf replaced and inplaceReconfigure set."""
    state = copy.deepcopy(State.from_recorded(stack, "prod"))
    for resource in state.resources:
        if resource["type"] == "kubernetes:slinky.slurm.net/v1beta1:Controller":
            resource["inputs"]["spec"]["extraConf"] = extra_conf
            resource["inputs"]["spec"]["inplaceReconfigure"] = inplace
    return state


@pytest.mark.parametrize(
    ("before", "after", "inplace", "worst"),
    [
        ("SlurmdTimeout=600\n", "SlurmdTimeout=900\n", True, "reload"),
        ("SlurmdTimeout=600\n", "SlurmdTimeout=900\n", False, "singleton-restart"),
        ("SlurmdTimeout=600\n", "SlurmdTimeout=600\nSlurmctldPort=6820\n", True, "outage"),
        ("SlurmdTimeout=600\n", "SlurmdTimeout=600\nAuthType=auth/munge\n", True, "outage"),
        ("SlurmdTimeout=600\n", "SlurmdTimeout=600\nStateSaveLocation=/srv/state\n", True, "data-loss"),
    ],
)
def test_slurm_conf_change_is_a_reconfigure_only_with_inplace_reconfigure_and_outside_the_restart_table(
    prod_stack: RecordedStack, before: str, after: str, inplace: bool, worst: str
) -> None:
    plan = make_plan(_with_controller(prod_stack, before, inplace), _with_controller(prod_stack, after, inplace))
    assert [c.name for c in plan.changes] == ["slurm/controller-slurm"]
    assert assess(plan).worst == worst


def test_deleting_a_nodeset_with_pods_is_an_outage_and_scaling_it_to_zero_drains(prod_stack: RecordedStack) -> None:
    base = State.from_recorded(prod_stack, "prod")
    deleted = copy.deepcopy(base)
    deleted.resources = [r for r in deleted.resources if r["name"] != "slurm/nodeset-cpu"]
    impact = assess(make_plan(base, deleted))
    assert impact.worst == "outage" and {f"cpu-{i}" for i in range(16)} <= impact.drained_nodes
    scaled = copy.deepcopy(base)
    for resource in scaled.resources:
        if resource["name"] == "slurm/nodeset-cpu":
            resource["inputs"]["spec"]["replicas"] = 0
    impact = assess(make_plan(base, scaled))
    assert impact.worst == "rolling-drain" and {f"cpu-{i}" for i in range(16)} == impact.drained_nodes


def test_gate_with_live_data_fails_only_when_busy_nodes_drain() -> None:
    from offline.diff.command import gate
    from offline.diff.effects import Effect, Impact

    impact = Impact([Effect("rolling-drain", "roll", "e", [], "revert safe")], drained_nodes={"cpu-0", "cpu-1"})
    assert gate(impact, acknowledged=False) == 0
    assert gate(impact, acknowledged=False, busy_nodes={"gpu-a100-3"}) == 0
    assert gate(impact, acknowledged=False, busy_nodes={"cpu-1"}) == 1
    assert gate(impact, acknowledged=True, busy_nodes={"cpu-1"}) == 0


def test_deleting_a_namespace_with_volumes_is_data_loss(prod_stack: RecordedStack) -> None:
    base = State.from_recorded(prod_stack, "prod")
    head = copy.deepcopy(base)
    head.resources = [r for r in head.resources if not (r["type"] == "kubernetes:core/v1:Namespace" and r["name"] == "database")]
    effects = [e for e in assess(make_plan(base, head)).effects if e.what.startswith("namespace database deleted")]
    assert [e.severity for e in effects] == ["data-loss"]
    assert "MariaDB database/mariadb-mariadb" in effects[0].what


def test_diff_with_live_slurm_json_gates_on_running_jobs_on_drained_nodes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--squeue/--sinfo` (real Slurm 26.05.3 JSON, tests/fixtures/slurm-json: job 3 runs on cpu[1-2]): a change that
    only drains (rolling-drain, below the gate) fails it when a drained node runs a job, and the report names the job."""
    from offline.diff import command as diff_command
    from offline.diff.effects import Effect, Impact
    from offline.diff.plan import Plan

    live = FIXTURES / "slurm-json"
    impact = Impact([Effect("rolling-drain", "roll", "e", [], "revert safe")], drained_nodes={"cpu1"})
    monkeypatch.setattr(diff_command, "compute", lambda args, progress=True: (Plan("prod", "HEAD", "head", [], {}, []), impact))
    monkeypatch.setattr(diff_command, "render", lambda plan, impact, markdown=False: "report\n")
    args = [
        "diff",
        "--stack",
        "prod",
        "--against",
        "HEAD",
        "--squeue",
        str(live / "squeue.json"),
        "--sinfo",
        str(live / "sinfo.json"),
    ]
    assert main(args) == 1
    out = capsys.readouterr()
    assert "Live impact: 2 running jobs of 2 users on 1 node that drain or restart (cpu1)" in out.out
    assert "physics" in out.out and "gate: 1 Slurm node with running jobs drains or restarts" in out.err
    assert main([*args, "--acknowledge"]) == 0
    idle = Impact([Effect("rolling-drain", "roll", "e", [], "revert safe")], drained_nodes={"no-such-node"})
    monkeypatch.setattr(diff_command, "compute", lambda args, progress=True: (Plan("prod", "HEAD", "head", [], {}, []), idle))
    assert main(args) == 0
    assert main(["diff", "--stack", "prod", "--against", "HEAD", "--squeue", str(live / "squeue.json")]) == 2
