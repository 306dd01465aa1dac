"""`--verify` without daemons (offline/diff/verify.py): the claims made from a plan, and the verdicts on hand-made
observation folders (the real Slurm tier is tests/offline/diff/test_real_verify.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from offline.cli import main
from offline.diff.base import State
from offline.diff.impact import assess
from offline.diff.plan import make_plan
from offline.diff.verify import check, ended_jobs, predictions
from offline.program.engine import RecordedStack

STARTED = 1796600000.0  # 2026-12-06T23:33:20Z


def _pod(namespace: str, name: str, started: str) -> dict[str, Any]:
    return {
        "metadata": {"namespace": namespace, "name": name, "creationTimestamp": started},
        "status": {"containerStatuses": [{"name": "slurmd", "restartCount": 0, "state": {"running": {"startedAt": started}}}]},
    }


def _jobs(*jobs: tuple[int, str, str, str]) -> dict[str, Any]:
    return {"jobs": [{"job_id": i, "job_state": [s], "partition": p, "nodes": n} for i, s, p, n in jobs]}


def _folder(tmp_path: Path, **files: Any) -> Path:
    folder = tmp_path / "observed"
    folder.mkdir(parents=True)
    (folder / "deploy.json").write_text(json.dumps({"started_at": STARTED, "finished_at": STARTED + 600}))
    for name, data in files.items():
        file = name.removesuffix("_json").replace("_", "-") + ".json"  # jobs_before_json -> jobs-before.json
        (folder / file).write_text(data if isinstance(data, str) else json.dumps(data))
    return folder


def _rolled(stack: RecordedStack) -> tuple[State, State]:
    base = State.from_recorded(stack, "prod")
    head = copy.deepcopy(base)
    for resource in head.resources:
        if resource["name"] == "slurm/nodeset-gpu-h100":
            resource["inputs"]["spec"]["slurmd"]["image"] = "ghcr.io/slinkyproject/slurmd:26.05.4-ubuntu24.04"
    return base, head


def test_a_nodeset_roll_predicts_its_pods_recreated_and_the_jobs_running_on(prod_stack: RecordedStack) -> None:
    plan = make_plan(*_rolled(prod_stack))
    claims = predictions(plan, assess(plan))
    assert [c["claim"] for c in claims] == ["pods", "jobs"]
    assert claims[0]["pods"] == [f"gpu-h100-{i}" for i in range(4)] and claims[0]["namespace"] == "slurm"
    assert claims[1]["expected"] == "continue" and claims[1]["text"] == "running jobs continue"


def test_verdicts_seen_not_seen_unchecked_and_unpredicted(prod_stack: RecordedStack, tmp_path: Path) -> None:
    plan = make_plan(*_rolled(prod_stack))
    claims = predictions(plan, assess(plan))
    before = _jobs((11, "RUNNING", "gpu", "gpu-h100-0"), (12, "RUNNING", "cpu", "cpu-3"), (13, "PENDING", "gpu", ""))
    after = _jobs((11, "COMPLETED", "gpu", "gpu-h100-0"), (12, "NODE_FAIL", "cpu", "cpu-3"), (13, "RUNNING", "gpu", "gpu-h100-1"))
    pods = {"items": [
        *(_pod("slurm", f"gpu-h100-{i}", "2026-12-06T23:40:00Z") for i in range(3)),
        _pod("slurm", "gpu-h100-3", "2026-11-01T00:00:00Z"),  # not rolled yet
        _pod("slurm", "slurm-accounting-0", "2026-12-06T23:45:00Z"),  # nothing predicted that
    ]}  # fmt: skip
    folder = _folder(tmp_path, pods_json=pods, jobs_before_json=before, jobs_after_json=after)
    results = {r["text"]: r for r in check(claims, folder)}
    assert results["pods gpu-h100-0,gpu-h100-1,gpu-h100-2,gpu-h100-3 recreated"]["verdict"] == "not seen"
    assert results["pods gpu-h100-0,gpu-h100-1,gpu-h100-2,gpu-h100-3 recreated"]["seen"] == "3 of 4 recreated"
    assert results["running jobs continue"]["verdict"] == "not seen"
    assert results["running jobs continue"]["seen"] == "job 12 NODE_FAIL"  # 11 completed by itself
    assert results["pod slurm/slurm-accounting-0 recreated"]["verdict"] == "unpredicted"
    bare = {r["text"]: r["verdict"] for r in check(claims, _folder(tmp_path / "bare"))}
    assert set(bare.values()) == {"unchecked"}


def test_jobs_gone_without_a_record_are_said_unknown_and_a_timeout_is_no_change(tmp_path: Path) -> None:
    before = _jobs((1, "RUNNING", "cpu", "n1"), (2, "RUNNING", "cpu", "n1"), (3, "RUNNING", "cpu", "n2"))
    after = _jobs((2, "TIMEOUT", "cpu", "n1"))
    assert ended_jobs(before, after) == {1: "gone (state unknown: no sacct.json)", 3: "gone (state unknown: no sacct.json)"}
    sacct = {
        "jobs": [
            {"job_id": 1, "state": {"current": ["CANCELLED"]}, "partition": "cpu"},
            {"job_id": 3, "state": {"current": ["COMPLETED"]}},
        ]
    }
    assert ended_jobs(before, after, sacct) == {1: "CANCELLED"}


def test_the_command_exits_2_on_unreadable_input_and_1_on_a_refuted_prediction(
    prod_stack: RecordedStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = make_plan(*_rolled(prod_stack))
    prediction = tmp_path / "prediction.json"
    prediction.write_text(json.dumps({"stack": "prod", "predictions": predictions(plan, assess(plan))}))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["diff", "--verify", str(prediction), "--observed", str(empty)]) == 2
    assert "deploy.json with started_at" in capsys.readouterr().err
    assert main(["diff", "--verify", str(prediction)]) == 2
    assert "--verify needs --observed DIR" in capsys.readouterr().err
    (tmp_path / "not-a-report.json").write_text("{}")
    assert main(["diff", "--verify", str(tmp_path / "not-a-report.json"), "--observed", str(empty)]) == 2
    pods = {"items": [_pod("slurm", f"gpu-h100-{i}", "2026-12-06T23:40:00Z") for i in range(4)]}
    jobs = _jobs((11, "RUNNING", "gpu", "gpu-h100-0"))
    ok = _folder(tmp_path, pods_json=pods, jobs_before_json=jobs, jobs_after_json=jobs)
    capsys.readouterr()
    assert main(["diff", "--verify", str(prediction), "--observed", str(ok)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Verify: 2 seen, 0 not seen, 0 unchecked, 0 unpredicted")
    assert main(["diff", "--verify", str(prediction), "--observed", str(ok), "--format", "markdown"]) == 0
    assert (
        "| P1 | seen | pods gpu-h100-0,gpu-h100-1,gpu-h100-2,gpu-h100-3 recreated | 4 of 4 recreated |" in capsys.readouterr().out
    )
