"""`offline diff` pieces: the provider's force-new fields, text diffs, slurm.conf items (the Slurm verdicts against the
real daemons' table: tests/offline/diff/test_slurm_conf.py), the bases (recording, render folder, git ref) and the command's exit status (the gate)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from offline.cli import main
from offline.diff import base as base_module
from offline.diff.base import BaseError, State, base_cache_dir, base_cache_file, from_git, load_base, resolve_ref
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
    assert out.out.startswith("prod: outage; 1 resource change (1 update)")
    assert "gate: the worst impact is outage" in out.err
    assert main([*args, "--acknowledge", "--format", "markdown", "--out", str(tmp_path / "r.md")]) == 0
    assert "| layer | create | update | replace | delete | unchanged |" in (tmp_path / "r.md").read_text()
    assert main(["diff", "--stack", "prod", "--against", str(recording)]) == 0
    assert "prod: none; no resource changes" in capsys.readouterr().out
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
    kept = base_cache_file(commit, "prod")
    assert kept.parent == tmp_path and kept.name.startswith(f"{commit}-prod-")
    kept.write_text(json.dumps(planted))
    said: list[str] = []
    state = from_git("HEAD", "prod", progress=said.append)
    assert [r["name"] for r in state.resources] == ["planted"]
    assert state.origin == f"HEAD ({commit[:12]})"
    assert said == [f"base: HEAD ({commit[:12]}), recorded before ({kept})"]


def test_a_changed_dependency_version_does_not_reuse_the_kept_base(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The kept base is named by its inputs (offline/diff/base.py base_key): the installed pulumi-kubernetes (or any
    dependency) changing runs the base program again instead of reusing a recording made with the old one."""
    commit = resolve_ref("HEAD")
    if not commit:
        pytest.skip("not a git checkout")
    monkeypatch.setenv(recording.ENV_BASE_DIR, str(tmp_path))
    monkeypatch.delenv(recording.ENV_SWITCH, raising=False)
    base_file = base_cache_file(commit, "prod")
    base_file.write_text(json.dumps({"stack": "prod", "resources": [_k8s("kept", {"kind": "ConfigMap"})]}))
    runs: list[str] = []

    def run(ref: str, commit: str, stack: str, **_: object) -> str:
        runs.append(ref)
        return json.dumps({"stack": stack, "resources": [_k8s("ran", {"kind": "ConfigMap"})]})

    monkeypatch.setattr(base_module, "run_base_program", run)
    assert [r["name"] for r in from_git("HEAD", "prod").resources] == ["kept"]
    assert runs == []
    installed = dict(base_module.dependency_versions())
    assert installed["pulumi"] != "-" and installed["pulumi-kubernetes"] != "-"
    changed = sorted({**installed, "pulumi-kubernetes": installed["pulumi-kubernetes"] + ".post1"}.items())
    monkeypatch.setattr(base_module, "dependency_versions", lambda project=REPO: changed)
    assert base_cache_file(commit, "prod") != base_file
    assert [r["name"] for r in from_git("HEAD", "prod").resources] == ["ran"]
    assert runs == ["HEAD"]
    assert [r["name"] for r in from_git("HEAD", "prod").resources] == ["ran"]  # kept under the new inputs
    assert runs == ["HEAD"]


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


def test_deleting_a_namespace_with_volumes_is_data_loss(prod_stack: RecordedStack) -> None:
    base = State.from_recorded(prod_stack, "prod")
    head = copy.deepcopy(base)
    head.resources = [r for r in head.resources if not (r["type"] == "kubernetes:core/v1:Namespace" and r["name"] == "database")]
    effects = [e for e in assess(make_plan(base, head)).effects if e.what.startswith("namespace database deleted")]
    assert [e.severity for e in effects] == ["data-loss"]
    assert "MariaDB database/mariadb-mariadb" in effects[0].what


def _live_files(tmp_path: Path, nodes: dict[str, str], jobs: dict[int, str]) -> list[str]:
    """The real 26.05.3 capture (tests/fixtures/slurm-json) with its nodes renamed (`nodes`: old -> new) and the
    running jobs put on other nodes (`jobs`: job id -> hostlist; the others dropped): `--squeue FILE --sinfo FILE`."""
    squeue = json.loads((FIXTURES / "slurm-json" / "squeue.json").read_text())
    squeue["jobs"] = [dict(job, nodes=jobs[job["job_id"]]) for job in squeue["jobs"] if job["job_id"] in jobs]
    sinfo = (FIXTURES / "slurm-json" / "sinfo.json").read_text()
    for old, new in nodes.items():
        sinfo = sinfo.replace(f'"{old}"', f'"{new}"')
    (tmp_path / "squeue.json").write_text(json.dumps(squeue))
    (tmp_path / "sinfo.json").write_text(sinfo)
    return ["--squeue", str(tmp_path / "squeue.json"), "--sinfo", str(tmp_path / "sinfo.json")]


