"""scripts/gpu/active_checks.py, the driver of the active GPU checks: its pure parts (which nodes go into which job,
what a job's end in accounting means). The driver against a real Slurm 26.05.3 (drains, resumes, reasons it must not
touch, the controller going away) is in tests/scripts/gpu/test_real_active_checks.py."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO

_spec = importlib.util.spec_from_file_location("active_checks", REPO / "scripts" / "gpu" / "active_checks.py")
assert _spec is not None and _spec.loader is not None
driver = importlib.util.module_from_spec(_spec)
sys.modules["active_checks"] = driver
_spec.loader.exec_module(driver)


def _nodes(*specs: tuple[str, str]) -> list[Any]:
    return [driver.Node(name, {nodeset}, "idle", "") for name, nodeset in specs]


def _check(kind: str = "nccl-allreduce", nodes: int = 2, nodesets: tuple[str, ...] = ("h100",)) -> dict[str, Any]:
    return {"name": "nccl", "kind": kind, "nodes": nodes, "nodesets": list(nodesets)}


def test_a_short_last_group_joins_the_one_before_instead_of_borrowing_a_busy_node() -> None:
    """Issue 35 item 8: 5 nodes in pairs made a third pair (n5 + n1), whose job waited for n1's own job, started late
    and was killed at the reservation's end. Now every node is in one job."""
    groups, untested = driver.plan_groups(_nodes(*[(f"n{i}", "h100") for i in range(1, 6)]), _check())
    assert [g.nodes for g in groups] == [["n1", "n2"], ["n3", "n4", "n5"]]
    assert untested == {}
    placed = [node for g in groups for node in g.nodes]
    assert len(placed) == len(set(placed))


def test_too_few_usable_nodes_for_an_allreduce_are_reported_untested() -> None:
    groups, untested = driver.plan_groups(
        _nodes(("a1", "a100"), ("h1", "h100"), ("h2", "h100")), _check(nodesets=("a100", "h100"))
    )
    assert [(g.nodeset, g.nodes) for g in groups] == [("h100", ["h1", "h2"])]
    assert untested == {"a1": "not tested: 1 usable node(s) in nodeset a100, the all-reduce needs 2"}


def test_an_allreduce_never_mixes_nodesets() -> None:
    groups, _ = driver.plan_groups(
        _nodes(("a1", "a100"), ("h1", "h100"), ("a2", "a100"), ("h2", "h100")), _check(nodesets=("a100", "h100"))
    )
    assert [(g.nodeset, g.nodes) for g in groups] == [("a100", ["a1", "a2"]), ("h100", ["h1", "h2"])]


def test_per_node_checks_get_one_job_per_node_with_its_nodeset() -> None:
    groups, untested = driver.plan_groups(_nodes(("a1", "a100"), ("h1", "h100")), _check("dcgm-diag", nodesets=("a100", "h100")))
    assert [(g.nodeset, g.nodes) for g in groups] == [("a100", ["a1"]), ("h100", ["h1"])] and untested == {}


