"""The GPU prolog and epilog against nvidia-smi output captured on real GPUs by someone else.

tests/fixtures/nvidia-smi/captures/ holds excerpts of captures published by utkuozdemir/nvidia_gpu_exporter
(internal/captures/, MIT): nvidia-smi run on a real H100 80GB HBM3, the same H100 in MIG mode, an H200 and the H200 in
MIG mode, driver 590.48.01, idle and under load (gpu-burn and two memory hogs), and the H200 with driver 580.173.02,
idle; every kept section as published (their README says which and how to check). The fake nvidia-smi replays them: the fields a query may name are the ones that driver's own
`--help-query-gpu` lists, and the answers are the recorded rows. The h100-590-*.txt fixtures beside them change one
recorded value each, and say which.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from components.ground.gpus import MIG_PROFILE
from tests.components.layers.gpu.test_gpu_operator import _prod_with
from tests.scripts.slurm.test_gpu_health import (
    EPILOG,
    FAKES,
    FIXTURES,
    MIG_QUERY,
    PROLOG,
    RECOVERY_QUERY,
    _queried,
    run_script,
    smi_calls,
)

sys.path.insert(0, str(FAKES))
import smi_capture

CAPTURES = sorted((FIXTURES / "captures").glob("*.txt"))
H100 = "captures/h100-80gb-hbm3-590.48.01.txt"
H100_MIG = "captures/h100-mig-590.48.01.txt"


def recorded(capture: str) -> dict[str, smi_capture.Section]:
    return smi_capture.sections((FIXTURES / capture).read_text(encoding="utf-8"))


def state(name: str) -> dict[str, str]:
    return {"FAKE_NVIDIA_SMI_STATE": name}


def test_each_capture_is_a_sourced_excerpt_with_every_section_the_fake_reads() -> None:
    assert len(CAPTURES) >= 3
    for path in CAPTURES:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("# QUOTED FROM A PUBLISHED CAPTURE"), path.name
        source = re.search(r"^# source: (https://github\.com/utkuozdemir/nvidia_gpu_exporter/blob/[0-9a-f]{40}/\S+)$", text, re.M)
        assert source, path.name
        found = smi_capture.sections(text)
        header = found["nvidia_gpu_exporter GPU capture"].output
        assert "masked:         yes" in header
        kept = set(smi_capture.kept_labels(set(found)))
        assert ("load:           none" in header) == (kept != set(smi_capture.KEPT)), path.name
        assert kept <= set(found), path.name
        left_out = re.search(r"^# left out: (.*)$", text, re.M)
        assert left_out and not set(left_out[1].split("; ")) & set(found), path.name
        driver = path.stem.rsplit("-", 1)[1]  # h200-580.173.02 -> 580.173.02
        version = found["capabilities :: version"].output
        assert re.search(rf"^DRIVER version\s*: {re.escape(driver)}$", version, re.M), version


@pytest.mark.parametrize("capture", [p.name for p in CAPTURES])
def test_every_field_the_scripts_query_is_listed_by_the_captured_drivers_help(capture: str) -> None:
    found = recorded(f"captures/{capture}")
    gpu_fields = smi_capture.query_fields(found["capabilities :: help-query-gpu"].output)
    app_fields = smi_capture.query_fields(found["capabilities :: help-query-compute-apps"].output)
    asked_gpu = _queried(PROLOG, "--query-gpu") | _queried(EPILOG, "--query-gpu")
    asked_apps = _queried(EPILOG, "--query-compute-apps")
    assert {"remapped_rows.pending", "remapped_rows.failure", "memory.used"} <= asked_gpu
    assert asked_gpu - set(gpu_fields) == set()
    assert asked_apps - set(app_fields) == set()
    # What issue 17's H100 refused is not in this driver's list either.
    assert "health" not in gpu_fields


CAPTURED_STATES = [
    (path.name, name)
    for path in CAPTURES
    for name in ("idle", "load")
    if f"\n# {name} :: query (-q)\n" in path.read_text(encoding="utf-8")
]


@pytest.mark.parametrize(("capture", "recorded_state"), CAPTURED_STATES)
def test_prolog_passes_on_the_captured_gpu_and_refuses_an_index_it_lacks(
    tmp_path: Path, capture: str, recorded_state: str
) -> None:
    fixture = f"captures/{capture}"
    healthy = run_script(PROLOG, fixture, tmp_path, gpus="0", env=state(recorded_state))
    if "-mig-" in capture:
        # In MIG mode (mig.mode.current Enabled): refused for a whole-GPU job (tests/scripts/slurm/test_gpu_hangs_and_mig.py).
        assert healthy.returncode == 1 and "MIG mode is enabled" in healthy.stderr
    else:
        assert healthy.returncode == 0, healthy.stderr
    # The row-remapping fields were accepted (no fallback to -q), and so were gpu_recovery_action (None here) and
    # mig.mode.current.
    assert smi_calls(tmp_path)[1:] == [RECOVERY_QUERY, MIG_QUERY]
    missing = run_script(PROLOG, fixture, tmp_path, gpus="1", env=state(recorded_state))
    assert (missing.returncode, missing.stderr.strip()) == (1, "gpu-check: GPU 1: not found (nvidia-smi lists: 0)")


def test_prolog_maps_slurms_device_file_index_through_the_captured_minor_number(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "nvidia0").touch()
    env = {"GPU_CHECK_INDEX_ORDER": "file", "GPU_CHECK_DEV_DIR": str(dev)}
    assert run_script(PROLOG, H100, tmp_path, gpus="0", env=env).returncode == 0
    assert "-q" in smi_calls(tmp_path)
    (dev / "nvidia0").rename(dev / "nvidia3")  # a device file whose minor number no captured GPU has
    result = run_script(PROLOG, H100, tmp_path, gpus="0", env=env)
    assert result.returncode == 1 and "nvidia-smi lists no GPU with minor number 3" in result.stderr


def test_a_mig_gpu_reports_no_row_remapping_and_passes_the_node_scope_check(tmp_path: Path) -> None:
    # In MIG mode this driver prints [N/A] for the row-remapping fields (and -q says "Remapped Rows : N/A"):
    # the check is skipped for that GPU, not failed.
    row = recorded(H100_MIG)["idle :: query-gpu (csv, what the exporter parses)"].output
    table = smi_capture.csv_table(row)
    values = dict(zip(table.columns, table.rows[0], strict=True))
    assert (values["mig.mode.current"], values["remapped_rows.pending"], values["remapped_rows.failure"]) == (
        "Enabled",
        "[N/A]",
        "[N/A]",
    )
    node = {"GPU_CHECK_SCOPE": "node"}
    for recorded_state in ("idle", "load"):
        result = run_script(PROLOG, H100_MIG, tmp_path, gpus="2", env={**node, **state(recorded_state)})
        assert result.returncode == 0, result.stderr
        epilog = run_script(EPILOG, H100_MIG, tmp_path, gpus="2", env={**node, **state(recorded_state)})
        assert epilog.returncode == 0, epilog.stderr


@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        ("h100-590-recovery-action.txt", "the driver asks for recovery: Reset"),
        ("h100-590-pending-remap.txt", "row remapping pending (reset the GPU)"),
        ("h100-590-remap-failure.txt", "row remapping failed (replace the GPU)"),
        ("h100-590-ecc-errors.txt", "2 volatile uncorrectable ECC error(s) (allowed: 0)"),
    ],
)
def test_prolog_names_the_captured_gpu_and_the_reason(tmp_path: Path, fixture: str, reason: str) -> None:
    result = run_script(PROLOG, fixture, tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == f"gpu-check: GPU 0 (00000000:00:09.0, NVIDIA H100 80GB HBM3): {reason}"


def test_epilog_passes_on_the_idle_capture_and_names_a_process_left_under_load(tmp_path: Path) -> None:
    assert run_script(EPILOG, H100, tmp_path, env=state("idle")).returncode == 0
    result = run_script(EPILOG, H100, tmp_path, env=state("load"))
    assert result.returncode == 1
    # The first of the three processes the capture lists on that GPU (two memory hogs and gpu_burn).
    assert (
        result.stderr.strip() == "gpu-epilog: GPU 0 (00000000:00:09.0): process 11327 (/root/tools/memhog) still holds 2566 MiB"
    )


def test_epilog_reads_memory_in_use_from_the_captured_mib_values(tmp_path: Path) -> None:
    result = run_script(EPILOG, "h100-590-memory-left.txt", tmp_path)
    assert result.returncode == 1
    assert (
        result.stderr.strip()
        == "gpu-epilog: GPU 0 (00000000:00:09.0): 30000 MiB of memory still in use by no process visible here (allowed: 1024 MiB)"
    )
    assert (
        run_script(EPILOG, "h100-590-memory-left.txt", tmp_path, env={"GPU_CHECK_MAX_MEMORY_USED_MIB": "30000"}).returncode == 0
    )


def test_the_idle_mig_gpu_uses_less_memory_than_the_epilog_allows() -> None:
    # A MIG GPU with no process still shows memory in use (59 MiB here): the epilog's threshold must allow it, or a
    # MIG node would drain after every job when checked per job.
    table = smi_capture.csv_table(recorded(H100_MIG)["idle :: query-gpu (csv, what the exporter parses)"].output)
    used = dict(zip(table.columns, table.rows[0], strict=True))["memory.used"]
    assert used == "59 MiB"
    settings = re.search(r"GPU_CHECK_MAX_MEMORY_USED_MIB:=([0-9]+)", EPILOG.read_text())
    assert settings and int(settings[1]) > 59


def test_the_mig_layout_captured_on_the_h100_is_accepted_as_a_pool_layout() -> None:
    listed = recorded(H100_MIG)["capabilities :: list (-L)"].output
    profiles = re.findall(r"^  MIG (\S+)\s+Device\s+[0-9]+:", listed, re.M)
    assert profiles == ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    assert all(MIG_PROFILE.fullmatch(profile) for profile in profiles)
    layout = {profile: profiles.count(profile) for profile in profiles}  # 3 + 2 + 1 + 1 = all 7 compute slices

    def mutate(values: dict[str, Any]) -> None:
        values.setdefault("hpcforge:gpu", {})["operator"] = {"migStrategy": "mixed", "migProfiles": {"gpu-a100": layout}}
        mig = {"type": "1g.10gb", "count": 16, "resource": "nvidia.com/mig-1g.10gb", "autodetect": "nvml"}
        values["hpcforge:slurm"]["nodesets"][2]["gpus"] = mig
        values["hpcforge:slurm"]["nodesets"][2]["replicas"] = 0  # MIG: bare-metal hosts with NVML (not the pods)
        values["hpcforge:nodePools"][1]["gpusPerNode"] = mig

    config = _prod_with(mutate)
    assert config.gpu.operator.mig_profiles["gpu-a100"] == {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}


def test_the_fake_answers_like_the_recorded_csv() -> None:
    import os
    import subprocess

    env = {**os.environ, "FAKE_NVIDIA_SMI_FIXTURE": str(FIXTURES / H100), "FAKE_NVIDIA_SMI_STATE": "load"}

    def smi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(FAKES / "nvidia-smi"), *args], env=env, capture_output=True, text=True, check=False)

    with_units = smi("--query-gpu=index,pci.bus_id,memory.used", "--format=csv")
    assert with_units.stdout == "index, pci.bus_id, memory.used [MiB]\n0, 00000000:00:09.0, 19818 MiB\n"
    bare = smi("--query-gpu=gpu_bus_id,memory.used", "--format=csv,noheader,nounits")
    assert bare.stdout == "00000000:00:09.0, 19818\n"  # gpu_bus_id: the help's alias of pci.bus_id
    refused = smi("--query-gpu=index,health", "--format=csv,noheader,nounits")
    assert (refused.returncode, refused.stdout) == (2, 'Field "health" is not a valid field to query.\n\n')
    assert smi("-i", "1", "-q").returncode == 99  # not recorded, so not modelled
    assert smi("-q").stdout == recorded(H100)["load :: query (-q)"].output


# --- Slurm's names for the captured GPUs (AutoDetect=nvml) ------------------------------------------------------------
# Reproduced from Slurm's source (SchedMD/slurm, tags slurm-22-05-11-1 and slurm-25-11-7-1):
# - src/plugins/gpu/common/gpu_common.c gpu_common_underscorify_tolower: every character lowercased, ' ' -> '_';
# - src/plugins/gpu/nvml/gpu_nvml.c _handle_mig at 22.05: a MIG device's type is its GPU's name cut at the first '-',
#   then "_<slices>g.<roundl(memorySizeMB / 1024)>gb" (23.02 and later take the suffix from NVML's MIG device name);
# - src/plugins/gres/gpu/gres_gpu.c _find_type_in_gres_list: a configured type matches a detected device when it is a
#   case-insensitive substring of the detected type (xstrcasestr); unmatched devices are ignored, and slurmctld then
#   drains the node ("gres/gpu count reported lower than configured").


def slurm_gpu_type(nvml_name: str) -> str:
    return nvml_name.lower().replace(" ", "_")


def slurm_2205_mig_type(nvml_name: str, slices: int, memory_mib: int) -> str:
    # roundl rounds halves away from zero; int(x + 0.5) does the same for these positive values.
    return f"{slurm_gpu_type(nvml_name).split('-', 1)[0]}_{slices}g.{int(memory_mib / 1024 + 0.5)}gb"


def slurm_matches(configured: str, detected: str) -> bool:
    return configured.lower() in detected.lower()


def captured_name(capture: str) -> str:
    table = smi_capture.csv_table(recorded(capture)["idle :: query-gpu (csv, what the exporter parses)"].output)
    return dict(zip(table.columns, table.rows[0], strict=True))["name"]


def captured_mig_devices(capture: str) -> list[tuple[str, int]]:
    """(profile as -L names it, memory in MiB as -q's "Shared FB Memory Usage" Total) per MIG device, in index order."""
    found = recorded(capture)
    profiles = re.findall(r"^  MIG (\S+)\s+Device\s+[0-9]+:", found["capabilities :: list (-L)"].output, re.M)
    memory = re.findall(
        r"^        Shared FB Memory Usage\n            Total\s+: ([0-9]+) MiB$", found["idle :: query (-q)"].output, re.M
    )
    assert len(profiles) == len(memory) > 0
    return list(zip(profiles, map(int, memory), strict=True))


def test_slurm_matches_the_documented_gpu_types_against_the_captured_gpu_names() -> None:
    assert slurm_gpu_type(captured_name(H100)) == "nvidia_h100_80gb_hbm3"
    assert slurm_gpu_type(captured_name("captures/h200-590.48.01.txt")) == "nvidia_h200"
    assert slurm_matches("h100", "nvidia_h100_80gb_hbm3") and slurm_matches("h200", "nvidia_h200")
    assert not slurm_matches("h100", "nvidia_h200") and not slurm_matches("h100_sxm", "nvidia_h100_80gb_hbm3")


def test_slurm_2205_names_the_captured_h100_mig_devices_by_their_profiles() -> None:
    devices = captured_mig_devices(H100_MIG)
    assert devices == [("3g.40gb", 40448), ("2g.20gb", 20096), ("1g.10gb", 9984), ("1g.10gb", 9984)]
    name = captured_name(H100_MIG)
    for profile, memory in devices:
        detected = slurm_2205_mig_type(name, int(profile[0]), memory)
        assert detected == f"nvidia_h100_80gb_hbm3_{profile}"
        assert slurm_matches(profile, detected)
        # ... and so does a whole-GPU type: why a nodeset on a MIG pool must ask for profiles
        # (tests/components/layers/gpu/test_gpu_operator.py, "splits every GPU into MIG devices").
        assert slurm_matches("h100", detected)


def test_slurm_2205_names_two_captured_h200_mig_profiles_by_rounded_memory_instead() -> None:
    # The same rule on the H200: 2g.35gb has 33280 MiB (32.5 GiB -> 33) and 1g.18gb 16384 MiB (16), so Slurm 22.05 types
    # them 2g.33gb and 1g.16gb, and a nodeset typed by profile matches none of them. Slurm 23.02 and later take the
    # suffix from NVML's MIG device name instead; the Slinky images hpcforge pins run 26.05, but bare-metal hosts that
    # join a nodeset bring their own slurmd (docs/layers/gpu.md, "GRES types and AutoDetect").
    name = captured_name("captures/h200-mig-590.48.01.txt")
    devices = dict(captured_mig_devices("captures/h200-mig-590.48.01.txt"))
    assert (devices["2g.35gb"], devices["1g.18gb"]) == (33280, 16384)
    assert slurm_2205_mig_type(name, 2, devices["2g.35gb"]) == "nvidia_h200_2g.33gb"
    assert slurm_2205_mig_type(name, 1, devices["1g.18gb"]) == "nvidia_h200_1g.16gb"
    assert not slurm_matches("2g.35gb", "nvidia_h200_2g.33gb") and not slurm_matches("1g.18gb", "nvidia_h200_1g.16gb")
