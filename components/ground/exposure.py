"""Who may reach a service hpcforge publishes: a LoadBalancer or a route through the site's ingress.

Exposure is explicit: a published service names its source ranges, or says in config that it is public; by default
it is reachable from the site's own networks (`hpcforge:network.siteRanges`) and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import model_validator

from .base import IPv4Network, StrictModel

PRIVATE_RANGES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
"""RFC 1918's private networks: the site ranges when a stack names none."""
PUBLIC = None
"""What `Exposure.ranges` answers for a public service: no source restriction."""


class Exposure(StrictModel):
    """Who may connect to a published service."""

    source_ranges: tuple[IPv4Network, ...] = ()
    """The client networks (CIDRs) that may connect; empty: the site's ranges (`network.siteRanges`), or for
    slurmctld with bare-metal hosts, their provisioning subnets."""
    public: bool = False
    """Reachable from every address (the internet, if routed): say so here; never together with `sourceRanges`."""

    @model_validator(mode="after")
    def _one_way(self) -> Exposure:
        if self.public and self.source_ranges:
            raise ValueError("public: true and sourceRanges exclude each other (a public service takes every address)")
        if "0.0.0.0/0" in self.source_ranges:
            raise ValueError("sourceRanges 0.0.0.0/0 means every address: say public: true instead")
        return self

    def ranges(self, default: Sequence[str]) -> tuple[str, ...] | None:
        """The source ranges: the configured ones, else `default`; None (PUBLIC) when public."""
        if self.public:
            return PUBLIC
        return tuple(self.source_ranges) or tuple(default)
