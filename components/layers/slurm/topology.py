"""Slurm network topology: a switch tree (racks, leaf and spine switches) and optional blocks.

Where the members come from:
- bare-metal hosts: their inventory tags `provisioning.hosts[].switch` / `.block` (the host name is
  the Slurm node name);
- NodeSet pods: the Kubernetes nodes they run on, listed in `kubernetesNodes`; hpcforge annotates
  each such node with `topology.slinky.slurm.net/spec`, which Slinky 1.2.1 copies onto the pod and
  into the Slurm node's topology (docs/usage/topology.md at v1.2.1);
- any other static Slurm node: `switches[].nodes` / `blocks[].nodes`.

Rules (checked here and, for host tags, in `site_layout`): unique names, children that exist, one
root, no cycles, nodes only on leaf switches, no empty switch or block, every node in exactly one
leaf and in at most one block; block sizes follow topology.conf(5) for topology/block (ascending,
each the smallest times a power of two).
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from ...ground.base import ProblemCollector, StrictModel, duplicates, first_by_name


def _unit_name(value: str) -> str:
    # Switch and block names go into topology.conf/topology.yaml and into the
    # `<topology>:<switch>` annotation: no separators of either format.
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}", value):
        raise ValueError(f"{value!r} is not a switch or block name (letters, digits, '_', '.', '-')")
    return value


_HOSTLIST = re.compile(r"^([a-z0-9][-a-z0-9]*?)\[([0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*)\]$")
_MAX_EXPANSION = 100_000


def expand_hostlist(value: str) -> list[str]:
    """`cn[001-003,007]` -> cn001, cn002, cn003, cn007 (Slurm's host list form, one bracket at the end);
    a plain name is itself."""
    match = _HOSTLIST.match(value)
    if match is None:
        return [value]
    prefix, ranges = match.groups()
    names: list[str] = []
    for part in ranges.split(","):
        first, _, last = part.partition("-")
        last = last or first
        if int(last) < int(first):
            raise ValueError(f"{value!r}: range {part} runs backwards")
        if int(last) - int(first) + len(names) >= _MAX_EXPANSION:
            raise ValueError(f"{value!r} names more than {_MAX_EXPANSION} nodes")
        width = len(first)
        names += [f"{prefix}{number:0{width}d}" for number in range(int(first), int(last) + 1)]
    return names


def _node_name(value: str) -> str:
    if _HOSTLIST.match(value):
        for name in expand_hostlist(value):
            _node_name(name)
        return value
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", value) or len(value) > 63:
        raise ValueError(f"{value!r} is not a node name (a DNS label) or a host list such as cn[001-024]")
    return value


def expand_all(values: tuple[str, ...]) -> list[str]:
    return [name for value in values for name in expand_hostlist(value)]


UnitName = Annotated[str, AfterValidator(_unit_name)]
NodeName = Annotated[str, AfterValidator(_node_name)]


class TopologySwitch(StrictModel):
    name: UnitName
    """`SwitchName`: a leaf switch (rack) holds nodes, an upper switch (spine) holds `switches`."""
    switches: tuple[UnitName, ...] = ()
    """Child switches (an upper switch)."""
    nodes: tuple[NodeName, ...] = ()
    """Slurm nodes on this leaf switch besides the hosts tagged `switch: <name>`: names or host lists
    (`cn[001-024]`), e.g. bare-metal hosts or DaemonSet-mode pods (named after their Kubernetes node)."""


class TopologyBlock(StrictModel):
    name: UnitName
    """`BlockName` (topology/block): nodes with a fast interconnect among themselves (e.g. an NVLink domain)."""
    nodes: tuple[NodeName, ...] = ()
    """Slurm nodes in the block besides the hosts tagged `block: <name>` (names or host lists)."""


class KubernetesNodeTopology(StrictModel):
    node: NodeName
    """Kubernetes node name (`kubernetes.io/hostname`), or a host list of them (`k8s-gpu-[01-08]`)."""
    switch: UnitName | None = None
    """Leaf switch of the node: NodeSet pods on it join that switch."""
    block: UnitName | None = None
    """Block of the node: NodeSet pods on it join that block."""


class TopologyConfig(StrictModel):
    """Slurm topology: a tree of switches (topology/tree) and optionally blocks (topology/block)."""

    name: UnitName = "fabric"
    """Name of the tree topology in topology.yaml and in the node annotations (`<name>:<switch>`); the block
    topology is `<name>-block`."""
    switches: tuple[TopologySwitch, ...] = Field(min_length=1)
    """The switches; exactly one has no parent (the root)."""
    block_sizes: tuple[Annotated[int, Field(ge=1, le=65533)], ...] = ()
    """`BlockSizes` of the block topology, node counts from 1 to 65533 (ascending; each the smallest times a
    power of two; empty: the size of the smallest block)."""
    blocks: tuple[TopologyBlock, ...] = ()
    """Blocks (empty: no block topology)."""
    kubernetes_nodes: tuple[KubernetesNodeTopology, ...] = ()
    """Kubernetes nodes whose NodeSet pods take part in the topology, with their switch and block."""

    def switch(self, name: str) -> TopologySwitch | None:
        return self._switches_by_name.get(name)

    @cached_property
    def _switches_by_name(self) -> dict[str, TopologySwitch]:
        """The first switch of each name (what a scan finds), so that a lookup costs one step, not one per switch."""
        return first_by_name(self.switches)

    def leaves(self) -> list[str]:
        return [s.name for s in self.switches if not s.switches]

    @property
    def block_name(self) -> str:
        return f"{self.name}-block"

    def annotation(self, switch: str | None, block: str | None) -> str:
        """The `topology.slinky.slurm.net/spec` value: `<topology>:<unit>` entries, comma-separated."""
        parts = []
        if switch is not None:
            parts.append(f"{self.name}:{switch}")
        if block is not None:
            parts.append(f"{self.block_name}:{block}")
        return ",".join(parts)

    @model_validator(mode="after")
    def _tree(self) -> TopologyConfig:  # noqa: PLR0912, PLR0915 (one pass over the switch and block tree, one branch per rule)
        problems = ProblemCollector()
        names = [s.name for s in self.switches]
        duplicated = duplicates(names)
        for name in duplicated:
            problems.add(["switches"], f"duplicate switch {name!r}")
        known = set(names)
        parents: dict[str, str] = {}
        for index, sw in enumerate(self.switches):
            if sw.switches and sw.nodes:
                problems.add(
                    ["switches", index, "nodes"],
                    f"switch {sw.name!r} has child switches: nodes belong on leaf switches only",
                )
            for child_index, child in enumerate(sw.switches):
                if child not in known:
                    problems.add(["switches", index, "switches", child_index], f"switch {sw.name!r}: unknown switch {child!r}")
                elif child == sw.name:
                    problems.add(["switches", index, "switches", child_index], f"switch {sw.name!r} lists itself")
                elif child in parents and parents[child] == sw.name:
                    # Two parents of one name: a switch given twice (reported once above, as a duplicate),
                    # or one switch listing a child twice.
                    if sw.name not in duplicated:
                        problems.add(["switches", index, "switches", child_index], f"switch {sw.name!r} lists {child!r} twice")
                elif child in parents:
                    problems.add(
                        ["switches", index, "switches", child_index],
                        f"switch {child!r} has two parents ({parents[child]!r} and {sw.name!r})",
                    )
                else:
                    parents[child] = sw.name
        roots = [name for name in names if name not in parents]
        if len(set(roots)) != 1 and len(set(names)) == len(names):
            problems.add(
                ["switches"],
                f"the tree needs exactly one root switch (one with no parent), found {len(roots)}: {', '.join(roots) or 'none'}"
                " (a cycle has no root)",
            )
        # Every switch must hang below the root (catches cycles off the root).
        if len(roots) == 1:
            reached: set[str] = set()
            todo = [roots[0]]
            while todo:
                current = todo.pop()
                if current in reached:
                    continue
                reached.add(current)
                found = self.switch(current)
                todo += [c for c in (found.switches if found else ()) if c in known]
            for index, sw in enumerate(self.switches):
                if sw.name not in reached:
                    problems.add(["switches", index], f"switch {sw.name!r} is not below the root {roots[0]!r} (a cycle)")
        seen_nodes: dict[str, str] = {}
        for index, sw in enumerate(self.switches):
            for name in expand_all(sw.nodes):
                if name in seen_nodes and not (seen_nodes[name] == sw.name and sw.name in duplicated):
                    # (a leaf given twice carries its nodes twice: reported once above, as a duplicate switch)
                    problems.add(["switches", index, "nodes"], f"node {name!r} is on leaf {seen_nodes[name]!r} and {sw.name!r}")
                seen_nodes.setdefault(name, sw.name)
        block_names = [b.name for b in self.blocks]
        for name in duplicates(block_names):
            problems.add(["blocks"], f"duplicate block {name!r}")
        in_block: dict[str, str] = {}
        for index, block in enumerate(self.blocks):
            for name in expand_all(block.nodes):
                if name in in_block:
                    problems.add(["blocks", index, "nodes"], f"node {name!r} is in block {in_block[name]!r} and {block.name!r}")
                in_block.setdefault(name, block.name)
        if self.block_sizes and not self.blocks:
            problems.add(["blockSizes"], "block sizes without blocks")
        if self.block_sizes:
            sizes = list(self.block_sizes)
            base = sizes[0]
            if sizes != sorted(set(sizes)) or base < 1:
                problems.add(["blockSizes"], f"{sizes} must be positive and strictly ascending")
            else:
                for size in sizes[1:]:
                    ratio = size // base
                    if size % base or ratio & (ratio - 1):
                        problems.add(["blockSizes"], f"{size} is not {base} times a power of two (topology.conf(5), BlockSizes)")
        for index, k8s_node in enumerate(self.kubernetes_nodes):
            if k8s_node.switch is None and k8s_node.block is None:
                problems.add(["kubernetesNodes", index], f"node {k8s_node.node!r}: give a switch, a block or both")
            if k8s_node.switch is not None and k8s_node.switch not in known:
                problems.add(["kubernetesNodes", index, "switch"], f"node {k8s_node.node!r}: unknown switch {k8s_node.switch!r}")
            elif k8s_node.switch is not None and self.switch(k8s_node.switch).switches:  # type: ignore[union-attr]
                problems.add(
                    ["kubernetesNodes", index, "switch"], f"node {k8s_node.node!r}: {k8s_node.switch!r} is not a leaf switch"
                )
            if k8s_node.block is not None and k8s_node.block not in block_names:
                problems.add(["kubernetesNodes", index, "block"], f"node {k8s_node.node!r}: unknown block {k8s_node.block!r}")
        for name in duplicates(name for n in self.kubernetes_nodes for name in expand_hostlist(n.node)):
            problems.add(["kubernetesNodes"], f"Kubernetes node {name!r} is listed twice")
        problems.raise_if_any()
        return self
