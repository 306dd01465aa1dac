"""Generate stack configs of a given size from the prod stack (benchmarks and scale tests).

Sizes grow along the axes that a real site grows on: bare-metal hosts (inventory), Slurm
nodesets and partitions, and LDAP users.
"""

from __future__ import annotations

import copy
import ipaddress
from pathlib import Path
from typing import Any

import yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BASE_STACK = PROJECT_ROOT / "Pulumi.prod.yaml"
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGNpVwk5GtlYoRcwALqBEhl3uNHSUNDTgkF37upXaE/4 user@hpc"


def _mac(prefix: int, index: int) -> str:
    value = (prefix << 24) | index
    octets = [0x0C, 0xC4] + [(value >> shift) & 0xFF for shift in (24, 16, 8, 0)]
    return ":".join(f"{octet:02x}" for octet in octets)


def generate_site(hosts: int = 100, nodesets: int = 4, users: int = 6, base: Path = BASE_STACK) -> dict[str, Any]:
    """The `config:` mapping of a prod-like stack with the requested sizes."""
    config: dict[str, Any] = copy.deepcopy(yaml.safe_load(base.read_text())["config"])

    # Inventory: hosts on a /16 (room for 30,000 hosts and their BMCs), half the subnet for BMCs.
    subnet = ipaddress.IPv4Network("10.64.0.0/16")
    prov = config["hpcforge:provisioning"]
    prov.update(
        address="10.64.0.2/16",
        subnet=str(subnet),
        gateway="10.64.0.1",
        dhcp={"leaseTime": "24h", "mtu": 9000, "range": {"start": "10.64.255.1", "end": "10.64.255.250"}},
    )
    first_host = int(ipaddress.IPv4Address("10.64.1.0"))
    first_bmc = int(ipaddress.IPv4Address("10.64.128.0"))
    prov["hosts"] = [
        {
            "name": f"cn{i:05d}",
            "mac": _mac(0x10, i),
            "ip": str(ipaddress.IPv4Address(first_host + i)),
            "nodeset": "cpu-bm",
            "bmc": {"mac": _mac(0x20, i), "ip": str(ipaddress.IPv4Address(first_bmc + i))},
            "tags": ["compute", f"rack{i // 40 + 1}"],
            "switch": f"rack{i // 40 + 1}",
            **({"features": ["bigmem"]} if i > hosts - 2 else {}),
        }
        for i in range(1, hosts + 1)
    ]
    # BMCs share the /16 here: no separate BMC network or further subnets. The topology's racks
    # follow the hosts' switch tags (40 hosts a rack).
    prov.pop("bmcNetwork", None)
    prov.pop("subnets", None)
    topology = config["hpcforge:slurm"].get("topology")
    if topology is not None:
        racks = sorted({host["switch"] for host in prov["hosts"]}, key=lambda name: int(name[4:]))
        others = [sw for sw in topology["switches"] if sw["name"] != "spine" and not sw["name"].startswith("rack")]
        spine = {"name": "spine", "switches": [*racks, *(sw["name"] for sw in others)]}
        topology["switches"] = [spine, *({"name": rack} for rack in racks), *others]

    # Nodesets: exactly `nodesets` of them. Below prod's four, keep the bare-metal one first (the
    # hosts join it); above, add CPU nodesets on one large pool, in partitions of ten.
    slurm = config["hpcforge:slurm"]
    base_order = ["cpu-bm", "cpu", "gpu-a100", "gpu-h100"]
    if nodesets < len(base_order):
        keep = set(base_order[: max(1, nodesets)])
        slurm["nodesets"] = [ns for ns in slurm["nodesets"] if ns["name"] in keep]
        partitions = []
        for partition in slurm["partitions"]:
            members = [name for name in partition.get("nodesets", []) if name in keep]
            if members or partition.get("features"):
                partitions.append({**partition, "nodesets": members})
        if not any(p.get("default") for p in partitions):
            partitions.insert(0, {"name": "all", "nodesets": sorted(keep), "default": True})
        slurm["partitions"] = partitions
    extra = max(0, nodesets - len(slurm["nodesets"]))
    if extra:
        config["hpcforge:nodePools"].append(
            {
                "name": "scale-cpu",
                "labels": {"hpcforge.io/pool": "scale-cpu"},
                "nodes": 4 * extra,
                "cpuPerNode": "64",
                "memoryPerNode": "256Gi",
            }
        )
    generated = [
        {"name": f"cpu-{i:03d}", "pool": "scale-cpu", "replicas": 4, "cpu": "60", "memory": "240Gi", "maxUnavailable": 1}
        for i in range(extra)
    ]
    slurm["nodesets"] = slurm["nodesets"] + generated
    for start in range(0, len(generated), 10):
        group = generated[start : start + 10]
        slurm["partitions"].append(
            {"name": f"scale-{start // 10:03d}", "nodesets": [n["name"] for n in group], "maxTime": "1-00:00:00"}
        )
    kept = {ns["name"] for ns in slurm["nodesets"]}
    assert "cpu-bm" in kept
    # Generated users replace prod's: the evidence check looks up the first one.
    config.get("hpcforge:evidence", {}).pop("lookupUser", None)

    # Users: spread over project groups.
    directory = config["hpcforge:directory"]
    projects = max(1, users // 100)
    for partition in slurm["partitions"]:  # group limits name prod's groups: keep the one every site has
        if partition.get("allowGroups"):
            partition["allowGroups"] = ["hpc-users"]
    directory["groups"] = [{"name": "hpc-users", "gidNumber": 5000}] + [
        {"name": f"proj{i:04d}", "gidNumber": 20000 + i} for i in range(projects)
    ]
    directory["users"] = [
        {
            "name": f"u{i:06d}",
            "uidNumber": 100000 + i,
            "primaryGroup": "hpc-users",
            "groups": [f"proj{i % projects:04d}"],
            "fullName": f"User {i}",
            **({"sshPublicKeys": [SSH_KEY]} if i % 10 == 0 else {}),
        }
        for i in range(users)
    ]
    return config


def write_site(path: Path, *, hosts: int = 100, nodesets: int = 4, users: int = 6) -> Path:
    """Write a generated stack file (libyaml's dumper when available: these files are large)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    document = {"config": generate_site(hosts=hosts, nodesets=nodesets, users=users)}
    path.write_text(yaml.dump(document, Dumper=dumper, sort_keys=False))
    return path
