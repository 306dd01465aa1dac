"""GPU data plane settings (`hpcforge:gpu`): the thresholds of the GPU prolog/epilog health checks."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from .base import StrictModel


def _plain_path(value: str) -> str:
    # The value goes into a shell assignment in the scripts: keep it to characters that need no quoting.
    if not value or any(not (ch.isalnum() or ch in "._/-") for ch in value):
        raise ValueError(f"{value!r} is not a plain command name or path (letters, digits, '.', '_', '/', '-')")
    return value


class GpuHealthConfig(StrictModel):
    """Thresholds of `scripts/slurm/prolog/10-gpu-check.sh` and `scripts/slurm/epilog/10-gpu-check.sh`.

    The Slurm layer writes them into the scripts' settings block when it puts them into the prolog
    and epilog ConfigMaps; a failing check drains the node with the GPU and the reason."""

    max_volatile_uncorrected_ecc: int = Field(default=0, ge=0)
    """Prolog: volatile uncorrectable ECC errors a GPU may have (`ecc.errors.uncorrected.volatile.total`)."""
    fail_on_pending_row_remap: bool = True
    """Prolog: drain when a row remapping is pending (`remapped_rows.pending`; the GPU needs a reset)."""
    fail_on_row_remap_failure: bool = True
    """Prolog: drain when a row remapping failed (`remapped_rows.failure`; the GPU needs replacing)."""
    fail_on_pending_page_retirement: bool = True
    """Prolog: drain when a page retirement is pending (`retired_pages.pending`; not reported on H100)."""
    dcgm_diag_level: int = Field(default=0, ge=0, le=3)
    """Prolog: run `dcgmi diag -r <level>` on the job's GPUs where `dcgmi` is installed (0: never; level 1 takes
    seconds, 2 about a minute, 3 many minutes)."""
    timeout_seconds: int = Field(default=60, ge=5, le=900)
    """Time limit of each `nvidia-smi` / `dcgmi` call; a GPU that does not answer in time drains the node."""
    epilog_max_memory_used_mib: int = Field(default=1024, ge=0)
    """Epilog: GPU memory (MiB) that may still be in use after a job without draining the node."""
    epilog_settle_seconds: int = Field(default=10, ge=0, le=300)
    """Epilog: how long to wait for the job's GPU processes to exit before draining."""
    drain: bool = True
    """Drain the node (`scontrol update State=DRAIN Reason=...`) with the failing GPU and reason, not only Slurm's
    generic "Prolog error"."""
    nvidia_smi: Annotated[str, AfterValidator(_plain_path)] = "nvidia-smi"
    """The `nvidia-smi` command the checks run (a name on PATH or an absolute path)."""


class GpuConfig(StrictModel):
    """The GPU data plane."""

    health: GpuHealthConfig = Field(default_factory=GpuHealthConfig)
    """GPU health checks in the Slurm prolog and epilog."""
