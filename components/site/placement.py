"""Where each nodeset and login pool runs: the node-pool maps the Slurm layer takes (node selectors, tolerated
taints, the pool of each nodeset), resolved once from the config rather than in the Platform that wires the layers."""

from __future__ import annotations

from collections import Counter

from .model import PlatformModel


def node_selectors(config: PlatformModel) -> dict[str, dict[str, str]]:
    """Each nodeset's node selector: its node pool's labels, then its own nodeSelector entries."""
    selectors: dict[str, dict[str, str]] = {}
    for nodeset in config.slurm.nodesets:
        pool = config.node_pool(nodeset.pool) if nodeset.pool else None
        selectors[nodeset.name] = {**(dict(pool.labels) if pool else {}), **nodeset.node_selector}
    return selectors


def nodeset_pools(config: PlatformModel) -> dict[str, str]:
    """The node pool of each nodeset that names one."""
    return {ns.name: ns.pool for ns in config.slurm.nodesets if ns.pool}


def nodeset_pool_taints(config: PlatformModel) -> dict[str, tuple[str, ...]]:
    """The taint keys of each nodeset's node pool, which its pods tolerate."""
    return {ns.name: pool.taints for ns in config.slurm.nodesets if ns.pool and (pool := config.node_pool(ns.pool)) is not None}


def login_node_selectors(config: PlatformModel) -> dict[str, dict[str, str]]:
    """The node selector of each login pool that names a node pool: that pool's labels."""
    return {
        lg.name: dict(pool.labels)
        for lg in config.slurm.login_sets()
        if lg.node_pool and (pool := config.node_pool(lg.node_pool)) is not None
    }


def login_pool_taints(config: PlatformModel) -> dict[str, tuple[str, ...]]:
    """The taint keys of each login pool's node pool, which its pods tolerate."""
    return {
        lg.name: pool.taints
        for lg in config.slurm.login_sets()
        if lg.node_pool and (pool := config.node_pool(lg.node_pool)) is not None
    }


def pool_labels(config: PlatformModel) -> dict[str, dict[str, str]]:
    """Every node pool's labels, by pool name (what the RDMA layer selects a fabric's nodes by)."""
    return {pool.name: pool.labels for pool in config.node_pools}


def pool_taints(config: PlatformModel) -> dict[str, tuple[str, ...]]:
    """Every node pool's taint keys, by pool name (what the RDMA layer's daemons tolerate)."""
    return {pool.name: pool.taints for pool in config.node_pools}


def nodeset_nodes(config: PlatformModel) -> dict[str, int]:
    """How many Slurm nodes each nodeset has, as far as the config says: a StatefulSet nodeset's replicas, a DaemonSet
    nodeset's pool (one pod on each of its nodes; 0 without a pool: its nodes are not known), plus the bare-metal hosts
    of the inventory that join it (`provisioning.hosts[].nodeset`)."""
    hosts = config.provisioning.hosts if config.provisioning is not None else ()
    joining = Counter(host.nodeset for host in hosts if host.nodeset is not None)  # one pass, not one per nodeset
    counts: dict[str, int] = {}
    for nodeset in config.slurm.nodesets:
        if nodeset.scaling_mode == "DaemonSet":
            pool = config.node_pool(nodeset.pool) if nodeset.pool else None
            pods = pool.nodes if pool is not None else 0
        else:
            pods = nodeset.replicas
        counts[nodeset.name] = pods + joining[nodeset.name]
    return counts
