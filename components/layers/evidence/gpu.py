"""GPU deployment evidence: the device plugin offers every GPU nodeset's resource on enough nodes, an NCCL all-reduce across GPU nodes through Slurm, held against a bus-bandwidth floor,
and an RDMA device check (devices present, memlock unlimited) on a GPU node. Run from a login node by
scripts/evidence/nccl-allreduce.sh and scripts/evidence/rdma-devices.sh (the evidence layer's pattern)."""

from __future__ import annotations

from ...versions import Images
from ..rdma.face import rdma_resource
from ..slurm.face import nccl_settings
from .config import SiteConfig


def gpu_partition(config: SiteConfig) -> str | None:
    """The partition of the GPU checks: configured, else the first whose nodesets all have GPUs."""
    evidence = config.gpu.evidence
    if evidence.partition is not None:
        return evidence.partition
    for partition in config.slurm.partitions:
        nodesets = [config.slurm.nodeset(name) for name in partition.nodesets]
        if nodesets and all(ns is not None and ns.gpus is not None for ns in nodesets):
            return partition.name
    return None


def gpu_check_environments(config: SiteConfig, base: dict[str, str]) -> list[tuple[str, str, dict[str, str]]]:
    """(name, script, environment) of the GPU checks this stack runs (pure: tested directly)."""
    evidence = config.gpu.evidence
    if not evidence.enabled:
        return []
    offered = []
    for ns in config.slurm.nodesets:
        pool = config.node_pool(ns.pool) if ns.pool else None
        if ns.gpus is None or pool is None or not ns.replicas:
            continue
        selector = ",".join(f"{key}={value}" for key, value in sorted(pool.labels.items()))
        offered.append(f"{ns.name}|{selector}|{ns.gpus.resource}|{ns.gpus.count}|{ns.replicas}")
    allocatable = [("gpu-allocatable", "gpu-allocatable.sh", {"GPU_NODESETS": " ".join(offered)})] if offered else []
    partition = gpu_partition(config)
    if partition is None:
        return allocatable
    nodesets = [config.slurm.nodeset(name) for name in next(p for p in config.slurm.partitions if p.name == partition).nodesets]
    gpus = min(ns.gpus.count for ns in nodesets if ns is not None and ns.gpus is not None)
    common = {**base, "SLURM_LOGIN": config.slurm.login.name, "GPU_PARTITION": partition}
    checks = [
        (
            "nccl-allreduce",
            "nccl-allreduce.sh",
            {
                **common,
                "NCCL_NODES": str(evidence.nodes),
                "NCCL_GPUS_PER_NODE": str(gpus),
                "NCCL_IMAGE": evidence.container_image or Images.NCCL_TESTS.ref,
                "NCCL_MESSAGE_SIZE": evidence.message_size,
                "NCCL_MIN_BUSBW": f"{evidence.min_bus_bandwidth:g}",
            },
        )
    ]
    rdma = config.active_rdma
    if rdma is not None:
        pools = {ns.pool for ns in nodesets if ns is not None and ns.pool}
        fabrics = min((len(rdma.fabrics_of(pool)) for pool in pools), default=0)
        if fabrics:
            partition_pools = [ns.pool for ns in nodesets if ns is not None and ns.pool]
            resources = sorted({rdma_resource(rdma, f) for pool in partition_pools for f in rdma.fabrics_of(pool)})
            hcas = {nccl_settings(rdma, pool).get("NCCL_IB_HCA", "") for pool in partition_pools}
            env = {**common, "RDMA_MIN_DEVICES": str(fabrics), "RDMA_RESOURCES": " ".join(resources)}
            if len(hcas) == 1 and "" not in hcas:
                env["RDMA_NCCL_IB_HCA"] = hcas.pop()
            checks.insert(0, ("rdma-devices", "rdma-devices.sh", env))
    return allocatable + checks
