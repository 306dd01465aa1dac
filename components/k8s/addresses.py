"""Addresses and ports that Kubernetes objects ask for: MetalLB's pool annotations, the ephemeral port range."""

from __future__ import annotations


def metallb_service_annotations(pool: str, address: str | None) -> dict[str, str]:
    """Annotations that make MetalLB give a Service an address from `pool` (and exactly `address`)."""
    annotations = {"metallb.io/address-pool": pool}
    if address:
        annotations["metallb.io/loadBalancerIPs"] = address
    return annotations


PORT_RANGE_SYSCTL = "net.ipv4.ip_local_port_range"
"""The sysctl of the ephemeral port range: set in the compute pods and on the bare-metal hosts (jobPortRange)."""
