"""Slurm partitions as admins write them, and the preemption between them."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from ...ground.base import ProblemCollector, Quantity, StrictModel, duplicates, quantity_value
from .slurm_types import SlurmName, SlurmTime, config_key

PreemptMode = Literal["OFF", "CANCEL", "REQUEUE", "SUSPEND"]


class Preemption(StrictModel):
    """Cluster-wide preemption (`PreemptType`, `PreemptMode`); partitions may override the mode."""

    type: Literal["preempt/none", "preempt/partition_prio", "preempt/qos"] = "preempt/none"
    """`PreemptType`: `preempt/partition_prio` lets jobs of a higher `priorityTier` partition preempt lower ones."""
    mode: PreemptMode = "OFF"
    """Cluster-wide `PreemptMode`: what happens to a preempted job (`OFF` only with `preempt/none`)."""
    gang: bool = False
    """Add `GANG` to the cluster-wide `PreemptMode` (gang scheduling; required for `SUSPEND`)."""

    @model_validator(mode="after")
    def _consistent(self) -> Preemption:
        # slurm.conf(5), PreemptMode: SUSPEND "always needs the GANG option to be specified at the cluster level".
        if self.mode == "SUSPEND" and not self.gang:
            raise ValueError("mode SUSPEND needs gang: true (Slurm resumes suspended jobs through the gang scheduler)")
        if self.type == "preempt/none" and self.mode != "OFF":
            raise ValueError(f"mode {self.mode} does nothing with type preempt/none; set a preempt type or mode OFF")
        if self.type != "preempt/none" and self.mode == "OFF":
            raise ValueError(f"type {self.type} with mode OFF would never preempt; choose CANCEL, REQUEUE or SUSPEND")
        return self

    def slurm_mode(self) -> str:
        return f"{self.mode},GANG" if self.gang else self.mode


def _oversubscribe(value: str) -> str:
    if not re.fullmatch(r"(NO|EXCLUSIVE|YES(:[0-9]+)?|FORCE(:[0-9]+)?)", value):
        raise ValueError(f"{value!r} is not a Slurm OverSubscribe value (NO, EXCLUSIVE, YES[:n], FORCE[:n])")
    return value


Oversubscribe = Annotated[str, AfterValidator(_oversubscribe)]


_UNIX_NAME = r"^[a-z_][a-z0-9_-]{0,31}$"
_ACCOUNT_NAME = r"^[a-z0-9_][a-z0-9_.-]{0,63}$"


class PartitionConfig(StrictModel):
    name: SlurmName
    """`PartitionName`."""
    nodesets: tuple[str, ...] = ()
    """Nodesets in the partition (`Nodes=`); `nodesets` and `features` together must name at least one."""
    features: tuple[Annotated[str, AfterValidator(config_key)], ...] = ()
    """Node features whose nodes are in the partition: each becomes a Slurm `NodeSet=<partition>_<feature>
    Feature=<feature>` line in `Nodes=`, so a partition can take the part of a nodeset whose hosts carry a
    feature (e.g. bare-metal hosts with `features: [bigmem]`). A feature that no nodeset and no host carries
    is refused."""
    default: bool = False
    """The default partition (`Default=YES`); at most one."""
    max_time: SlurmTime = "UNLIMITED"
    """`MaxTime`."""
    default_time: SlurmTime | None = None
    """`DefaultTime` (null: not written, `MaxTime` applies)."""
    max_nodes: int | None = Field(default=None, ge=1, le=4294967293)
    """`MaxNodes`: the most nodes one job may use in the partition, 1 to 4294967293 (32-bit in slurm.conf(5);
    null: unlimited)."""
    allow_groups: tuple[Annotated[str, Field(pattern=_UNIX_NAME)], ...] = ()
    """`AllowGroups`: only members of these POSIX groups may submit (empty: everyone). Each must be a
    group of `hpcforge:directory.groups` (slurmctld resolves them through SSSD)."""
    allow_accounts: tuple[Annotated[str, Field(pattern=_ACCOUNT_NAME)], ...] = ()
    """`AllowAccounts`: only these Slurm accounts may submit (empty: every account)."""
    def_mem_per_cpu: Quantity | None = None
    """`DefMemPerCPU`: memory a job gets per allocated CPU when it asks for none (e.g. `4Gi`; written in MiB)."""
    def_mem_per_gpu: Quantity | None = None
    """`DefMemPerGPU`: memory a job gets per allocated GPU when it asks for none (written in MiB); only for
    partitions with GPU nodesets."""
    preempt_mode: PreemptMode | None = None
    """`PreemptMode` of the partition's jobs when a higher `priorityTier` partition needs their nodes
    (needs `slurm.controller.preemption.type: preempt/partition_prio`; `SUSPEND` also needs the cluster mode
    to include `GANG`). Null: the cluster-wide mode."""
    oversubscribe: Oversubscribe = "NO"
    """`OverSubscribe`."""
    qos: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]+$")
    """Partition QOS: one of `slurm.accounts.qos` (or `normal`)."""
    priority_tier: int = Field(default=1, ge=0, le=65533)
    """`PriorityTier`."""

    @model_validator(mode="after")
    def _some_nodes(self) -> PartitionConfig:
        problems = ProblemCollector()
        if not self.nodesets and not self.features:
            problems.add(["nodesets"], f"partition {self.name!r}: give at least one nodeset or feature")
        if self.def_mem_per_cpu is not None and quantity_value(self.def_mem_per_cpu) < 2**20:
            problems.add(["defMemPerCpu"], f"{self.def_mem_per_cpu} is less than 1Mi (Slurm counts memory in MiB)")
        if self.def_mem_per_gpu is not None and quantity_value(self.def_mem_per_gpu) < 2**20:
            problems.add(["defMemPerGpu"], f"{self.def_mem_per_gpu} is less than 1Mi (Slurm counts memory in MiB)")
        for key, values in (
            ("features", self.features),
            ("allowGroups", self.allow_groups),
            ("allowAccounts", self.allow_accounts),
        ):
            for name in duplicates(values):
                problems.add([key], f"{name!r} is listed twice")
        problems.raise_if_any()
        return self

    def feature_nodeset(self, feature: str) -> str:
        """Name of the Slurm `NodeSet=` that selects the partition's nodes with `feature`."""
        return f"{self.name}_{feature}"
