"""The GPU prolog/epilog health checks, run against a fake nvidia-smi that replays fixtures.

No fixture under tests/fixtures/nvidia-smi/ was captured by hpcforge: no GPU machine was available
(issue 17). Each says in its header how it was made: RECONSTRUCTED from NVIDIA's documentation and
the facts recorded on a real H100 (driver 580), QUOTED FROM A PUBLISHED CAPTURE (source URL,
GPU and driver as stated there, and which parts are verbatim), or DERIVED FROM one of the published
captures under captures/ with one named value changed; see their README.md. The tests against the
captures of real H100/H200 GPUs with driver 590 are in test_gpu_captures.py, those against the whole `nvidia-smi -q`
of real 8-GPU nodes (driver 535) in test_gpu_multi_captures.py. The fake
refuses query fields its fixture does not list the way nvidia-smi refuses `health` (exit 2), so a
script asking for a field that does not exist fails here too.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from components.layers.gpu.config import GpuHealthConfig
from components.layers.slurm.script_settings import apply_settings, gpu_health_settings
from offline.program.engine import RecordedStack
from tests.helpers import REPO

PROLOG = REPO / "scripts/slurm/prolog/10-gpu-check.sh"
EPILOG = REPO / "scripts/slurm/epilog/10-gpu-check.sh"
FIXTURES = REPO / "tests/fixtures/nvidia-smi"
FAKES = REPO / "tests/fakes"


def script_env(fixture: str | None, tmp_path: Path, gpus: str | None = "0", env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a prolog/epilog runs with in these tests: the fake nvidia-smi replaying `fixture`."""
    environment = {
        "PATH": f"{FAKES}:{tmp_path}:/usr/bin:/bin",
        "FAKE_NVIDIA_SMI_LOG": str(tmp_path / "nvidia-smi.log"),
        "GPU_CHECK_SETTLE_SECONDS": "0",
    }
    if fixture is not None:
        environment["FAKE_NVIDIA_SMI_FIXTURE"] = str(FIXTURES / fixture)
    if gpus is not None:
        environment["SLURM_JOB_GPUS"] = gpus
    environment.update(env or {})
    return environment


