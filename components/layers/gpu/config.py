"""GPU data plane settings (`hpcforge:gpu`): the thresholds of the GPU prolog/epilog health checks, and the scheduled
active GPU health checks (`hpcforge:gpu.activeChecks`): what runs, where and when.

Per-job checks (the GPU prolog and epilog) see one job's GPUs for seconds; an active check takes whole nodes out of
service on a schedule and tests what a job cannot: a DCGM diagnostic at a level, an NCCL all-reduce across nodes
over the RDMA fabric, the InfiniBand/RoCE links. Each runs as Slurm jobs in a maintenance reservation; a node that
fails is drained with a reason naming the check (`active-check <name>: ...`), and resumed when a later run passes
(only nodes the check drained itself). See docs/layers/gpu.md "Active checks". The Slurm layer runs them
(components/layers/slurm/active_checks.py, with what each costs: `weekly_gpu_hours`).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from ...ground.base import K8sName, StrictModel
from ..storage.config import AbsolutePath

CheckKind = Literal["dcgm-diag", "nccl-allreduce", "ib-link"]

_CRON_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))
_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")


def cron_field(text: str, low: int, high: int) -> set[int]:
    """The values one cron field (`*`, `5`, `1-5`, `*/15`, `1,3,5`, `0-30/10`) matches; ValueError otherwise."""
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else None
        if step_text and step is None:
            raise ValueError(f"{part!r}: the step must be a positive number")
        if body == "*":
            start, end = low, high
        elif re.fullmatch(r"[0-9]+", body):
            start = end = int(body)
            if step is not None:
                end = high
        elif re.fullmatch(r"[0-9]+-[0-9]+", body):
            start, end = (int(x) for x in body.split("-"))
        else:
            raise ValueError(f"{part!r} is not a cron field value (*, N, N-M, with /STEP, comma-separated)")
        if not low <= start <= end <= high:
            raise ValueError(f"{part!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step or 1))
    return values


def parse_cron(schedule: str) -> list[set[int]]:
    """The five fields of a cron schedule (Kubernetes CronJob syntax without @-macros), as sets of values."""
    fields = schedule.split()
    if len(fields) != 5:
        raise ValueError(f"{schedule!r} is not a cron schedule (five fields: minute hour day-of-month month day-of-week)")
    parsed = []
    for text, (name, low, high) in zip(fields, _CRON_FIELDS, strict=True):
        try:
            parsed.append(cron_field(text, low, high))
        except ValueError as error:
            raise ValueError(f"{schedule!r}: {name}: {error}") from None
    if 7 in parsed[4]:
        parsed[4] = (parsed[4] - {7}) | {0}  # both 0 and 7 are Sunday
    return parsed


WEEKS_PER_YEAR = 365.2425 / 7


def _month_share(day: int) -> float:
    """Share of months that have this day of the month (29: 11.25 of 12, counting leap Februaries; 30: 11; 31: 7)."""
    return {29: 11.25 / 12, 30: 11 / 12, 31: 7 / 12}.get(day, 1.0)


def runs_per_week(schedule: str) -> float:
    """How often a cron schedule fires in an average week. A day-of-month restriction counts its days over the year
    (`0 3 1 * *`: 12 runs a year, 12 / 52.18 a week); with both day-of-month and day-of-week restricted cron fires
    when either matches, counted here as the weekdays plus the month days that fall on other weekdays."""
    minute, hour, dom, month, dow = parse_cron(schedule)
    per_day = len(minute) * len(hour)
    month_share = len(month) / 12
    dom_days_per_week = sum(_month_share(day) for day in dom) * 12 / WEEKS_PER_YEAR
    if len(dom) == 31 and len(dow) == 7:
        days = 7.0
    elif len(dom) == 31:
        days = float(len(dow))
    elif len(dow) == 7:
        days = dom_days_per_week
    else:
        days = len(dow) + dom_days_per_week * (7 - len(dow)) / 7
    return per_day * days * month_share


class ActiveCheck(StrictModel):
    """One scheduled check: a kind, the GPU nodesets it tests, when, and its thresholds."""

    name: str
    """Check name (lowercase letters, digits, `-`, at most 32): in the drain reason (`active-check <name>: ...`),
    the CronJob (`gpu-check-<name>`) and the Slurm reservation (`active-check-<name>`)."""
    kind: CheckKind
    """`dcgm-diag` (`dcgmi diag -r <dcgmLevel>` on each node, against that node's DCGM host engine of the GPU
    Operator: needs `gpu.operator.dcgm`), `nccl-allreduce` (nccl-tests' all_reduce_perf across `nodes` nodes, the bus
    bandwidth against `minBusBandwidth`, at most the nodes' declared NIC bandwidth), `ib-link` (every port of the RDMA
    devices the nodeset's pool declares, `rdma.pools[].nics[].hca`, ACTIVE, LinkUp, at `minRateGbps` or more, read
    from sysfs as ibstat does)."""
    nodesets: tuple[str, ...] = Field(min_length=1)
    """GPU nodesets it tests (every node of each)."""
    schedule: str
    """When, in cron syntax (Kubernetes CronJob, UTC unless the cluster says otherwise), e.g. `0 3 * * 0`."""
    time_limit_minutes: int = Field(default=30, ge=1, le=1440)
    """Slurm time limit of each check job, and the length of the maintenance reservation: what the check costs."""
    dcgm_level: int = Field(default=2, ge=1, le=4)
    """`dcgm-diag`: the `dcgmi diag -r` level (1 quick, 2 medium, 3 long, 4 extended)."""
    nodes: int = Field(default=2, ge=2, le=64)
    """`nccl-allreduce`: nodes per all-reduce (the nodeset's nodes are tested in groups of this many)."""
    min_bus_bandwidth: float = Field(default=50.0, gt=0, le=100_000)
    """`nccl-allreduce`: the lowest acceptable "Avg bus bandwidth" in GB/s; at most what the nodes' NICs carry (the
    sum of `rdma.pools[].nics[].rateGbps` / 8, which must be declared): without SHARP an all-reduce across nodes
    cannot exceed it."""
    message_size: str = Field(default="1G", pattern=r"^[0-9]+[KMG]?$")
    """`nccl-allreduce`: message size (`-b`/`-e`)."""
    min_rate_gbps: int = Field(default=100, ge=1, le=3200)
    """`ib-link`: the lowest acceptable port rate in Gb/s (sysfs `ports/<n>/rate`, what `ibstat` prints as "Rate:");
    at most the ports' declared `rateGbps`."""
    qos: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")
    """Slurm QOS of the check jobs (e.g. a high-priority `maintenance` QOS declared in slurm.accounts); null: none."""
    action: Literal["report", "drain"] = "report"
    """What a node that fails the check gets: `report` (the run's Job fails and names the node; no node is changed:
    the first stage of a rollout) or `drain` (drained with the check's reason, resumed when a later run passes).
    Only a check that ran and judged the hardware failing drains; one that could not judge is reported either way.
    docs/layers/gpu.md "Active checks: a rollout in stages"."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"{value!r}: lowercase letters, digits and '-', at most 32, starting and ending alphanumeric")
        return value

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        parse_cron(value)
        return value


def _plain_path(value: str) -> str:
    # The value goes into a shell assignment in the scripts: keep it to characters that need no quoting.
    if not value or any(not (ch.isalnum() or ch in "._/-") for ch in value):
        raise ValueError(f"{value!r} is not a plain command name or path (letters, digits, '.', '_', '/', '-')")
    return value


def _image_ref(value: str) -> str:
    if not re.fullmatch(r"[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)+:[A-Za-z0-9._-]+", value):
        raise ValueError(f"{value!r} is not a pinned image reference (registry/path:tag)")
    return value


class GpuHealthConfig(StrictModel):
    """Thresholds of `scripts/slurm/prolog/10-gpu-check.sh` and `scripts/slurm/epilog/10-gpu-check.sh`.

    The Slurm layer writes them into the scripts' settings block when it puts them into the prolog
    and epilog ConfigMaps; a failing check drains the node with the GPU and the reason."""

    max_volatile_uncorrected_ecc: int = Field(default=0, ge=0, le=1_000_000)
    """Prolog: volatile uncorrectable ECC errors a GPU may have (`ecc.errors.uncorrected.volatile.total`); 0 to
    1,000,000."""
    fail_on_pending_row_remap: bool = True
    """Prolog: drain when a row remapping is pending (`remapped_rows.pending`; the GPU needs a reset)."""
    fail_on_row_remap_failure: bool = True
    """Prolog: drain when a row remapping failed (`remapped_rows.failure`; the GPU needs replacing)."""
    fail_on_pending_page_retirement: bool = True
    """Prolog: drain when a page retirement is pending (`retired_pages.pending`; not reported on H100)."""
    dcgm_diag_level: int = Field(default=0, ge=0, le=3)
    """Prolog: run `dcgmi diag -r <level>` on the job's GPUs where `dcgmi` is installed (0: never; level 1 takes
    seconds, 2 about a minute, 3 many minutes). The Slinky slurmd images install no DCGM, so in slurmd pods it would
    be skipped: a level above 0 is refused unless a GPU nodeset has bare-metal hosts only (with DCGM installed there).
    For pods, schedule the diagnostic as an active check (`gpu.activeChecks`, kind `dcgm-diag`)."""
    timeout_seconds: int = Field(default=60, ge=5, le=900)
    """Time limit of each `nvidia-smi` / `dcgmi` call; a GPU that does not answer in time drains the node."""
    epilog_max_memory_used_mib: int = Field(default=1024, ge=0, le=1_048_576)
    """Epilog: GPU memory (MiB) that may still be in use after a job without draining the node; 0 to 1048576
    (1 TiB, more than any GPU has)."""
    epilog_settle_seconds: int = Field(default=10, ge=0, le=300)
    """Epilog: how long to wait for the job's GPU processes to exit before draining."""
    drain: bool = True
    """Drain the node (`scontrol update State=DRAIN Reason=...`) with the failing GPU and reason, not only Slurm's
    generic "Prolog error"."""
    nvidia_smi: Annotated[str, AfterValidator(_plain_path)] = "nvidia-smi"
    """The `nvidia-smi` command the checks run (a name on PATH or an absolute path)."""


