"""Generate stack configs of a given size from the prod stack (benchmarks and scale tests).

Sizes grow along the axes that a real site grows on: bare-metal hosts (inventory), Slurm
nodesets and partitions, and LDAP users.
"""

from __future__ import annotations

import copy
import ipaddress
import math
from pathlib import Path
from typing import Any

import yaml

from components.ground.yamlv3 import load_document
from components.paths import PROJECT_ROOT
from components.site.inventory import Yaml12Dumper

BASE_STACK = PROJECT_ROOT / "Pulumi.prod.yaml"
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGNpVwk5GtlYoRcwALqBEhl3uNHSUNDTgkF37upXaE/4 user@hpc"


def _mac(prefix: int, index: int) -> str:
    value = (prefix << 24) | index
    octets = [0x0C, 0xC4] + [(value >> shift) & 0xFF for shift in (24, 16, 8, 0)]
    return ":".join(f"{octet:02x}" for octet in octets)


def address_plan(hosts: int) -> dict[str, Any]:
    """A provisioning subnet that grows with the site: hosts in the lower half, their BMCs in the
    upper half, 256 addresses reserved at the bottom (gateway, Grendel) and at the top (DHCP range).

    /16 up to ~32,000 hosts, then one bit shorter per doubling (/14 for 100,000 hosts).
    """
    half_needed = max(hosts, 1) + 256
    prefix = min(16, 32 - max(1, math.ceil(math.log2(2 * half_needed))))
    subnet = ipaddress.IPv4Network(f"10.64.0.0/{prefix}")
    first, size = int(subnet.network_address), subnet.num_addresses
    assert hosts <= size // 2 - 256, (hosts, subnet)
    top = int(subnet.broadcast_address)
    return {
        "subnet": str(subnet),
        "address": f"{ipaddress.IPv4Address(first + 2)}/{prefix}",
        "gateway": str(ipaddress.IPv4Address(first + 1)),
        "dhcp_range": (str(ipaddress.IPv4Address(top - 254)), str(ipaddress.IPv4Address(top - 5))),
        "first_host": first + 256,
        "first_bmc": first + size // 2,
    }


RACK_HOSTS = 40
"""Hosts a rack (one leaf switch each)."""


