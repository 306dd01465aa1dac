"""GPU data plane settings (`hpcforge:gpu`): the thresholds of the GPU prolog/epilog health checks."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, Field

from .active_checks import ActiveCheck, check_active_checks
from .base import K8sName, ProblemCollector, StrictModel
from .slurm import MIG_PROFILE
from .storage import AbsolutePath

if TYPE_CHECKING:
    from .root import PlatformConfig


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
    active_checks: tuple[ActiveCheck, ...] = ()
    """Scheduled active checks of GPU nodesets (DCGM diagnostic, NCCL all-reduce across nodes, InfiniBand/RoCE links),
    run as Slurm jobs in a maintenance reservation by a CronJob each; a failing node is drained with a reason naming
    the check and resumed when a later run passes (components/config/active_checks.py, docs/layers/gpu.md)."""


def gpu_operator_enabled(config: PlatformConfig) -> bool:
    """Whether the GPU Operator is deployed: as configured, else whenever a pool or a nodeset has GPUs."""
    if config.gpu.operator.enabled is not None:
        return config.gpu.operator.enabled
    return config.slurm.has_gpus or any(pool.gpus_per_node for pool in config.node_pools)


def gpu_pool_taints(config: PlatformConfig) -> list[str]:
    """Taint keys of the node pools with GPUs (`gpusPerNode`, or the pool of a GPU nodeset), sorted."""
    gpu_pools = {pool.name for pool in config.node_pools if pool.gpus_per_node} | {
        ns.pool for ns in config.slurm.nodesets if ns.gpus is not None and ns.pool
    }
    return sorted({taint for pool in config.node_pools if pool.name in gpu_pools for taint in pool.taints})


def gpu_job_mapping_dir(config: PlatformConfig) -> str | None:
    """The host directory where the GPU prolog records which Slurm job uses which GPU for dcgm-exporter, or None when
    nothing reads it (no operator or no dcgm-exporter), it is switched off, or GPUs are split by MIG (a job's
    SLURM_JOB_GPUS are then MIG devices, whose GPU instance ids the prolog does not know)."""
    return config.gpu.operator.job_mapping_dir if gpu_operator_enabled(config) else None


def check_gpu_data_plane(config: PlatformConfig, problems: ProblemCollector) -> None:
    """Cross-layer checks: the device plugin exists for GPU nodesets, MIG layouts name GPU pools and fit the strategy."""
    operator = config.gpu.operator
    enabled = gpu_operator_enabled(config)
    where: list[str | int] = ["gpu", "operator"]
    if config.slurm.has_gpus and enabled and not operator.device_plugin:
        problems.add([*where, "devicePlugin"], "nodesets request GPUs: the device plugin must run to offer them")
    if config.slurm.has_gpus and not enabled:
        problems.add([*where, "enabled"], "nodesets request GPUs, which nothing offers without the GPU Operator's device plugin")
    for pool_name, layout in operator.mig_profiles.items():
        pool = config.node_pool(pool_name)
        if pool is None or pool.gpus_per_node is None:
            problems.add([*where, "migProfiles", pool_name], f"{pool_name!r} is not a node pool with GPUs")
        if operator.mig_strategy == "none":
            problems.add([*where, "migStrategy"], f"MIG profiles are set for {pool_name!r}: choose 'single' or 'mixed'")
        for profile, count in layout.items():
            if not MIG_PROFILE.fullmatch(profile) or count < 1:
                problems.add([*where, "migProfiles", pool_name, profile], f"{profile}: {count} is not a MIG profile and count")
        # A layout applies to each GPU of the pool ("devices: all"), and a MIG GPU has 7 compute slices at most (NVIDIA
        # MIG user guide: up to seven GPU instances; A30: 4). The `<N>g` of a profile is the slices it takes, so a
        # layout over 7 cannot be applied: the MIG manager fails on every node. The layouts captured on real GPUs
        # (tests/fixtures/nvidia-smi/captures/) take exactly 7.
        slices = sum(
            int(profile.split("g.", 1)[0]) * count for profile, count in layout.items() if MIG_PROFILE.fullmatch(profile)
        )
        if slices > 7:
            problems.add(
                [*where, "migProfiles", pool_name],
                f"the layout takes {slices} compute slices of each GPU, which has 7 at most",
            )
    if config.evidence.enabled and config.gpu.evidence.enabled and config.slurm.has_gpus and config.slurm.pyxis is False:
        problems.add(
            ["gpu", "evidence", "enabled"],
            "the NCCL evidence starts its image with srun --container-image, which needs slurm.pyxis"
            " (turn it on, or turn this check off)",
        )
    check_active_checks(config, problems)
    health = config.gpu.health
    gpu_nodesets = [ns for ns in config.slurm.nodesets if ns.gpus is not None]
    # The Slinky slurmd images install no DCGM: in pods `dcgmi diag` is skipped, so a level asks for nothing. It acts
    # only where a GPU nodeset has bare-metal hosts (their own slurmd, with DCGM installed there).
    if health.dcgm_diag_level > 0 and gpu_nodesets and all(ns.has_pods for ns in gpu_nodesets):
        problems.add(
            ["gpu", "health", "dcgmDiagLevel"],
            f"level {health.dcgm_diag_level} would do nothing: every GPU nodeset runs slurmd in pods, whose image has no "
            "dcgmi; run the DCGM diagnostic as a scheduled active check (gpu.activeChecks) and set this to 0",
        )
    timeout = config.slurm.controller.timeouts.prolog_epilog
    if timeout is not None and gpu_nodesets and timeout <= health.timeout_seconds + GPU_CHECK_KILL_AFTER_SECONDS:
        problems.add(
            ["slurm", "controller", "timeouts", "prologEpilog"],
            f"{timeout}s leaves the GPU prolog no time to report a hung nvidia-smi itself: it gives up after "
            f"gpu.health.timeoutSeconds + {GPU_CHECK_KILL_AFTER_SECONDS} = {health.timeout_seconds + GPU_CHECK_KILL_AFTER_SECONDS}s; "
            "set more",
        )
    partition = config.gpu.evidence.partition
    if partition is not None and partition not in {p.name for p in config.slurm.partitions}:
        problems.add(["gpu", "evidence", "partition"], f"unknown partition {partition!r}")
    for index, ns in enumerate(config.slurm.nodesets):
        if ns.gpus is None:
            continue
        path: list[str | int] = ["slurm", "nodesets", index, "gpus"]
        mixed_resource = ns.gpus.resource.startswith("nvidia.com/mig-")
        if ns.gpus.is_mig and operator.mig_strategy == "none":
            problems.add([*path, "type"], f"nodeset {ns.name!r} asks for MIG devices but gpu.operator.migStrategy is 'none'")
        elif mixed_resource and operator.mig_strategy != "mixed":
            problems.add([*path, "resource"], f"{ns.gpus.resource} is only offered with gpu.operator.migStrategy 'mixed'")
        elif ns.gpus.is_mig and not mixed_resource and operator.mig_strategy != "single":
            problems.add(
                [*path, "resource"], f"MIG devices as nvidia.com/gpu need migStrategy 'single' (or use {ns.gpus.resource})"
            )
        layout = operator.mig_profiles.get(ns.pool or "", {})
        if ns.gpus.is_mig and ns.pool is not None and ns.gpus.type not in layout:
            problems.add([*path, "type"], f"node pool {ns.pool!r} has no {ns.gpus.type} MIG devices in gpu.operator.migProfiles")
        # The MIG manager splits every GPU of such a pool ("devices: all"), so it has no whole GPU to offer. And slurmd
        # would count MIG devices as whole GPUs: with AutoDetect=nvml a configured type matches any detected device
        # whose name contains it, case-insensitively (Slurm gres_gpu.c _find_type_in_gres_list, xstrcasestr, 22.05 to
        # 25.11), and `h100` is part of `nvidia_h100_80gb_hbm3_1g.10gb`.
        if layout and not ns.gpus.is_mig:
            problems.add(
                [*path, "type"],
                f"node pool {ns.pool!r} splits every GPU into MIG devices (gpu.operator.migProfiles): nodeset {ns.name!r} "
                f"must ask for one of its profiles ({', '.join(sorted(layout))}), not whole {ns.gpus.type!r} GPUs",
            )