def run_script(
    script: Path, fixture: str | None, tmp_path: Path, gpus: str | None = "0", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = script_env(fixture, tmp_path, gpus, env)
    return subprocess.run(["bash", str(script)], env=environment, capture_output=True, text=True, timeout=60, check=False)


def smi_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "nvidia-smi.log"
    return log.read_text().splitlines() if log.exists() else []


HEADERS = (
    "# RECONSTRUCTED, NOT CAPTURED",
    "# QUOTED FROM A PUBLISHED CAPTURE",
    "# PARTLY QUOTED FROM A PUBLISHED CAPTURE",
    "# CAPTURED ON A GPU by scripts/gpu/capture-nvidia-smi.sh",
    "# DERIVED FROM A PUBLISHED CAPTURE",
)


def test_every_fixture_says_how_it_was_made() -> None:
    fixtures = sorted(FIXTURES.glob("*.txt"))
    assert len(fixtures) >= 12
    for path in fixtures:
        text = path.read_text()
        assert text.startswith(HEADERS), path.name
        if text.startswith(HEADERS[1:3]):
            assert "\n# source: https://github.com/" in text, path.name
        if text.startswith(HEADERS[4]):
            capture = re.search(r"^\[capture\] (captures/\S+)$", text, re.M)
            assert capture and (FIXTURES / capture[1]).is_file(), path.name
            assert text.startswith(f"{HEADERS[4]}: {capture[1]} "), path.name


def _published_fields(name: str) -> set[str]:
    lines = (FIXTURES / name).read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def _queried(script: Path, option: str) -> set[str]:
    """Every field that SCRIPT passes to nvidia-smi's OPTION (literal lists and *_fields= variables)."""
    text = script.read_text()
    lists = re.findall(rf"{option}=\"?([a-z_.,]+)", text) + re.findall(r"^\s*[a-z_]*fields=([a-z_.,]+)", text, re.M)
    return {field for fields in lists for field in fields.split(",") if field}


ROW_REMAP_FIELDS = {"remapped_rows.pending", "remapped_rows.failure"}
# Asked for in a query of its own, skipped where the driver refuses it (driver 535 does; 580 and 590 list it).
RECOVERY_FIELDS = {"gpu_recovery_action"}
RECOVERY_QUERY = "--query-gpu=pci.bus_id,gpu_recovery_action --format=csv,noheader,nounits"
# Asked in job scope after the recovery query: a GPU in MIG mode cannot serve a whole-GPU job (issue 28).
MIG_QUERY = "--query-gpu=pci.bus_id,mig.mode.current --format=csv,noheader,nounits"


def test_every_field_the_scripts_query_is_listed_by_driver_535s_help_query_gpu() -> None:
    # help-query-gpu-535.129.03.fields: the names in a published `nvidia-smi --help-query-gpu` of
    # driver 535.129.03 (8x A100; source in its header). The two row-remapping fields are the only
    # exception: they exist only in newer drivers (accepted by the H100 with driver 580.159.04 of
    # issue 17), and the prolog falls back to `nvidia-smi -q` where they are refused (next test).
    listed = _published_fields("help-query-gpu-535.129.03.fields")
    assert {"index", "pci.bus_id", "name", "gpu_bus_id", "memory.used"} <= listed
    assert not {field for field in listed if field.startswith("remapped_rows")}
    prolog, epilog = _queried(PROLOG, "--query-gpu"), _queried(EPILOG, "--query-gpu")
    assert prolog >= ROW_REMAP_FIELDS and "ecc.errors.uncorrected.volatile.total" in prolog
    assert "memory.used" in epilog
    optional = ROW_REMAP_FIELDS | RECOVERY_FIELDS
    assert (prolog | epilog) - optional <= listed, sorted((prolog | epilog) - optional - listed)
    assert not optional & listed and "health" not in listed


def test_prolog_passes_on_driver_535_where_row_remapping_is_not_a_query_field(tmp_path: Path) -> None:
    result = run_script(PROLOG, "a100x8-driver535.txt", tmp_path, gpus="0,1,2,3,4,5,6,7")
    assert result.returncode == 0, result.stderr
    calls = smi_calls(tmp_path)
    assert len(calls) == 5 and "remapped_rows.pending" in calls[0] and "remapped_rows" not in calls[1]
    assert calls[2] == "-q" and calls[3] == RECOVERY_QUERY  # refused by this driver: nothing to check
    assert calls[4] == MIG_QUERY


def test_prolog_reads_a_pending_row_remap_from_nvidia_smi_q_on_driver_535(tmp_path: Path) -> None:
    # The published capture has "Pending : No" under "Remapped Rows" for all eight GPUs; this copy
    # turns the fourth GPU's (00000000:67:00.0, index 3) into "Yes", nothing else.
    text = (FIXTURES / "a100x8-driver535.txt").read_text()
    head, q = text.split("\n[q]\n")
    blocks = q.split("\nGPU ")
    assert blocks[4].startswith("00000000:67:00.0")
    remapped = blocks[4].split("    Remapped Rows\n", 1)
    assert "        Pending                           : No\n" in remapped[1]
    blocks[4] = (
        remapped[0]
        + "    Remapped Rows\n"
        + remapped[1].replace(
            "        Pending                           : No\n", "        Pending                           : Yes\n", 1
        )
    )
    (tmp_path / "remap.txt").write_text(head + "\n[q]\n" + "\nGPU ".join(blocks))
    environment = {"FAKE_NVIDIA_SMI_FIXTURE": str(tmp_path / "remap.txt")}
    healthy = run_script(PROLOG, "a100x8-driver535.txt", tmp_path, gpus="0,1,2,4")
    assert healthy.returncode == 0, healthy.stderr
    result = run_script(PROLOG, None, tmp_path, gpus="0,3", env=environment)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "gpu-check: GPU 3 (00000000:67:00.0, NVIDIA A100-SXM4-40GB): row remapping pending (reset the GPU)"
    )
    assert run_script(PROLOG, None, tmp_path, gpus="2,4", env=environment).returncode == 0


