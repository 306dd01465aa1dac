"""Prolog/epilog script settings (pure): config values written into a script's settings block.

A script that takes settings has one block::

    # --- settings (hpcforge:gpu.health; the Slurm layer rewrites this block) ---
    : "${GPU_CHECK_MAX_VOLATILE_UNCORRECTED_ECC:=0}"
    # --- end settings ---

Each `: "${NAME:=default}"` line whose NAME has a configured value gets that value as its default;
the rest of the script is left as it is. A script without the block is returned unchanged. Values
are restricted to characters that need no shell quoting, so no setting can change the script.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..gpu.config import GPU_CHECK_KILL_AFTER_SECONDS, GpuHealthConfig

BEGIN = "# --- settings ("
END = "# --- end settings ---"
_LINE = re.compile(r'^: "\$\{(?P<name>[A-Z][A-Z0-9_]*):=(?P<value>[^}"]*)\}"$')
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9._/-]*$")


GPU_CHECK_SCOPE_FILE = "/etc/hpcforge/gpu-check-scope"
"""Where a node says which GPUs its prolog and epilog check (`job`, or `node` on a MIG nodeset's host, whose jobs' GPU
indexes are MIG devices): the prolog and epilog are one ConfigMap for every nodeset, so the scope is the node's
(scripts/slurm/lib/gpu-common.sh `read_scope_file`; written by `face.render_join_script`)."""


def gpu_health_settings(
    health: GpuHealthConfig, *, nvml_order: bool = False, job_mapping_dir: str | None = None
) -> dict[str, str]:
    """The GPU prolog/epilog settings (`GPU_CHECK_*`) from `hpcforge:gpu.health`. Which GPUs they check is the node's
    (GPU_CHECK_SCOPE_FILE), not a setting: a MIG strategy for some pools leaves the job-scope checks of the others.

    `nvml_order`: every GPU nodeset autodetects with NVML, so Slurm orders a node's GPUs as NVML (PCI bus) does and
    `SLURM_JOB_GPUS` indexes are nvidia-smi's; otherwise Slurm orders them by device file name and the scripts map
    the indexes through the files' minor numbers (scripts/slurm/prolog/10-gpu-check.sh, with Slurm's sources).

    `job_mapping_dir`: where the prolog records the job's GPUs for dcgm-exporter (`GPU_CHECK_JOB_MAP_DIR`; empty: not
    recorded)."""

    def policy(flag: bool) -> str:
        return "fail" if flag else "ignore"

    return {
        "GPU_CHECK_NVIDIA_SMI": health.nvidia_smi,
        "GPU_CHECK_MAX_VOLATILE_UNCORRECTED_ECC": str(health.max_volatile_uncorrected_ecc),
        "GPU_CHECK_PENDING_ROW_REMAP": policy(health.fail_on_pending_row_remap),
        "GPU_CHECK_ROW_REMAP_FAILURE": policy(health.fail_on_row_remap_failure),
        "GPU_CHECK_PENDING_PAGE_RETIREMENT": policy(health.fail_on_pending_page_retirement),
        "GPU_CHECK_DCGM_DIAG_LEVEL": str(health.dcgm_diag_level),
        "GPU_CHECK_TIMEOUT_SECONDS": str(health.timeout_seconds),
        "GPU_CHECK_KILL_AFTER_SECONDS": str(GPU_CHECK_KILL_AFTER_SECONDS),
        "GPU_CHECK_MAX_MEMORY_USED_MIB": str(health.epilog_max_memory_used_mib),
        "GPU_CHECK_SETTLE_SECONDS": str(health.epilog_settle_seconds),
        "GPU_CHECK_DRAIN": "yes" if health.drain else "no",
        "GPU_CHECK_SCOPE_FILE": GPU_CHECK_SCOPE_FILE,
        "GPU_CHECK_INDEX_ORDER": "nvml" if nvml_order else "file",
        "GPU_CHECK_JOB_MAP_DIR": job_mapping_dir or "",
    }


def apply_settings(text: str, settings: Mapping[str, str]) -> str:
    """`text` with the defaults of its settings block replaced by `settings` (names it does not use are ignored)."""
    for name, value in settings.items():
        if not _SAFE_VALUE.match(value):
            raise ValueError(f"script setting {name}={value!r}: only letters, digits, '.', '_', '/' and '-' are allowed")
    lines = text.split("\n")
    begin = next((i for i, line in enumerate(lines) if line.startswith(BEGIN)), None)
    if begin is None:
        return text
    end = next((i for i in range(begin + 1, len(lines)) if lines[i] == END), None)
    if end is None:
        raise ValueError("the script's settings block has no end line ('# --- end settings ---')")
    for i in range(begin + 1, end):
        match = _LINE.match(lines[i])
        if match is None:
            raise ValueError(f"settings block line {i + 1} is not of the form ': \"${{NAME:=value}}\"': {lines[i]!r}")
        name = match["name"]
        if name in settings:
            lines[i] = f': "${{{name}:={settings[name]}}}"'
    return "\n".join(lines)
