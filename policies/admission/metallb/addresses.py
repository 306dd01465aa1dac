"""MetalLB's names (group, namespace, webhooks, BGP types), the parser's refusal, and addresses and CIDRs as
MetalLB v0.16.1 parses them with Go's net package (internal/config/config.go).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from ...rules.gotime import go_quote

GROUP = "metallb.io"
NAMESPACE = "metallb-system"
"""The controller's namespace in hpcforge's deployment (components/layers/network/layer.py METALLB_NAMESPACE)."""

WEBHOOKS: Mapping[str, str] = {
    "IPAddressPool": "ipaddresspoolvalidationwebhook.metallb.io",
    "L2Advertisement": "l2advertisementvalidationwebhook.metallb.io",
    "BGPAdvertisement": "bgpadvertisementvalidationwebhook.metallb.io",
    "BGPPeer": "bgppeervalidationwebhook.metallb.io",
    "Community": "communityvalidationwebhook.metallb.io",
}
VERSIONS: Mapping[str, str] = {
    "IPAddressPool": "v1beta1",
    "L2Advertisement": "v1beta1",
    "BGPAdvertisement": "v1beta1",
    "BGPPeer": "v1beta2",
    "Community": "v1beta1",
}
BGP_TYPES = ("native", "frr", "frr-k8s")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class RefusedError(ValueError):
    """The first error of MetalLB's configuration parser (the webhook's message)."""


def go_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """net.ParseIP (no zone, no surrounding space)."""
    if "%" in value or value != value.strip():
        return None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def go_cidr(value: str) -> Network | None:
    """net.ParseCIDR: `address/prefix-length` (host bits allowed and masked), else None."""
    address_text, slash, prefix = value.partition("/")
    if not slash or not prefix.isascii() or not prefix.isdigit():
        return None
    address = go_ip(address_text)
    if address is None or int(prefix) > address.max_prefixlen:
        return None
    length = int(prefix)
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    if mapped is not None and length >= 96:
        # The masked address keeps ::ffff:, so Go reads the network as IPv4 (IPNet.String, IP.To4).
        return ipaddress.IPv4Network(f"{mapped}/{length - 96}", strict=False)
    return ipaddress.ip_network(f"{address}/{length}", strict=False)


def parse_cidr(entry: str) -> list[Network]:
    """config.go ParseCIDR: a CIDR, or a `first-last` range summarized into CIDRs."""
    if "-" not in entry:
        network = go_cidr(entry)
        if network is None:
            raise RefusedError(f"invalid CIDR {go_quote(entry)}")
        return [network]
    first_text, last_text = entry.split("-", 1)
    first = go_ip(first_text.strip())
    if first is None:
        raise RefusedError(f"invalid IP range {go_quote(entry)}: invalid start IP {go_quote(first_text)}")
    last = go_ip(last_text.strip())
    if last is None:
        raise RefusedError(f"invalid IP range {go_quote(entry)}: invalid end IP {go_quote(last_text)}")
    if _sixteen(first) > _sixteen(last):
        raise RefusedError(
            f"invalid IP range {go_quote(entry)}: start IP {go_quote(str(first))} is after the end IP {go_quote(str(last))}"
        )
    first, last = _to4(first), _to4(last)
    if first.version != last.version:
        return []  # ipaddr.Summarize answers nothing for two address families
    return list(ipaddress.summarize_address_range(first, last))


def _to4(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """IP.To4: an IPv4-mapped IPv6 address is the IPv4 address (ipaddr.Summarize summarizes it as one)."""
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return mapped if mapped is not None else address


def _sixteen(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bytes:
    """The 16-byte form net.ParseIP gives (IPv4 as ::ffff:a.b.c.d), which bytes.Compare orders."""
    if isinstance(address, ipaddress.IPv4Address):
        return bytes(10) + b"\xff\xff" + address.packed
    return address.packed


def cidrs_overlap(a: Network, b: Network) -> bool:
    """config.go cidrsOverlap (cidrContainsCIDR either way; different families never overlap)."""
    if a.version != b.version:
        return False
    return a.subnet_of(b) or b.subnet_of(a)  # type: ignore[arg-type]