def test_fake_refuses_the_health_field_like_the_recorded_h100(tmp_path: Path) -> None:
    env = {**os.environ, "FAKE_NVIDIA_SMI_FIXTURE": str(FIXTURES / "healthy-h100x1.txt")}
    result = subprocess.run(
        [str(FAKES / "nvidia-smi"), "--query-gpu=index,health", "--format=csv,noheader,nounits"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    # nvidia-smi prints the message and an empty line (CoHDI/composable-resource-operator#37).
    assert result.stdout == 'Field "health" is not a valid field to query.\n\n'


def test_driver_535_fixture_refuses_the_row_remapping_fields(tmp_path: Path) -> None:
    env = {**os.environ, "FAKE_NVIDIA_SMI_FIXTURE": str(FIXTURES / "a100x8-driver535.txt")}
    result = subprocess.run(
        [str(FAKES / "nvidia-smi"), "--query-gpu=index,remapped_rows.pending", "--format=csv,noheader,nounits"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stdout) == (2, 'Field "remapped_rows.pending" is not a valid field to query.\n\n')


# --- prolog ---------------------------------------------------------------------------------------


def test_prolog_passes_on_a_healthy_h100(tmp_path: Path) -> None:
    result = run_script(PROLOG, "healthy-h100x1.txt", tmp_path)
    assert result.returncode == 0, result.stderr
    calls = smi_calls(tmp_path)
    assert len(calls) == 3 and calls[1:] == [RECOVERY_QUERY, MIG_QUERY] and not any("-i" in call.split() for call in calls)


def test_prolog_passes_on_eight_healthy_gpus(tmp_path: Path) -> None:
    assert run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="0,1,2,3,4,5,6,7").returncode == 0


def test_prolog_without_gpus_does_not_run_nvidia_smi(tmp_path: Path) -> None:
    result = run_script(PROLOG, None, tmp_path, gpus=None)
    assert result.returncode == 0 and smi_calls(tmp_path) == []


def test_prolog_fails_for_an_index_that_does_not_exist(tmp_path: Path) -> None:
    result = run_script(PROLOG, "healthy-h100x1.txt", tmp_path, gpus="9")
    assert result.returncode == 1
    assert result.stderr.strip() == "gpu-check: GPU 9: not found (nvidia-smi lists: 0)"


def test_prolog_names_the_gpu_with_a_pending_row_remap(tmp_path: Path) -> None:
    result = run_script(PROLOG, "pending-remap.txt", tmp_path, gpus="0,1,2,3")
    assert result.returncode == 1
    assert (
        result.stderr.strip()
        == "gpu-check: GPU 3 (00000000:5D:00.0, NVIDIA H100 80GB HBM3): row remapping pending (reset the GPU)"
    )


def test_pending_row_remap_can_be_tolerated_by_config(tmp_path: Path) -> None:
    result = run_script(PROLOG, "pending-remap.txt", tmp_path, gpus="3", env={"GPU_CHECK_PENDING_ROW_REMAP": "ignore"})
    assert result.returncode == 0, result.stderr


def test_prolog_fails_on_uncorrectable_ecc_errors_over_the_threshold(tmp_path: Path) -> None:
    result = run_script(PROLOG, "ecc-error.txt", tmp_path)
    assert result.returncode == 1
    assert "GPU 0 (00000000:19:00.0, NVIDIA H100 80GB HBM3): 2 volatile uncorrectable ECC error(s) (allowed: 0)" in result.stderr
    assert run_script(PROLOG, "ecc-error.txt", tmp_path, env={"GPU_CHECK_MAX_VOLATILE_UNCORRECTED_ECC": "2"}).returncode == 0


def test_not_reported_values_skip_their_check(tmp_path: Path) -> None:
    # ECC disabled: the counters print [N/A]; page retirement is [N/A] on H100 in every fixture.
    assert run_script(PROLOG, "ecc-disabled.txt", tmp_path).returncode == 0


def test_an_unreadable_value_fails(tmp_path: Path) -> None:
    result = run_script(PROLOG, "unknown-error.txt", tmp_path)
    assert result.returncode == 1 and "unreadable volatile uncorrectable ECC count '[Unknown Error]'" in result.stderr


def test_pending_page_retirement_fails_where_it_is_reported(tmp_path: Path) -> None:
    result = run_script(PROLOG, "pending-retirement.txt", tmp_path)
    assert result.returncode == 1 and "GPU 0 (00000000:07:00.0, NVIDIA A100-SXM4-80GB): page retirement pending" in result.stderr


def test_node_scope_checks_every_gpu_for_mig_jobs(tmp_path: Path) -> None:
    # A MIG job's SLURM_JOB_GPUS (here 41) names a MIG device, not an nvidia-smi GPU index.
    healthy = run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="41", env={"GPU_CHECK_SCOPE": "node"})
    assert healthy.returncode == 0, healthy.stderr
    remap = run_script(PROLOG, "pending-remap.txt", tmp_path, gpus="41", env={"GPU_CHECK_SCOPE": "node"})
    assert remap.returncode == 1 and "GPU 3 (00000000:5D:00.0, NVIDIA H100 80GB HBM3): row remapping pending" in remap.stderr


def test_prolog_reports_nvidia_smi_failing(tmp_path: Path) -> None:
    result = run_script(PROLOG, "driver-failing.txt", tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "gpu-check: nvidia-smi failed (exit 9): NVIDIA-SMI has failed because it couldn't communicate"
    )


def test_prolog_reports_the_published_nvml_mismatch_and_no_device_failures(tmp_path: Path) -> None:
    mismatch = run_script(PROLOG, "driver-library-mismatch.txt", tmp_path)
    assert mismatch.returncode == 1
    assert (
        mismatch.stderr.strip()
        == "gpu-check: nvidia-smi failed (exit 18): Failed to initialize NVML: Driver/library version mismatch"
    )
    none = run_script(PROLOG, "no-devices.txt", tmp_path)
    assert none.returncode == 1 and none.stderr.strip() == "gpu-check: nvidia-smi failed (exit 6): No devices were found"


def test_missing_nvidia_smi_fails(tmp_path: Path) -> None:
    result = run_script(PROLOG, None, tmp_path, env={"GPU_CHECK_NVIDIA_SMI": "no-such-nvidia-smi"})
    assert result.returncode == 1 and "the job has GPUs (0) but no-such-nvidia-smi is missing" in result.stderr


def test_a_garbled_gpu_list_fails(tmp_path: Path) -> None:
    result = run_script(PROLOG, "healthy-h100x1.txt", tmp_path, gpus="0,gpu1")
    assert result.returncode == 1 and "cannot read the job's GPU list '0,gpu1'" in result.stderr


def _fake(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/{name}.log\n{body}\n')
    path.chmod(0o755)
    return path


def test_failure_drains_the_node_with_the_gpu_and_reason(tmp_path: Path) -> None:
    _fake(tmp_path, "scontrol", "exit 0")
    result = run_script(PROLOG, "pending-remap.txt", tmp_path, gpus="3", env={"SLURMD_NODENAME": "gpu-h100-0"})
    assert result.returncode == 1
    assert (tmp_path / "scontrol.log").read_text().strip() == (
        "update NodeName=gpu-h100-0 State=DRAIN "
        "Reason=gpu-check: GPU 3 (00000000:5D:00.0, NVIDIA H100 80GB HBM3): row remapping pending (reset the GPU)"
    )


def test_dcgm_diag_runs_on_the_jobs_gpus_when_configured(tmp_path: Path) -> None:
    _fake(tmp_path, "dcgmi", "echo 'Memory  Fail - GPU 1 memory test'; exit 226")
    skipped = run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="0,1")
    assert skipped.returncode == 0 and not (tmp_path / "dcgmi.log").exists()
    result = run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="0,1", env={"GPU_CHECK_DCGM_DIAG_LEVEL": "1"})
    assert (tmp_path / "dcgmi.log").read_text().strip() == "diag -r 1 -i 0,1"
    assert result.returncode == 1 and "dcgmi diag -r 1 failed (exit 226): Memory  Fail - GPU 1 memory test" in result.stderr


