"""Tier 1: the site-layout keys (partition options, preemption, topology, reservations, host tags)
accept the prod stack and refuse bad input with a message that names the key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.site.loader import load_config
from offline.program.engine import ProgramConfigError
from tests.helpers import config_values, raw_config, run_stack_file, write_variant
from tests.site_helpers import refusal

Edit = Callable[[dict[str, Any]], None]


def slurm(edit: Callable[[dict[str, Any]], None]) -> Edit:
    return lambda values: edit(values["hpcforge:slurm"])


def partition(index: int, **changes: Any) -> Edit:
    return slurm(lambda s: s["partitions"][index].update(changes))


def topology(edit: Callable[[dict[str, Any]], None]) -> Edit:
    return slurm(lambda s: edit(s["topology"]))


def host(index: int, **changes: Any) -> Edit:
    return lambda values: values["hpcforge:provisioning"]["hosts"][index].update(changes)


BAD: list[tuple[str, Edit, str]] = [
    (
        "partition with neither nodesets nor features",
        partition(4, features=[]),
        "hpcforge:slurm.partitions[4].nodesets: partition 'bigmem': give at least one nodeset or feature",
    ),
    (
        "feature no node carries",
        partition(4, features=["hugemem"]),
        "hpcforge:slurm.partitions[4].features[0]: partition 'bigmem': no nodeset or Slurm host carries feature 'hugemem'",
    ),
    (
        "AllowGroups names a group the directory lacks",
        partition(0, allowGroups=["hpc-users", "astro"]),
        "hpcforge:slurm.partitions[0].allowGroups[1]: partition 'cpu': unknown group 'astro'",
    ),
    (
        "MaxNodes of zero",
        partition(0, maxNodes=0),
        "hpcforge:slurm.partitions[0].maxNodes: expected greater than or equal to 1",
    ),
    (
        "DefMemPerGPU on a partition without GPUs",
        partition(3, defMemPerGpu="8Gi"),
        "hpcforge:slurm.partitions[3].defMemPerGpu: partition 'debug' has no GPU nodeset",
    ),
    (
        "partition preempt mode without a preempt type",
        slurm(lambda s: s["controller"].pop("preemption")),
        "hpcforge:slurm.partitions[5].preemptMode: partition 'scavenger': a preempt mode needs controller.preemption.type",
    ),
    (
        "SUSPEND without gang scheduling",
        slurm(lambda s: s["controller"].update(preemption={"type": "preempt/partition_prio", "mode": "SUSPEND"})),
        "hpcforge:slurm.controller.preemption: mode SUSPEND needs gang: true",
    ),
    (
        "preempt type with mode OFF",
        slurm(lambda s: s["controller"].update(preemption={"type": "preempt/qos"})),
        "hpcforge:slurm.controller.preemption: type preempt/qos with mode OFF would never preempt",
    ),
    ("node weight of zero", slurm(lambda s: s["nodesets"][0].update(weight=0)), "hpcforge:slurm.nodesets[0].weight"),
    (
        "empty leaf switch",
        topology(lambda t: t["switches"].append({"name": "rack5"}) or t["switches"][0]["switches"].append("rack5")),
        "hpcforge:slurm.topology.switches[8]: switch 'rack5' is empty",
    ),
    (
        "host on two leaves",
        host(0, switch="rack2"),
        "{hosts}: hosts[0].switch: host 'cn001' is on leaf 'rack2' and listed on leaf 'rack1'",
    ),
    (
        "node listed on two leaves",
        topology(lambda t: t["switches"][2].update(nodes=["cn[024-048]"])),
        "hpcforge:slurm.topology.switches[2].nodes: node 'cn024' is on leaf 'rack1' and 'rack2'",
    ),
    (
        "joining host on no leaf",
        topology(lambda t: t["switches"][1].update(nodes=["cn[002-024]"])),
        "{hosts}: hosts[0].switch: host 'cn001' joins Slurm but is on no leaf switch of slurm.topology",
    ),
    (
        "host tagged with a spine switch",
        lambda v: (topology(lambda t: t["switches"][1].update(nodes=["cn[002-024]"]))(v), host(0, switch="spine")(v)),
        "{hosts}: hosts[0].switch: host 'cn001': 'spine' is not a leaf switch of slurm.topology",
    ),
    (
        "unknown child switch",
        topology(lambda t: t["switches"][0]["switches"].append("rack9")),
        "hpcforge:slurm.topology.switches[0].switches[7]: switch 'spine': unknown switch 'rack9'",
    ),
    (
        "two roots",
        topology(lambda t: t["switches"][0]["switches"].remove("gpu2")),
        "hpcforge:slurm.topology.switches: the tree needs exactly one root switch (one with no parent), found 2: spine, gpu2",
    ),
    (
        "a cycle",
        topology(
            lambda t: (
                t["switches"].append({"name": "loop", "switches": ["loop2"]})
                or t["switches"].append({"name": "loop2", "switches": ["loop"]})
            )
        ),
        "hpcforge:slurm.topology.switches[8]: switch 'loop' is not below the root 'spine' (a cycle)",
    ),
    (
        "nodes on an upper switch",
        topology(lambda t: t["switches"][0].update(nodes=["cn200"])),
        "hpcforge:slurm.topology.switches[0].nodes: switch 'spine' has child switches: nodes belong on leaf switches only",
    ),
    (
        "block size not a power-of-two multiple",
        topology(lambda t: t.update(blockSizes=[4, 12])),
        "hpcforge:slurm.topology.blockSizes: 12 is not 4 times a power of two",
    ),
    (
        "empty block",
        topology(lambda t: t["blocks"].append({"name": "spare"})),
        "hpcforge:slurm.topology.blocks[3]: block 'spare' is empty",
    ),
    (
        "Kubernetes node on an unknown switch",
        topology(lambda t: t["kubernetesNodes"][0].update(switch="cpu9")),
        "hpcforge:slurm.topology.kubernetesNodes[0].switch: node 'k8s-cpu-[01-16]': unknown switch 'cpu9'",
    ),
    (
        "Kubernetes node listed twice",
        topology(lambda t: t["kubernetesNodes"].append({"node": "k8s-cpu-03", "switch": "cpu1"})),
        "hpcforge:slurm.topology.kubernetesNodes: Kubernetes node 'k8s-cpu-03' is listed twice",
    ),
    (
        "switch tag without a topology",
        lambda v: (v["hpcforge:slurm"].pop("topology"), host(3, switch="rack1")(v)),
        "{hosts}: hosts[3].switch: host 'cn004': no slurm.topology to place it in",
    ),
    (
        "reservation on an unknown partition",
        slurm(lambda s: s["reservations"][0].update(partitions=["gpux"])),
        "hpcforge:slurm.reservations[0].partitions[0]: reservation 'maint-2027-01': unknown partition 'gpux'",
    ),
    (
        "reservation start time that is not a date",
        slurm(lambda s: s["reservations"][0].update(startTime="next tuesday")),
        "hpcforge:slurm.reservations[0].startTime: 'next tuesday' is not a start time",
    ),
    (
        "reservation for a user nobody knows",
        slurm(lambda s: s["reservations"][0].update(users=["root", "mallory"])),
        "hpcforge:slurm.reservations[0].users[1]: reservation 'maint-2027-01': unknown user 'mallory'",
    ),
    (
        "reservation flag Slurm does not know",
        slurm(lambda s: s["reservations"][0].update(flags=["MAINT", "FOREVER"])),
        "hpcforge:slurm.reservations[0].flags[1]",
    ),
    (
        "host GRES of a type slurm.conf does not declare",
        host(2, gres=["shard:8"]),
        "{hosts}: hosts[2].gres[0]: host 'cn003': GRES type 'shard' is not in GresTypes (gpu)",
    ),
    (
        "host feature with a separator",
        host(2, features=["big,mem"]),
        "{hosts}: hosts[2].features[0]: 'big,mem' is not a Slurm node feature",
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), BAD, ids=[case for case, _, _ in BAD])
def test_bad_site_layout_is_refused_naming_the_key(tmp_path: Path, case: str, edit: Edit, expected: str) -> None:
    refusal(tmp_path, edit, expected)


def test_bad_topology_stops_the_program_before_any_resource(tmp_path: Path) -> None:
    path = write_variant(tmp_path, "prod", host(0, switch="rack2"))
    with pytest.raises(ProgramConfigError) as raised:
        run_stack_file(path, "prod")
    assert raised.value.registered == 0
    assert any("host 'cn001' is on leaf 'rack2'" in message for message in raised.value.messages)


def test_prod_layout_is_what_the_issue_asks_for() -> None:
    prod = load_config(raw_config(config_values("prod")))
    assert {p.name for p in prod.slurm.partitions if p.allow_groups} == {"cpu", "gpu", "h100", "bigmem"}
    assert prod.slurm.topology is not None and len(prod.slurm.topology.leaves()) >= 4
    assert prod.slurm.reservations and "MAINT" in prod.slurm.reservations[0].flags
    assert prod.provisioning is not None
    assert {h.name for h in prod.provisioning.hosts if "bigmem" in h.features} == {"cn095", "cn096"}
