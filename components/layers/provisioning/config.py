"""Bare-metal provisioning (Grendel) configuration: network, boot images and the host inventory."""

from __future__ import annotations

import bisect
import ipaddress
import itertools
import socket
import struct
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from pydantic import Field, field_validator, model_validator

from ...ground.base import (
    DnsName,
    GoDuration,
    IPv4,
    IPv4Interface,
    IPv4Network,
    K8sName,
    KernelCmdline,
    PathOrUrl,
    ProblemCollector,
    StrictModel,
    ipv4_int,
    overlapping_pairs,
)
from ...ground.hosts import Host
from ...ground.inventory_ref import InventoryRef
from ...ground.root_causes import dhcp_range_message, fold_into, fold_network
from ..directory.config import validate_ssh_public_key
from ..storage.config import Storage
from .hosts_bulk import hosts_without_problems as _hosts_without_problems

DATA_DIR = "/var/lib/grendel"
"""Grendel's data volume: its database (`grendel.db`) and the boot images, which Grendel serves only to a booting host
that holds a boot token (ubccr/grendel v0.2.5 internal/provision/handler.go: the `/boot/:token/` group behind
TokenRequired, middleware.go)."""
REPO_DIR = f"{DATA_DIR}/repo"
"""Grendel's `repo_dir`, served under `/repo` to anyone, without authentication (ubccr/grendel v0.2.5
internal/provision/server.go:148 `e.Static("/repo", s.RepoDir)`; the same line at every tag from v0.0.9): only the
join scripts, which hold no secret. Never the database or the images (ProvisioningConfig refuses image paths here)."""


class BootImage(StrictModel):
    name: K8sName
    """Image name; hosts and `defaultImage` refer to it."""
    kernel: PathOrUrl
    """URL or path of the kernel (no spaces): a path on Grendel's volume (`/var/lib/grendel/images/...`), never under
    `/var/lib/grendel/repo`, which Grendel serves to anyone (a path is served only to a booting host, by token)."""
    initrd: tuple[PathOrUrl, ...] = ()
    """URLs or paths of the initrds (no spaces; paths as for `kernel`)."""
    liveimg: PathOrUrl | None = None
    """URL or path of the root filesystem image (no spaces; a path as for `kernel`). It must not hold the Slurm key:
    whoever boots or downloads the image would hold it (docs/layers/provisioning.md)."""
    cmdline: KernelCmdline = ""
    """Kernel command line: printable ASCII on one line, at most 2047 characters; Grendel expands Go templates
    such as `{{ $.nic.MAC }}` (balanced braces)."""
    joins_slurm: bool = True
    """Compute hosts booting this image start slurmd as a dynamic node (the post-boot script)."""


class DhcpRange(StrictModel):
    start: IPv4
    """First address of the dynamic range."""
    end: IPv4
    """Last address of the dynamic range."""


class Dhcp(StrictModel):
    lease_time: GoDuration = "24h"
    """DHCP lease time."""
    dns_servers: tuple[IPv4, ...] = ()
    """Default: Grendel's own address (it answers DNS for the inventory)."""
    domain_search: tuple[DnsName, ...] = ()
    """Default: the site domain."""
    mtu: int = Field(default=1500, ge=576, le=9216)
    """MTU handed out by DHCP."""
    range: DhcpRange | None = None
    """Dynamic range handed to unknown machines (discovery); inventory addresses must be outside it."""


class ProvisioningSubnet(StrictModel):
    """A further provisioning network, routed to Grendel's (its router relays DHCP to Grendel)."""

    subnet: IPv4Network
    """The network (CIDR); its hosts' addresses lie in it."""
    gateway: IPv4
    """Default gateway handed to its hosts (Grendel picks a host's subnet by its address)."""
    range: DhcpRange | None = None
    """Addresses kept for machines Grendel does not know yet (discovery); inventory addresses must be outside it.
    Grendel itself hands out only inventory addresses."""
    mtu: int | None = Field(default=None, ge=576, le=9216)
    """MTU handed out on this subnet (default: `dhcp.mtu`)."""


