"""MetalLB's validating webhooks, as MetalLB v0.16.1 decides them, for IPAddressPools, L2Advertisements,
BGPAdvertisements, BGPPeers and Communities.

The controller serves one webhook per kind (chart charts/metallb/templates/webhooks.yaml: CREATE and
UPDATE, failurePolicy `crds.validationFailurePolicy`, `Fail` by default; names below). Each handler
(internal/k8s/webhooks/webhookv1beta1/*_webhook.go, webhookv1beta2/bgppeer_webhook.go) refuses an object
outside the controller's namespace ("resource must be created in <ns> namespace"), then lists the
objects of its kind that exist in that namespace, puts the new one among them (`*ListWithUpdate`) and
parses the whole set with the controller's own configuration parser (internal/config/validator.go
`validator.Validate` -> config.go `For`), refusing the object with the parser's first error:

- IPAddressPool: the pools; L2Advertisement: the L2 advertisements and the pools; BGPAdvertisement:
  the BGP advertisements, the pools and the nodes; BGPPeer: the peers and the nodes; Community: the
  communities. A BGPPeer with `disableMP` is admitted on CREATE with a warning and nothing else checked.
- Before parsing, `resetTransientErrorsFields` clears peers' bfdProfile and passwordSecret and keeps only
  the BGP advertisements' communities that contain ':' (validator.go).
- `For` first runs the BGP backend's check (validation.go `ValidationFor`: `native` -> `DiscardFRROnly`,
  `frr`/`frr-k8s` -> `DiscardNativeOnly`, the controller's METALLB_BGP_TYPE, `native` when unset), then
  `bfdProfilesFor`, `peersFor` (`peerFromCR`, `parseTimers`), `poolsFor` (`communitiesFromCrs`,
  `addressPoolFromCR`, `ParseCIDR`, `cidrsOverlap` across every pool, `setL2AdvertisementsToPools`,
  `setBGPAdvertisementsToPools`, `l2AdvertisementFromCR`, `bgpAdvertisementFromCR`,
  `validateBGPAdvPerPool`), `validateConfig`.

Not reproduced (hpcforge sets none of these): BFD profiles, pool service allocation
(serviceAllocation), label-selector duplicate checks, BGP community values (legacy/large syntax and
aliases), BGP advertisements' local-preference conflicts, connectTime, password secrets.
A pool referenced by an advertisement but absent is not an error in v0.16.1 (the name is skipped).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..rules.access import get, items, mapping, text
from ..rules.gotime import SECOND, GoError, format_duration, go_quote, parse_duration
from ..rules.netpol import selector_matches
from .pins import Pin

REPRODUCES = Pin("metallb", "v0.16.1", ("Charts.METALLB",), "metallb/metallb v0.16.1")
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""


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


# --- addresses --------------------------------------------------------------------------------------------


def _go_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """net.ParseIP (no zone, no surrounding space)."""
    if "%" in value or value != value.strip():
        return None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _go_cidr(value: str) -> Network | None:
    """net.ParseCIDR: `address/prefix-length` (host bits allowed and masked), else None."""
    address_text, slash, prefix = value.partition("/")
    if not slash or not prefix.isascii() or not prefix.isdigit():
        return None
    address = _go_ip(address_text)
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
        network = _go_cidr(entry)
        if network is None:
            raise RefusedError(f"invalid CIDR {go_quote(entry)}")
        return [network]
    first_text, last_text = entry.split("-", 1)
    first = _go_ip(first_text.strip())
    if first is None:
        raise RefusedError(f"invalid IP range {go_quote(entry)}: invalid start IP {go_quote(first_text)}")
    last = _go_ip(last_text.strip())
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


# --- pools ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pool:
    name: str
    labels: Mapping[str, str]
    cidrs_per_address: tuple[tuple[str, tuple[Network, ...]], ...]

    @property
    def cidrs(self) -> list[Network]:
        return [n for _, nets in self.cidrs_per_address for n in nets]


def address_pool_from_cr(obj: Mapping[str, Any]) -> Pool:
    """config.go addressPoolFromCR: a name, at least one address, every address parsed."""
    name = text(get(obj, "metadata", "name")) or ""
    if not name:
        raise RefusedError("missing pool name")
    addresses = items(get(obj, "spec", "addresses"))
    if not addresses:
        raise RefusedError("pool has no prefixes defined")
    parsed: list[tuple[str, tuple[Network, ...]]] = []
    for entry in addresses:
        try:
            parsed.append((str(entry), tuple(parse_cidr(str(entry)))))
        except RefusedError as error:
            raise RefusedError(f"invalid CIDR {go_quote(str(entry))} in pool {go_quote(name)}: {error}") from None
    labels = {str(k): str(v) for k, v in mapping(get(obj, "metadata", "labels")).items()}
    return Pool(name, labels, tuple(parsed))


def pools_for(pools: Sequence[Mapping[str, Any]]) -> dict[str, Pool]:
    """config.go poolsFor, its first part: every pool parsed, names unique, no CIDR overlapping another
    (of the same pool or an earlier one)."""
    found: dict[str, Pool] = {}
    seen: list[Network] = []
    for obj in pools:
        name = text(get(obj, "metadata", "name")) or ""
        try:
            pool = address_pool_from_cr(obj)
        except RefusedError as error:
            raise RefusedError(f"parsing address pool {name}: {error}") from None
        if pool.name in found:
            raise RefusedError(f"duplicate definition of pool {go_quote(pool.name)}")
        for cidr in pool.cidrs:
            for other in seen:
                if cidrs_overlap(cidr, other):
                    raise RefusedError(
                        f"CIDR {go_quote(str(cidr))} in pool {go_quote(pool.name)} overlaps with already defined CIDR {go_quote(str(other))}"
                    )
            seen.append(cidr)
        found[pool.name] = pool
    return found


def _uint(value: Any) -> int:
    """An integer field (the CRD schema has made it one); anything else reads as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _go_quote_rune(value: int) -> str:
    """`%q` of an int, which Go prints as a character literal (upstream's message does that)."""
    character = chr(value) if 0 <= value <= 0x10FFFF else "\ufffd"
    return f"'\\x{value:02x}'" if not character.isprintable() else f"'{character}'"


