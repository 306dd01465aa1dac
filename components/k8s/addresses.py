"""Addresses and ports that Kubernetes objects ask for: MetalLB's pool annotations, the ephemeral port range."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def metallb_service_annotations(pool: str, address: str | None) -> dict[str, str]:
    """Annotations that make MetalLB give a Service an address from `pool` (and exactly `address`)."""
    annotations = {"metallb.io/address-pool": pool}
    if address:
        annotations["metallb.io/loadBalancerIPs"] = address
    return annotations


PORT_RANGE_SYSCTL = "net.ipv4.ip_local_port_range"
"""The sysctl of the ephemeral port range: set in the compute pods and on the bare-metal hosts (jobPortRange)."""


EXPOSURE_ANNOTATION = "hpcforge.io/exposure"
"""`public` on a Service or a route that says in config it is public (the security pack's exposure rule reads it)."""


def load_balancer_exposure(ranges: Sequence[str] | None) -> tuple[dict[str, str], dict[str, Any]]:
    """(annotations, spec fields) of a LoadBalancer Service reachable from `ranges` (None: public). The source
    ranges are enforced by kube-proxy on the service address; `externalTrafficPolicy: Local` keeps the client's
    address, so that the backends' NetworkPolicies can name the same ranges."""
    if ranges is None:
        return {EXPOSURE_ANNOTATION: "public"}, {"externalTrafficPolicy": "Local"}
    if not ranges:
        # An empty loadBalancerSourceRanges restricts nothing: it must never stand for "the site".
        raise ValueError("a LoadBalancer that is not public needs source ranges")
    return {}, {"externalTrafficPolicy": "Local", "loadBalancerSourceRanges": list(ranges)}
