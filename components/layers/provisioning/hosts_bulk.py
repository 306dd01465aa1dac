"""The provisioning inventory checked in bulk (issue 36): whether `config._check_hosts` would find nothing wrong, with
C-level set, sort and bisection calls, so that a clean 100,000-host inventory costs no dictionary insertion per name,
MAC and address. When anything is off, the host-by-host loop of config.py runs and says what is wrong where
(tests/components/layers/provisioning/test_bulk_host_check.py: the two agree)."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any, Protocol


class NetIndex(Protocol):
    """config.py's `NetIndex` (not imported: config.py imports this module)."""

    def counts_inside(self, addresses: list[str], inside: dict[int, int]) -> bool: ...


ProvisioningConfig = Any
"""config.py's ProvisioningConfig (not imported, for the same reason): its `hosts` and `default_image` are read."""


def hosts_without_problems(
    cfg: ProvisioningConfig, reserved_ips: Iterable[str], known_images: set[str], host_index: NetIndex, bmc_index: NetIndex
) -> dict[int, int] | None:
    """`_check_hosts`'s count of addresses per network when it would find nothing wrong, else None (then its loop
    runs and says what is wrong): the same conditions checked in bulk with C-level set, sort and bisection calls,
    100,000 hosts without a dictionary insertion per name, MAC and address."""
    hosts = cfg.hosts
    if not no_duplicates_or_image_problems(cfg, reserved_ips, known_images):
        return None
    bmc_ips = [host.bmc.ip for host in hosts if host.bmc is not None]
    host_ips = [host.ip for host in hosts]
    inside: dict[int, int] = {}
    groups = [(host_index, host_ips + bmc_ips)] if bmc_index is host_index else [(host_index, host_ips), (bmc_index, bmc_ips)]
    for index, texts in groups:
        if not index.counts_inside(texts, inside):
            return None
    return inside


def no_duplicates_or_image_problems(cfg: ProvisioningConfig, reserved_ips: Iterable[str], known_images: set[str]) -> bool:
    """No host name, MAC or IP twice (the reserved IPs included), no BMC with its host's MAC or IP, no unknown
    image and no host without one (a host without its own image whose default is unknown is not a host's problem:
    reported once, at defaultImage)."""
    hosts = cfg.hosts
    names = {host.name for host in hosts}
    with_bmc = [host for host in hosts if host.bmc is not None]
    bmcs = [host.bmc for host in with_bmc if host.bmc is not None]
    macs = [host.mac for host in hosts] + [bmc.mac for bmc in bmcs]
    ips = {host.ip for host in hosts}
    ips.update(bmc.ip for bmc in bmcs)
    return (
        len(names) == len(hosts)
        and len(set(macs)) == len(macs)
        and len(ips) == len(hosts) + len(bmcs)
        and ips.isdisjoint(reserved_ips)
        and not any(map(operator.eq, [host.mac for host in with_bmc], [bmc.mac for bmc in bmcs]))
        and not any(map(operator.eq, [host.ip for host in with_bmc], [bmc.ip for bmc in bmcs]))
        and (cfg.default_image is not None or all(host.image is not None for host in hosts))
        and {host.image for host in hosts if host.image is not None} <= known_images
    )
