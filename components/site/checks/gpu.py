"""Cross-layer: what the GPU data plane needs of Slurm, the node pools and the operator; the views of it that
several layers share (whether the GPU Operator runs, the GPU pools' taints, the job-mapping directory)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ground.base import ProblemCollector
from ...ground.gpus import MIG_PROFILE
from ...layers.gpu.config import GPU_CHECK_KILL_AFTER_SECONDS
from .active_checks import check_active_checks, check_evidence_floor

if TYPE_CHECKING:
    from ..model import PlatformModel


def gpu_operator_enabled(config: PlatformModel) -> bool:
    """Whether the GPU Operator is deployed: as configured, else whenever a pool or a nodeset has GPUs."""
    if config.gpu.operator.enabled is not None:
        return config.gpu.operator.enabled
    return config.slurm.has_gpus or any(pool.gpus_per_node for pool in config.node_pools)


def gpu_pool_taints(config: PlatformModel) -> list[str]:
    """Taint keys of the node pools with GPUs (`gpusPerNode`, or the pool of a GPU nodeset), sorted."""
    gpu_pools = {pool.name for pool in config.node_pools if pool.gpus_per_node} | {
        ns.pool for ns in config.slurm.nodesets if ns.gpus is not None and ns.pool
    }
    return sorted({taint for pool in config.node_pools if pool.name in gpu_pools for taint in pool.taints})


def gpu_job_mapping_dir(config: PlatformModel) -> str | None:
    """The host directory where the GPU prolog records which Slurm job uses which GPU for dcgm-exporter, or None when
    nothing reads it (no operator or no dcgm-exporter), it is switched off, or GPUs are split by MIG (a job's
    SLURM_JOB_GPUS are then MIG devices, whose GPU instance ids the prolog does not know)."""
    return config.gpu.operator.job_mapping_dir if gpu_operator_enabled(config) else None


def dcgm_scraped(config: PlatformModel) -> bool:
    """Whether the site's monitoring scrapes GPU metrics: dcgm-exporter runs wherever the GPU Operator does (Slurm GPU
    nodesets or GPU pools for Kueue)."""
    return config.monitored and gpu_operator_enabled(config) and config.gpu.operator.dcgm_exporter


def gpus_in_nvml_order(config: PlatformModel) -> bool:
    """Whether every GPU nodeset's GRES is autodetected with NVML (so Slurm numbers GPUs in NVML's order)."""
    return all(ns.gpus.autodetect == "nvml" for ns in config.slurm.nodesets if ns.gpus is not None)


def check_gpu_data_plane(config: PlatformModel, problems: ProblemCollector) -> None:  # noqa: PLR0912 (one branch per cross-reference checked, each with its own message)
    """Cross-layer checks: the device plugin exists for GPU nodesets, MIG layouts name GPU pools and fit the strategy."""
    operator = config.gpu.operator
    enabled = gpu_operator_enabled(config)
    where: list[str | int] = ["gpu", "operator"]
    if config.slurm.has_gpus and enabled and not operator.device_plugin:
        problems.add([*where, "devicePlugin"], "nodesets request GPUs: the device plugin must run to offer them")
    # Only pods need the device plugin: a GPU nodeset that only bare-metal hosts join (`replicas: 0`) runs slurmd on
    # the hosts, with the driver of their boot image, so a services-only cluster may leave the operator off.
    gpu_pods = [f"nodeset {ns.name!r}" for ns in config.slurm.nodesets if ns.gpus is not None and ns.has_pods]
    gpu_pods += [f"login set {login.name!r}" for login in config.slurm.login_sets() if login.gpus is not None]
    if gpu_pods and not enabled:
        problems.add(
            [*where, "enabled"],
            f"nodesets request GPUs in pods ({', '.join(gpu_pods)}), which nothing offers without the GPU Operator's"
            " device plugin (only nodesets that bare-metal hosts alone join, replicas: 0, run without it)",
        )
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
    check_evidence_floor(config, problems)
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
