"""The Slurm controller's config (`hpcforge:slurm.controller`): scheduling, priorities, timeouts, its service and
the typed slurm.conf settings the Controller custom resource carries."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from ...ground.base import IPv4, K8sName, ProblemCollector, Quantity, StrictModel
from ..storage.config import Storage
from .partitions import Preemption
from .slurm_types import SlurmOption, SlurmTime, SlurmValue, config_key

# slurm.conf(5), Slurm 22.05: the PriorityWeight* values are 32-bit unsigned integers
# (`uint32_t priority_weight_*` in slurm_conf_t); 0xfffffffe and 0xffffffff are NO_VAL and INFINITE
# in slurm/slurm.h, so the largest weight a site can mean is 4294967293.
SLURM_UINT32_MAX = 2**32 - 3
# slurm.conf(5): "may not exceed 65533" (InactiveLimit, KillWait, SlurmctldTimeout, SlurmdTimeout, ...),
# the largest uint16_t below Slurm's 16-bit NO_VAL16/INFINITE16.
SLURM_UINT16_MAX = 65533


AccountingEnforce = Literal["associations", "limits", "nojobs", "nosteps", "qos", "safe", "wckeys"]

# Every slurm.conf parameter `controller_parameters()` (components/layers/slurm/slurm_conf.py) may write, and the
# setting that decides it: `extraParameters` may not repeat one (Slurm would take one of the two values silently).
TYPED_CONTROLLER_PARAMETERS: dict[str, str] = {
    "SchedulerType": "slurm.controller.scheduler.type",
    "SchedulerParameters": "slurm.controller.scheduler.parameters",
    "SelectType": "slurm.controller.select.type",
    "SelectTypeParameters": "slurm.controller.select.parameters",
    "PriorityType": "slurm.controller.priority.type",
    "PriorityDecayHalfLife": "slurm.controller.priority.decayHalfLife",
    "PriorityMaxAge": "slurm.controller.priority.maxAge",
    "PriorityWeightAge": "slurm.controller.priority.weights.age",
    "PriorityWeightFairshare": "slurm.controller.priority.weights.fairshare",
    "PriorityWeightJobSize": "slurm.controller.priority.weights.jobSize",
    "PriorityWeightPartition": "slurm.controller.priority.weights.partition",
    "PriorityWeightQOS": "slurm.controller.priority.weights.qos",
    "PreemptType": "slurm.controller.preemption.type",
    "PreemptMode": "slurm.controller.preemption.mode (and .gang)",
    "AccountingStorageEnforce": "slurm.controller.accountingEnforce",
    "EnforcePartLimits": "slurm.controller.enforcePartLimits",
    "GresTypes": "slurm.nodesets[].gpus (written when a nodeset has GPUs)",
    "AccountingStorageTRES": "slurm.nodesets[].gpus (written when a nodeset has GPUs and accounting is on)",
    "ProctrackType": "none: hpcforge always writes proctrack/cgroup",
    "TaskPlugin": "none: hpcforge always writes task/cgroup,task/affinity",
    "JobAcctGatherType": "none: hpcforge always writes jobacct_gather/cgroup",
    "PrologFlags": "none: hpcforge always writes Contain",
    "NamespaceType": "none: hpcforge always writes namespace/tmpfs (each job its own /dev/shm)",
    "ReturnToService": "slurm.controller.returnToService",
    "SlurmctldTimeout": "slurm.controller.timeouts.slurmctld",
    "SlurmdTimeout": "slurm.controller.timeouts.slurmd",
    "MessageTimeout": "slurm.controller.timeouts.message",
    "KillWait": "slurm.controller.timeouts.killWait",
    "InactiveLimit": "slurm.controller.timeouts.inactiveLimit",
    "MinJobAge": "slurm.controller.timeouts.minJobAge",
    "UnkillableStepTimeout": "slurm.controller.timeouts.unkillableStep",
    "PrologEpilogTimeout": "slurm.controller.timeouts.prologEpilog",
    "SrunPortRange": "slurm.controller.srunPortRange",
    "PropagateResourceLimitsExcept": "hpcforge:rdma (written when RDMA fabrics are declared)",
}


class Scheduler(StrictModel):
    type: Literal["sched/backfill", "sched/builtin"] = "sched/backfill"
    """`SchedulerType`."""
    parameters: tuple[SlurmOption, ...] = ("bf_continue", "bf_interval=30", "bf_max_job_test=1000", "bf_window=10080")
    """`SchedulerParameters`, one item per entry (joined with commas); each item is letters, digits and
    `_ . : = / + -` only."""


class Select(StrictModel):
    type: Literal["select/cons_tres", "select/linear"] = "select/cons_tres"
    """`SelectType`."""
    parameters: tuple[SlurmOption, ...] = ("CR_Core_Memory",)
    """`SelectTypeParameters`, one item per entry (joined with commas; same form as the scheduler's)."""


class PriorityWeights(StrictModel):
    """Multifactor priority weights: integers from 0 to 4294967293 (32-bit, slurm.conf(5))."""

    age: int = Field(default=1000, ge=0, le=SLURM_UINT32_MAX)
    """`PriorityWeightAge`."""
    fairshare: int = Field(default=10000, ge=0, le=SLURM_UINT32_MAX)
    """`PriorityWeightFairshare`."""
    job_size: int = Field(default=0, ge=0, le=SLURM_UINT32_MAX)
    """`PriorityWeightJobSize`."""
    partition: int = Field(default=1000, ge=0, le=SLURM_UINT32_MAX)
    """`PriorityWeightPartition`."""
    qos: int = Field(default=5000, ge=0, le=SLURM_UINT32_MAX)
    """`PriorityWeightQOS`."""


class Priority(StrictModel):
    type: Literal["priority/multifactor", "priority/basic"] = "priority/multifactor"
    """`PriorityType`; the decay, age and weight settings are written only with `priority/multifactor`."""
    decay_half_life: SlurmTime = "7-0"
    """`PriorityDecayHalfLife`."""
    max_age: SlurmTime = "7-0"
    """`PriorityMaxAge`."""
    weights: PriorityWeights = Field(default_factory=PriorityWeights)
    """The multifactor weights (`PriorityWeight*`)."""


class Timeouts(StrictModel):
    slurmctld: int = Field(default=120, ge=10, le=3600)
    """`SlurmctldTimeout` in seconds."""
    slurmd: int = Field(default=300, ge=10, le=3600)
    """`SlurmdTimeout` in seconds."""
    message: int = Field(default=10, ge=1, le=100)
    """`MessageTimeout` in seconds."""
    kill_wait: int = Field(default=30, ge=0, le=600)
    """`KillWait` in seconds."""
    inactive_limit: int = Field(default=0, ge=0, le=SLURM_UINT16_MAX)
    """`InactiveLimit` in seconds, 0 to 65533 (0: unlimited; slurm.conf(5): "may not exceed 65533 seconds")."""
    min_job_age: int = Field(default=300, ge=2, le=SLURM_UINT32_MAX)
    """`MinJobAge` in seconds (2 to 4294967293)."""
    unkillable_step: int = Field(default=120, ge=10, le=600)
    """`UnkillableStepTimeout` in seconds."""
    prolog_epilog: int | None = Field(default=None, ge=10, le=SLURM_UINT16_MAX)
    """`PrologEpilogTimeout` in seconds, 10 to 65533 (null: not set, and Slurm waits for a prolog or epilog for ever,
    slurm.conf(5) of 26.05). When it runs out, slurmd kills the script, requeues the job and drains the node: the
    backstop for a GPU check stuck in the driver beyond what its own time limits can kill. Must leave the GPU check
    time to report a hung nvidia-smi itself (more than `gpu.health.timeoutSeconds` + 5)."""


class ControllerService(StrictModel):
    """A LoadBalancer address for slurmctld, for nodes outside Kubernetes (bare-metal dynamic nodes)."""

    pool: K8sName
    """MetalLB pool of slurmctld's LoadBalancer address."""
    address: IPv4 | None = None
    """Fixed address inside that pool; required when bare-metal hosts join Slurm (their join scripts name it)."""


class ControllerConfig(StrictModel):
    storage: Storage = Field(default_factory=lambda: Storage(size="4Gi"))
    """Volume of slurmctld's save state (job queue, node states). Read at the first deploy only: the operator makes it
    the volume claim template of slurmctld's StatefulSet, which it never updates afterwards (a later change is
    accepted and has no effect)."""
    service: ControllerService | None = None
    """Expose slurmctld (6817) on a MetalLB address; required when bare-metal hosts join Slurm."""
    return_to_service: int = Field(default=2, ge=0, le=2)
    """ReturnToService: 2 lets a node that was DOWN only for not responding return on registration."""
    cpu: Quantity = "1"
    """CPU request of slurmctld."""
    memory: Quantity = "2Gi"
    """Memory request and limit of slurmctld."""
    scheduler: Scheduler = Field(default_factory=Scheduler)
    """Scheduler plugin and its parameters."""
    select: Select = Field(default_factory=Select)
    """Resource selection plugin and its parameters."""
    priority: Priority = Field(default_factory=Priority)
    """Job priority plugin and its weights."""
    accounting_enforce: tuple[AccountingEnforce, ...] = ("associations", "limits", "qos", "safe")
    """`AccountingStorageEnforce` (written only when accounting is enabled)."""
    enforce_part_limits: Literal["ALL", "ANY", "NO"] = "ALL"
    """`EnforcePartLimits`: `ALL` refuses at submit a job that breaks a limit of a partition it asks for (MaxTime,
    MaxNodes, AllowAccounts, AllowGroups, ...: slurm.conf(5) of 26.05); `NO` (Slurm's default) accepts it and leaves
    it pending forever."""
    timeouts: Timeouts = Field(default_factory=Timeouts)
    """Daemon and job timeouts."""
    srun_port_range: tuple[int, int] = (60001, 63000)
    """`SrunPortRange` (first, last): the ports srun listens on for its job steps; the Slurm namespace admits them
    from bare-metal hosts, and pods may reach them on bare-metal hosts."""
    job_port_range: tuple[int, int] = (32768, 59999)
    """Ports (first, last) of the jobs' own TCP traffic between ranks (MPI/PMIx out-of-band wire-up, NCCL
    bootstrap and socket transport, torchrun's rendezvous): the ephemeral port range
    (`net.ipv4.ip_local_port_range`) of the compute pods and, through their join script, of the bare-metal hosts,
    so every port a rank listens on without asking for one is in it; the Slurm namespace opens exactly this range
    between the compute pods and the bare-metal hosts. A job that picks a fixed port (e.g. `MASTER_PORT`) must pick
    it in this range. Must not overlap `srunPortRange`."""
    preemption: Preemption = Field(default_factory=Preemption)
    """Preemption between partitions or QOS (`PreemptType`, `PreemptMode`)."""
    extra_parameters: dict[Annotated[str, AfterValidator(config_key)], SlurmValue] = Field(default_factory=dict)
    """Further slurm.conf parameters (name -> value) that have no typed setting yet: names are letters and
    digits, values one word (no spaces, `#`, quotes or backslashes)."""

    @field_validator("srun_port_range", "job_port_range")
    @classmethod
    def _port_range(cls, value: tuple[int, int]) -> tuple[int, int]:
        first, last = value
        if not 1024 < first <= last <= 65535:
            raise ValueError(f"{first}-{last} is not a port range above 1024 (first <= last <= 65535)")
        return value

    @model_validator(mode="after")
    def _extra_not_typed(self) -> ControllerConfig:
        problems = ProblemCollector()
        typed = {name.lower(): name for name in TYPED_CONTROLLER_PARAMETERS}
        for key in self.extra_parameters:
            name = typed.get(key.lower())  # slurm.conf parameter names are case-insensitive
            if name is not None:
                problems.add(
                    ["extraParameters", key],
                    f"{name} is a typed setting that hpcforge writes itself (set by {TYPED_CONTROLLER_PARAMETERS[name]}):"
                    " remove it from extraParameters",
                )
        problems.raise_if_any()
        return self

    @model_validator(mode="after")
    def _job_ports_apart_from_srun(self) -> ControllerConfig:
        (job_first, job_last), (srun_first, srun_last) = self.job_port_range, self.srun_port_range
        if job_first <= srun_last and srun_first <= job_last:
            problems = ProblemCollector()
            problems.add(
                ["jobPortRange"],
                f"{job_first}-{job_last} overlaps srunPortRange {srun_first}-{srun_last}: srun inside a job would"
                " compete with the ranks for its ports",
            )
            problems.raise_if_any()
        return self
