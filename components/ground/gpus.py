"""The GPUs a nodeset or a login pool asks for (`gpus:`): type, count, the device-plugin resource, MIG profiles,
the GRES files and cores; also what a node pool's `gpusPerNode` says."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from .base import ProblemCollector, StrictModel

# A MIG profile as the GPU Operator names it (`1g.10gb`, `3g.40gb`, `1g.10gb+me`); Slurm takes it as a GRES type.
MIG_PROFILE = re.compile(r"^[1-7]g\.[0-9]+gb(\+me)?$")


_DEVICE_FILES = re.compile(r"^/dev/[A-Za-z0-9_/-]+(\[[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*\])?$")


_CORE_LIST = re.compile(r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$")


def _gpu_type(value: str) -> str:
    if re.fullmatch(r"[a-z0-9_]+", value) or MIG_PROFILE.fullmatch(value):
        return value
    raise ValueError(
        f"{value!r} is not a GPU type: lowercase letters, digits and '_' (e.g. h100), or a MIG profile (e.g. 1g.10gb)"
    )


def _core_list(value: str) -> str:
    if not _CORE_LIST.match(value):
        raise ValueError(f"{value!r} is not a core list (e.g. 0-55 or 0-27,56-83)")
    return value


class GpuSpec(StrictModel):
    """GPUs as hardware: what the device plugin offers and what Slurm's gres.conf describes, from one place."""

    type: Annotated[str, AfterValidator(_gpu_type)]
    """GRES type as Slurm sees it (e.g. a100, h100), or a MIG profile (e.g. `1g.10gb`) where MIG is configured."""
    count: int = Field(ge=1, le=64)
    """GPUs (or MIG devices) per node: the device-plugin limit AND the GRES count."""
    resource: str = Field(default="nvidia.com/gpu", pattern=r"^nvidia\.com/(gpu|mig-[1-7]g\.[0-9]+gb(\+me)?)$")
    """Device-plugin resource that provides them: `nvidia.com/gpu`, or `nvidia.com/mig-<profile>` with the mixed MIG
    strategy."""
    files: str | None = None
    """Device files of the GPUs in gres.conf (`File=`); default `/dev/nvidia[0-<count-1>]`. Refused with `autodetect`.
    A slurmd pod must take every GPU of its node (`count` = the pool's `gpusPerNode`): it runs privileged and sees all
    of them, so Slurm would use the lowest-numbered ones whichever the device plugin gave it."""
    cores: tuple[Annotated[str, AfterValidator(_core_list)], ...] = ()
    """Core affinity per GPU (`Cores=` in gres.conf), e.g. `0-55` for GPUs near the first socket; empty: no affinity.
    One entry per device file of `files`, in the files' order (`/dev/nvidia0`, `/dev/nvidia1`...), NOT in the order of
    `nvidia-smi topo -m`'s rows, which are nvidia-smi's (PCI) indexes: where minor numbers do not follow the PCI order
    the two differ. components/layers/slurm/gres_cores.py `cores_by_device_file` computes the list from a node's
    `topo -m` and `-q` ("Minor Number"). Refused with `autodetect`."""
    autodetect: Literal["off", "nvml", "nvidia"] = "off"
    """`AutoDetect=` in gres.conf: `off` describes the devices from this spec; `nvidia` lets slurmd discover whole GPUs
    from /proc/driver/nvidia (no NVML needed; not MIG devices); `nvml` also discovers MIG devices, but only where
    slurmd was built with NVML: not in the pinned Slinky slurmd image (refused for nodesets with pods), only on
    bare-metal hosts with their own slurmd (`replicas: 0`)."""

    @property
    def is_mig(self) -> bool:
        return MIG_PROFILE.fullmatch(self.type) is not None

    def device_files(self) -> str:
        return self.files or (f"/dev/nvidia[0-{self.count - 1}]" if self.count > 1 else "/dev/nvidia0")

    @field_validator("files")
    @classmethod
    def _files(cls, value: str | None) -> str | None:
        if value is not None and not _DEVICE_FILES.match(value):
            raise ValueError(f"{value!r} is not a device file expression (e.g. /dev/nvidia[0-7])")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> GpuSpec:
        problems = ProblemCollector()
        if self.cores and len(self.cores) != self.count:
            problems.add(["cores"], f"{len(self.cores)} core list(s) for {self.count} GPU(s): give one per GPU")
        mig_resource = self.resource.startswith("nvidia.com/mig-")
        if mig_resource and self.resource != f"nvidia.com/mig-{self.type}":
            problems.add(["resource"], f"{self.resource} does not provide MIG devices of type {self.type!r}")
        if self.is_mig and self.autodetect == "off" and self.files is None:
            problems.add(
                ["autodetect"],
                f"MIG devices ({self.type}) have no /dev/nvidiaN files: set autodetect: nvml or give their files",
            )
        if self.is_mig and self.autodetect == "nvidia":
            # Slurm doc/html/gres.shtml: "AutoDetect=nvidia ... doesn't detect MIGs or NVlinks" (gpu/nvidia lists
            # /proc/driver/nvidia/gpus, whole GPUs only).
            problems.add(["autodetect"], f"AutoDetect=nvidia does not detect MIG devices ({self.type}): use nvml")
        if self.autodetect != "off" and (self.files is not None or self.cores):
            given = " and ".join(name for name, value in (("files", self.files), ("cores", self.cores)) if value)
            problems.add(
                ["autodetect"],
                f"autodetect: {self.autodetect} lets slurmd discover the devices (gres.conf gets only AutoDetect=), so {given} would be "
                "ignored; give one or the other",
            )
        if mig_resource and not self.is_mig:
            problems.add(["type"], f"{self.resource} provides MIG devices: the type must be their profile")
        problems.raise_if_any()
        return self
