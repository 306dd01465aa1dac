"""Cross-layer: the scheduled active GPU checks (`gpu.activeChecks`) against the Slurm nodesets and Pyxis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ground.base import ProblemCollector

if TYPE_CHECKING:
    from ..model import PlatformModel as PlatformConfig


def check_active_checks(config: PlatformConfig, problems: ProblemCollector) -> None:
    """The checks name GPU nodesets, once each; an all-reduce has enough nodes; names are unique."""
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