def test_a_dcgm_diag_asked_for_where_dcgmi_is_missing_is_said_not_silently_dropped(tmp_path: Path) -> None:
    # The Slinky slurmd images install no DCGM: the prolog passes the job but says the diagnostic did not run.
    result = run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="0,1", env={"GPU_CHECK_DCGM_DIAG_LEVEL": "2"})
    assert result.returncode == 0
    assert result.stderr.strip() == "gpu-check: dcgmi diag -r 2 skipped: dcgmi is not installed here"
    quiet = run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="0,1")
    assert quiet.returncode == 0 and quiet.stderr == ""


def _published_dcgmi(tmp_path: Path, fixture: str, exit_code: int = 226) -> None:
    """A fake dcgmi that prints a published `dcgmi diag` output (tests/fixtures/dcgmi/, after its '#' header) and
    exits EXIT_CODE: 226 by default, as dcgmi does when a test fails (DCGM_ST_NVVS_ERROR)."""
    output = "".join(
        line for line in (FIXTURES.parent / "dcgmi" / fixture).read_text().splitlines(True) if not line.startswith("#")
    )
    (tmp_path / "dcgmi.out").write_text(output)
    _fake(tmp_path, "dcgmi", f"cat {tmp_path}/dcgmi.out; exit {exit_code}")