def generate_site(hosts: int = 100, nodesets: int = 4, users: int = 6, base: Path = BASE_STACK) -> dict[str, Any]:
    """The `config:` mapping of a prod-like stack with the requested sizes, its inventories inline
    (`write_site` moves them to inventory files).

    One leaf switch per rack of 40 hosts (2,500 at 100,000 hosts) and one Slurm account per project
    group (1,000 at 100,000 users): both grow with the site, so `write_site` puts them in the Slurm
    inventory file (`hpcforge:slurm.inventory`), not in the stack config.
    """
    # Read as the Pulumi CLI reads stack files (yaml.v3 rules), like every stack file in hpcforge.
    config: dict[str, Any] = copy.deepcopy(load_document(base.read_text())["config"])
    _hosts(config["hpcforge:provisioning"], hosts)
    topology = config["hpcforge:slurm"].get("topology")
    if topology is not None:
        _racks(topology, config["hpcforge:provisioning"]["hosts"])
    _nodesets(config, nodesets)
    # Generated users replace prod's: the evidence check looks up the first one; the active checks run as root.
    config.get("hpcforge:evidence", {}).pop("lookupUser", None)
    config.get("hpcforge:gpu", {}).pop("activeCheckUser", None)
    projects = max(1, users // 100)
    _users(config["hpcforge:directory"], config["hpcforge:slurm"], users, projects)
    _accounts(config["hpcforge:slurm"], projects)
    return config


def _hosts(prov: dict[str, Any], hosts: int) -> None:
    """`hosts` bare-metal hosts of the bare-metal nodeset, each with a BMC, on a provisioning subnet that fits them."""
    plan = address_plan(hosts)
    prov.pop("inventory", None)
    prov.update(
        address=plan["address"],
        subnet=plan["subnet"],
        gateway=plan["gateway"],
        dhcp={"leaseTime": "24h", "mtu": 9000, "range": {"start": plan["dhcp_range"][0], "end": plan["dhcp_range"][1]}},
    )
    first_host, first_bmc = plan["first_host"], plan["first_bmc"]
    prov["hosts"] = [
        {
            "name": f"cn{i:06d}",
            "mac": _mac(0x10, i),
            "ip": str(ipaddress.IPv4Address(first_host + i)),
            "nodeset": "cpu-bm",
            "bmc": {"mac": _mac(0x20, i), "ip": str(ipaddress.IPv4Address(first_bmc + i))},
            "tags": ["compute", f"rack{i // RACK_HOSTS + 1}"],
            "switch": f"rack{i // RACK_HOSTS + 1}",
            **({"features": ["bigmem"]} if i > hosts - 2 else {}),
        }
        for i in range(1, hosts + 1)
    ]
    # BMCs share the provisioning subnet here: no separate BMC network or further subnets.
    prov.pop("bmcNetwork", None)
    prov.pop("subnets", None)


def _racks(topology: dict[str, Any], hosts: list[dict[str, Any]]) -> None:
    """The topology's racks follow the hosts' switch tags (40 hosts a rack), all under the spine."""
    racks = sorted({host["switch"] for host in hosts}, key=lambda name: int(name[4:]))
    others = [sw for sw in topology["switches"] if sw["name"] != "spine" and not sw["name"].startswith("rack")]
    spine = {"name": "spine", "switches": [*racks, *(sw["name"] for sw in others)]}
    topology["switches"] = [spine, *({"name": rack} for rack in racks), *others]


def _nodesets(config: dict[str, Any], nodesets: int) -> None:
    """Exactly `nodesets` nodesets. Below prod's four, keep the bare-metal one first (the hosts join it); above, add
    CPU nodesets on one large pool, in partitions of ten."""
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
    assert "cpu-bm" in {ns["name"] for ns in slurm["nodesets"]}


def _users(directory: dict[str, Any], slurm: dict[str, Any], users: int, projects: int) -> None:
    """`users` users spread over `projects` project groups, one in ten with an SSH key."""
    directory.pop("inventory", None)
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


def _accounts(slurm: dict[str, Any], projects: int) -> None:
    """Slurm accounts: one per project group (prod's name prod's groups and users)."""
    if "accounts" not in slurm:
        return
    slurm["accounts"]["users"] = []
    slurm["accounts"]["accounts"] = [{"name": "science"}] + [
        {"name": f"proj{i:04d}", "parent": "science", "groups": [f"proj{i:04d}"]} for i in range(projects)
    ]
    for partition in slurm["partitions"]:  # account limits name prod's accounts, which are gone
        partition.pop("allowAccounts", None)


def write_site(path: Path, *, hosts: int = 100, nodesets: int = 4, users: int = 6) -> Path:
    """Write a generated stack file and its inventory files (`<stem>.hosts.yaml`, `<stem>.users.yaml`,
    `<stem>.slurm.yaml` (topology and accounts) beside it, named by absolute path), with libyaml's dumper:
    these files are large."""
    return write_config(path, generate_site(hosts=hosts, nodesets=nodesets, users=users))


def write_config(path: Path, config: dict[str, Any]) -> Path:
    """Write a `generate_site` config as `write_site` does (its inventories to files beside the stack file)."""
    config = copy.deepcopy(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    stem = path.name.removesuffix(".yaml")
    for section, keys, suffix in (
        ("provisioning", ("hosts",), "hosts"),
        ("directory", ("groups", "users"), "users"),
        ("slurm", ("topology", "accounts"), "slurm"),
    ):
        values = config[f"hpcforge:{section}"]
        inventory = path.parent / f"{stem}.{suffix}.yaml"
        document = {key: values.pop(key) for key in keys if key in values}
        inventory.write_text(yaml.dump(document, Dumper=Yaml12Dumper, sort_keys=False, default_flow_style=None, width=100_000))
        values["inventory"] = {"file": str(inventory)}
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    path.write_text(yaml.dump({"config": config}, Dumper=dumper, sort_keys=False))
    return path
