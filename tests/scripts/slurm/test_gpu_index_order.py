"""Which GPU the prolog and epilog check for a job's SLURM_JOB_GPUS index.

Slurm (src/plugins/gres/common/gres_common.c, src/interfaces/gres.c, src/plugins/gres/gpu/gres_gpu.c, the same in
22.05 and 26.05) gives the prolog the positions of the job's devices in the node's GPU list, ordered by File name as
strings, then (AutoDetect=nvml only) by NVML's PCI-bus order. With gres.conf File= lines, index N is the N-th
/dev/nvidia<minor> in string order; the scripts find that minor's GPU with `nvidia-smi -q` ("Minor Number"). The
nodes whose minor numbers do not follow nvidia-smi's (PCI) index order are two real 8x RTX 4090 nodes: their whole
published `nvidia-smi -q` (leptonai/gpud test data, driver 535.154.05; tests/scripts/slurm/test_gpu_multi_captures.py checks the
bytes), with `[gpus]` / `[apps]` rows derived from it (tests/fixtures/nvidia-smi/README.md); the device files are
stand-ins in a temporary /dev.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from components.layers.gpu.config import GpuHealthConfig
from components.layers.slurm.script_settings import gpu_health_settings
from offline.program.engine import RecordedStack
from tests.scripts.slurm.test_gpu_health import EPILOG, PROLOG, run_script, smi_calls
from tests.scripts.slurm.test_gpu_multi_captures import RTX4090_JUL, RTX4090_NOV, with_q_value
from tests.test_layers import objects

# Slurm's GPU N with /dev/nvidia0-7 is the GPU with minor number N: its bus id in each capture's `nvidia-smi -q`.
# (nvidia-smi's index order is the PCI order 01, 23 or 21, 41, 61, 81, A1, C1, E1.)
BY_MINOR = {
    RTX4090_JUL: [f"00000000:{bus}:00.0" for bus in ("61", "41", "23", "01", "E1", "C1", "A1", "81")],
    RTX4090_NOV: [f"00000000:{bus}:00.0" for bus in ("61", "41", "01", "21", "E1", "C1", "81", "A1")],
}


def _dev(tmp_path: Path, minors: range) -> dict[str, str]:
    dev = tmp_path / "dev"
    dev.mkdir(parents=True, exist_ok=True)
    for name in ("nvidiactl", "nvidia-uvm", "nvidia-caps", *(f"nvidia{m}" for m in minors)):
        (dev / name).touch()
    return {"GPU_CHECK_INDEX_ORDER": "file", "GPU_CHECK_DEV_DIR": str(dev)}


@pytest.mark.parametrize(
    ("fixture", "slurm", "nvml"),
    [
        # Slurm's GPU 2 is /dev/nvidia2 = 00000000:23:00.0, nvidia-smi's GPU 1.
        (RTX4090_JUL, 2, 1),
        # Slurm's GPU 0 is /dev/nvidia0 = 00000000:61:00.0, nvidia-smi's GPU 3.
        (RTX4090_NOV, 0, 3),
    ],
)
def test_file_order_checks_the_gpu_behind_the_device_file_not_nvidia_smi_s_index(
    tmp_path: Path, fixture: str, slurm: int, nvml: int
) -> None:
    # The real capture with one value changed: that GPU's "Remapped Rows" / "Pending" reads Yes in `-q`.
    bus = BY_MINOR[fixture][slurm]
    sick = with_q_value(fixture, bus, "Remapped Rows", "Pending", "Yes", tmp_path / "sick.txt")
    env = {**_dev(tmp_path, range(8)), "FAKE_NVIDIA_SMI_FIXTURE": str(sick)}
    result = run_script(PROLOG, None, tmp_path, gpus=str(slurm), env=env)
    assert result.returncode == 1
    assert (
        result.stderr.strip() == f"gpu-check: GPU {slurm} ({bus}, NVIDIA GeForce RTX 4090): row remapping pending (reset the GPU)"
    )
    assert smi_calls(tmp_path).count("-q") == 1  # driver 535: one -q for row remapping and minor numbers
    others = ",".join(str(gpu) for gpu in range(8) if gpu != slurm)
    assert run_script(PROLOG, None, tmp_path, gpus=others, env=env).returncode == 0, others
    # Read by nvidia-smi's index instead, the same job would pass the sick GPU and check another one.
    nvml_env = {"FAKE_NVIDIA_SMI_FIXTURE": str(sick)}
    assert run_script(PROLOG, None, tmp_path, gpus=str(slurm), env=nvml_env).returncode == 0
    by_index = run_script(PROLOG, None, tmp_path, gpus=str(nvml), env=nvml_env)
    assert by_index.returncode == 1 and by_index.stderr.startswith(f"gpu-check: GPU {nvml} ({bus}, ")


@pytest.mark.parametrize("fixture", [RTX4090_JUL, RTX4090_NOV])
def test_epilog_finds_the_process_on_the_gpu_behind_each_device_file(tmp_path: Path, fixture: str) -> None:
    # Every GPU but one of the July node runs a compute process (all eight of the November node's): the epilog names
    # the process on the GPU with Slurm's minor, not on nvidia-smi's GPU of that index.
    env = _dev(tmp_path, range(8))
    for slurm, bus in enumerate(BY_MINOR[fixture]):
        result = run_script(EPILOG, fixture, tmp_path, gpus=str(slurm), env=env)
        if bus == "00000000:A1:00.0" and fixture == RTX4090_JUL:
            assert result.returncode == 0, result.stderr  # the July node's one idle GPU
        else:
            assert result.returncode == 1
            assert result.stderr.startswith(f"gpu-epilog: GPU {slurm} ({bus}): process "), (slurm, result.stderr)
    # Concretely: the July node's Slurm GPU 5 is minor 5 = 00000000:C1:00.0; nvidia-smi's GPU 5 is the idle A1.
    result = run_script(EPILOG, RTX4090_JUL, tmp_path, gpus="5", env=env)
    assert (
        result.stderr.strip() == "gpu-epilog: GPU 5 (00000000:C1:00.0): process 1375347 (/usr/bin/python) still holds 22372 MiB"
    )
    assert run_script(EPILOG, RTX4090_JUL, tmp_path, gpus="5").returncode == 0


def test_file_order_is_slurm_s_string_order_of_the_device_files(tmp_path: Path) -> None:
    # Twelve GPUs, minor = PCI position; Slurm sorts /dev/nvidia10 and /dev/nvidia11 before /dev/nvidia2
    # (xstrcmp), so its GPU 2 is minor 10. Only that GPU has a pending row remap.
    buses = [f"00000000:{0x10 + i:02X}:00.0" for i in range(12)]
    rows = "".join(
        f"{i}, NVIDIA H100 80GB HBM3, {b}, 0, 0, [N/A], {'Yes' if i == 10 else 'No'}, No\n" for i, b in enumerate(buses)
    )
    q = "".join(f"GPU {b}\n    Minor Number                          : {i}\n\n" for i, b in enumerate(buses))
    fixture = tmp_path / "twelve.txt"
    fixture.write_text(
        "# RECONSTRUCTED, NOT CAPTURED (test data)\n[gpus]\nindex, name, pci.bus_id, memory.used,"
        " ecc.errors.uncorrected.volatile.total, retired_pages.pending, remapped_rows.pending, remapped_rows.failure\n"
        f"{rows}[q]\n{q}"
    )
    env = {**_dev(tmp_path, range(12)), "FAKE_NVIDIA_SMI_FIXTURE": str(fixture)}
    result = run_script(PROLOG, None, tmp_path, gpus="2", env=env)
    assert result.returncode == 1 and result.stderr.startswith(f"gpu-check: GPU 2 ({buses[10]}, ")
    assert run_script(PROLOG, None, tmp_path, gpus="3,4,5,6,7,8,9,10,11", env=env).returncode == 0


def test_file_order_refuses_an_index_without_a_device_file_or_a_gpu(tmp_path: Path) -> None:
    env = _dev(tmp_path, range(4))
    missing = run_script(PROLOG, RTX4090_NOV, tmp_path, gpus="4", env=env)
    assert missing.returncode == 1
    assert missing.stderr.strip().startswith("gpu-check: GPU 4: not found (Slurm's device files here: ")
    env = _dev(tmp_path / "more", range(10))
    unknown = run_script(PROLOG, RTX4090_NOV, tmp_path, gpus="8", env=env)
    assert unknown.returncode == 1 and unknown.stderr.strip() == (
        f"gpu-check: GPU 8 ({tmp_path}/more/dev/nvidia8): nvidia-smi lists no GPU with minor number 8"
    )


def test_epilog_uses_the_same_order(tmp_path: Path) -> None:
    env = _dev(tmp_path, range(1))
    result = run_script(EPILOG, "leftover-process.txt", tmp_path, gpus="0", env=env)
    assert result.returncode == 1 and "GPU 0 (00000000:19:00.0): process 48213 (python3)" in result.stderr


def test_settings_say_nvml_order_only_when_every_gpu_nodeset_autodetects_with_nvml() -> None:
    health = GpuHealthConfig()
    assert gpu_health_settings(health)["GPU_CHECK_INDEX_ORDER"] == "file"
    assert gpu_health_settings(health, nvml_order=True)["GPU_CHECK_INDEX_ORDER"] == "nvml"


def test_prod_scripts_map_indexes_through_device_files(prod_stack: RecordedStack) -> None:
    # prod's GPU nodesets list their device files (autodetect off): Slurm orders them by file name.
    maps = objects(prod_stack, "ConfigMap")
    for name in ("slurm/slurm-prolog-scripts", "slurm/slurm-epilog-scripts"):
        assert ': "${GPU_CHECK_INDEX_ORDER:=file}"' in maps[name].inputs["data"]["10-gpu-check.sh"], name


def test_file_order_reads_the_minor_numbers_of_the_published_driver_535_capture(tmp_path: Path) -> None:
    # a100x8-driver535.txt's `nvidia-smi -q` is quoted verbatim: minors 0-7 follow its PCI order there, so Slurm's
    # GPU N is nvidia-smi's GPU N; the driver-535 path (row remapping from -q) and the file order share that -q call.
    env = _dev(tmp_path, range(8))
    result = run_script(PROLOG, "a100x8-driver535.txt", tmp_path, gpus="0,1,2,3,4,5,6,7", env=env)
    assert result.returncode == 0, result.stderr
    assert smi_calls(tmp_path).count("-q") == 1
    env["GPU_CHECK_DEV_DIR"] = str(tmp_path / "none")
    missing = run_script(PROLOG, "a100x8-driver535.txt", tmp_path, gpus="0", env=env)
    assert missing.returncode == 1 and "GPU 0: not found (Slurm's device files here: none)" in missing.stderr


def test_epilog_passes_on_the_published_driver_535_capture_in_both_orders(tmp_path: Path) -> None:
    # memory.used and the compute-apps query are what the epilog asks; the published --help-query-gpu of driver
    # 535.129.03 lists memory.used (tests/scripts/slurm/test_gpu_health.py), the [gpus]/[apps] rows are reconstructed.
    gpus = "0,1,2,3,4,5,6,7"
    assert run_script(EPILOG, "a100x8-driver535.txt", tmp_path, gpus=gpus).returncode == 0
    result = run_script(EPILOG, "a100x8-driver535.txt", tmp_path, gpus=gpus, env=_dev(tmp_path, range(8)))
    assert result.returncode == 0, result.stderr


def test_epilog_fails_at_once_for_an_index_without_a_device_file(tmp_path: Path) -> None:
    # No settle wait: a device file that is not there will not appear by waiting.
    env = {**_dev(tmp_path, range(1)), "GPU_CHECK_SETTLE_SECONDS": "30"}
    result = run_script(EPILOG, "healthy-h100x1.txt", tmp_path, gpus="1", env=env)
    assert result.returncode == 1
    assert result.stderr.strip().startswith("gpu-epilog: GPU 1: not found (Slurm's device files here: ")


def test_dcgm_diag_gets_the_nvml_indexes_of_the_job_s_gpus_not_slurm_s(tmp_path: Path) -> None:
    # On the November RTX 4090 node, Slurm's GPUs 0 and 1 are /dev/nvidia0 = 00000000:61:00.0 and /dev/nvidia1 =
    # 00000000:41:00.0: nvidia-smi (NVML, DCGM) GPUs 3 and 2. (Only the index mapping is held here: the dcgmi is a
    # stand-in, and whether DCGM diagnoses GeForce GPUs is not.)
    dcgmi = tmp_path / "dcgmi"
    dcgmi.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/dcgmi.log\nexit 0\n')
    dcgmi.chmod(0o755)
    env = {**_dev(tmp_path, range(8)), "GPU_CHECK_DCGM_DIAG_LEVEL": "1"}
    result = run_script(PROLOG, RTX4090_NOV, tmp_path, gpus="0,1", env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "dcgmi.log").read_text().strip() == "diag -r 1 -i 3,2"
