"""MetalLB v0.16.1's configuration parser over every resource of the cluster (internal/config `For`), as each
webhook runs it on the cluster's resources with the one object changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...rules.access import get, items, mapping, text
from .addresses import RefusedError
from .peers import discard_frr_only, discard_native_only, peer_from_cr
from .pools import bgp_advertisement_from_cr, l2_advertisement_from_cr, pools_for, selected_pools, validate_bgp_adv_per_pool


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
        for pool in selected_pools(adv, pools):
            validate_bgp_adv_per_pool(lengths, pool)
