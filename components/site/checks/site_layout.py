"""Cross-section checks of the site layout: topology tags of hosts, partition features and group limits.

These need more than the `slurm` section (the bare-metal inventory, the directory's groups), so the
root `PlatformConfig` runs them; each problem names the key that is wrong.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from ...ground.base import ProblemCollector
from ...layers.slurm.topology import expand_all

if TYPE_CHECKING:
    from ...ground.hosts import Host
    from ..model import PlatformModel


def check_site_layout(config: PlatformModel, problems: ProblemCollector) -> None:
    _check_topology(config, problems)
    _check_partition_features(config, problems)
    _check_partition_groups(config, problems)
    _check_host_gres(config, problems)
    _check_reservation_users(config, problems)


def _hosts(config: PlatformModel) -> tuple[Host, ...]:
    return config.provisioning.hosts if config.provisioning is not None else ()


def _check_topology(config: PlatformModel, problems: ProblemCollector) -> None:  # noqa: PLR0912 (one branch per cross-reference checked, each with its own message)
    topology = config.slurm.topology
    hosts = _hosts(config)
    if topology is None:
        for index, host in enumerate(hosts):
            for key in ("switch", "block"):
                if getattr(host, key) is not None:
                    problems.add(["provisioning", "hosts", index, key], f"host {host.name!r}: no slurm.topology to place it in")
        return
    leaves = set(topology.leaves())
    blocks = {b.name for b in topology.blocks}
    explicit_leaf = {node: sw.name for sw in topology.switches for node in expand_all(sw.nodes)}
    explicit_block = {node: b.name for b in topology.blocks for node in expand_all(b.nodes)}
    filled_leaves = {sw.name for sw in topology.switches if sw.nodes} | {n.switch for n in topology.kubernetes_nodes if n.switch}
    filled_blocks = {b.name for b in topology.blocks if b.nodes} | {n.block for n in topology.kubernetes_nodes if n.block}
    for index, host in enumerate(hosts):
        # The problem's key and words built only for a problem (100,000 hosts).
        if (host.switch or host.block) and host.nodeset is None:
            problems.add(
                ["provisioning", "hosts", index, "switch" if host.switch else "block"],
                f"host {host.name!r} is in no nodeset: it is not a Slurm node",
            )
            continue
        if host.nodeset is None:
            continue
        if host.switch is None:
            if host.name not in explicit_leaf:
                problems.add(
                    ["provisioning", "hosts", index, "switch"],
                    f"host {host.name!r} joins Slurm but is on no leaf switch of slurm.topology (every node must be in exactly one leaf)",
                )
        elif host.switch not in leaves:
            known = ", ".join(sorted(leaves))
            problems.add(
                ["provisioning", "hosts", index, "switch"],
                f"host {host.name!r}: {host.switch!r} is not a leaf switch of slurm.topology (leaves: {known})",
            )
        elif host.name in explicit_leaf and explicit_leaf[host.name] != host.switch:
            problems.add(
                ["provisioning", "hosts", index, "switch"],
                f"host {host.name!r} is on leaf {host.switch!r} and listed on leaf {explicit_leaf[host.name]!r}",
            )
        else:
            filled_leaves.add(host.switch)
        if host.block is not None:
            if host.block not in blocks:
                problems.add(["provisioning", "hosts", index, "block"], f"host {host.name!r}: unknown block {host.block!r}")
            elif host.name in explicit_block and explicit_block[host.name] != host.block:
                problems.add(
                    ["provisioning", "hosts", index, "block"],
                    f"host {host.name!r} is in block {host.block!r} and listed in {explicit_block[host.name]!r}",
                )
            else:
                filled_blocks.add(host.block)
    for index, sw in enumerate(topology.switches):
        if not sw.switches and sw.name not in filled_leaves:
            problems.add(
                ["slurm", "topology", "switches", index],
                f"switch {sw.name!r} is empty: no child switch, node, tagged host or Kubernetes node",
            )
    for index, block in enumerate(topology.blocks):
        if block.name not in filled_blocks:
            problems.add(["slurm", "topology", "blocks", index], f"block {block.name!r} is empty")


def _check_partition_features(config: PlatformModel, problems: ProblemCollector) -> None:
    carried: set[str] = set()
    for ns in config.slurm.nodesets:
        carried |= {ns.name, *ns.features}
    carried.update(itertools.chain.from_iterable(host.features for host in _hosts(config) if host.nodeset is not None))
    for index, partition in enumerate(config.slurm.partitions):
        for f_index, feature in enumerate(partition.features):
            if feature not in carried:
                problems.add(
                    ["slurm", "partitions", index, "features", f_index],
                    f"partition {partition.name!r}: no nodeset or Slurm host carries feature {feature!r}",
                )


def _check_partition_groups(config: PlatformModel, problems: ProblemCollector) -> None:
    groups = {group.name for group in config.directory.groups}
    for index, partition in enumerate(config.slurm.partitions):
        for g_index, group in enumerate(partition.allow_groups):
            if group not in groups:
                problems.add(
                    ["slurm", "partitions", index, "allowGroups", g_index],
                    f"partition {partition.name!r}: unknown group {group!r} (not in directory.groups)",
                )


def _check_host_gres(config: PlatformModel, problems: ProblemCollector) -> None:
    """A host's GRES must be a type slurm.conf declares (`GresTypes=gpu` comes with GPU nodesets), or its
    slurmd fails to register."""
    declared = {"gpu"} if config.slurm.has_gpus else set()
    for index, host in enumerate(_hosts(config)):
        for g_index, entry in enumerate(host.gres):
            name = entry.split(":")[0]
            if host.nodeset is None:
                problems.add(["provisioning", "hosts", index, "gres", g_index], f"host {host.name!r} is in no nodeset: no slurmd")
            elif name not in declared:
                problems.add(
                    ["provisioning", "hosts", index, "gres", g_index],
                    f"host {host.name!r}: GRES type {name!r} is not in GresTypes "
                    f"({', '.join(sorted(declared)) or 'none: no nodeset has GPUs'})",
                )


def _check_reservation_users(config: PlatformModel, problems: ProblemCollector) -> None:
    users = {"root", "slurm", *(user.name for user in config.directory.users)}
    for index, reservation in enumerate(config.slurm.reservations):
        for u_index, user in enumerate(reservation.users):
            if user not in users:
                problems.add(
                    ["slurm", "reservations", index, "users", u_index],
                    f"reservation {reservation.name!r}: unknown user {user!r} (not root, slurm or in directory.users)",
                )
