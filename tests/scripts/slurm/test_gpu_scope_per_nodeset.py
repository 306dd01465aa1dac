"""Which GPUs the GPU prolog and epilog check is the node's, per nodeset (issue 35 item 9): main set GPU_CHECK_SCOPE=node
in the one prolog of every nodeset as soon as gpu.operator.migStrategy was mixed or single, which turned the
job-scope checks (the job's own GPUs, a GPU in MIG mode refused for a whole-GPU job) off on the whole-GPU nodesets too.
Now the scripts keep `job` unless the node's GPU_CHECK_SCOPE_FILE says `node`, which the join script of a MIG
nodeset's bare-metal host writes (MIG nodesets have no pods: the pinned slurmd image has no NVML)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from components.layers.gpu.config import GpuHealthConfig
from components.layers.slurm.face import render_join_script
from components.layers.slurm.script_settings import GPU_CHECK_SCOPE_FILE, gpu_health_settings
from components.site.loader import load_config
from tests.helpers import config_values, raw_config, run_stack_file, write_variant
from tests.scripts.slurm.test_gpu_health import EPILOG, PROLOG, run_script
from tests.test_layers import one

H100_MIG = "captures/h100-mig-590.48.01.txt"


def _mig(values: dict[str, Any]) -> None:
    """prod with its A100 pool split into 1g.10gb MIG devices (bare-metal hosts only), the H100s whole GPUs."""
    values.setdefault("hpcforge:gpu", {})["operator"] = {"migStrategy": "mixed", "migProfiles": {"gpu-a100": {"1g.10gb": 7}}}
    mig = {"type": "1g.10gb", "count": 56, "resource": "nvidia.com/mig-1g.10gb", "autodetect": "nvml"}
    nodeset = next(ns for ns in values["hpcforge:slurm"]["nodesets"] if ns["name"] == "gpu-a100")
    nodeset.update(replicas=0, gpus=mig)
    next(p for p in values["hpcforge:nodePools"] if p["name"] == "gpu-a100")["gpusPerNode"] = mig
    values["hpcforge:gpu"]["activeChecks"] = [
        c for c in values["hpcforge:gpu"]["activeChecks"] if "gpu-a100" not in c["nodesets"]
    ]


def test_the_scripts_default_scope_file_is_the_one_the_join_scripts_write() -> None:
    for script in (PROLOG, EPILOG):
        assert f': "${{GPU_CHECK_SCOPE_FILE:={GPU_CHECK_SCOPE_FILE}}}"' in script.read_text()
    assert gpu_health_settings(GpuHealthConfig())["GPU_CHECK_SCOPE_FILE"] == GPU_CHECK_SCOPE_FILE
    assert "GPU_CHECK_SCOPE" not in gpu_health_settings(GpuHealthConfig())


def test_a_mig_nodesets_host_checks_the_node_and_a_whole_gpu_nodesets_host_the_job() -> None:
    values = config_values("prod")
    _mig(values)
    config = load_config(raw_config(values))
    mig = render_join_script(config.slurm, "gpu-a100", "10.0.0.1")
    whole = render_join_script(config.slurm, "gpu-h100", "10.0.0.1")
    assert f"echo node > {GPU_CHECK_SCOPE_FILE}" in mig and f"echo job > {GPU_CHECK_SCOPE_FILE}" in whole
    cpu = render_join_script(config.slurm, "cpu-bm", "10.0.0.1")
    assert GPU_CHECK_SCOPE_FILE not in cpu


def test_a_mig_strategy_leaves_the_rendered_prolog_in_job_scope(tmp_path: Path) -> None:
    """Fails on main: there the prolog and epilog of every nodeset said GPU_CHECK_SCOPE=node."""
    stack = run_stack_file(write_variant(tmp_path, "prod", _mig), "prod")
    for name, script in (("slurm-prolog-scripts", "10-gpu-check.sh"), ("slurm-epilog-scripts", "10-gpu-check.sh")):
        text = one(stack, "ConfigMap", "slurm", name)["data"][script]
        assert re.findall(r'^: "\$\{GPU_CHECK_SCOPE:=(\w+)\}"$', text, re.M) == ["job"]
        assert f': "${{GPU_CHECK_SCOPE_FILE:={GPU_CHECK_SCOPE_FILE}}}"' in text


def _scope_file(tmp_path: Path, text: str | None) -> dict[str, str]:
    path = tmp_path / "gpu-check-scope"
    if text is not None:
        path.write_text(text)
    return {"GPU_CHECK_SCOPE_FILE": str(path), "GPU_CHECK_DRAIN": "no"}


def test_the_node_scope_file_turns_the_prolog_to_every_gpu_of_the_node(tmp_path: Path) -> None:
    # A MIG job's SLURM_JOB_GPUS (41) names a MIG device: in job scope it is not a GPU index of the node.
    (tmp_path / "node").mkdir()
    node = run_script(PROLOG, "healthy-h100x8.txt", tmp_path / "node", gpus="41", env=_scope_file(tmp_path, "node\n"))
    assert node.returncode == 0, node.stderr
    (tmp_path / "none").mkdir()
    job = run_script(PROLOG, "healthy-h100x8.txt", tmp_path / "none", gpus="41", env=_scope_file(tmp_path / "none", None))
    assert job.returncode == 1


def test_without_the_file_a_gpu_in_mig_mode_is_refused_for_a_whole_gpu_job(tmp_path: Path) -> None:
    result = run_script(PROLOG, H100_MIG, tmp_path, gpus="0", env=_scope_file(tmp_path, "job"))
    assert result.returncode == 1
    assert "MIG mode is enabled, but the job was given the whole GPU" in result.stderr


def test_the_epilog_leaves_a_mig_node_alone_and_a_bad_scope_file_fails(tmp_path: Path) -> None:
    result = run_script(EPILOG, "healthy-h100x8.txt", tmp_path, gpus="41", env=_scope_file(tmp_path, "node"))
    assert result.returncode == 0, result.stderr
    bad = run_script(EPILOG, "healthy-h100x8.txt", tmp_path, gpus="0", env=_scope_file(tmp_path, "mig"))
    assert bad.returncode == 1
    assert f"{tmp_path}/gpu-check-scope says 'mig' (expected job or node)" in bad.stderr
