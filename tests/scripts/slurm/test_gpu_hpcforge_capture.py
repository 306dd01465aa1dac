"""hpcforge's own capture on a real NVIDIA H200 (driver 580.159.04), tests/fixtures/nvidia-smi/hpcforge-h200-580.159.04/:
what the real driver answered, held against what the scripts ask and against the fake nvidia-smi that replays it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.scripts.slurm.test_gpu_health import EPILOG, FIXTURES, PROLOG, _queried, run_script

CAPTURE = FIXTURES / "hpcforge-h200-580.159.04"
FIXTURE = "h200-580.159.04-hpcforge.txt"


def _transcript() -> dict[str, tuple[str, int]]:
    """Each recorded command of transcript.txt: its output and exit status."""
    text = (CAPTURE / "transcript.txt").read_text()
    found: dict[str, tuple[str, int]] = {}
    for block in re.finditer(r"^\$ ([^\n]*)\n(.*?)\n\[exit (\d+)\]\n", text, re.S | re.M):
        found[block[1]] = (block[2], int(block[3]))
    return found


def _help_fields(command: str) -> set[str]:
    output, status = _transcript()[command]
    assert status == 0
    # a field line lists its name and aliases: "used_gpu_memory" or "used_memory"
    return {name for line in re.findall(r'^".*$', output, re.M) for name in re.findall(r'"([^"]+)"', line)}


def test_the_capture_is_hpcforges_own_on_an_h200_with_driver_580() -> None:
    header = (FIXTURES / FIXTURE).read_text().splitlines()[:2]
    assert header[0].startswith("# CAPTURED ON A GPU by scripts/gpu/capture-nvidia-smi.sh, 2026-11-27T08:47")
    assert "1x NVIDIA H200, driver 580.159.04" in header[1]


def test_every_field_the_scripts_query_is_listed_by_the_real_driver() -> None:
    gpu = _help_fields("nvidia-smi --help-query-gpu")
    apps = _help_fields("nvidia-smi --help-query-compute-apps")
    queried = _queried(PROLOG, "--query-gpu") | _queried(EPILOG, "--query-gpu")
    assert queried, "the scripts query no field?"
    assert queried <= gpu, sorted(queried - gpu)
    assert _queried(EPILOG, "--query-compute-apps") <= apps
    assert "mig.mode.current" in gpu


def test_the_real_driver_refuses_the_health_field() -> None:
    output, status = _transcript()["nvidia-smi --query-gpu=index,health --format=csv,noheader"]
    assert status == 2
    assert output.startswith('Field "health" is not a valid field to query.')


def test_the_real_gpu_reports_its_mig_mode_disabled() -> None:
    extra = (CAPTURE / "extra.txt").read_text()
    block = extra.split("$ nvidia-smi --query-gpu=index,mig.mode.current,mig.mode.pending --format=csv,noheader,nounits\n")[1]
    assert block.splitlines()[0] == "0, Disabled, Disabled"


def _real_verdicts() -> dict[tuple[str, str], int]:
    """(script and order, SLURM_JOB_GPUS) -> exit status, as checks.txt recorded them on the real GPU."""
    text = (CAPTURE / "checks.txt").read_text()
    rows = re.findall(r"^(\w+ \(\w+ order\)), SLURM_JOB_GPUS=(\S+): exit (\d+)", text, re.M)
    return {(what, gpus): int(status) for what, gpus, status in rows}


def test_the_real_prolog_and_epilog_passed_gpu_0_and_refused_the_missing_gpu_1() -> None:
    verdicts = _real_verdicts()
    for order in ("nvml", "file"):
        assert verdicts[(f"prolog ({order} order)", "0")] == 0
        assert verdicts[(f"prolog ({order} order)", "1")] != 0
        assert verdicts[(f"epilog ({order} order)", "0")] == 0
        assert verdicts[(f"epilog ({order} order)", "1")] != 0
    assert "GPU 1: not found" in (CAPTURE / "checks.txt").read_text()


@pytest.mark.parametrize(("script", "gpus"), [(PROLOG, "0"), (PROLOG, "1"), (EPILOG, "0"), (EPILOG, "1")])
def test_the_fake_replaying_the_capture_gives_the_real_gpus_verdict(script: Path, gpus: str, tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "nvidia0").touch()
    result = run_script(script, FIXTURE, tmp_path, gpus=gpus, env={"GPU_CHECK_DEV_DIR": str(dev)})
    real = _real_verdicts()[(f"{'prolog' if script == PROLOG else 'epilog'} (nvml order)", gpus)]
    assert (result.returncode == 0) == (real == 0), result.stderr


def test_the_real_prolog_gave_up_on_a_hung_nvidia_smi_within_its_limit() -> None:
    """second-run/checks.txt: the prolog of 0f52eb3 on the H200 with GPU_CHECK_TIMEOUT_SECONDS=3 and
    GPU_CHECK_KILL_AFTER_SECONDS=2 against an nvidia-smi that ignores SIGTERM and sleeps."""
    text = (CAPTURE / "second-run" / "checks.txt").read_text()
    assert re.search(r"^prolog \(hung nvidia-smi\), SLURM_JOB_GPUS=0: exit [1-9]", text, re.M)
    assert "nvidia-smi did not answer within 3s" in text
    seconds = int(re.search(r"^prolog \(hung nvidia-smi\): gave up after (\d+)s$", text, re.M)[1])  # type: ignore[index]
    assert seconds <= 3 + 2 + 1
    for order in ("nvml", "file"):
        assert f"prolog ({order} order), SLURM_JOB_GPUS=0: exit 0" in text