def _duplicate(values: Sequence[Any], what: str) -> None:
    """config.go validateDuplicate."""
    for i, value in enumerate(values):
        if value in values[i + 1 :]:
            raise RefusedError(f"duplicate definition of {what} {go_quote(str(value))}")


def _selected_pools(adv: Mapping[str, Any], pools: Mapping[str, Pool]) -> list[Pool]:
    """The pools an advertisement names or selects (all when it names and selects none); unknown names skipped."""
    names = [str(n) for n in items(get(adv, "spec", "ipAddressPools"))]
    selectors = items(get(adv, "spec", "ipAddressPoolSelectors"))
    if not names and not selectors:
        return list(pools.values())
    chosen = [pools[n] for n in names if n in pools]
    chosen += [p for p in pools.values() if any(selector_matches(s, p.labels) for s in selectors) and p not in chosen]
    return chosen


def l2_advertisement_from_cr(adv: Mapping[str, Any]) -> None:
    """config.go l2AdvertisementFromCR: ipAddressPools without duplicates."""
    _duplicate(items(get(adv, "spec", "ipAddressPools")), "ipAddressPools")


def bgp_advertisement_from_cr(adv: Mapping[str, Any]) -> tuple[int, int]:
    """config.go bgpAdvertisementFromCR: duplicates, serviceSelectors vs aggregation lengths, aggregation
    lengths in range. Answers (aggregationLength, aggregationLengthV6)."""
    spec = mapping(adv.get("spec"))
    name = text(get(adv, "metadata", "name")) or ""
    _duplicate(items(spec.get("ipAddressPools")), "ipAddressPools")
    _duplicate(items(spec.get("communities")), "community")
    _duplicate(items(spec.get("peers")), "peers")
    v4, v6 = spec.get("aggregationLength"), spec.get("aggregationLengthV6")
    if items(spec.get("serviceSelectors")):
        if v4 is not None and v4 != 32:
            raise RefusedError(f"serviceSelectors and aggregationLength are mutually exclusive, both cannot be set in {name}")
        if v6 is not None and v6 != 128:
            raise RefusedError(f"serviceSelectors and aggregationLengthV6 are mutually exclusive, both cannot be set in {name}")
    length = 32 if v4 is None else _uint(v4)
    if length > 32:
        raise RefusedError(f"invalid aggregation length {_go_quote_rune(length)} for IPv4")
    length_v6 = 128 if v6 is None else _uint(v6)
    if length_v6 > 128:
        raise RefusedError(f"invalid aggregation length {_go_quote_rune(length_v6)} for IPv6")
    return length, length_v6


