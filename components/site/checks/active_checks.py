"""Cross-layer: the scheduled active GPU checks (`gpu.activeChecks`) against the Slurm nodesets and Pyxis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ground.base import ProblemCollector
from ...layers.gpu.config import ActiveCheck
from ...layers.slurm.accounts import known_names, resolve_associations

if TYPE_CHECKING:
    from ..model import PlatformModel as PlatformConfig


def check_active_checks(config: PlatformConfig, problems: ProblemCollector) -> None:
    """The checks name GPU nodesets, once each; an all-reduce has enough nodes and a floor it can reach; names are
    unique; a DaemonSet nodeset names its pool (its nodes, and so what a check holds, come from it); they read their
    results from accounting; the user they run as may reserve, drain and resume."""
    if config.gpu.active_checks and not config.slurm.accounting.enabled:
        problems.add(
            ["gpu", "activeChecks"],
            "the checks read their jobs' results from accounting (sacct): set slurm.accounting.enabled to true",
        )
    check_user(config, problems)
    seen: set[str] = set()
    for index, check in enumerate(config.gpu.active_checks):
        where: list[str | int] = ["gpu", "activeChecks", index]
        if check.name in seen:
            problems.add([*where, "name"], f"{check.name!r} is used by another check")
        seen.add(check.name)
        for ni, nodeset in enumerate(check.nodesets):
            _check_nodeset(config, check, [*where, "nodesets", ni], nodeset, problems)
        if check.kind == "dcgm-diag" and not (config.gpu.operator.dcgm and config.gpu.operator.enabled is not False):
            problems.add(
                [*where, "kind"],
                "dcgm-diag asks the node's DCGM host engine, which the GPU Operator runs: set gpu.operator.dcgm (and do "
                "not switch the operator off)",
            )
        if check.kind in ("nccl-allreduce", "dcgm-diag") and config.slurm.pyxis is False:
            problems.add(
                [*where, "kind"],
                f"{check.kind} starts its image (nccl-tests, DCGM) with srun --container-image, which needs slurm.pyxis",
            )


def allreduce_floor_problem(config: PlatformConfig, nodeset: str, floor: float, *, required: bool) -> str | None:
    """Why an all-reduce across nodes of `nodeset` cannot reach `floor` GB/s of bus bandwidth, or None.

    Without SHARP (in-network reduction: hpcforge sets up no SHARP plugin), each byte a node reduces crosses its NICs: a
    ring all-reduce over n ranks sends and receives 2(n-1)/n of the data per rank, which nccl-tests reports as the bus
    bandwidth (nccl-tests doc/PERFORMANCE.md "busBw"), so across nodes it cannot exceed a node's NIC bandwidth, the sum
    of the declared port rates (`rdma.pools[].nics[].rateGbps`). `required`: a floor with no declared rates to bound it
    is a problem too (an active check drains what fails it)."""
    spec = config.slurm.nodeset(nodeset)
    rdma = config.active_rdma
    nics = rdma.pool_nics(spec.pool) if rdma is not None and spec is not None else None
    ceiling = nics.bandwidth_gbytes if nics is not None else None
    if ceiling is None:
        if not required:
            return None
        pool = spec.pool if spec is not None else None
        return f"the all-reduce across nodes of nodeset {nodeset!r} cannot be bounded: " + (
            f"declare the link rate of every RDMA port of pool {pool!r} (rdma.pools[].nics[].rateGbps)"
            if nics is not None
            else f"pool {pool!r} has no RDMA NICs declared (rdma.pools), so its node bandwidth is not known"
        )
    if floor > ceiling:
        rates = " + ".join(f"{nic.rate_gbps}" for nic in nics.nics) if nics is not None else ""
        return (
            f"{floor:g} GB/s cannot be reached across nodes of nodeset {nodeset!r}: without SHARP an all-reduce's bus "
            f"bandwidth is at most a node's NIC bandwidth, ({rates}) Gb/s = {ceiling:g} GB/s "
            f"(rdma.pools[].nics[].rateGbps of pool {spec.pool if spec is not None else None!r}); set at most {ceiling:g}"
        )
    return None


def check_evidence_floor(config: PlatformConfig, problems: ProblemCollector) -> None:
    """`gpu.evidence.minBusBandwidth` is reachable on the nodesets of the evidence's partition, where their NICs'
    rates are declared."""
    evidence = config.gpu.evidence
    name = evidence.partition or next(
        (
            p.name
            for p in config.slurm.partitions
            if p.nodesets and all((ns := config.slurm.nodeset(n)) is not None and ns.gpus is not None for n in p.nodesets)
        ),
        None,
    )
    partition = next((p for p in config.slurm.partitions if p.name == name), None)
    if not (config.evidence.enabled and evidence.enabled) or partition is None:
        return
    for nodeset in partition.nodesets:
        problem = allreduce_floor_problem(config, nodeset, evidence.min_bus_bandwidth, required=False)
        if problem:
            problems.add(["gpu", "evidence", "minBusBandwidth"], problem)
            return


def check_user(config: PlatformConfig, problems: ProblemCollector) -> None:
    """`gpu.activeCheckUser` is a directory user whose Slurm association has adminLevel Administrator."""
    user = config.gpu.active_check_user
    if user is None:
        return
    where: list[str | int] = ["gpu", "activeCheckUser"]
    users = {u.name for u in config.directory.users}
    if user not in users:
        problems.add(where, f"unknown directory user {user!r} (known: {known_names(users)})")
        return
    accounts = config.slurm.accounts
    entry = resolve_associations(accounts, config.directory).get(user) if accounts is not None else None
    if entry is None:
        problems.add(where, f"{user!r} has no Slurm association: list it in slurm.accounts.users with a defaultAccount")
    elif entry["admin_level"] != "Administrator":
        problems.add(
            where,
            f"{user!r} has adminLevel {entry['admin_level']} in slurm.accounts.users; the checks drain and resume nodes, "
            "which Slurm allows Administrator only",
        )


def ib_link_problem(config: PlatformConfig, nodeset: str, min_rate: int) -> tuple[list[str | int], str] | None:
    """Why an ib-link check cannot judge `nodeset`'s links (the key under the check, and what is wrong), or None: it
    judges the RDMA devices its pool declares (every NIC's `hca`: a slurmd pod sees all of its host's), and a floor
    above their declared rate can never pass."""
    spec = config.slurm.nodeset(nodeset)
    rdma = config.active_rdma
    nics = rdma.pool_nics(spec.pool) if rdma is not None and spec is not None else None
    if spec is not None and spec.pool is None:
        return (
            ["nodesets"],
            f"ib-link judges the RDMA devices a nodeset's pool declares (rdma.pools[].nics[].hca), and nodeset {nodeset!r} "
            "has no pool (its nodes are bare-metal hosts only): leave it out of this check",
        )
    if nics is None or not all(nic.hca for nic in nics.nics):
        return (
            ["nodesets"],
            f"ib-link judges the RDMA devices of pool {spec.pool if spec is not None else ''!r} (nodeset {nodeset!r}): "
            + (
                "name every NIC's device there (rdma.pools[].nics[].hca, e.g. mlx5_0)"
                if nics is not None
                else "the pool has no RDMA NICs declared (rdma.pools)"
            ),
        )
    slower = [nic for nic in nics.nics if nic.rate_gbps is not None and nic.rate_gbps < min_rate]
    if slower:
        return (
            ["minRateGbps"],
            f"{min_rate} Gb/s is above the declared rate of {slower[0].hca} ({slower[0].rate_gbps} Gb/s, "
            f"rdma.pools[].nics[].rateGbps of pool {spec.pool if spec is not None else ''!r}): every run would fail it",
        )
    return None


def _check_nodeset(
    config: PlatformConfig, check: ActiveCheck, at: list[str | int], nodeset: str, problems: ProblemCollector
) -> None:
    """One nodeset of a check (`at`: its key): a GPU nodeset, with enough nodes for an all-reduce, its nodes known, and
    what the check judges there reachable and declared."""
    gpu_nodesets = {ns.name: ns for ns in config.slurm.nodesets if ns.gpus is not None}
    where = at[:-2]
    if nodeset not in gpu_nodesets:
        problems.add(
            at,
            f"{nodeset!r} is not a GPU nodeset (GPU nodesets: {', '.join(sorted(gpu_nodesets)) or 'none'})",
        )
    elif check.kind == "nccl-allreduce" and gpu_nodesets[nodeset].replicas < check.nodes:
        problems.add(
            [*where, "nodes"],
            f"an all-reduce across {check.nodes} nodes, but nodeset {nodeset!r} has {gpu_nodesets[nodeset].replicas}",
        )
    elif gpu_nodesets[nodeset].scaling_mode == "DaemonSet" and gpu_nodesets[nodeset].pool is None:
        problems.add(
            at,
            f"nodeset {nodeset!r} is a DaemonSet without a node pool: the nodes the check holds, and what it "
            "costs, are not known; give the nodeset its pool",
        )
    if check.kind == "nccl-allreduce" and nodeset in gpu_nodesets:
        floor_problem = allreduce_floor_problem(config, nodeset, check.min_bus_bandwidth, required=True)
        if floor_problem:
            problems.add([*where, "minBusBandwidth"], floor_problem)
    if check.kind == "ib-link" and nodeset in gpu_nodesets:
        link_problem = ib_link_problem(config, nodeset, check.min_rate_gbps)
        if link_problem:
            problems.add([*where, *link_problem[0]], link_problem[1])