@pytest.mark.parametrize(
    ("end", "verdict", "detail"),
    [
        (("COMPLETED", "0:0", ""), "PASS", ""),
        (("FAILED", "10:0", "active-check ib: mlx5_0 port 1: state Down"), "FAIL", "active-check ib: mlx5_0 port 1: state Down"),
        # a FAIL whose comment is not the check's own: the driver's words, never the comment's
        (("FAILED", "10:0", "hello"), "FAIL", "active-check ib: job 7 failed the check"),
        (("FAILED", "11:0", "active-check ib: not judged: /sys/class/infiniband lists no RDMA device"), "ERROR",
         "job 7: active-check ib: not judged: /sys/class/infiniband lists no RDMA device; retried next run"),
        (("FAILED", "11:0", ""), "ERROR", "job 7: not judged (exit 11; the job could not record why); retried next run"),
        (("CANCELLED", "0:0", ""), "ERROR", "job 7 CANCELLED (exit 0:0): not judged, retried next run"),
        (("TIMEOUT", "0:0", ""), "ERROR", "job 7 TIMEOUT (exit 0:0): not judged, retried next run"),
        (("FAILED", "1:0", ""), "ERROR", "job 7 FAILED (exit 1:0): not judged, retried next run"),
        (("NODE_FAIL", "0:0", ""), "ERROR", "job 7 NODE_FAIL (exit 0:0): not judged, retried next run"),
        (("RUNNING", "0:0", ""), "ERROR", "job 7 RUNNING (exit 0:0): not judged, retried next run"),
        (None, "ERROR", "job 7: not in accounting: not judged, retried next run"),
    ],
)  # fmt: skip
def test_only_a_job_that_judged_the_hardware_failing_is_a_failure(end: Any, verdict: str, detail: str) -> None:
    """Issue 35 item 2: cancelled, timed out, unknown and unfinished jobs were drained with their state as the reason."""
    assert driver.judge("7", end, "ib") == (verdict, detail)


def test_sinfo_lines_are_read_with_reasons_that_contain_the_separator() -> None:
    nodes = driver.parse_nodes("n1|h100,gpu|drained|maintenance | cable\nn2|h100|idle|none\n")
    assert nodes["n1"].reason == "maintenance | cable" and nodes["n1"].features == {"h100", "gpu"}
    assert nodes["n2"].reason == "" and nodes["n2"].state == "idle"


def test_an_allreduce_with_too_few_usable_nodes_is_reported_unjudged_not_passed(tmp_path: Path) -> None:
    """Issue 35 item 8: one usable node of two needed used to print "no node to test" and exit 0. The driver, with a
    fake `sinfo` (one H100 node idle, one drained by an admin) and a `scontrol` that records its calls: nothing is
    reserved or changed, the node is reported, and the run exits 2 (unassessed)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in {
        "sinfo": "printf 'h1|gpu-h100|idle|none\\nh2|gpu-h100|drained|cable swap\\n'",
        "scontrol": f'echo "$*" >> {tmp_path}/scontrol.log',
    }.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    check = {**_check(nodesets=("gpu-h100",)), "timeLimitMinutes": 5, "env": {}, "gpus": {"gpu-h100": 8}}
    (tmp_path / "checks.json").write_text(json.dumps({"checks": [check]}))
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/gpu/active_checks.py"),
            "--config",
            str(tmp_path / "checks.json"),
            "--check",
            "nccl",
        ],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "active-check nccl (action report): 0 passed, 0 failed, 1 not judged, 1 left alone",
        "active-check nccl: no node was judged",
        "ERROR h1: not tested: 1 usable node(s) in nodeset gpu-h100, the all-reduce needs 2",
        "SKIP h2: drained (cable swap)",
    ]
    # only the delete of a reservation a killed run may have left: nothing reserved, no node touched
    assert (tmp_path / "scontrol.log").read_text().splitlines() == ["delete ReservationName=active-check-nccl"]


def test_a_missing_token_is_unassessed_not_a_failed_node(tmp_path: Path) -> None:
    """Exit 1 means "a node failed"; a run that cannot even authenticate says 2 (unassessed) and why."""
    check = {**_check("ib-link", nodesets=("gpu-h100",)), "timeLimitMinutes": 5, "env": {}, "gpus": {"gpu-h100": 8}}
    (tmp_path / "checks.json").write_text(json.dumps({"checks": [{**check, "name": "ib"}]}))
    argv = ["--config", str(tmp_path / "checks.json"), "--check", "ib", "--token-file", str(tmp_path / "missing")]
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts/gpu/active_checks.py"), *argv],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"ERROR -: the run broke off: FileNotFoundError: [Errno 2] No such file or directory: '{tmp_path / 'missing'}'" in (
        result.stdout
    )
