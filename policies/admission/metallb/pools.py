"""IPAddressPools and their advertisements (L2Advertisement, BGPAdvertisement) as MetalLB v0.16.1's
internal/config/config.go parses and checks them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.access import get, items, mapping, text
from ...rules.gotime import go_quote
from ...rules.netpol import selector_matches
from .addresses import Network, RefusedError, cidrs_overlap, parse_cidr


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


def go_uint(value: Any) -> int:
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


def selected_pools(adv: Mapping[str, Any], pools: Mapping[str, Pool]) -> list[Pool]:
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
    length = 32 if v4 is None else go_uint(v4)
    if length > 32:
        raise RefusedError(f"invalid aggregation length {_go_quote_rune(length)} for IPv4")
    length_v6 = 128 if v6 is None else go_uint(v6)
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