class BmcNetwork(StrictModel):
    """The network of the hosts' BMCs, when it is not the provisioning network."""

    subnet: IPv4Network
    """The BMC network (CIDR); every `hosts[].bmc.ip` lies in it."""
    gateway: IPv4
    """Default gateway of the BMC network (handed to BMCs that boot by DHCP)."""


class GrendelApi(StrictModel):
    expose: bool = False
    """Publish Grendel's HTTP provisioning endpoint (port 80: iPXE scripts, kernels, images, join
    scripts) through Traefik with TLS from the internal CA. Grendel's REST API stays on its Unix
    socket inside the pod (`kubectl exec deploy/grendel -- grendel ...`)."""
    hostname: DnsName | None = None
    """Host name of that Ingress (required when `expose` is true)."""

    @model_validator(mode="after")
    def _hostname_when_exposed(self) -> GrendelApi:
        if self.expose and self.hostname is None:
            raise ValueError("hostname is required when expose is true")
        return self


class ProvisioningConfig(StrictModel):
    enabled: bool = True
    """Deploy Grendel (false keeps the settings but deploys nothing)."""
    namespace: K8sName = "provisioning"
    """Namespace of Grendel; the attachment must be in it. No other layer's or site app's namespace."""
    attachment: K8sName
    """Name of the IPVLAN network attachment (hpcforge:network.attachments) on the provisioning network."""
    node: DnsName
    """Kubernetes node (kubernetes.io/hostname) that has the provisioning NIC: a lowercase DNS name."""
    address: IPv4Interface
    """Grendel's static address on the provisioning network, with prefix (e.g. 10.10.2.2/24)."""
    subnet: IPv4Network
    """The provisioning network (CIDR); host addresses, the gateway and the DHCP range lie in it."""
    gateway: IPv4
    """Default gateway handed out by DHCP."""
    dhcp: Dhcp = Field(default_factory=Dhcp)
    """DHCP settings of Grendel."""
    subnets: tuple[ProvisioningSubnet, ...] = ()
    """Further provisioning networks (other racks or rooms), each with its own gateway and discovery range;
    each becomes a `[dhcp] subnets` entry of grendel.toml."""
    bmc_network: BmcNetwork | None = None
    """The BMCs' own network (null: BMCs are on the provisioning networks)."""
    storage: Storage = Field(default_factory=lambda: Storage(size="50Gi"))
    """Volume of Grendel's database and boot images (`/var/lib/grendel`)."""
    api: GrendelApi = Field(default_factory=GrendelApi)
    """Publishing Grendel's HTTP endpoint through Traefik."""
    admin_ssh_public_keys: tuple[str, ...] = ()
    """OpenSSH public keys for Grendel's `admin_ssh_pubkeys`."""
    images: tuple[BootImage, ...] = Field(min_length=1)
    """Boot images: kernel, initrds, root image and kernel command line."""
    default_image: K8sName | None = None
    """Image of hosts that name none."""
    inventory: InventoryRef | None = None
    """The bare-metal inventory: a YAML file with one key, `hosts` (a list of hosts, each with the keys below under
    `hosts[]`), e.g. `{file: inventory/prod/hosts.yaml}`. Hosts are not accepted inline in the stack config."""
    hosts: tuple[Host, ...] = ()
    """The hosts of `inventory.file` (the loader fills this from the file; the stack config may not set it)."""

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

    def networks(self) -> list[tuple[ipaddress.IPv4Network, str]]:
        """(network, gateway) of every provisioning network, the main one first."""
        return [
            (ipaddress.IPv4Network(self.subnet), self.gateway),
            *((ipaddress.IPv4Network(extra.subnet), extra.gateway) for extra in self.subnets),
        ]

    def prefix_of(self, ip: str, *, bmc: bool = False) -> int:
        """Prefix length of the network an inventory address is on."""
        address = ipaddress.IPv4Address(ip)
        if bmc and self.bmc_network is not None:
            return ipaddress.IPv4Network(self.bmc_network.subnet).prefixlen
        for network, _ in self.networks():
            if address in network:
                return network.prefixlen
        return self.prefix_length

    @cached_property
    def _images_by_name(self) -> dict[str, BootImage]:
        return {image.name: image for image in self.images}

    def image(self, name: str) -> BootImage | None:
        return self._images_by_name.get(name)

    def image_of(self, host: Host) -> str | None:
        return host.image or self.default_image

    @cached_property
    def _joining_images(self) -> frozenset[str]:
        return frozenset(name for name, image in self._images_by_name.items() if image.joins_slurm)

    def joins_slurm(self, host: Host) -> bool:
        """Whether `host` boots an image that starts slurmd as a dynamic node of its nodeset (one set lookup)."""
        return host.nodeset is not None and (self.image_of(host) or "") in self._joining_images

    def joining_hosts(self) -> list[Host]:
        """The hosts that `joins_slurm`, in inventory order."""
        return [host for host in self.hosts if self.joins_slurm(host)]

    @model_validator(mode="after")
    def _inventory(self) -> ProvisioningConfig:
        # One pass over the inventory with dictionaries: a 10,000-host site validates in milliseconds.
        problems = ProblemCollector()
        nets = _check_networks(self, problems)
        known_images = _check_images(self, problems)
        inside = _check_hosts(self, problems, nets, known_images)
        _fold_dhcp_ranges(problems, nets.ranges)
        _fold_default_image(problems, known_images)
        _fold_empty_networks(self, problems, nets, inside)
        problems.raise_if_any()
        return self