def _prod_recording(stack: RecordedStack, tmp_path: Path, **replicas: int) -> str:
    resources = [r.to_json() for r in stack.resources]
    for resource in resources:
        if resource["name"].removeprefix("slurm/nodeset-") in replicas and resource["type"].endswith(":NodeSet"):
            resource["inputs"]["spec"]["replicas"] = replicas[resource["name"].removeprefix("slurm/nodeset-")]
    path = tmp_path / "deployed.json"
    path.write_text(json.dumps({"stack": "prod", "resources": resources}))
    return str(path)


def test_a_scale_in_drains_the_nodes_slinky_picks_by_pod_deadline_not_the_highest_ordinal(
    prod_stack: RecordedStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33, found 7: slurm-operator v1.2.1 deletes the pod whose jobs end first (pod-deadline) before the one
    with the highest ordinal (internal/controller/nodeset/utils/sort.go:36-102). NodeSet cpu goes from 2 to 1 pods:
    cpu-1 (the highest ordinal) runs job 1, 12 h limit; cpu-0 runs job 3, 1 h limit. The operator drains cpu-0, so
    job 3 is the one the drain waits for; the rule before named cpu-1 (and job 1)."""
    against = _prod_recording(prod_stack, tmp_path, cpu=2)
    head = _edited_prod(
        tmp_path,
        '        replicas: 16\n        cpu: "60"\n        memory: 240Gi\n        maxUnavailable: 2\n',
        '        replicas: 1\n        cpu: "60"\n        memory: 240Gi\n        maxUnavailable: 1\n',
    )
    live = _live_files(tmp_path, {"cpu1": "cpu-0", "cpu2": "cpu-1"}, {1: "cpu-1", 3: "cpu-0"})
    code = main(["diff", "--stack", "prod", "--config", str(head), "--against", against, *live])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "highest ordinals, cpu-1" not in out
    assert "1 of its 2 node(s) cpu-[0-1] drained then deleted" in out
    assert "batch 1: cpu-0: waits up to 45:57; 1 job" in out
    assert "Live impact: 1 running job of 1 user on 1 node" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:2] in ("1 ", "3 ")]
    assert [row[0] for row in rows if row[4:5] in (["cpu-0"], ["cpu-1"])] == ["3"]


def test_a_drain_that_waits_for_jobs_passes_the_gate_and_one_that_never_ends_does_not(
    prod_stack: RecordedStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review (issue 34): the busy-node gate fired although the drain waits for the jobs, "16 drained now" was
    printed while maxUnavailable drain at a time, and a node under a job without a time limit was not flagged as a
    drain that never finishes. NodeSet cpu (maxUnavailable 2) rolls 4 pods: cpu-0 runs job 3 (1 h), cpu-3 runs
    job 8 (no limit); cpu-1 and cpu-2 are idle and go first."""
    against = _prod_recording(prod_stack, tmp_path, cpu=4)
    head = _edited_prod(tmp_path, '        replicas: 16\n        cpu: "60"\n', '        replicas: 4\n        cpu: "59"\n')
    live = _live_files(tmp_path, {"cpu1": "cpu-0", "cpu2": "cpu-3"}, {3: "cpu-0", 8: "cpu-3"})
    args = ["diff", "--stack", "prod", "--config", str(head), "--against", against, *live]
    assert main(args) == 1
    out = capsys.readouterr()
    assert "cpu (roll of 4 nodes, 2 at a time, in the operator's order" in out.out
    assert "batch 1: cpu-[1-2]: drains at once (idle)" in out.out
    assert "batch 2: cpu-[0,3]: never drains; 2 jobs" in out.out
    assert "job 8 (nobody) has no time limit: a drain of cpu-3 never finishes" in out.out
    assert "gate: the drain of cpu-3 never finishes: job 8 (nobody) has no time limit" in out.err
    assert main([*args, "--acknowledge"]) == 0
    capsys.readouterr()
    finite = _live_files(tmp_path, {"cpu1": "cpu-0", "cpu2": "cpu-3"}, {3: "cpu-0"})
    assert main(["diff", "--stack", "prod", "--config", str(head), "--against", against, *finite]) == 0
    out = capsys.readouterr()
    assert "1 running job of 1 user" in out.out and "gate:" not in out.err


def test_live_json_given_by_halves_or_malformed_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    live = FIXTURES / "slurm-json"
    assert main(["diff", "--stack", "prod", "--against", "HEAD", "--squeue", str(live / "squeue.json")]) == 2
    assert "give both --squeue FILE and --sinfo FILE" in capsys.readouterr().err