# --- NVIDIA GPU Operator -------------------------------------------------------------------------------------------

MigStrategy = Literal["none", "single", "mixed"]

GPU_CHECK_KILL_AFTER_SECONDS = 5
"""Seconds between SIGTERM and SIGKILL of a GPU check's nvidia-smi (`timeout -k`, scripts/slurm/lib/gpu-common.sh)."""


class GpuDriverConfig(StrictModel):
    """The NVIDIA kernel driver on GPU nodes."""

    managed: bool = False
    """`false`: the driver is preinstalled in the hosts' images (Grendel boot images); `true`: the GPU Operator installs
    it as a container on each GPU node."""
    version: Annotated[str, AfterValidator(_plain_path)] | None = None
    """Driver version the operator installs (`managed: true`): a tag of nvcr.io/nvidia/driver; default: the one pinned
    in components/versions.py (the chart's default, 595.91.07)."""


class GpuOperatorConfig(StrictModel):
    """The NVIDIA GPU Operator (chart gpu-operator, pinned in components/versions.py): what it runs on GPU nodes."""

    enabled: bool | None = None
    """Deploy the operator; default (null): whenever a node pool or a Slurm nodeset has GPUs."""
    driver: GpuDriverConfig = Field(default_factory=GpuDriverConfig)
    """The kernel driver: preinstalled (default) or managed by the operator."""
    toolkit: bool = True
    """Run the NVIDIA Container Toolkit (configures containerd for GPU containers)."""
    device_plugin: bool = True
    """Run the device plugin that offers `nvidia.com/gpu` (required while nodesets request GPUs)."""
    gpu_feature_discovery: bool = True
    """Run GPU Feature Discovery (node labels such as nvidia.com/gpu.product)."""
    dcgm: bool = True
    """Run the standalone DCGM host engine (what `dcgmi diag` in the prolog and dcgm-exporter talk to)."""
    dcgm_exporter: bool = True
    """Run dcgm-exporter (GPU metrics on port 9400 for the observability layer to scrape)."""
    mig_strategy: MigStrategy = "none"
    """How MIG devices are offered: `none` (no MIG), `single` (as nvidia.com/gpu) or `mixed` (as
    nvidia.com/mig-<profile>)."""
    mig_profiles: dict[K8sName, dict[str, int]] = Field(default_factory=dict)
    """MIG layout per node pool: pool name -> {profile: devices per GPU}, e.g. `{gpu-a100: {1g.10gb: 7}}`. The MIG
    manager applies it to nodes labelled `nvidia.com/mig.config=hpcforge-<pool>`."""
    time_slicing_replicas: int = Field(default=0, ge=0, le=64)
    """Time-slicing: share each GPU between this many pods (0: off, the default; Slurm GPUs are never shared)."""
    hpc_job_mapping: bool = True
    """Label GPU metrics with the Slurm job using the GPU (dcgm-exporter's `hpc_job` label): the GPU prolog writes the
    job id to a file named after each of its GPUs in `hpcJobMappingDir` on the node, the epilog removes it, and
    dcgm-exporter reads the directory (its HPC job mapping). Whole GPUs only: with a MIG strategy nothing is written."""
    # An absolute path that also goes into the scripts' settings (no quoting needed).
    hpc_job_mapping_dir: Annotated[AbsolutePath, AfterValidator(_plain_path)] = "/var/lib/dcgm-exporter/job-mapping"
    """Host directory of the job mapping files (dcgm-exporter's default); mounted into GPU slurmd pods and
    dcgm-exporter."""

    @property
    def job_mapping_dir(self) -> str | None:
        """`hpc_job_mapping_dir` where the operator's dcgm-exporter reads it and the prolog can write it (see
        `hpc_job_mapping`), else None."""
        if self.dcgm_exporter and self.hpc_job_mapping and self.mig_strategy == "none":
            return self.hpc_job_mapping_dir
        return None