class _Net(NamedTuple):
    """A network as integers, for one comparison per address: 100,000 hosts."""

    first: int
    last: int
    dynamic: tuple[int, int, str] | None
    """The DHCP dynamic range (first, last, as written), if any."""
    name: str


DhcpRanges = list[tuple[list[str | int], ipaddress.IPv4Network, DhcpRange | None]]


@dataclass(frozen=True)
class _Networks:
    host_nets: list[_Net]
    """The provisioning networks, the main one first: where hosts' addresses lie."""
    bmc_nets: list[_Net]
    """Where BMCs' addresses lie: the BMC network when there is one, else the provisioning networks."""
    ranges: DhcpRanges
    """(key, network, DHCP range) of every provisioning network."""


def _net(network: ipaddress.IPv4Network, dynamic: tuple[int, int, str] | None = None) -> _Net:
    return _Net(int(network.network_address), int(network.broadcast_address), dynamic, str(network))


def _not_a_host_address(address: ipaddress.IPv4Address, network: ipaddress.IPv4Network) -> str | None:
    """`the network address` or `the broadcast address` when `address` is one of them, in a network that has host
    addresses besides (a /30 or larger: in a /31 both addresses are hosts', RFC 3021); else None."""
    if network.prefixlen > 30:
        return None
    if address == network.network_address:
        return "the network address"
    return "the broadcast address" if address == network.broadcast_address else None


def _in_network(
    problems: ProblemCollector,
    path: list[str | int],
    address: ipaddress.IPv4Address,
    shown: str,
    what: str,
    network: ipaddress.IPv4Network,
) -> None:
    """An address (written `shown`) that must be a host address of `network` (`what`: its name in messages)."""
    if address not in network:
        problems.add(path, f"{shown} is not in {what} {network}")
    elif (special := _not_a_host_address(address, network)) is not None:
        problems.add(path, f"{shown} is {special} of {what} {network}, not a host address")