def test_a_dcgm_table_with_a_failed_test_fails_even_when_dcgmi_exits_0(tmp_path: Path) -> None:
    _published_dcgmi(tmp_path, "gpu-memory-thermal.txt", exit_code=0)
    result = run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="0", env={"GPU_CHECK_DCGM_DIAG_LEVEL": "2"})
    assert result.returncode == 1 and "dcgmi diag -r 2 failed (exit 0): GPU Memory: Fail - GPU: 0 (Warning:" in result.stderr
    # An Error note alone, with exit status 0, is left to the status: only a failed test overrides it.
    _published_dcgmi(tmp_path, "row-remap-pending.txt", exit_code=0)
    assert run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="0", env={"GPU_CHECK_DCGM_DIAG_LEVEL": "2"}).returncode == 0


@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        (
            "gpu-memory-thermal.txt",
            "GPU Memory: Fail - GPU: 0 (Warning: GPU 0 Thermal violations totaling 13.3 seconds started at 9.7 seconds"
            " into the test for GPU 0 Verify that the cooling on this machine is functional, including external, thermal"
            " material interface, fans, and any other components.)",
        ),
        ("row-remap-pending.txt", "Error: GPU 3 has uncorrectable memory errors and row remappings are pending"),
        (
            # A whole published output: an Info note before the failure is not the reason; the Warning after it is.
            "cuda-init-8xh100.txt",
            "GPU Memory: Fail - All (Warning: GPU 0 Error using CUDA API cuInit Check DCGM and system logs for errors."
            " Reset GPU. Restart DCGM. Rerun diagnostics. Unable to initialize CUDA library: 'system not yet"
            " initialized'. . Please check if a CUDA sample program can be run successfully on this host. Refer to"
            " https://github.com/nvidia/cuda-samples)",
        ),
    ],
)
def test_a_failed_dcgm_diagnostic_names_the_test_and_dcgms_note(tmp_path: Path, fixture: str, reason: str) -> None:
    # Published outputs of dcgmi diag on faulty nodes: the note is wrapped over several table rows, cut mid-word.
    _published_dcgmi(tmp_path, fixture)
    result = run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="0,1", env={"GPU_CHECK_DCGM_DIAG_LEVEL": "2"})
    assert result.returncode == 1
    assert result.stderr.strip() == f"gpu-check: GPU 0,1 (nvidia-smi 0,1): dcgmi diag -r 2 failed (exit 226): {reason}"


# --- epilog ---------------------------------------------------------------------------------------


def test_epilog_passes_when_the_gpus_are_free(tmp_path: Path) -> None:
    result = run_script(EPILOG, "healthy-h100x1.txt", tmp_path)
    assert result.returncode == 0, result.stderr