def validate_bgp_adv_per_pool(lengths: tuple[int, int], pool: Pool) -> None:
    """config.go validateBGPAdvPerPool, its aggregation-length part: no address of the pool may have a
    prefix more specific... than the aggregation length allows (lowestMask of its CIDRs)."""
    for address, cidrs in pool.cidrs_per_address:
        if not cidrs:
            continue
        limit = lengths[0] if cidrs[0].version == 4 else lengths[1]
        lowest = min(c.prefixlen for c in cidrs)
        if limit < lowest:
            raise RefusedError(
                f"invalid aggregation length {lengths[0]}: prefix {lowest} in this pool is more specific than the "
                f"aggregation length for addresses {address}"
            )


# --- peers ----------------------------------------------------------------------------------------------------


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
    my_asn, asn = _uint(spec.get("myASN")), _uint(spec.get("peerASN"))
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
    if address and _go_ip(address) is None:
        raise RefusedError(f"invalid BGPPeer address {go_quote(address)}")
    router_id = text(spec.get("routerID")) or ""
    if router_id and _go_ip(router_id) is None:
        raise RefusedError(f"invalid router ID {go_quote(router_id)}")
    source = text(spec.get("sourceAddress")) or ""
    if source and _go_ip(source) is None:
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
            if _uint(ps.get("myASN")) != _uint(qs.get("myASN")) and (text(ps.get("vrf")) or "") == (text(qs.get("vrf")) or ""):
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


# --- the parser -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterResources:
    """internal/config ClusterResources, the parts reproduced (plain objects as the API server has them)."""

    pools: tuple[Mapping[str, Any], ...] = ()
    peers: tuple[Mapping[str, Any], ...] = ()
    l2_advs: tuple[Mapping[str, Any], ...] = ()
    bgp_advs: tuple[Mapping[str, Any], ...] = ()
    communities: tuple[Mapping[str, Any], ...] = ()
    nodes: tuple[Mapping[str, str], ...] = ()
    """Node labels; none known means every pair of peers may share a node (peersShareNode)."""


def _reset_transient(resources: ClusterResources) -> ClusterResources:
    """validator.go resetTransientErrorsFields."""

    def peer(obj: Mapping[str, Any]) -> Mapping[str, Any]:
        spec = {k: v for k, v in mapping(obj.get("spec")).items() if k not in ("bfdProfile", "passwordSecret")}
        return {**obj, "spec": spec}

    def adv(obj: Mapping[str, Any]) -> Mapping[str, Any]:
        spec = dict(mapping(obj.get("spec")))
        if "communities" in spec:
            spec["communities"] = [c for c in items(spec["communities"]) if ":" in str(c)]
        return {**obj, "spec": spec}

    return ClusterResources(
        resources.pools,
        tuple(peer(p) for p in resources.peers),
        resources.l2_advs,
        tuple(adv(a) for a in resources.bgp_advs),
        resources.communities,
        resources.nodes,
    )


def validate(resources: ClusterResources, bgp_type: str) -> None:
    """validator.go validator.Validate -> config.go For: raises RefusedError with the first error."""
    resources = _reset_transient(resources)
    if bgp_type in ("frr", "frr-k8s"):
        discard_native_only(resources.peers, resources.nodes)
    elif bgp_type == "native":
        discard_frr_only(resources.peers, resources.pools, resources.bgp_advs)
    for obj in resources.peers:
        try:
            peer_from_cr(obj)
        except RefusedError as error:
            raise RefusedError(f"parsing peer {text(get(obj, 'metadata', 'name')) or ''} {error}") from None
    pools = pools_for(resources.pools)
    for adv in resources.l2_advs:
        l2_advertisement_from_cr(adv)
    for adv in resources.bgp_advs:
        lengths = bgp_advertisement_from_cr(adv)
        for pool in _selected_pools(adv, pools):
            validate_bgp_adv_per_pool(lengths, pool)


# --- objects ------------------------------------------------------------------------------------------------


def judged(obj: Mapping[str, Any]) -> bool:
    """Whether a webhook of MetalLB judges `obj` (its kind at the version the webhook is registered for)."""
    kind = text(obj.get("kind")) or ""
    return kind in WEBHOOKS and text(obj.get("apiVersion")) == f"{GROUP}/{VERSIONS[kind]}"


def _namespace(obj: Mapping[str, Any]) -> str:
    return text(get(obj, "metadata", "namespace")) or ""