def _check_networks(cfg: ProvisioningConfig, problems: ProblemCollector) -> _Networks:
    """Grendel's address, the gateways and DHCP ranges in their networks, on host addresses; no network overlapping
    another."""
    subnet = ipaddress.IPv4Network(cfg.subnet)
    grendel = ipaddress.IPv4Interface(cfg.address)
    if grendel.network != subnet:
        problems.add(["address"], f"{cfg.address} is not in the provisioning subnet {cfg.subnet}")
    else:
        _in_network(problems, ["address"], grendel.ip, cfg.address, "the provisioning subnet", subnet)
    _in_network(problems, ["gateway"], ipaddress.IPv4Address(cfg.gateway), cfg.gateway, "the provisioning subnet", subnet)
    ranges: DhcpRanges = [(["dhcp", "range"], subnet, cfg.dhcp.range)]
    networks = [network for network, _ in cfg.networks()]
    # Each subnet against the networks before it (the main one first), in that order: sorted intervals, not pairs.
    overlaps: dict[int, list[int]] = {}
    for earlier, later in overlapping_pairs([(int(n.network_address), int(n.broadcast_address)) for n in networks]):
        overlaps.setdefault(later, []).append(earlier)
    for index, extra in enumerate(cfg.subnets):
        network = networks[index + 1]
        gateway = ipaddress.IPv4Address(extra.gateway)
        _in_network(problems, ["subnets", index, "gateway"], gateway, extra.gateway, "subnet", network)
        for other_index in overlaps.get(index + 1, ()):
            other = networks[other_index]
            other_name = "the provisioning subnet" if other_index == 0 else f"subnets[{other_index - 1}]"
            problems.add(["subnets", index, "subnet"], f"{extra.subnet} overlaps {other_name} {other}")
        ranges.append((["subnets", index, "range"], network, extra.range))
    host_nets = [_net(network, _check_range(problems, path, network, dhcp_range)) for path, network, dhcp_range in ranges]
    bmc_nets = host_nets
    if cfg.bmc_network is not None:
        bmc_net = ipaddress.IPv4Network(cfg.bmc_network.subnet)
        bmc_gateway = cfg.bmc_network.gateway
        _in_network(
            problems, ["bmcNetwork", "gateway"], ipaddress.IPv4Address(bmc_gateway), bmc_gateway, "the BMC network", bmc_net
        )
        for network, _ in cfg.networks():
            if bmc_net.overlaps(network):
                problems.add(["bmcNetwork", "subnet"], f"{bmc_net} overlaps the provisioning network {network}")
        bmc_nets = [_net(bmc_net)]
    return _Networks(host_nets, bmc_nets, ranges)


def _check_range(
    problems: ProblemCollector, path: list[str | int], network: ipaddress.IPv4Network, dhcp_range: DhcpRange | None
) -> tuple[int, int, str] | None:
    """A DHCP range in order and inside its network; the range as integers (None without one)."""
    if dhcp_range is None:
        return None
    first, last = ipaddress.IPv4Address(dhcp_range.start), ipaddress.IPv4Address(dhcp_range.end)
    if last < first:
        problems.add(path, f"the range ends ({last}) before it starts ({first})")
    what = "the provisioning subnet" if path[0] == "dhcp" else "subnet"
    for end_name, address in (("start", first), ("end", last)):
        _in_network(problems, [*path, end_name], address, str(address), what, network)
    return (int(first), int(last), f"{first}-{last}")


def _check_images(cfg: ProvisioningConfig, problems: ProblemCollector) -> str:
    """Image names unique and the default image known; the known names, as a message lists them."""
    image_names = [image.name for image in cfg.images]
    first_index: dict[str, int] = {}
    for index, image in enumerate(cfg.images):
        if first_index.setdefault(image.name, index) != index:
            problems.add(["images", index, "name"], f"duplicate image name {image.name!r}")
        paths = [("kernel", image.kernel), *((f"initrd[{i}]", p) for i, p in enumerate(image.initrd)), ("liveimg", image.liveimg)]
        for field_name, path in paths:
            if path is not None and (path == REPO_DIR or path.startswith(f"{REPO_DIR}/")):
                field_path: list[str | int] = ["images", index, *(field_name.split("[")[0:1])]
                if "[" in field_name:
                    field_path.append(int(field_name.split("[")[1].rstrip("]")))
                problems.add(
                    field_path,
                    f"{path} is under {REPO_DIR}, which Grendel serves to anyone without a token: keep boot images "
                    f"elsewhere on its volume (e.g. {DATA_DIR}/images/...), where only a booting host gets them",
                )
    known_images = ", ".join(image_names)
    if cfg.default_image is not None and cfg.default_image not in image_names:
        problems.add(["defaultImage"], f"unknown image {cfg.default_image!r} (known: {known_images})")
    return known_images


Owner = tuple[str | None, str]
"""Who holds an address: (host name, what: "" or " (BMC)"), or (None, a description); formatted only for a message."""


def _owner_text(owner: Owner) -> str:
    return owner[1] if owner[0] is None else f"host {owner[0]!r}{owner[1]}"


