"""Bare-metal provisioning (Grendel) configuration: network, boot images and the host inventory."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, field_validator, model_validator

from .base import (
    DnsName,
    GoDuration,
    Hostname,
    IPv4,
    IPv4Interface,
    IPv4Network,
    K8sName,
    ProblemCollector,
    StrictModel,
)
from .identity import Storage, validate_ssh_public_key

_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


def _mac(value: Any) -> str:
    text = str(value).strip().lower().replace("-", ":")
    if not _MAC.match(text):
        raise ValueError(f"{value!r} is not a MAC address (six hex pairs, e.g. 0c:c4:7a:00:00:01)")
    if int(text[:2], 16) & 1:
        raise ValueError(f"{value!r} is a multicast MAC address, not a NIC's")
    return text


Mac = Annotated[str, BeforeValidator(_mac)]


class BootImage(StrictModel):
    name: K8sName
    kernel: str
    """URL or path (under Grendel's repo_dir) of the kernel."""
    initrd: tuple[str, ...] = ()
    liveimg: str | None = None
    cmdline: str = ""
    """Kernel command line; Grendel expands Go templates such as `{{ $.nic.MAC }}`."""
    joins_slurm: bool = True
    """Compute hosts booting this image start slurmd as a dynamic node (the post-boot script)."""


class Bmc(StrictModel):
    mac: Mac
    ip: IPv4


class Host(StrictModel):
    name: Hostname
    mac: Mac
    ip: IPv4
    """Address on the provisioning network (the prefix comes from `provisioning.subnet`)."""
    image: K8sName | None = None
    """Boot image (default: `provisioning.defaultImage`)."""
    nodeset: str | None = None
    """Slurm nodeset this host joins as a bare-metal dynamic node (its features and GRES)."""
    provision: bool = True
    bmc: Bmc | None = None
    vlan: int | None = Field(default=None, ge=1, le=4094)
    mtu: int | None = Field(default=None, ge=576, le=9216)
    tags: tuple[str, ...] = ()
    ifname: str = ""


class DhcpRange(StrictModel):
    start: IPv4
    end: IPv4


class Dhcp(StrictModel):
    lease_time: GoDuration = "24h"
    dns_servers: tuple[IPv4, ...] = ()
    """Default: Grendel's own address (it answers DNS for the inventory)."""
    domain_search: tuple[DnsName, ...] = ()
    """Default: the site domain."""
    mtu: int = Field(default=1500, ge=576, le=9216)
    range: DhcpRange | None = None
    """Dynamic range handed to unknown machines (discovery); inventory addresses must be outside it."""


class GrendelApi(StrictModel):
    expose: bool = False
    """Publish Grendel's HTTP API through Traefik (TLS from the internal CA)."""
    hostname: DnsName | None = None


class ProvisioningConfig(StrictModel):
    enabled: bool = True
    namespace: K8sName = "provisioning"
    attachment: K8sName
    """Name of the IPVLAN network attachment (hpcforge:network.attachments) on the provisioning network."""
    node: str = Field(min_length=1)
    """Kubernetes node (kubernetes.io/hostname) that has the provisioning NIC."""
    address: IPv4Interface
    """Grendel's static address on the provisioning network, with prefix (e.g. 10.10.2.2/24)."""
    subnet: IPv4Network
    gateway: IPv4
    dhcp: Dhcp = Field(default_factory=Dhcp)
    storage: Storage = Field(default_factory=lambda: Storage(size="50Gi"))
    api: GrendelApi = Field(default_factory=GrendelApi)
    admin_ssh_public_keys: tuple[str, ...] = ()
    images: tuple[BootImage, ...] = Field(min_length=1)
    default_image: K8sName | None = None
    hosts: tuple[Host, ...] = ()

    @field_validator("admin_ssh_public_keys")
    @classmethod
    def _keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(validate_ssh_public_key(key) for key in value)

    @property
    def prefix_length(self) -> int:
        return int(self.subnet.rsplit("/", 1)[1])

    @property
    def grendel_ip(self) -> str:
        return str(ipaddress.IPv4Interface(self.address).ip)

    def image(self, name: str) -> BootImage | None:
        return next((image for image in self.images if image.name == name), None)

    def image_of(self, host: Host) -> str | None:
        return host.image or self.default_image

    @model_validator(mode="after")
    def _inventory(self) -> ProvisioningConfig:
        # One pass over the inventory with dictionaries: a 10,000-host site validates in milliseconds.
        problems = ProblemCollector()
        subnet = ipaddress.IPv4Network(self.subnet)
        if ipaddress.IPv4Interface(self.address).network != subnet:
            problems.add(["address"], f"{self.address} is not in the provisioning subnet {self.subnet}")
        gateway = ipaddress.IPv4Address(self.gateway)
        if gateway not in subnet:
            problems.add(["gateway"], f"{self.gateway} is not in the provisioning subnet {self.subnet}")
        dyn: tuple[ipaddress.IPv4Address, ipaddress.IPv4Address] | None = None
        if self.dhcp.range is not None:
            first, last = ipaddress.IPv4Address(self.dhcp.range.start), ipaddress.IPv4Address(self.dhcp.range.end)
            if last < first:
                problems.add(["dhcp", "range"], f"the range ends ({last}) before it starts ({first})")
            for end_name, address in (("start", first), ("end", last)):
                if address not in subnet:
                    problems.add(["dhcp", "range", end_name], f"{address} is not in the provisioning subnet {self.subnet}")
            dyn = (first, last)
        image_names = [image.name for image in self.images]
        for index, image in enumerate(self.images):
            if image.name in image_names[:index]:
                problems.add(["images", index, "name"], f"duplicate image name {image.name!r}")
        known_images = ", ".join(image_names)
        if self.default_image is not None and self.default_image not in image_names:
            problems.add(["defaultImage"], f"unknown image {self.default_image!r} (known: {known_images})")

        reserved_ips = {str(gateway): "the gateway", self.grendel_ip: "Grendel itself"}
        names: dict[str, int] = {}
        macs: dict[str, str] = {}
        ips: dict[str, str] = dict(reserved_ips)
        for index, host in enumerate(self.hosts):
            where: list[str | int] = ["hosts", index]
            label = f"host {host.name!r}"
            if host.name in names:
                problems.add([*where, "name"], f"{label}: duplicate host name (also hosts[{names[host.name]}])")
            names.setdefault(host.name, index)
            interfaces = [("mac", host.mac, "ip", host.ip, "")]
            if host.bmc is not None:
                interfaces.append(("bmc.mac", host.bmc.mac, "bmc.ip", host.bmc.ip, " (BMC)"))
                if host.bmc.mac == host.mac:
                    problems.add([*where, "bmc", "mac"], f"{label}: the BMC has the same MAC as the host NIC")
                if host.bmc.ip == host.ip:
                    problems.add([*where, "bmc", "ip"], f"{label}: the BMC has the same IP as the host NIC")
            for mac_key, mac, ip_key, ip_text, what in interfaces:
                owner = f"host {host.name!r}{what}"
                if mac in macs and macs[mac] != owner:
                    problems.add([*where, *mac_key.split(".")], f"{label}: MAC {mac} is already used by {macs[mac]}")
                macs.setdefault(mac, owner)
                ip = ipaddress.IPv4Address(ip_text)
                if ip not in subnet or ip in (subnet.network_address, subnet.broadcast_address):
                    problems.add(
                        [*where, *ip_key.split(".")], f"{label}: IP {ip} is outside the provisioning subnet {self.subnet}"
                    )
                elif dyn is not None and dyn[0] <= ip <= dyn[1]:
                    problems.add(
                        [*where, *ip_key.split(".")],
                        f"{label}: IP {ip} is inside the DHCP dynamic range {dyn[0]}-{dyn[1]}",
                    )
                if ip_text in ips and ips[ip_text] != owner:
                    problems.add([*where, *ip_key.split(".")], f"{label}: IP {ip} is already used by {ips[ip_text]}")
                ips.setdefault(ip_text, owner)
            image_name = self.image_of(host)
            if image_name is None:
                problems.add([*where, "image"], f"{label}: no image and no provisioning.defaultImage")
            elif image_name not in image_names:
                problems.add([*where, "image"], f"{label}: unknown image {image_name!r} (known: {known_images})")
        problems.raise_if_any()
        return self
