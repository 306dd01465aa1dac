"""Cross-layer: the RDMA fabrics against the node pools (address room, GPU rails)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ground.base import ProblemCollector

if TYPE_CHECKING:
    from ..model import PlatformModel


def check_rdma(config: PlatformModel, problems: ProblemCollector) -> None:
    """Cross-layer: RDMA pools exist, and the rails name GPUs the pool has."""
    rdma = config.rdma
    if rdma is None or not rdma.enabled:
        return
    for fi, fabric in enumerate(rdma.fabrics):
        if fabric.ipam != "nv-ipam":
            continue
        pools = [p for p in (config.node_pool(name) for name in rdma.pools_of(fabric.name)) if p is not None]
        nodes = sum(pool.nodes for pool in pools)
        if nodes > fabric.node_blocks:
            problems.add(
                ["rdma", "fabrics", fi, "range"],
                f"{fabric.range} has room for {fabric.node_blocks} block(s) of {fabric.addresses_per_node}"
                f" (addressesPerNode; nv-ipam hands out {fabric.usable_addresses} of its {fabric.addresses} addresses),"
                f" too few for one on each of the {nodes} node(s) of {', '.join(p.name for p in pools)}",
            )
    for index, pool_nics in enumerate(rdma.pools):
        pool = config.node_pool(pool_nics.pool)
        if pool is None:
            problems.add(["rdma", "pools", index, "pool"], f"unknown node pool {pool_nics.pool!r}")
            continue
        count = pool.gpus_per_node.count if pool.gpus_per_node else 0
        for ni, nic in enumerate(pool_nics.nics):
            for gpu in nic.gpus:
                if gpu >= count:
                    problems.add(
                        ["rdma", "pools", index, "nics", ni, "gpus"],
                        f"GPU {gpu} does not exist on node pool {pool.name!r} ({count} GPU(s) per node)",
                    )
