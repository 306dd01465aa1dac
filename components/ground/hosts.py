"""The bare-metal host inventory's entries (`hpcforge:provisioning.hosts`, or an inventory file): a host's boot NIC,
its BMC, and what Slurm makes of it (nodeset, features, GRES, switch, block). Provisioning boots the hosts; Slurm
and the site's checks read them too, so they stand below every layer."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from .base import Hostname, InterfaceName, IPv4, K8sName, StrictModel, as_written

_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
_UNICAST_MAC = re.compile(r"[0-9a-f][02468ace](:[0-9a-f]{2}){5}")


def _mac(value: Any) -> str:
    if type(value) is str and _UNICAST_MAC.fullmatch(value):
        return value  # fast path: canonical and unicast (inventories hold 200,000 of them)
    text = str(value).strip().lower().replace("-", ":")
    if not _MAC.match(text):
        raise ValueError(f"{as_written(value)} is not a MAC address (six hex pairs, e.g. 0c:c4:7a:00:00:01)")
    if int(text[:2], 16) & 1:
        raise ValueError(f"{as_written(value)} is a multicast MAC address, not a NIC's")
    return text


Mac = Annotated[str, BeforeValidator(_mac)]


def _feature(value: Any) -> str:
    text = str(value)
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", text):
        raise ValueError(f"{as_written(value)} is not a Slurm node feature (letters and digits, starting with a letter)")
    return text


def _gres(value: Any) -> str:
    text = str(value)
    if not re.fullmatch(r"[a-z_]+(:[a-z0-9_]+)?(:[0-9]+)?", text):
        raise ValueError(f"{as_written(value)} is not a GRES entry (name[:type][:count], e.g. gpu:a100:4)")
    return text


class Bmc(StrictModel):
    mac: Mac
    """MAC address of the BMC."""
    ip: IPv4
    """Address of the BMC on the provisioning network (DNS name `<host>-bmc`)."""


class Host(StrictModel):
    name: Hostname
    """Host name; DNS records `<name>.<domain>` (site DNS and Grendel) are made from it."""
    mac: Mac
    """MAC address of the boot NIC."""
    ip: IPv4
    """Address on the provisioning network (the prefix comes from `provisioning.subnet`)."""
    image: K8sName | None = None
    """Boot image (default: `provisioning.defaultImage`)."""
    nodeset: str | None = None
    """Slurm nodeset this host joins as a bare-metal dynamic node (its features and GRES)."""
    provision: bool = True
    """Whether Grendel provisions (network-boots) the host."""
    bmc: Bmc | None = None
    """The host's BMC: an inventory interface and a DNS record (hpcforge configures no BMC credentials)."""
    vlan: int | None = Field(default=None, ge=1, le=4094)
    """VLAN id of the boot interface."""
    mtu: int | None = Field(default=None, ge=576, le=9216)
    """MTU of the boot interface."""
    tags: tuple[str, ...] = ()
    """Grendel tags (hosts in a nodeset also get `nodeset:<name>`)."""
    ifname: InterfaceName | Literal[""] = ""
    """Interface name of the boot NIC in Grendel's inventory: a Linux interface name (empty: not set)."""
    features: tuple[Annotated[str, BeforeValidator(_feature)], ...] = ()
    """Slurm node features of this host on top of its nodeset's (e.g. `bigmem`); partitions can select by them."""
    gres: tuple[Annotated[str, BeforeValidator(_gres)], ...] = ()
    """GRES of this host, replacing its nodeset's when given (e.g. `gpu:a100:4` for a host with fewer GPUs)."""
    switch: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
    """Leaf switch (rack) of the host in `slurm.topology`; also a Grendel tag `switch:<name>`."""
    block: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
    """Block of the host in `slurm.topology.blocks`; also a Grendel tag `block:<name>`."""
