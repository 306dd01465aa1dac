"""dcgm-exporter's HPC job mapping, written by the GPU prolog and cleared by the epilog.

What reads the directory is dcgm-exporter 4.6.0-4.8.3 (NVIDIA/dcgm-exporter internal/pkg/transformation/hpc.go,
`hpcMapper`): `getGPUFiles` keeps the regular files whose names match `^\\d+(\\.\\d+)?$`, `readFile` takes every line
(bufio.Scanner), and `Process` gives each metric of GPU `gpu` (key `<gpu>.<GPU_I_ID>` for a MIG device) one copy per
listed job with the label `hpc_job=<job>`. `exporter_view` below follows those rules; the GPU ids are DCGM's, which are
nvidia-smi's (NVML) indexes (DCGM dcgmlib DcgmCacheManager.cpp: gpuId = i, the i-th NVML device).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from components.layers.gpu.config import GpuHealthConfig
from components.layers.slurm.objects import JOB_MAPPING_VOLUME
from components.layers.slurm.script_settings import gpu_health_settings
from offline.program.engine import RecordedStack
from tests.scripts.slurm.test_gpu_health import EPILOG, PROLOG, run_script, script_env
from tests.scripts.slurm.test_gpu_index_order import _dev
from tests.test_layers import objects

MAPPING_FILE = re.compile(r"^\d+(\.\d+)?$")  # hpc.go validGPUFile
CAPTURED_H100 = "captures/h100-80gb-hbm3-590.48.01.txt"


def exporter_view(directory: Path) -> dict[str, list[str]]:
    """GPU id -> the `hpc_job` values dcgm-exporter gives that GPU's metrics (one series each), per hpc.go."""
    view: dict[str, list[str]] = {}
    for path in sorted(directory.iterdir()):
        if path.is_dir() or not MAPPING_FILE.match(path.name):
            continue
        jobs = path.read_text().splitlines()  # bufio.ScanLines: lines without their end, the last one even unended
        if jobs:
            view[path.name] = jobs
    return view


def env_for(tmp_path: Path, job: str, **extra: str) -> dict[str, str]:
    return {"GPU_CHECK_JOB_MAP_DIR": str(tmp_path / "job-mapping"), "SLURM_JOB_ID": job, **extra}


def test_prolog_labels_the_job_s_gpus_by_their_nvidia_smi_index(tmp_path: Path) -> None:
    mapping = tmp_path / "job-mapping"
    result = run_script(PROLOG, "healthy-h100x8.txt", tmp_path, gpus="2,5", env=env_for(tmp_path, "4242"))
    assert result.returncode == 0, result.stderr
    assert exporter_view(mapping) == {"2": ["4242"], "5": ["4242"]}
    # Only files the exporter reads, and no temporary file left: the lock file's name is not a GPU id.
    assert sorted(p.name for p in mapping.iterdir()) == [".lock", "2", "5"]


def test_file_order_records_the_gpu_behind_the_device_file_not_slurm_s_index(tmp_path: Path) -> None:
    # A real 8x RTX 4090 node whose minor numbers do not follow the PCI order (rtx4090x8-535.154.05-nov2024.txt):
    # Slurm's GPU N is /dev/nvidia<N>: 0 is 00000000:61:00.0 (nvidia-smi 3), 4 is E1 (7), 6 is 81 (4).
    env = {**_dev(tmp_path, range(8)), **env_for(tmp_path, "77")}
    result = run_script(PROLOG, "rtx4090x8-535.154.05-nov2024.txt", tmp_path, gpus="0,4,6", env=env)
    assert result.returncode == 0, result.stderr
    assert exporter_view(tmp_path / "job-mapping") == {"3": ["77"], "4": ["77"], "7": ["77"]}


def test_a_failing_prolog_records_nothing(tmp_path: Path) -> None:
    result = run_script(
        PROLOG, "h100-590-pending-remap.txt", tmp_path, gpus="0", env=env_for(tmp_path, "13", GPU_CHECK_DRAIN="no")
    )
    assert result.returncode == 1
    assert not (tmp_path / "job-mapping").exists() or exporter_view(tmp_path / "job-mapping") == {}


def test_the_next_job_replaces_a_line_left_by_a_job_whose_epilog_never_ran(tmp_path: Path) -> None:
    mapping = tmp_path / "job-mapping"
    mapping.mkdir()
    (mapping / "0").write_text("1001\n")  # the node crashed during job 1001
    result = run_script(PROLOG, CAPTURED_H100, tmp_path, gpus="0", env=env_for(tmp_path, "1002"))
    assert result.returncode == 0, result.stderr
    assert exporter_view(mapping) == {"0": ["1002"]}


