"""Cross-layer: the scheduled active GPU checks (`gpu.activeChecks`) against the Slurm nodesets and Pyxis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ground.base import ProblemCollector
from ...layers.slurm.accounts import known_names, resolve_associations

if TYPE_CHECKING:
    from ..model import PlatformModel as PlatformConfig


def check_active_checks(config: PlatformConfig, problems: ProblemCollector) -> None:
    """The checks name GPU nodesets, once each; an all-reduce has enough nodes; names are unique; they read their
    results from accounting; the user they run as may reserve, drain and resume."""
    if config.gpu.active_checks and not config.slurm.accounting.enabled:
        problems.add(
            ["gpu", "activeChecks"],
            "the checks read their jobs' results from accounting (sacct): set slurm.accounting.enabled to true",
        )
    check_user(config, problems)
    gpu_nodesets = {ns.name: ns for ns in config.slurm.nodesets if ns.gpus is not None}
    seen: set[str] = set()
    for index, check in enumerate(config.gpu.active_checks):
        where: list[str | int] = ["gpu", "activeChecks", index]
        if check.name in seen:
            problems.add([*where, "name"], f"{check.name!r} is used by another check")
        seen.add(check.name)
        for ni, nodeset in enumerate(check.nodesets):
            if nodeset not in gpu_nodesets:
                problems.add(
                    [*where, "nodesets", ni],
                    f"{nodeset!r} is not a GPU nodeset (GPU nodesets: {', '.join(sorted(gpu_nodesets)) or 'none'})",
                )
            elif check.kind == "nccl-allreduce" and gpu_nodesets[nodeset].replicas < check.nodes:
                problems.add(
                    [*where, "nodes"],
                    f"an all-reduce across {check.nodes} nodes, but nodeset {nodeset!r} has {gpu_nodesets[nodeset].replicas}",
                )
        if check.kind in ("nccl-allreduce", "dcgm-diag") and config.slurm.pyxis is False:
            problems.add(
                [*where, "kind"],
                f"{check.kind} starts its image (nccl-tests, DCGM) with srun --container-image, which needs slurm.pyxis",
            )


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