def _check_hosts(cfg: ProvisioningConfig, problems: ProblemCollector, nets: _Networks, known_images: str) -> dict[int, int]:
    """Every host: a unique name, unique MACs and IPs (the gateways' and Grendel's included), addresses in their
    network and out of its DHCP range, a known image. Returns how many addresses each network (by `id`) holds."""
    ips: dict[str, Owner] = {
        str(ipaddress.IPv4Address(cfg.gateway)): (None, "the gateway"),
        cfg.grendel_ip: (None, "Grendel itself"),
    }
    for extra_index, extra in enumerate(cfg.subnets):
        ips.setdefault(extra.gateway, (None, f"the gateway of subnets[{extra_index}]"))
    if cfg.bmc_network is not None:
        ips.setdefault(cfg.bmc_network.gateway, (None, "the BMC network's gateway"))
    known_image_set = {image.name for image in cfg.images}
    host_index = _NetIndex(nets.host_nets)
    bmc_index = host_index if nets.bmc_nets is nets.host_nets else _NetIndex(nets.bmc_nets)
    clean = _hosts_without_problems(cfg, ips.keys(), known_image_set, host_index, bmc_index)
    if clean is not None:
        return clean
    return _check_each_host(cfg, problems, ips, (known_image_set, known_images), host_index, bmc_index)


def _check_each_host(
    cfg: ProvisioningConfig,
    problems: ProblemCollector,
    ips: dict[str, Owner],
    images: tuple[set[str], str],
    host_index: _NetIndex,
    bmc_index: _NetIndex,
) -> dict[int, int]:
    """`_check_hosts` host by host, saying what is wrong where."""
    known_image_set, known_images = images
    names: dict[str, int] = {}
    macs: dict[str, Owner] = {}
    inside: dict[int, int] = {}
    for index, host in enumerate(cfg.hosts):
        name = host.name
        if name in names:
            problems.add(["hosts", index, "name"], f"host {name!r}: duplicate host name (also hosts[{names[name]}])")
        else:
            names[name] = index
        for mac_key, mac, ip_key, ip_text, what in _interfaces(problems, index, host):
            owner = (name, what)
            seen = macs.setdefault(mac, owner)
            if seen != owner:
                problems.add(
                    ["hosts", index, *mac_key.split(".")], f"host {name!r}: MAC {mac} is already used by {_owner_text(seen)}"
                )
            net_index = bmc_index if what else host_index
            # The common case inline (an address inside a network, not its first or last, out of its DHCP range):
            # 200,000 addresses at 100,000 hosts; anything else is _check_address's, which says what is wrong.
            ip = ipv4_int(ip_text)
            net = net_index.find(ip)
            if net is None or ip in (net.first, net.last) or (net.dynamic is not None and net.dynamic[0] <= ip <= net.dynamic[1]):
                _check_address(
                    cfg, problems, ["hosts", index, *ip_key.split(".")], name, ip_text, net_index, inside, bmc=bool(what)
                )
            else:
                inside[id(net)] = inside.get(id(net), 0) + 1
            seen = ips.setdefault(ip_text, owner)
            if seen != owner:
                problems.add(
                    ["hosts", index, *ip_key.split(".")], f"host {name!r}: IP {ip_text} is already used by {_owner_text(seen)}"
                )
        image_name = host.image or cfg.default_image
        if image_name is None:
            problems.add(["hosts", index, "image"], f"host {name!r}: no image and no provisioning.defaultImage")
        elif image_name not in known_image_set and host.image is not None:
            # A host without its own image whose default is unknown: reported once, at defaultImage.
            problems.add(["hosts", index, "image"], f"host {name!r}: unknown image {image_name!r} (known: {known_images})")
    return inside


def _interfaces(problems: ProblemCollector, index: int, host: Host) -> list[tuple[str, str, str, str, str]]:
    """(MAC key, MAC, IP key, IP, what) of the host's NIC and of its BMC; the BMC's may not be the NIC's."""
    interfaces = [("mac", host.mac, "ip", host.ip, "")]
    if host.bmc is not None:
        interfaces.append(("bmc.mac", host.bmc.mac, "bmc.ip", host.bmc.ip, " (BMC)"))
        if host.bmc.mac == host.mac:
            problems.add(["hosts", index, "bmc", "mac"], f"host {host.name!r}: the BMC has the same MAC as the host NIC")
        if host.bmc.ip == host.ip:
            problems.add(["hosts", index, "bmc", "ip"], f"host {host.name!r}: the BMC has the same IP as the host NIC")
    return interfaces


