"""Tier 4 (real daemons): a scheduled active check (scripts/gpu/active_checks.py driving scripts/gpu/active-check.sh,
with its include inlined as the layer renders it) against a real Slurm 26.05.3: the failing node is drained with a
reason naming the check, a later passing run resumes it, and a node drained by someone else is never touched.

The check is `ib-link` with a fake `ibstat` on PATH that prints, per node (SLURMD_NODENAME), one of the
reconstructed outputs in tests/fixtures/ibstat/ (README there).
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from components.layers.slurm.script_include import inline_includes
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import REPO, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

IBSTAT = REPO / "tests/fixtures/ibstat"
CHECK_SCRIPT = REPO / "scripts/gpu/active-check.sh"
DRIVER = REPO / "scripts/gpu/active_checks.py"


def _run_check(cluster: SlurmCluster, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = cluster.env({"PATH": f"{tmp_path / 'bin'}:{cluster.env()['PATH']}", "IBSTAT_DIR": str(tmp_path / "ib")})
    return subprocess.run(
        ["python3", str(DRIVER), "--config", str(tmp_path / "checks.json"), "--check", "ib",
         "--script", str(tmp_path / "active-check.sh"), "--poll", "1", "--grace", "60"],
        env=env, capture_output=True, text=True, timeout=240, check=False, cwd=tmp_path,
    )  # fmt: skip


def _links(tmp_path: Path, **outputs: str) -> None:
    (tmp_path / "ib").mkdir(exist_ok=True)
    for node, fixture in outputs.items():
        (tmp_path / "ib" / node).write_text((IBSTAT / fixture).read_text())


def test_a_failing_link_drains_its_node_and_a_later_pass_resumes_only_what_the_check_drained(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "ibstat"
    fake.write_text('#!/bin/sh\nexec cat "$IBSTAT_DIR/$SLURMD_NODENAME"\n')
    fake.chmod(0o755)
    (tmp_path / "active-check.sh").write_text(inline_includes(CHECK_SCRIPT.read_text(), CHECK_SCRIPT, REPO))
    checks = {
        "checks": [
            {
                "name": "ib",
                "kind": "ib-link",
                "nodesets": ["gpu-h100"],
                "timeLimitMinutes": 2,
                "nodes": 2,
                "partition": "gpu",
                "qos": None,
                "env": {"MIN_RATE": "400", "TIMEOUT_SECONDS": "20"},
            }
        ]
    }
    (tmp_path / "checks.json").write_text(json.dumps(checks))
    nodes = [node_line(n, features=["gpu-h100"]) for n in ("n1", "n2", "n3")]
    cluster = SlurmCluster(
        tmp_path / "cluster",
        "activecheck",
        nodes=nodes,
        partitions=["PartitionName=gpu Nodes=n1,n2,n3 Default=YES State=UP"],
        extra_conf=f"FirstJobId={random.randint(200_000, 900_000)}\n",
    )
    with cluster:
        cluster.scontrol("update", "NodeName=n3", "State=DRAIN", "Reason=maintenance by admin")
        _links(tmp_path, n1="healthy-ndr.txt", n2="port-down.txt", n3="port-down.txt")
        first = _run_check(cluster, tmp_path)
        assert first.returncode == 1, first.stdout + first.stderr
        assert "FAIL n2: active-check ib: mlx5_0 port 1: state Down" in first.stdout
        assert "PASS n1" in first.stdout and "SKIP n3" in first.stdout
        assert "DRAIN" in cluster.node_state("n2").split("+")
        assert cluster.node_reason("n2") == "active-check ib: mlx5_0 port 1: state Down"
        assert cluster.node_state("n1") == "IDLE"
        assert cluster.node_reason("n3") == "maintenance by admin"
        assert "active-check-ib" not in cluster.scontrol("show", "reservation")

        # The link is repaired: the next run resumes n2, which this check drained; n3 stays drained (not ours).
        _links(tmp_path, n2="healthy-ndr.txt", n3="healthy-ndr.txt")
        second = _run_check(cluster, tmp_path)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "PASS n2" in second.stdout and "PASS n1" in second.stdout
        assert cluster.node_state("n2") == "IDLE"
        assert "DRAIN" in cluster.node_state("n3").split("+")
        assert cluster.node_reason("n3") == "maintenance by admin"
        assert "active-check-ib" not in cluster.scontrol("show", "reservation")