def _with_update(existing: Sequence[Mapping[str, Any]], obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """`*ListWithUpdate` on CREATE: the other objects of the kind as the API server lists them (by name), `obj`
    appended."""
    name = text(get(obj, "metadata", "name"))
    others = sorted(
        (o for o in existing if text(get(o, "metadata", "name")) != name), key=lambda o: text(get(o, "metadata", "name")) or ""
    )
    return (*others, obj)


def refusal(
    obj: Mapping[str, Any],
    existing: Sequence[Mapping[str, Any]],
    *,
    namespace: str = NAMESPACE,
    bgp_type: str = "native",
    nodes: Sequence[Mapping[str, str]] = (),
) -> str | None:
    """The answer of MetalLB's webhook to creating `obj` when `existing` (any MetalLB objects) are in the
    cluster: None when admitted, else the message the API server relays."""
    kind = text(obj.get("kind")) or ""
    webhook = WEBHOOKS[kind]
    if kind == "BGPPeer" and get(obj, "spec", "disableMP") is True:
        return None  # validatePeerCreate: a warning, nothing validated
    if _namespace(obj) != namespace:
        return f'admission webhook "{webhook}" denied the request: resource must be created in {namespace} namespace'

    def of(wanted: str) -> tuple[Mapping[str, Any], ...]:
        """The objects of a kind in the controller's namespace, as the API server lists them (by name)."""
        found = [o for o in existing if text(o.get("kind")) == wanted and judged(o) and _namespace(o) == namespace]
        return tuple(sorted(found, key=lambda o: text(get(o, "metadata", "name")) or ""))

    node_list = tuple(nodes)
    resources = {
        "IPAddressPool": lambda: ClusterResources(pools=_with_update(of("IPAddressPool"), obj)),
        "L2Advertisement": lambda: ClusterResources(pools=of("IPAddressPool"), l2_advs=_with_update(of("L2Advertisement"), obj)),
        "BGPAdvertisement": lambda: ClusterResources(
            pools=of("IPAddressPool"), bgp_advs=_with_update(of("BGPAdvertisement"), obj), nodes=node_list
        ),
        "BGPPeer": lambda: ClusterResources(peers=_with_update(of("BGPPeer"), obj), nodes=node_list),
        "Community": lambda: ClusterResources(communities=_with_update(of("Community"), obj)),
    }[kind]()
    try:
        validate(resources, bgp_type)
    except RefusedError as error:
        return f'admission webhook "{webhook}" denied the request: {error}'
    return None


def controller_bgp_type(objects: Sequence[Mapping[str, Any]]) -> str | None:
    """METALLB_BGP_TYPE of the MetalLB controller among `objects` (the chart rendered): the last entry of
    that name wins, as in a container's env; `native` when the controller sets none; None without one."""
    for obj in objects:
        if text(obj.get("kind")) != "Deployment" or get(obj, "metadata", "labels", "app.kubernetes.io/component") != "controller":
            continue
        if get(obj, "metadata", "labels", "app.kubernetes.io/name") != "metallb":
            continue
        found = "native"
        for container in items(get(obj, "spec", "template", "spec", "containers")):
            for entry in items(get(container, "env")):
                if get(entry, "name") == "METALLB_BGP_TYPE" and isinstance(get(entry, "value"), str):
                    found = str(get(entry, "value"))
        return found
    return None


# charts/metallb/values.yaml at metallb-chart-0.16.1: the values bgp_type_from_values reads.
CHART_DEFAULTS: Mapping[str, Any] = {
    "speaker": {"enabled": True, "frr": {"enabled": False}},
    "frrk8s": {"enabled": True, "external": False},
}


def bgp_type_from_values(values: Mapping[str, Any]) -> str:
    """The controller's METALLB_BGP_TYPE for these chart values (over the chart's defaults), as
    charts/metallb/templates/controller.yaml writes it: `frr` when speaker.enabled and speaker.frr.enabled,
    then `frr-k8s` when frrk8s.enabled or frrk8s.external (a later env entry of the same name wins);
    unset (`native`) otherwise."""

    def value(*path: str) -> Any:
        given: Any = values
        for step in path:
            given = given.get(step) if isinstance(given, Mapping) else None
        if given is not None:
            return given
        default: Any = CHART_DEFAULTS
        for step in path:
            default = default.get(step) if isinstance(default, Mapping) else None
        return default

    found = "native"
    if value("speaker", "enabled") and value("speaker", "frr", "enabled"):
        found = "frr"
    if value("frrk8s", "enabled") or value("frrk8s", "external"):
        found = "frr-k8s"
    return found
