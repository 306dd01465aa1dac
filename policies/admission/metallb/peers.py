"""BGPPeers as MetalLB v0.16.1's internal/config/config.go parses them, and what the native and FRR BGP
implementations refuse of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...rules.access import get, items, mapping, text
from ...rules.gotime import SECOND, GoError, format_duration, go_quote, parse_duration
from ...rules.netpol import selector_matches
from .addresses import RefusedError, go_ip, parse_cidr
from .pools import go_uint


def _timer(spec: Mapping[str, Any], key: str) -> int | None:
    raw = spec.get(key)
    if raw is None:
        return None
    try:
        return parse_duration(str(raw))
    except GoError as error:
        raise RefusedError(f"cannot decode spec.{key}: {error}") from None


def parse_timers(spec: Mapping[str, Any]) -> None:
    """config.go parseTimers: hold time 0 or at least 3s (whole seconds), keepalive not above hold time."""
    given_hold, given_keepalive = _timer(spec, "holdTime"), _timer(spec, "keepaliveTime")
    if given_hold is None and given_keepalive is None:
        return
    if given_hold is not None:
        hold = given_hold
        # Go's integer division truncates toward zero.
        keepalive = given_keepalive if given_keepalive is not None else (abs(hold) // 3) * (1 if hold >= 0 else -1)
    else:
        assert given_keepalive is not None
        hold, keepalive = given_keepalive * 3, given_keepalive
    rounded = int(hold / SECOND) * SECOND  # time.Duration(int(holdTime.Seconds())) * time.Second
    if rounded != 0 and rounded < 3 * SECOND:
        raise RefusedError(f"invalid hold time {_shown(given_hold)}: must be 0 or >=3s")
    if keepalive > hold:
        raise RefusedError(f"invalid keepaliveTime {_shown(given_keepalive)}, must be lower than holdTime {_shown(given_hold)}")


def _shown(duration: int | None) -> str:
    """`%q` of a *metav1.Duration: its String() quoted, `%!q(<nil>)` when unset."""
    return go_quote(format_duration(duration)) if duration is not None else "%!q(<nil>)"


def peer_from_cr(obj: Mapping[str, Any]) -> None:
    """config.go peerFromCR: ASNs, ebgpMultiHop, address or interface, timers, addresses that parse, password."""
    spec = mapping(obj.get("spec"))
    my_asn, asn = go_uint(spec.get("myASN")), go_uint(spec.get("peerASN"))
    dynamic = text(spec.get("dynamicASN")) or ""
    if my_asn == 0:
        raise RefusedError("missing local ASN")
    if asn == 0 and not dynamic:
        raise RefusedError("missing peer ASN and dynamicASN")
    if asn != 0 and dynamic:
        raise RefusedError("both peer ASN and dynamicASN specified")
    if dynamic and dynamic not in ("internal", "external"):
        raise RefusedError(f"invalid dynamicASN {dynamic}")
    if asn == my_asn and spec.get("ebgpMultiHop") is True:
        raise RefusedError("invalid ebgp-multihop parameter set for an ibgp peer")
    address, interface = text(spec.get("peerAddress")) or "", text(spec.get("interface")) or ""
    if not address and not interface:
        raise RefusedError("peer has no Address or Interface specified")
    if address and interface:
        raise RefusedError("peer has both Address and Interface specified")
    try:
        parse_timers(spec)
    except RefusedError as error:
        raise RefusedError(f"invalid BGPPeer timers: {error}") from None
    if address and go_ip(address) is None:
        raise RefusedError(f"invalid BGPPeer address {go_quote(address)}")
    router_id = text(spec.get("routerID")) or ""
    if router_id and go_ip(router_id) is None:
        raise RefusedError(f"invalid router ID {go_quote(router_id)}")
    source = text(spec.get("sourceAddress")) or ""
    if source and go_ip(source) is None:
        raise RefusedError(f"invalid source IP {go_quote(source)}")


def peer_identifier(spec: Mapping[str, Any]) -> str:
    """validation.go PeerIdentifier: the address (or interface), with `-vrf` when in a VRF."""
    ident = text(spec.get("peerAddress")) or text(spec.get("interface")) or ""
    vrf = text(spec.get("vrf")) or ""
    return f"{ident}-{vrf}" if vrf else ident


def _selected_nodes(nodes: Sequence[Mapping[str, str]], selectors: list[Any]) -> set[int]:
    if not selectors:
        return set(range(len(nodes)))
    return {i for i, labels in enumerate(nodes) if any(selector_matches(s, labels) for s in selectors)}


def peers_share_node(p: Mapping[str, Any], q: Mapping[str, Any], nodes: Sequence[Mapping[str, str]]) -> bool:
    """validation.go peersShareNode: some node both peers select (true when no node is known)."""
    if not nodes:
        return True
    first = _selected_nodes(nodes, items(get(p, "spec", "nodeSelectors")))
    return bool(first & _selected_nodes(nodes, items(get(q, "spec", "nodeSelectors"))))


def discard_native_only(peers: Sequence[Mapping[str, Any]], nodes: Sequence[Mapping[str, str]]) -> None:
    """validation.go DiscardNativeOnly / checkFRRPeersCompatible / peersCanRunOnSameNode: peers on one node
    share the routerID, differ in address (per VRF), and share myASN within a VRF."""
    for i, p in enumerate(peers):
        for q in peers[:i]:
            if not peers_share_node(p, q, nodes):
                continue
            ps, qs = mapping(p.get("spec")), mapping(q.get("spec"))
            p_router, q_router = text(ps.get("routerID")) or "", text(qs.get("routerID")) or ""
            if p_router != q_router:
                raise RefusedError(
                    f"peer {p_router} has RouterID different from {q_router}, in FRR mode peers selecting the same node "
                    "must all have the same RouterID"
                )
            if peer_identifier(ps) == peer_identifier(qs):
                raise RefusedError(
                    f"peer {peer_identifier(ps)} already exists, FRR mode doesn't support duplicate BGPPeers selecting the same node"
                )
            if go_uint(ps.get("myASN")) != go_uint(qs.get("myASN")) and (text(ps.get("vrf")) or "") == (
                text(qs.get("vrf")) or ""
            ):
                raise RefusedError(
                    f"peer {peer_identifier(ps)} has myAsn different from {peer_identifier(qs)}, in FRR mode peers selecting "
                    "the same node must have the same myAsn within the same VRF"
                )


_NATIVE_FORBIDDEN = (
    ("keepaliveTime", "keepalive-time"),
    ("vrf", "vrf"),
    ("connectTime", "connect time"),
    ("enableGracefulRestart", "EnableGracefulRestart flag"),
    ("disableMP", "disable MP flag"),
    ("dualStackAddressFamily", "dualstackaddressfamily flag"),
    ("dynamicASN", "dynamicASN"),
    ("interface", "interface"),
    ("localASN", "localASN"),
)


def discard_frr_only(  # noqa: PLR0912 (one branch per FRR-only field that upstream discards)
    peers: Sequence[Mapping[str, Any]], pools: Sequence[Mapping[str, Any]], bgp_advs: Sequence[Mapping[str, Any]]
) -> None:
    """validation.go DiscardFRROnly: no FRR-only peer field, no IPv6 pool advertised over BGP (BFD profiles and
    non-legacy communities not reproduced)."""
    for peer in peers:
        spec = mapping(peer.get("spec"))
        address = text(spec.get("peerAddress")) or ""
        for key, label in _NATIVE_FORBIDDEN:
            value = spec.get(key)
            if key == "keepaliveTime" and isinstance(value, str):
                try:
                    value = parse_duration(value)
                except GoError:
                    value = None
            if key == "connectTime" and value is not None:
                value = True
            if value not in (None, "", 0, False):
                raise RefusedError(f"peer {address} has {label} set on native bgp mode")
    if not bgp_advs:
        return
    selected: dict[str, Mapping[str, Any]] = {}
    everything = False
    names: set[str] = set()
    selectors: list[Any] = []
    for adv in bgp_advs:
        adv_names, adv_selectors = items(get(adv, "spec", "ipAddressPools")), items(get(adv, "spec", "ipAddressPoolSelectors"))
        if not adv_names and not adv_selectors:
            everything = True
        names.update(str(n) for n in adv_names)
        selectors += adv_selectors
    for pool in pools:
        name = text(get(pool, "metadata", "name")) or ""
        labels = {str(k): str(v) for k, v in mapping(get(pool, "metadata", "labels")).items()}
        if everything or (not names and not selectors) or name in names or any(selector_matches(s, labels) for s in selectors):
            selected[name] = pool
    for name, pool in selected.items():
        for entry in items(get(pool, "spec", "addresses")):
            try:
                networks = parse_cidr(str(entry))
            except RefusedError as error:
                raise RefusedError(f"invalid CIDR {go_quote(str(entry))} in pool {go_quote(name)}: {error}") from None
            for network in networks:
                if network.version == 6:
                    raise RefusedError(f"pool {go_quote(name)} has ipv6 CIDR {network}, native bgp mode does not support ipv6")
