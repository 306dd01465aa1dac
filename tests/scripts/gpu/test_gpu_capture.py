"""scripts/gpu/capture-nvidia-smi.sh, the procedure that captures nvidia-smi fixtures on a GPU machine and runs the
prolog and epilog there. No GPU here: it runs against the fake nvidia-smi, and what it writes must replay through the
same fake exactly as its source fixture does (so a real capture drops into tests/fixtures/nvidia-smi/ as is)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.scripts.slurm.test_gpu_health import EPILOG, FAKES, FIXTURES, PROLOG, _queried, run_script
from tests.scripts.slurm.test_gpu_multi_captures import with_q_value

CAPTURE = REPO / "scripts/gpu/capture-nvidia-smi.sh"


def _capture(tmp_path: Path, fixture: str, gpus: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    dev = tmp_path / "dev"
    dev.mkdir()
    for minor in range(gpus):
        (dev / f"nvidia{minor}").touch()
    out = tmp_path / "out"
    environment = {
        "PATH": f"{FAKES}:/usr/bin:/bin",
        "FAKE_NVIDIA_SMI_FIXTURE": str(FIXTURES / fixture),
        "GPU_CHECK_DEV_DIR": str(dev),
    }
    result = subprocess.run(
        ["bash", str(CAPTURE), str(out)], env=environment, capture_output=True, text=True, timeout=120, check=False
    )
    return result, out


def _replay(script: Path, fixture: Path, tmp_path: Path, gpus: str) -> tuple[int, str]:
    run = tmp_path / f"replay-{len(list(tmp_path.iterdir()))}"
    run.mkdir()
    result = run_script(script, None, run, gpus=gpus, env={"FAKE_NVIDIA_SMI_FIXTURE": str(fixture)})
    return result.returncode, result.stderr


def test_the_capture_asks_for_every_field_the_scripts_query() -> None:
    text = CAPTURE.read_text()
    listed = set(re.search(r"gpu_fields=\(([^)]*)\)", text, re.S)[1].split())  # type: ignore[index]
    assert listed == _queried(PROLOG, "--query-gpu") | _queried(EPILOG, "--query-gpu")
    apps = set(re.search(r"app_fields=\(([^)]*)\)", text)[1].split())  # type: ignore[index]
    assert apps == _queried(EPILOG, "--query-compute-apps")


@pytest.mark.parametrize(
    ("fixture", "gpus", "jobs"),
    [
        ("healthy-h100x1.txt", 1, ["0", "1"]),
        ("a100x8-driver535.txt", 8, ["0,1,2,3,4,5,6,7", "8"]),
        # whole `nvidia-smi -q` outputs of real 8-GPU nodes (leptonai/gpud; tests/scripts/slurm/test_gpu_multi_captures.py)
        ("h100x8-535.161.08.txt", 8, ["0", "0,1,2,3,4,5,6,7", "8"]),
        ("rtx4090x8-535.154.05-nov2024.txt", 8, ["0", "0,3,5", "8"]),
        # nvidia-smi output recorded on a real H100 (driver 590.48.01; tests/fixtures/nvidia-smi/captures/README)
        ("captures/h100-80gb-hbm3-590.48.01.txt", 1, ["0", "1"]),
        ("captures/h200-580.173.02.txt", 1, ["0", "1"]),
    ],
)
def test_a_capture_replays_like_its_source(tmp_path: Path, fixture: str, gpus: int, jobs: list[str]) -> None:
    result, out = _capture(tmp_path, fixture, gpus)
    captured = out / "fixture.txt"
    assert captured.read_text().startswith("# CAPTURED ON A GPU by scripts/gpu/capture-nvidia-smi.sh, ")
    for script in (PROLOG, EPILOG):
        for job in jobs:
            assert _replay(script, captured, tmp_path, job) == _replay(script, FIXTURES / fixture, tmp_path, job), (
                script.name,
                job,
            )
    assert (out / "transcript.txt").read_text().count("\n$ nvidia-smi ") >= 10
    assert result.stdout.endswith(f"(verdict {result.returncode})\n")


def test_the_verdict_is_0_on_healthy_gpus_and_2_when_the_prolog_refuses_one(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    healthy, out = _capture(tmp_path / "a", "healthy-h100x1.txt", 1)
    assert healthy.returncode == 0, healthy.stdout
    checks = (out / "checks.txt").read_text()
    assert "prolog (nvml order), SLURM_JOB_GPUS=1: exit 1 (expected: fail)\ngpu-check: GPU 1: not found" in checks
    assert "prolog (file order), SLURM_JOB_GPUS=0: exit 0 (expected: pass)" in checks
    (tmp_path / "b").mkdir()
    # The real 8x H100 with one value changed: GPU 5's (00000000:BB:00.0) row remapping is pending in `-q`.
    fixture = with_q_value("h100x8-535.161.08.txt", "00000000:BB:00.0", "Remapped Rows", "Pending", "Yes", tmp_path / "sick.txt")
    sick, out = _capture(tmp_path / "b", str(fixture), 8)
    assert sick.returncode == 2
    checks = (out / "checks.txt").read_text()
    assert "prolog (file order), SLURM_JOB_GPUS=0: exit 0 (expected: pass)" in checks
    assert "SLURM_JOB_GPUS=0,1,2,3,4,5,6,7: exit 1 (expected: pass)\ngpu-check: GPU 5 (00000000:BB:00.0, " in checks
    assert "epilog (file order), SLURM_JOB_GPUS=0: exit 0 (expected: pass)" in checks


def test_a_driver_s_refused_fields_are_left_out_of_the_captured_table(tmp_path: Path) -> None:
    # Driver 535 has no remapped_rows.* query fields (its published --help-query-gpu); the capture keeps the rest.
    _, out = _capture(tmp_path, "a100x8-driver535.txt", 8)
    header = (out / "fixture.txt").read_text().split("[gpus]\n", 1)[1].splitlines()[0]
    assert "remapped_rows" not in header and header.startswith("index, name, pci.bus_id")


def test_the_capture_records_mig_modes_gpudirect_prerequisites_and_a_hung_nvidia_smi(tmp_path: Path) -> None:
    # Issue 28 item 3: one run also records `-L`, the MIG modes, `ls -l /dev/nvidia*`, the driver's kernel module
    # (/proc/driver/nvidia/version: open modules give DMA-BUF) and whether nvidia_peermem is loaded, and runs the
    # prolog against an nvidia-smi that ignores SIGTERM and never answers: it must give up in time and say so.
    result, out = _capture(tmp_path, "healthy-h100x1.txt", 1)
    transcript = (out / "transcript.txt").read_text()
    for command in (
        "$ nvidia-smi -L\n",
        "$ nvidia-smi --query-gpu=index,mig.mode.current,mig.mode.pending --format=csv,noheader\n",
        "$ nvidia-smi topo -m\n",
        "$ bash -c ls -l /dev/nvidia*\n",
        "$ cat /proc/driver/nvidia/version\n",
        "$ bash -c lsmod | grep -e nvidia_peermem -e nvidia\n",
    ):
        assert command in transcript, command
    checks = (out / "checks.txt").read_text()
    hung = checks.split("prolog (hung nvidia-smi), SLURM_JOB_GPUS=0: ", 1)[1]
    assert hung.startswith("exit 1 (expected: fail)\ngpu-check: nvidia-smi did not answer within 3s\n")
    elapsed = int(re.search(r"gave up after (\d+)s", hung)[1])  # type: ignore[index]
    assert 3 <= elapsed <= 15
    assert result.returncode == 0, checks
    assert not list(out.glob("hung-*"))