def test_epilog_removes_only_its_job_and_deletes_emptied_files(tmp_path: Path) -> None:
    mapping = tmp_path / "job-mapping"
    mapping.mkdir()
    (mapping / "0").write_text("500\n")
    (mapping / "1").write_text("600\n")
    (mapping / "2").write_text("500\n600\n")  # two jobs listed (written by hand): only 500 goes
    (mapping / "notes").write_text("500\n")  # not a mapping file: left alone
    result = run_script(EPILOG, CAPTURED_H100, tmp_path, gpus="0", env=env_for(tmp_path, "500"))
    assert result.returncode == 0, result.stderr
    assert exporter_view(mapping) == {"1": ["600"], "2": ["600"]}
    assert (mapping / "notes").read_text() == "500\n"


def test_epilog_of_a_job_without_gpus_or_mapping_directory_does_nothing(tmp_path: Path) -> None:
    result = run_script(EPILOG, None, tmp_path, gpus=None, env=env_for(tmp_path, "9"))
    assert result.returncode == 0 and result.stderr == ""
    assert not (tmp_path / "job-mapping").exists()


def test_mapping_is_telemetry_a_directory_it_cannot_write_does_not_fail_the_job(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    result = run_script(
        PROLOG, CAPTURED_H100, tmp_path, gpus="0", env={"GPU_CHECK_JOB_MAP_DIR": str(blocked), "SLURM_JOB_ID": "5"}
    )
    assert result.returncode == 0
    assert f"gpu-check: job mapping: cannot write {blocked}: job 5 not recorded" in result.stderr


def test_concurrent_prologs_and_epilogs_of_one_node_keep_each_other_s_lines(tmp_path: Path) -> None:
    """Eight one-GPU jobs start together, then the odd ones end together: the files are rewritten under the lock."""
    mapping = tmp_path / "job-mapping"

    def start(script: Path, gpu: int) -> subprocess.Popen[str]:
        env = script_env("healthy-h100x8.txt", tmp_path, str(gpu), env_for(tmp_path, str(3000 + gpu)))
        return subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    for process in [start(PROLOG, gpu) for gpu in range(8)]:
        assert process.wait(timeout=120) == 0, process.communicate()
    assert exporter_view(mapping) == {str(gpu): [str(3000 + gpu)] for gpu in range(8)}
    for process in [start(EPILOG, gpu) for gpu in range(1, 8, 2)]:
        assert process.wait(timeout=120) == 0, process.communicate()
    assert exporter_view(mapping) == {str(gpu): [str(3000 + gpu)] for gpu in range(0, 8, 2)}


def test_settings_name_the_directory_only_where_the_exporter_reads_it() -> None:
    health = GpuHealthConfig()
    assert gpu_health_settings(health, job_mapping_dir="/var/lib/dcgm-exporter/job-mapping")["GPU_CHECK_JOB_MAP_DIR"] == (
        "/var/lib/dcgm-exporter/job-mapping"
    )
    assert gpu_health_settings(health)["GPU_CHECK_JOB_MAP_DIR"] == ""


def test_prod_mounts_the_directory_into_gpu_slurmd_and_names_it_to_the_exporter(prod_stack: RecordedStack) -> None:
    directory = "/var/lib/dcgm-exporter/job-mapping"
    nodesets = [r.inputs for r in objects(prod_stack, "NodeSet").values()]
    assert nodesets
    for nodeset in nodesets:
        volumes = {v["name"]: v for v in nodeset["spec"]["template"]["spec"].get("volumes", [])}
        mounts = {m["name"]: m for m in nodeset["spec"]["slurmd"].get("volumeMounts", [])}
        gpus = any("nvidia.com/" in key for key in nodeset["spec"]["slurmd"]["resources"]["limits"])
        if gpus:
            assert volumes[JOB_MAPPING_VOLUME] == {
                "name": JOB_MAPPING_VOLUME,
                "hostPath": {"path": directory, "type": "DirectoryOrCreate"},
            }
            assert mounts[JOB_MAPPING_VOLUME] == {"name": JOB_MAPPING_VOLUME, "mountPath": directory}
        else:
            assert JOB_MAPPING_VOLUME not in volumes and JOB_MAPPING_VOLUME not in mounts
    scripts = [
        r.inputs["data"]["10-gpu-check.sh"]
        for r in objects(prod_stack, "ConfigMap").values()
        if r.inputs["metadata"]["name"] in {"slurm-prolog-scripts", "slurm-epilog-scripts"}
    ]
    assert len(scripts) == 2
    assert all(f': "${{GPU_CHECK_JOB_MAP_DIR:={directory}}}"' in text for text in scripts)
    application = next(
        r.inputs for r in objects(prod_stack, "Application").values() if r.inputs["metadata"]["name"] == "gpu-operator"
    )
    exporter = application["spec"]["source"]["helm"]["valuesObject"]["dcgmExporter"]
    assert exporter["hpcJobMapping"] == {"enabled": True, "directory": directory}
