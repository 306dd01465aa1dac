"""Network stack configuration: MetalLB pools and adverts, Traefik, Multus/IPVLAN, CoreDNS zones."""

from __future__ import annotations

import ipaddress
from functools import cached_property
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...ground.base import (
    DnsName,
    GoDuration,
    InterfaceName,
    IPv4,
    IPv4Network,
    K8sName,
    ProblemCollector,
    StrictModel,
    duplicates,
    first_by_name,
    go_duration_seconds,
    overlapping_pairs,
    parse_address_range,
)
from ...ground.exposure import PRIVATE_RANGES, Exposure


class AddressPool(StrictModel):
    """A MetalLB IPAddressPool."""

    name: K8sName
    """Pool name; `ingress.pool`, `dns.pool`, `slurm.login.pool` and `slurm.controller.service.pool` refer to it."""
    addresses: tuple[str, ...] = Field(min_length=1)
    """Address ranges: `10.0.0.10-10.0.0.20`, CIDRs or single addresses (given to MetalLB as `/32`); no two entries of
    any pool may overlap (MetalLB refuses the pool)."""
    auto_assign: bool = False
    """Whether MetalLB may hand out addresses from this pool to any LoadBalancer without asking."""

    @field_validator("addresses", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("addresses")
    @classmethod
    def _valid_ranges(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            parse_address_range(entry)
        return value

    def metallb_addresses(self) -> list[str]:
        """`spec.addresses` of the IPAddressPool: MetalLB v0.16.1 parses an entry without `-` as a CIDR
        (internal/config/config.go ParseCIDR, net.ParseCIDR), so a single address becomes `address/32`."""
        return [entry if "-" in entry or "/" in entry else f"{entry.strip()}/32" for entry in self.addresses]

    def ranges(self) -> list[tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]]:
        return [parse_address_range(entry) for entry in self.addresses]

    def contains(self, address: str) -> bool:
        ip = ipaddress.IPv4Address(address)
        return any(first <= ip <= last for first, last in self.ranges())


class BgpPeer(StrictModel):
    name: K8sName
    """Name of the MetalLB BGPPeer object."""
    address: IPv4
    """Address of the router (`peerAddress`)."""
    peer_asn: int = Field(ge=1, le=4294967295)
    """AS number of the router (`peerASN`)."""
    my_asn: int = Field(ge=1, le=4294967295)
    """AS number MetalLB announces from (`myASN`)."""
    hold_time: GoDuration = "90s"
    """BGP hold time (`holdTime`), a Go duration such as `90s` (MetalLB parses it with Go's time.ParseDuration): 0 or at
    least 3s."""


class Advertisement(StrictModel):
    """How MetalLB announces the pools: layer 2 (ARP) or BGP."""

    mode: Literal["l2", "bgp"] = "l2"
    """`l2`: one L2Advertisement (ARP) of every pool; `bgp`: a BGPPeer per peer and one BGPAdvertisement of every pool
    (MetalLB's frr-k8s backend is switched on)."""
    interfaces: tuple[InterfaceName, ...] = ()
    """L2 only: announce only from these node interfaces (empty: all)."""
    peers: tuple[BgpPeer, ...] = ()
    """BGP only: the routers to peer with: each at its own address, all with the same `myAsn` (every speaker peers with
    every router, and MetalLB's frr-k8s backend refuses two peers of one node that differ in myASN or share an
    address)."""

    @model_validator(mode="after")
    def _peers_match_mode(self) -> Advertisement:
        problems = ProblemCollector()
        if self.mode == "bgp" and not self.peers:
            problems.add(["peers"], "BGP advertisement needs at least one peer")
        if self.mode == "l2" and self.peers:
            problems.add(["peers"], "peers are only used with mode: bgp")
        for name in duplicates(peer.name for peer in self.peers):
            problems.add(["peers"], f"duplicate peer name {name!r}")
        self._check_peers_for_metallb(problems)
        problems.raise_if_any()
        return self

    def _check_peers_for_metallb(self, problems: ProblemCollector) -> None:
        """What MetalLB v0.16.1's BGPPeer webhook refuses of the peers hpcforge makes (no nodeSelectors, no VRF:
        every pair of peers shares every node): internal/config/validation.go peersCanRunOnSameNode (frr-k8s,
        the backend `mode: bgp` switches on) and config.go parseTimers."""
        first: dict[str, BgpPeer] = {}
        for index, peer in enumerate(self.peers):
            if self.peers[0].my_asn != peer.my_asn:
                problems.add(
                    ["peers", index, "myAsn"],
                    f"peer {peer.name!r}: myAsn {peer.my_asn} differs from myAsn {self.peers[0].my_asn} of peer {self.peers[0].name!r}: "
                    "MetalLB (frr-k8s) refuses peers of one node that announce from different ASNs",
                )
            if peer.address in first:
                problems.add(
                    ["peers", index, "address"],
                    f"peer {peer.name!r}: {peer.address} is already the address of peer {first[peer.address].name!r}: "
                    "MetalLB (frr-k8s) refuses two peers of one node at the same address",
                )
            first.setdefault(peer.address, peer)
            # parseTimers: time.Duration(int(holdTime.Seconds())) * time.Second must be 0 or at least 3s.
            if 0 < int(go_duration_seconds(peer.hold_time)) < 3:
                problems.add(
                    ["peers", index, "holdTime"],
                    f"peer {peer.name!r}: {peer.hold_time} is not a BGP hold time MetalLB accepts (0 or at least 3s)",
                )


class Ingress(StrictModel):
    """Traefik, the site's ingress controller."""

    pool: K8sName
    """The MetalLB pool that Traefik's LoadBalancer address comes from."""
    address: IPv4 | None = None
    """A fixed address inside that pool (recommended: DNS points at it)."""
    replicas: int = Field(default=1, ge=1, le=10)
    """Traefik replicas; with more than one, a PodDisruptionBudget keeps one running."""
    exposure: Exposure = Field(default_factory=Exposure)
    """Who may reach Traefik's LoadBalancer, hence every route hpcforge publishes (Argo CD, Grendel, the registry,
    the directory's LDAPS): `sourceRanges` (default: `network.siteRanges`) or `public: true`."""


class StaticIpam(StrictModel):
    """Addresses set per pod, in the `ips` of its network-selection annotation (what Grendel uses)."""

    type: Literal["static"] = "static"
    """Static IPAM: each pod names its own address."""


class WhereaboutsIpam(StrictModel):
    """Addresses allocated from `range` by the whereabouts IPAM plugin (not installed by hpcforge)."""

    type: Literal["whereabouts"] = "whereabouts"
    """whereabouts IPAM: addresses are allocated from `range`."""
    range: IPv4Network
    exclude: tuple[IPv4Network, ...] = ()
    """Parts of `range` that are never allocated."""
    gateway: IPv4 | None = None
    """Gateway put into the IPAM result. Inside `range`, it is also excluded (whereabouts would otherwise hand it to
    a pod: it allocates from the first address of `range` on and skips only `exclude`)."""


class NetworkAttachment(StrictModel):
    """An IPVLAN NetworkAttachmentDefinition (Multus) on a physical network."""

    name: K8sName
    """Name of the NetworkAttachmentDefinition; pods (and `provisioning.attachment`) refer to it."""
    namespace: K8sName
    """Namespace of the NetworkAttachmentDefinition: the namespace of the pods that use it (for Grendel,
    `provisioning.namespace`)."""
    master: InterfaceName
    """The host interface the IPVLAN sub-interfaces are created on (a Linux interface name)."""
    mode: Literal["l2", "l3", "l3s"] = "l2"
    """IPVLAN mode."""
    mtu: int | None = Field(default=None, ge=576, le=9216)
    """MTU of the IPVLAN interface (null: the master interface's)."""
    ipam: StaticIpam | WhereaboutsIpam = Field(default_factory=StaticIpam, discriminator="type")
    """How pods get their address on this network; Grendel needs `static`."""


class DnsZone(StrictModel):
    """A zone that the site's CoreDNS answers for the compute plane."""

    name: DnsName
    """Zone name. The zone named like `hpcforge:domain` also gets the bare-metal inventory (hosts and BMCs)."""
    hosts: dict[DnsName, IPv4] = Field(default_factory=dict)
    """Extra static records: host name (lowercase DNS labels, relative to the zone) -> address (the provisioning
    inventory is added automatically)."""


class Dns(StrictModel):
    enabled: bool = True
    """Run the site DNS: a CoreDNS Deployment `site-dns` behind a MetalLB LoadBalancer on port 53."""
    pool: K8sName | None = None
    """MetalLB pool for the DNS service address (default: the ingress pool)."""
    address: IPv4 | None = None
    """Fixed address of the DNS service inside its pool (null: MetalLB picks a free one)."""
    zones: tuple[DnsZone, ...] = ()
    """Zones the site DNS answers authoritatively; other names are forwarded to `upstreams`."""
    upstreams: tuple[IPv4, ...] = ("1.1.1.1", "9.9.9.9")
    """Where names outside the site's zones are forwarded."""
    replicas: int = Field(default=2, ge=1, le=10)
    """CoreDNS replicas (replaced one at a time; a PodDisruptionBudget allows one down)."""
    exposure: Exposure = Field(default_factory=Exposure)
    """Who may query the site DNS's LoadBalancer: `sourceRanges` (default: `network.siteRanges`) or `public: true`."""


class NetworkConfig(StrictModel):
    pools: tuple[AddressPool, ...] = Field(min_length=1)
    site_ranges: tuple[IPv4Network, ...] = Field(default=PRIVATE_RANGES, min_length=1)
    """The site's own networks (CIDRs): the clients every published service (a LoadBalancer, a route through Traefik)
    accepts unless its `exposure` names other ranges or says `public: true`. Default: the private networks of RFC 1918
    (`10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`); name the site's real ones."""
    advertisement: Advertisement = Field(default_factory=Advertisement)
    """How MetalLB announces the pools' addresses: layer 2 (ARP) or BGP."""
    ingress: Ingress
    attachments: tuple[NetworkAttachment, ...] = ()
    """IPVLAN networks that pods join through Multus (e.g. the provisioning network for Grendel)."""
    dns: Dns = Field(default_factory=Dns)
    """The site DNS (CoreDNS) for the compute plane."""

    def pool(self, name: str) -> AddressPool | None:
        return self._pools_by_name.get(name)

    @cached_property
    def _pools_by_name(self) -> dict[str, AddressPool]:
        """The first pool of each name (what a scan finds), so that a lookup costs one step, not one per pool."""
        return first_by_name(self.pools)

    def attachment(self, name: str) -> NetworkAttachment | None:
        return self._attachments_by_name.get(name)

    @cached_property
    def _attachments_by_name(self) -> dict[str, NetworkAttachment]:
        """The first attachment of each name (what a scan finds), so that a lookup costs one step, not one per attachment."""
        return first_by_name(self.attachments)

    @model_validator(mode="after")
    def _cross_checks(self) -> NetworkConfig:
        problems = ProblemCollector()
        if "0.0.0.0/0" in self.site_ranges:
            problems.add(["siteRanges"], "0.0.0.0/0 is every address, not the site's: a public service says public: true")
        for name in duplicates(pool.name for pool in self.pools):
            problems.add(["pools"], f"duplicate pool name {name!r}")
        # MetalLB v0.16.1's IPAddressPool webhook refuses a pool one of whose addresses overlaps an address of any
        # pool, itself included (internal/config/config.go poolsFor, cidrsOverlap); refuse it here instead.
        spans = [
            (index, pool.name, entry, *span)
            for index, pool in enumerate(self.pools)
            for entry, span in zip(pool.addresses, pool.ranges(), strict=True)
        ]
        for a, b in overlapping_pairs([(first, last) for *_, first, last in spans]):
            index_a, name_a, entry_a, first_a, last_a = spans[a]
            index_b, _name_b, entry_b, first_b, last_b = spans[b]
            if index_a != index_b:
                message = f"overlaps pool {name_a!r} ({first_b}-{last_b} vs {first_a}-{last_a})"
            else:
                message = f"{entry_b} overlaps {entry_a} of the same pool: MetalLB refuses overlapping addresses"
            problems.add(["pools", index_b, "addresses"], message)
        self._check_pool_address(problems, ["ingress"], self.ingress.pool, self.ingress.address)
        if self.dns.enabled:
            self._check_pool_address(problems, ["dns"], self.dns.pool or self.ingress.pool, self.dns.address)
            if self.dns.address and self.dns.address == self.ingress.address:
                problems.add(["dns", "address"], f"{self.dns.address} is already the ingress address")
        for name in duplicates((att.namespace, att.name) for att in self.attachments):
            problems.add(["attachments"], f"duplicate attachment {name[1]!r} in namespace {name[0]!r}")
        for name in duplicates(zone.name for zone in self.dns.zones):
            problems.add(["dns", "zones"], f"duplicate zone {name!r}")
        problems.raise_if_any()
        return self

    def _check_pool_address(
        self, problems: ProblemCollector, where: list[str | int], pool_name: str, address: str | None
    ) -> None:
        pool = self.pool(pool_name)
        if pool is None:
            known = ", ".join(p.name for p in self.pools)
            problems.add([*where, "pool"], f"unknown pool {pool_name!r} (known: {known})")
        elif address is not None and not pool.contains(address):
            problems.add([*where, "address"], f"{address} is not inside pool {pool_name!r} ({', '.join(pool.addresses)})")