class GpuEvidenceConfig(StrictModel):
    """GPU deployment evidence (with `hpcforge:evidence.enabled`): an NCCL all-reduce across GPU nodes through Slurm,
    and an RDMA device check, both run from a login node."""

    enabled: bool = True
    """Run the GPU checks when evidence is on and a partition has GPU nodes."""
    partition: str | None = None
    """Partition of the checks (default: the first partition whose nodesets all have GPUs)."""
    nodes: int = Field(default=2, ge=2, le=64)
    """GPU nodes the all-reduce spans."""
    min_bus_bandwidth: float = Field(default=50.0, gt=0, le=100_000)
    """Floor of the all-reduce's average bus bandwidth in GB/s (nccl-tests' "Avg bus bandwidth"); below it the
    check fails the update. Above 0, at most 100000."""
    message_size: str = Field(default="1G", pattern=r"^[0-9]+[KMG]?$")
    """Message size of the all-reduce (nccl-tests `-b`/`-e`)."""
    container_image: Annotated[str, AfterValidator(_image_ref)] | None = None
    """Image with nccl-tests that srun starts through Pyxis (`--container-image`); default: the one pinned in
    components/versions.py. Needs `hpcforge:slurm.pyxis` (on by default where nodesets have GPUs)."""


class GpuConfig(StrictModel):
    """The GPU data plane."""

    health: GpuHealthConfig = Field(default_factory=GpuHealthConfig)
    """GPU health checks in the Slurm prolog and epilog."""
    operator: GpuOperatorConfig = Field(default_factory=GpuOperatorConfig)
    """The NVIDIA GPU Operator: driver, container toolkit, device plugin, feature discovery, DCGM, MIG."""
    evidence: GpuEvidenceConfig = Field(default_factory=GpuEvidenceConfig)
    """NCCL all-reduce and RDMA device checks after `pulumi up`."""
    active_check_user: str | None = None
    """The directory user the active checks run as (e.g. a service user `hpcforge-check` with no password and no ssh
    key), with a Slurm association and adminLevel Administrator in `slurm.accounts.users`: creating the reservation
    needs Operator, draining and resuming a node Administrator (Slurm 26.05.3 src/slurmctld/proc_req.c). The check's
    pod then holds only a JWT for this user, from Slinky's Token custom resource, instead of slurm.key, which can sign
    a credential for any user; slurmctld and slurmdbd are given the user's passwd line (they look a JWT's user up
    locally). Null: the checks run as root with slurm.key (docs/layers/gpu.md "Active checks: who runs them")."""
    active_checks: tuple[ActiveCheck, ...] = ()
    """Scheduled active checks of GPU nodesets (DCGM diagnostic, NCCL all-reduce across nodes, InfiniBand/RoCE links),
    run as Slurm jobs in a maintenance reservation by a CronJob each; a failing node is reported, or with `action:
    drain` drained with a reason naming the check and resumed when a later run passes
    (components/layers/slurm/active_checks.py, scripts/gpu/active_checks.py, docs/layers/gpu.md)."""
