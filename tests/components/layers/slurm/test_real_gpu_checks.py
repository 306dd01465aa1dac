"""Tier 4 (real daemons): the GPU prolog and epilog as rendered into prod's ConfigMaps, run by a real
Slurm 26.05.3 around a real GPU job, with the fake nvidia-smi replaying the (reconstructed, not
captured) fixtures. The node has one GPU GRES backed by a stand-in device file, so slurmd gives the
prolog `SLURM_JOB_GPUS` as it would on a GPU node.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from offline.program.engine import RecordedStack
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import REPO, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

FIXTURES = REPO / "tests/fixtures/nvidia-smi"


def _configmap_script(stack: RecordedStack, configmap: str, key: str) -> str:
    data = next(
        r.inputs["data"]
        for r in stack.kubernetes_objects()
        if r.inputs["kind"] == "ConfigMap" and r.inputs["metadata"]["name"] == configmap
    )
    text: str = data[key]
    return text


def _install(stack: RecordedStack, tmp_path: Path, fixture: str) -> tuple[str, str]:
    """The rendered prolog and epilog GPU checks, pointed at a fake nvidia-smi replaying `fixture`."""
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\nFAKE_NVIDIA_SMI_FIXTURE={FIXTURES / fixture} exec {REPO / "tests/fakes/nvidia-smi"} "$@"\n')
    smi.chmod(0o755)
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "nvidia0").touch()
    paths = []
    for configmap in ("slurm-prolog-scripts", "slurm-epilog-scripts"):
        text = _configmap_script(stack, configmap, "10-gpu-check.sh")
        # What the layer rendered, with the one setting a test must own: where nvidia-smi is.
        assert ': "${GPU_CHECK_NVIDIA_SMI:=nvidia-smi}"' in text
        text = text.replace(': "${GPU_CHECK_NVIDIA_SMI:=nvidia-smi}"', f': "${{GPU_CHECK_NVIDIA_SMI:={smi}}}"')
        text = text.replace(': "${GPU_CHECK_SETTLE_SECONDS:=10}"', ': "${GPU_CHECK_SETTLE_SECONDS:=1}"')
        # prod maps SLURM_JOB_GPUS through the device files (GPU_CHECK_INDEX_ORDER=file): one stand-in /dev/nvidia0,
        # minor 0 in the fixtures' `nvidia-smi -q`.
        assert ': "${GPU_CHECK_INDEX_ORDER:=file}"' in text
        text = text.replace(': "${GPU_CHECK_DEV_DIR:=/dev}"', f': "${{GPU_CHECK_DEV_DIR:={dev}}}"')
        # dcgm-exporter's HPC job mapping directory (prod: the exporter's default), here a private one.
        assert ': "${GPU_CHECK_JOB_MAP_DIR:=/var/lib/dcgm-exporter/job-mapping}"' in text
        text = text.replace(
            ': "${GPU_CHECK_JOB_MAP_DIR:=/var/lib/dcgm-exporter/job-mapping}"',
            f': "${{GPU_CHECK_JOB_MAP_DIR:={tmp_path / "job-mapping"}}}"',
        )
        paths.append(text)
    return paths[0], paths[1]


def _cluster(tmp_path: Path, prolog_text: str, epilog_text: str) -> SlurmCluster:
    cluster = SlurmCluster(
        tmp_path / "cluster",
        "gpucheck",
        nodes=[node_line("g1", gres="gpu:h100:1")],
        partitions=["PartitionName=gpu Nodes=g1 Default=YES State=UP"],
        # One stand-in device file per GPU: the gpu plugin counts files (see tests/daemons/slurm.py).
        gres_conf="NodeName=g1 Name=gpu Type=h100 File=/dev/null\n",
    )
    # The scripts drain with `scontrol update`: on this host they need what the slurmd image gives them (scontrol on
    # PATH, the sack socket), which SlurmCluster.node_script puts in front of the rendered text.
    prolog = cluster.node_script("prolog.sh", prolog_text)
    epilog = cluster.node_script("epilog.sh", epilog_text)
    cluster.extra_conf = f"GresTypes=gpu\nProlog={prolog}\nEpilog={epilog}\nFirstJobId={random.randint(200_000, 900_000)}\n"
    return cluster


def test_healthy_gpu_job_runs_and_the_node_stays_idle(prod_stack: RecordedStack, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    prolog, epilog = _install(prod_stack, tmp_path, "healthy-h100x1.txt")
    mapping = tmp_path / "job-mapping"
    with _cluster(tmp_path, prolog, epilog) as cluster:
        # While it runs, the job reads what dcgm-exporter would read: its own id in the file of GPU 0.
        job = cluster.sbatch(
            f'echo "gpus=$SLURM_JOB_GPUS" > gpu-job.txt\necho "mapped=$(cat {mapping}/0)" >> gpu-job.txt\n',
            args=["--gres=gpu:h100:1"],
        )
        assert cluster.wait_job(job, 60) == "COMPLETED", cluster.job_info(job)
        assert (cluster.jobs_dir / "gpu-job.txt").read_text().split() == ["gpus=0", f"mapped={job}"]
        assert cluster.node_state("g1") == "IDLE"
        # The epilog, which slurmd runs after the job, took the line out again.
        deadline = time.monotonic() + 30
        while (mapping / "0").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not (mapping / "0").exists()


def test_unhealthy_gpu_drains_the_node_with_the_gpu_and_reason(prod_stack: RecordedStack, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    prolog, epilog = _install(prod_stack, tmp_path, "ecc-error.txt")
    with _cluster(tmp_path, prolog, epilog) as cluster:
        cluster.sbatch("echo never\n", args=["--gres=gpu:h100:1"])
        state = cluster.wait_node_state("g1", "DRAIN", 60)
        assert "DRAIN" in state.split("+")
        assert cluster.node_reason("g1") == (
            "gpu-check: GPU 0 (00000000:19:00.0, NVIDIA H100 80GB HBM3): 2 volatile uncorrectable ECC error(s) (allowed: 0)"
        )


def test_leftover_gpu_process_after_a_job_drains_the_node(prod_stack: RecordedStack, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    prolog, epilog = _install(prod_stack, tmp_path, "leftover-process.txt")
    # The prolog passes on this fixture (no ECC/remap problem); the epilog then finds the process.
    with _cluster(tmp_path, prolog, epilog) as cluster:
        job = cluster.sbatch("true\n", args=["--gres=gpu:h100:1"])
        assert cluster.wait_job(job, 60) == "COMPLETED"
        cluster.wait_node_state("g1", "DRAIN", 60)
        assert cluster.node_reason("g1") == "gpu-epilog: GPU 0 (00000000:19:00.0): process 48213 (python3) still holds 40960 MiB"