def test_epilog_names_a_leftover_process(tmp_path: Path) -> None:
    result = run_script(EPILOG, "leftover-process.txt", tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == "gpu-epilog: GPU 0 (00000000:19:00.0): process 48213 (python3) still holds 40960 MiB"


def test_epilog_fails_on_memory_left_in_use_over_the_threshold(tmp_path: Path) -> None:
    result = run_script(EPILOG, "leftover-memory.txt", tmp_path)
    assert (
        result.returncode == 1
        and "30000 MiB of memory still in use by no process visible here (allowed: 1024 MiB)" in result.stderr
    )
    assert run_script(EPILOG, "leftover-memory.txt", tmp_path, env={"GPU_CHECK_MAX_MEMORY_USED_MIB": "30000"}).returncode == 0


def test_epilog_waits_for_processes_to_exit_before_failing(tmp_path: Path) -> None:
    result = run_script(EPILOG, "leftover-process.txt", tmp_path, env={"GPU_CHECK_SETTLE_SECONDS": "2"})
    assert result.returncode == 1
    assert len(smi_calls(tmp_path)) == 2 * 3  # two queries per attempt: at 0, 1 and 2 seconds


def test_epilog_does_not_judge_mig_jobs(tmp_path: Path) -> None:
    result = run_script(EPILOG, "leftover-process.txt", tmp_path, gpus="41", env={"GPU_CHECK_SCOPE": "node"})
    assert result.returncode == 0 and smi_calls(tmp_path) == []


def test_epilog_reports_nvidia_smi_failing(tmp_path: Path) -> None:
    result = run_script(EPILOG, "driver-failing.txt", tmp_path)
    assert result.returncode == 1 and "gpu-epilog: nvidia-smi failed (exit 9)" in result.stderr


# --- settings from config -------------------------------------------------------------------------


def test_settings_block_takes_the_configured_thresholds() -> None:
    health = GpuHealthConfig.model_validate({"maxVolatileUncorrectedEcc": 3, "failOnPendingRowRemap": False, "dcgmDiagLevel": 2})
    text = apply_settings(PROLOG.read_text(), gpu_health_settings(health, nvml_order=True))
    assert ': "${GPU_CHECK_MAX_VOLATILE_UNCORRECTED_ECC:=3}"' in text
    assert ': "${GPU_CHECK_PENDING_ROW_REMAP:=ignore}"' in text
    assert ': "${GPU_CHECK_DCGM_DIAG_LEVEL:=2}"' in text
    assert text.replace("=3}", "=0}").replace("=ignore}", "=fail}").replace("=2}", "=0}") == PROLOG.read_text()


def test_settings_refuse_values_that_would_change_the_script() -> None:
    with pytest.raises(ValueError, match="only letters, digits"):
        apply_settings(PROLOG.read_text(), {"GPU_CHECK_NVIDIA_SMI": "x}; rm -rf /"})
    with pytest.raises(ValueError, match="not a plain command name"):
        GpuHealthConfig.model_validate({"nvidiaSmi": "nvidia-smi; reboot"})


def test_a_script_without_settings_block_is_unchanged() -> None:
    text = (REPO / "scripts/slurm/prolog/00-health.sh").read_text()
    assert apply_settings(text, {"GPU_CHECK_DRAIN": "no"}) == text


@pytest.mark.program
def test_prod_configmaps_carry_the_configured_gpu_thresholds(prod_stack: RecordedStack) -> None:
    maps = {
        r.inputs["metadata"]["name"]: r.inputs["data"]
        for r in prod_stack.kubernetes_objects()
        if r.inputs["kind"] == "ConfigMap" and r.inputs["metadata"]["name"] in {"slurm-prolog-scripts", "slurm-epilog-scripts"}
    }
    # prod runs the DCGM diagnostic as a scheduled active check instead: its slurmd pods have no dcgmi (issue 28).
    assert ': "${GPU_CHECK_DCGM_DIAG_LEVEL:=0}"' in maps["slurm-prolog-scripts"]["10-gpu-check.sh"]
    assert ': "${GPU_CHECK_KILL_AFTER_SECONDS:=5}"' in maps["slurm-prolog-scripts"]["10-gpu-check.sh"]
    assert ': "${GPU_CHECK_MAX_MEMORY_USED_MIB:=512}"' in maps["slurm-epilog-scripts"]["10-gpu-check.sh"]