class _NetIndex:
    """Finds the first of `nets` that holds an address: by bisection when the networks are disjoint (then at most one
    holds it), so that a site with a subnet per rack costs one lookup per address, not one comparison per subnet."""

    def __init__(self, nets: list[_Net]) -> None:
        self.nets = nets
        ordered = sorted(nets, key=lambda n: n.first)
        self._ordered = ordered if all(a.last < b.first for a, b in itertools.pairwise(ordered)) else None
        self._firsts = [n.first for n in ordered]

    def counts_inside(self, addresses: list[str], inside: dict[int, int]) -> bool:
        """Whether every one of `addresses` (canonical dotted quads) is a host address of one of the networks, out
        of its DHCP dynamic range; if so, adds to `inside` how many each network (by `id`) holds. Disjoint networks
        only (else False): the addresses sorted once, each network's counted by bisection."""
        if not addresses:
            return True
        if self._ordered is None:
            return False
        ips = sorted(struct.unpack(f">{len(addresses)}I", b"".join(map(socket.inet_aton, addresses))))
        counted = 0
        for net in self._ordered:
            low, high = bisect.bisect_left(ips, net.first), bisect.bisect_right(ips, net.last)
            if low == high:
                continue
            if ips[low] == net.first or ips[high - 1] == net.last:
                return False
            if net.dynamic is not None and bisect.bisect_left(ips, net.dynamic[0]) != bisect.bisect_right(ips, net.dynamic[1]):
                return False
            inside[id(net)] = inside.get(id(net), 0) + high - low
            counted += high - low
        return counted == len(ips)

    def find(self, ip: int) -> _Net | None:
        if self._ordered is None or len(self.nets) < 8:
            return next((n for n in self.nets if n.first <= ip <= n.last), None)
        at = bisect.bisect_right(self._firsts, ip) - 1
        return self._ordered[at] if at >= 0 and self._ordered[at].last >= ip else None


def _check_address(
    cfg: ProvisioningConfig,
    problems: ProblemCollector,
    path: list[str | int],
    name: str,
    ip_text: str,
    index: _NetIndex,
    inside: dict[int, int],
    *,
    bmc: bool,
) -> None:
    """A host address inside one of `index.nets` (counted in `inside`) and out of its DHCP dynamic range."""
    ip = ipv4_int(ip_text)
    net = index.find(ip)
    nets = index.nets
    if net is None:
        kind = "the BMC network" if bmc and cfg.bmc_network is not None else "the provisioning subnet"
        if len(nets) > 1:
            kind = "the provisioning subnets"
        problems.add(path, f"host {name!r}: IP {ip_text} is outside {kind} {', '.join(n.name for n in nets)}")
        return
    inside[id(net)] = inside.get(id(net), 0) + 1
    if ip in (net.first, net.last) and net.last - net.first > 2:  # a /30 or larger (_not_a_host_address)
        which = "network" if ip == net.first else "broadcast"
        problems.add(path, f"host {name!r}: IP {ip_text} is the {which} address of {net.name}, not a host address")
        return
    if net.dynamic is not None and net.dynamic[0] <= ip <= net.dynamic[1]:
        problems.add(path, f"host {name!r}: IP {ip_text} is inside the DHCP dynamic range {net.dynamic[2]}")


def _fold_default_image(problems: ProblemCollector, known_images: str) -> None:
    """Hosts without an image and no default: one missing key (defaultImage), reported once there."""
    no_image = "no image and no provisioning.defaultImage"
    problems.rewrite(
        lambda found: fold_into(
            found,
            ["defaultImage"],
            lambda where, message: where[:1] == ("hosts",) and message.endswith(no_image),
            lambda picked: (
                f"not set, and {len(picked)} hosts name no image of their own "
                f"({', '.join(f'hosts[{path[1]}]' for path, _ in picked[:3])}{', ...' if len(picked) > 3 else ''}): "
                f"set it to one of {known_images}, or give each host an image"
            ),
        )
    )


