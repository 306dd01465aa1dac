"""Slurm topology renderers (pure): topology.yaml for the Slinky controller, topology.conf (tree) for
Slurm releases before 25.05, and the Kubernetes node annotations Slinky 1.2.1 reads.

One model (`hpcforge:slurm.topology` plus the hosts' `switch`/`block` tags) gives:
- topology.yaml (Slurm 25.05+, the Slinky 26.05 images): a tree topology `<name>` (cluster default)
  and, with blocks, a block topology `<name>-block`; topology.yaml(5).
- topology.conf: the same tree as `SwitchName=` lines for `TopologyPlugin=topology/tree`;
  topology.conf(5). Slurm reads topology.yaml first and ignores topology.conf when both exist.
- `topology.slinky.slurm.net/spec: <name>:<switch>,<name>-block:<block>` on Kubernetes nodes: the
  Slinky operator copies it onto the NodeSet pods scheduled there and sets the Slurm node's
  topology from it (slurm-operator v1.2.1, docs/usage/topology.md, internal/webhook/pod_binding_webhook.go).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import yaml

from ...ground.hosts import Host
from .topology import TopologyConfig, expand_all, expand_hostlist

TOPOLOGY_ANNOTATION = "topology.slinky.slurm.net/spec"
TREE_PLUGIN = ("TopologyPlugin", "topology/tree")
"""The slurm.conf line that goes with topology.conf (Slurm before 25.05; topology.yaml names its plugins)."""
_LINE_LIMIT = 1024  # topology.conf(5): "The size of each line in the file is limited to 1024 characters."
_NUMBERED = re.compile(r"(.*?[^0-9]|)([0-9]+)")


def hostlist(names: Iterable[str]) -> str:
    """Slurm's compressed host list (`cn[001-004,007],gpu01`): names with the same prefix and the same
    number of digits at the end are merged into ranges; order is sorted, duplicates dropped."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in sorted(set(names)):
        match = _NUMBERED.fullmatch(name)
        if match is None or not match.group(1):
            plain.append(name)
            continue
        groups.setdefault((match.group(1), len(match.group(2))), []).append(int(match.group(2)))
    items: list[str] = list(plain)
    for (prefix, width), numbers in sorted(groups.items()):
        numbers.sort()
        if len(numbers) == 1:
            items.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        ranges: list[str] = []
        start = previous = numbers[0]
        for number in [*numbers[1:], None]:
            if number is not None and number == previous + 1:
                previous = number
                continue
            ranges.append(f"{start:0{width}d}" if start == previous else f"{start:0{width}d}-{previous:0{width}d}")
            if number is not None:
                start = previous = number
        items.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(sorted(items))


@dataclass(frozen=True)
class Members:
    """Slurm nodes per leaf switch and per block: the explicit ones plus the tagged hosts."""

    switches: dict[str, list[str]]
    blocks: dict[str, list[str]]


def members(topology: TopologyConfig, hosts: Sequence[Host] = (), placed: Mapping[str, Sequence[str]] | None = None) -> Members:
    """`placed`: Slurm nodes that dynamic topology puts on a leaf when they register (NodeSet pods on an
    annotated Kubernetes node); only topology.conf, which has no dynamic topology, needs them."""
    switches = {sw.name: expand_all(sw.nodes) for sw in topology.switches if not sw.switches}
    for leaf, names in (placed or {}).items():
        switches[leaf] = [*switches[leaf], *names]
    blocks = {block.name: expand_all(block.nodes) for block in topology.blocks}
    for host in hosts:
        if host.switch is not None and host.switch in switches:
            switches[host.switch].append(host.name)
        if host.block is not None and host.block in blocks:
            blocks[host.block].append(host.name)
    return Members(switches, blocks)


def topology_conf(topology: TopologyConfig, hosts: Sequence[Host] = (), placed: Mapping[str, Sequence[str]] | None = None) -> str:
    """topology.conf for topology/tree: one `SwitchName=` line per switch, leaves with `Nodes=`.

    A leaf that only Kubernetes nodes fill (its NodeSet pods get their topology from the node
    annotation when they register) has no static nodes: topology.conf cannot express it (Slurm 22.05:
    "switch X has neither child switches nor nodes", fatal), so it is refused; topology.yaml can.
    """
    found = members(topology, hosts, placed)
    lines = [f"# hpcforge: topology {topology.name!r} (hpcforge:slurm.topology); TopologyPlugin=topology/tree"]
    for sw in topology.switches:
        if sw.switches:
            line = f"SwitchName={sw.name} Switches={hostlist(sw.switches)}"
        elif found.switches[sw.name]:
            line = f"SwitchName={sw.name} Nodes={hostlist(found.switches[sw.name])}"
        else:
            raise ValueError(
                f"switch {sw.name!r} has no static nodes (only Kubernetes nodes): topology.conf cannot hold it; "
                "use topology.yaml (Slurm 25.05+)"
            )
        if len(line) >= _LINE_LIMIT:
            raise ValueError(f"switch {sw.name!r}: the topology.conf line is {len(line)} characters, over Slurm's limit")
        lines.append(line)
    return "\n".join(lines) + "\n"


def topology_yaml(topology: TopologyConfig, hosts: Sequence[Host] = ()) -> str:
    """topology.yaml (Slurm 25.05+): the tree as the cluster default and the blocks as a second topology."""
    found = members(topology, hosts)
    switches: list[dict[str, object]] = []
    for sw in topology.switches:
        entry: dict[str, object] = {"switch": sw.name}
        if sw.switches:
            entry["children"] = hostlist(sw.switches)
        elif found.switches[sw.name]:
            entry["nodes"] = hostlist(found.switches[sw.name])
        switches.append(entry)
    document: list[dict[str, object]] = [{"topology": topology.name, "cluster_default": True, "tree": {"switches": switches}}]
    if topology.blocks:
        block: dict[str, object] = {}
        if topology.block_sizes:
            block["block_sizes"] = list(topology.block_sizes)
        block["blocks"] = [
            {"block": b.name, **({"nodes": hostlist(found.blocks[b.name])} if found.blocks[b.name] else {})}
            for b in topology.blocks
        ]
        document.append({"topology": topology.block_name, "cluster_default": False, "block": block})
    # libyaml's emitter where PyYAML has it (the same text as SafeDumper's for these plain lists and mappings, a fifth
    # of the time: 2,500 leaf switches at 100,000 hosts).
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return "# hpcforge: hpcforge:slurm.topology; topology.yaml(5)\n" + yaml.dump(document, Dumper=dumper, sort_keys=False)


def node_annotations(topology: TopologyConfig) -> dict[str, dict[str, str]]:
    """Kubernetes node name -> the annotations that place its NodeSet pods in the topology."""
    return {
        node: {TOPOLOGY_ANNOTATION: topology.annotation(entry.switch, entry.block)}
        for entry in topology.kubernetes_nodes
        for node in expand_hostlist(entry.node)
    }
