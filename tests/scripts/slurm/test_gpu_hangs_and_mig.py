"""Issue 28 items 3 and 5: the GPU prolog refuses a GPU in MIG mode for a whole-GPU job, and a hung nvidia-smi fails
it within its own time limit instead of stalling it for ever.

MIG: replayed from nvidia-smi output recorded on a real H100 and H200 in MIG mode (driver 590.48.01,
tests/fixtures/nvidia-smi/captures/; `mig.mode.current` is `Enabled` there and `Disabled` on the H100 not in MIG
mode). Hang: an nvidia-smi that ignores SIGTERM, as one blocked in the driver does; coreutils `timeout` without `-k`
waits for it for ever (coreutils doc, "timeout invocation": "-k ... also send a KILL signal if COMMAND is still
running this long after the initial signal was sent"; exit status 137 then, 128+9).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.scripts.slurm.test_gpu_health import EPILOG, PROLOG, run_script, smi_calls

H100_MIG = "captures/h100-mig-590.48.01.txt"
H200_MIG = "captures/h200-mig-590.48.01.txt"
H100 = "captures/h100-80gb-hbm3-590.48.01.txt"
MIG_QUERY = "--query-gpu=pci.bus_id,mig.mode.current --format=csv,noheader,nounits"


@pytest.mark.parametrize(
    ("capture", "where"),
    [(H100_MIG, "GPU 0 (00000000:00:09.0, NVIDIA H100 80GB HBM3)"), (H200_MIG, "GPU 0 (00000000:83:00.0, NVIDIA H200)")],
)
def test_prolog_refuses_a_gpu_in_mig_mode_given_to_a_whole_gpu_job(tmp_path: Path, capture: str, where: str) -> None:
    result = run_script(PROLOG, capture, tmp_path, gpus="0", env={"GPU_CHECK_DRAIN": "no"})
    assert result.returncode == 1
    assert result.stderr.strip() == f"gpu-check: {where}: MIG mode is enabled, but the job was given the whole GPU" + (
        " (disable MIG on it, or set gpu.operator.migStrategy)"
    )
    assert MIG_QUERY in smi_calls(tmp_path)


def test_prolog_passes_the_same_h100_with_mig_disabled_and_the_mig_gpu_in_node_scope(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert run_script(PROLOG, H100, tmp_path / "a").returncode == 0
    assert MIG_QUERY in smi_calls(tmp_path / "a")
    # Node scope (a MIG strategy is configured): MIG mode is what the node is meant to be in.
    node = run_script(PROLOG, H100_MIG, tmp_path, gpus="0", env={"GPU_CHECK_SCOPE": "node"})
    assert node.returncode == 0, node.stderr


def test_a_driver_without_the_mig_field_skips_the_mig_check(tmp_path: Path) -> None:
    # The reconstructed fixtures list no mig.mode.current: the fake refuses it as nvidia-smi refuses an unknown field.
    result = run_script(PROLOG, "healthy-h100x1.txt", tmp_path, gpus="0")
    assert result.returncode == 0, result.stderr
    assert MIG_QUERY in smi_calls(tmp_path)


def _hung(tmp_path: Path) -> Path:
    smi = tmp_path / "hung-nvidia-smi"
    smi.write_text('#!/bin/bash\necho "$*" >> ' + str(tmp_path / "hung.log") + '\ntrap "" TERM\nsleep 60\n')
    smi.chmod(0o755)
    return smi


@pytest.mark.parametrize("script", [PROLOG, EPILOG])
def test_a_hung_nvidia_smi_that_ignores_sigterm_fails_the_check_within_its_time_limit(tmp_path: Path, script: Path) -> None:
    env = {
        "GPU_CHECK_NVIDIA_SMI": str(_hung(tmp_path)),
        "GPU_CHECK_TIMEOUT_SECONDS": "1",
        "GPU_CHECK_KILL_AFTER_SECONDS": "1",
        "GPU_CHECK_DRAIN": "no",
    }
    started = time.monotonic()
    result = run_script(script, None, tmp_path, gpus="0", env=env)
    elapsed = time.monotonic() - started
    tag = "gpu-check" if script == PROLOG else "gpu-epilog"
    assert result.returncode == 1
    assert result.stderr.strip() == f"{tag}: nvidia-smi did not answer within 1s"
    # timeout sends TERM after 1 s (ignored), KILL 1 s later, to the whole process group (the sleep child too).
    assert 2 <= elapsed < 10, elapsed


def test_without_kill_after_the_same_hang_outlives_the_time_limit(tmp_path: Path) -> None:
    # What the prolog did before: `timeout N` alone sends SIGTERM only; an nvidia-smi that ignores it keeps the prolog
    # waiting (bounded here by the test's own 4 s).
    process = subprocess.Popen(["timeout", "1", str(_hung(tmp_path))], start_new_session=True)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=4)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