def _fold_empty_networks(cfg: ProvisioningConfig, problems: ProblemCollector, nets: _Networks, inside: dict[int, int]) -> None:
    """A subnet that holds none of its addresses is the one mistake behind all of them: reported once."""
    subnet, gateway = ipaddress.IPv4Network(cfg.subnet), ipaddress.IPv4Address(cfg.gateway)
    host_ips: set[tuple[str | int, ...]] = {("ip",)} if cfg.bmc_network is not None else {("ip",), ("bmc", "ip")}
    main_inside = inside.get(id(nets.host_nets[0]), 0) + (gateway in subnet) + (ipaddress.IPv4Interface(cfg.address).ip in subnet)
    main_keys: set[tuple[str | int, ...]] = {("address",), ("gateway",), ("dhcp", "range", "start"), ("dhcp", "range", "end")}
    _fold_network(problems, ("subnet",), subnet, gateway, main_inside, main_keys, host_ips, "the provisioning subnet")
    for index, extra in enumerate(cfg.subnets):
        network, extra_gateway = ipaddress.IPv4Network(extra.subnet), ipaddress.IPv4Address(extra.gateway)
        own: set[tuple[str | int, ...]] = {("subnets", index, "gateway"), ("subnets", index, "range", "start")}
        own.add(("subnets", index, "range", "end"))
        extra_inside = inside.get(id(nets.host_nets[index + 1]), 0) + (extra_gateway in network)
        _fold_network(problems, ("subnets", index, "subnet"), network, extra_gateway, extra_inside, own, host_ips, "subnet")
    if cfg.bmc_network is not None:
        bmc_subnet = ipaddress.IPv4Network(cfg.bmc_network.subnet)
        bmc_gateway = ipaddress.IPv4Address(cfg.bmc_network.gateway)
        bmc_inside = inside.get(id(nets.bmc_nets[0]), 0) + (bmc_gateway in bmc_subnet)
        bmc_keys: set[tuple[str | int, ...]] = {("bmcNetwork", "gateway")}
        bmc_ips: set[tuple[str | int, ...]] = {("bmc", "ip")}
        _fold_network(
            problems, ("bmcNetwork", "subnet"), bmc_subnet, bmc_gateway, bmc_inside, bmc_keys, bmc_ips, "the BMC network"
        )


def _fold_dhcp_ranges(problems: ProblemCollector, ranges: DhcpRanges) -> None:
    """A DHCP range over many hosts' addresses is one mistake (the range): reported once, at the range."""
    for path, _, dhcp_range in ranges:
        if dhcp_range is None:
            continue
        span = f"{dhcp_range.start}-{dhcp_range.end}"
        inside_range = f"is inside the DHCP dynamic range {span}"

        def consequence(where: tuple[str | int, ...], message: str, inside_range: str = inside_range) -> bool:
            return where[:1] == ("hosts",) and inside_range in message

        def describe(picked: list[tuple[tuple[str | int, ...], str]], span: str = span) -> str:
            return dhcp_range_message(span, picked)

        def change(
            found: list[tuple[tuple[str | int, ...], str]], path: list[str | int] = path
        ) -> list[tuple[tuple[str | int, ...], str]]:
            return fold_into(found, path, consequence, describe)

        problems.rewrite(change)


def _fold_network(
    problems: ProblemCollector,
    key: tuple[str | int, ...],
    subnet: ipaddress.IPv4Network,
    gateway: ipaddress.IPv4Address,
    inside: int,
    own_keys: set[tuple[str | int, ...]],
    ip_keys: set[tuple[str | int, ...]],
    what: str,
) -> None:
    """A subnet that holds none of its addresses is reported once, at the subnet (root_causes.fold_network)."""

    def consequence(path: tuple[str | int, ...], message: str) -> bool:
        if path in own_keys:
            return f"is not in {what} {subnet}" in message
        return path[:1] == ("hosts",) and path[2:] in ip_keys and "is outside " in message and str(subnet) in message

    guess = ipaddress.IPv4Network(f"{gateway}/{subnet.prefixlen}", strict=False)
    hint = f"the gateway {gateway} is in {guess}: is that the network you meant?"
    problems.rewrite(lambda found: fold_network(found, key, subnet, consequence, inside, hint, what))
