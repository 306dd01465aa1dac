"""Tier 4 (real daemons), issue 28 item 5: a hung GPU no longer stalls a job for ever, in a real Slurm 26.05.3.

1. prod's rendered GPU prolog, with an nvidia-smi that ignores SIGTERM and never answers: the prolog's own
   `timeout -k` ends it, the node is drained with `gpu-check: nvidia-smi did not answer within <n>s`;
2. the backstop, `PrologEpilogTimeout` (prod renders one): a prolog stuck beyond what it can kill is ended by slurmd,
   which drains the node (slurm.conf(5) of 26.05: "If the Prolog ... time out, the job is requeued if possible and
   the node is drained"). Without it Slurm waits indefinitely.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from offline.program.engine import RecordedStack
from tests.components.layers.slurm.test_real_gpu_checks import _cluster, _configmap_script, _install
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]


def test_a_hung_nvidia_smi_drains_the_node_within_the_prologs_time_limit(prod_stack: RecordedStack, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    prolog, epilog = _install(prod_stack, tmp_path, "healthy-h100x1.txt")
    hung = tmp_path / "hung-nvidia-smi"
    hung.write_text('#!/bin/bash\ntrap "" TERM\nsleep 120\n')
    hung.chmod(0o755)
    smi_line = next(line for line in prolog.splitlines() if line.startswith(': "${GPU_CHECK_NVIDIA_SMI:='))
    prolog = prolog.replace(smi_line, f': "${{GPU_CHECK_NVIDIA_SMI:={hung}}}"')
    assert ': "${GPU_CHECK_TIMEOUT_SECONDS:=60}"' in prolog and ': "${GPU_CHECK_KILL_AFTER_SECONDS:=5}"' in prolog
    prolog = prolog.replace(': "${GPU_CHECK_TIMEOUT_SECONDS:=60}"', ': "${GPU_CHECK_TIMEOUT_SECONDS:=2}"')
    with _cluster(tmp_path, prolog, epilog) as cluster:
        started = time.monotonic()
        cluster.sbatch("echo never\n", args=["--gres=gpu:h100:1"])
        cluster.wait_node_state("g1", "DRAIN", 60)
        assert time.monotonic() - started < 45
        assert cluster.node_reason("g1") == "gpu-check: nvidia-smi did not answer within 2s"


def test_prolog_epilog_timeout_ends_a_stuck_prolog_and_drains_the_node(prod_stack: RecordedStack, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    conf = next(r.inputs["spec"]["extraConf"] for r in prod_stack.kubernetes_objects() if r.inputs["kind"] == "Controller")
    assert "\nPrologEpilogTimeout=300\n" in conf  # prod's; 5 s here
    assert "gpu-check" in _configmap_script(prod_stack, "slurm-prolog-scripts", "10-gpu-check.sh")
    cluster = SlurmCluster(
        tmp_path / "cluster",
        "gpuhang",
        nodes=[node_line("g1")],
        partitions=["PartitionName=gpu Nodes=g1 Default=YES State=UP"],
    )
    # Stuck as a GPU call in the driver would be: deaf to SIGTERM, for far longer than the limit.
    prolog = cluster.node_script("prolog.sh", '#!/bin/bash\ntrap "" TERM\nsleep 600\n')
    cluster.extra_conf = f"Prolog={prolog}\nPrologEpilogTimeout=5\nFirstJobId={random.randint(200_000, 900_000)}\n"
    with cluster:
        started = time.monotonic()
        cluster.sbatch("echo never\n")
        state = cluster.wait_node_state("g1", "DRAIN", 90)
        assert "DRAIN" in state.split("+")
        assert time.monotonic() - started < 90
        # slurmd's generic reason: what the backstop gives up compared with the check's own (test above).
        assert cluster.node_reason("g1") == "Prolog error"
