"""The provisioning inventory's bulk check (components/layers/provisioning/config.py `_hosts_without_problems`) may
only skip the host-by-host loop when that loop would find nothing: on random small inventories, with names, MACs,
addresses (network and broadcast addresses, the DHCP range, the gateways and Grendel's address among them), images
and BMCs drawn from small pools so that collisions are frequent, `_check_hosts` reports the same problems and counts
the same addresses per network as the loop alone."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.ground.base import ProblemCollector
from components.ground.hosts import Host
from components.layers.provisioning import config as provisioning
from components.layers.provisioning.config import ProvisioningConfig

# Two disjoint provisioning networks (the main /28 and an extra /29) and a BMC network: every edge of each is
# in the address pool below, with the gateways, Grendel's address, the DHCP range and addresses outside all.
BASE: dict[str, Any] = {
    "attachment": "provisioning",
    "node": "node-1",
    "address": "10.0.0.2/28",
    "subnet": "10.0.0.0/28",
    "gateway": "10.0.0.1",
    "dhcp": {"range": {"start": "10.0.0.12", "end": "10.0.0.13"}},
    "subnets": [{"subnet": "10.0.1.0/29", "gateway": "10.0.1.1"}],
    "images": [{"name": "img-a", "kernel": "/var/lib/grendel/images/a/vmlinuz", "initrd": [], "cmdline": ""}],
}
BMC_NETWORK = {"subnet": "10.9.0.0/29", "gateway": "10.9.0.1"}
ADDRESSES = [f"10.0.0.{i}" for i in range(16)] + [f"10.0.1.{i}" for i in range(8)] + [f"10.9.0.{i}" for i in range(8)]
ADDRESSES += ["10.0.2.5", "192.168.1.1"]
MACS = [f"52:54:00:00:00:{i:02x}" for i in range(12)]

bmcs = st.none() | st.fixed_dictionaries({"mac": st.sampled_from(MACS), "ip": st.sampled_from(ADDRESSES)})
entry: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {
        "name": st.sampled_from([f"n{i}" for i in range(10)]),
        "mac": st.sampled_from(MACS),
        "ip": st.sampled_from(ADDRESSES),
        "image": st.sampled_from([None, "img-a", "img-b"]),
        "bmc": bmcs,
    }
)
# Half the inventories collide freely; the other half have distinct names, MACs and addresses, so that the address
# rules (edges, DHCP range, gateways, networks) decide alone whether the bulk check may answer.
hosts = st.lists(entry, max_size=8) | st.lists(
    entry, max_size=8, unique_by=(lambda e: str(e["name"]), lambda e: str(e["mac"]), lambda e: str(e["ip"]))
)


def _config(with_bmc_network: bool, default_image: str | None, entries: list[dict[str, Any]]) -> ProvisioningConfig:
    """A valid config without hosts, then (unvalidated) the default image and the hosts under test."""
    values = {**BASE, "bmcNetwork": BMC_NETWORK} if with_bmc_network else dict(BASE)
    hosts = tuple(Host.model_validate({k: v for k, v in entry.items() if v is not None}) for entry in entries)
    return ProvisioningConfig.model_validate(values).model_copy(update={"default_image": default_image, "hosts": hosts})


def _check(cfg: ProvisioningConfig, *, loop_only: bool) -> tuple[list[Any], list[int]]:
    problems = ProblemCollector()
    nets = provisioning._check_networks(cfg, ProblemCollector())
    known = provisioning._check_images(cfg, ProblemCollector())
    if loop_only:
        with mock.patch.object(provisioning, "_hosts_without_problems", return_value=None):
            inside = provisioning._check_hosts(cfg, problems, nets, known)
    else:
        inside = provisioning._check_hosts(cfg, problems, nets, known)
    counts = [inside.get(id(net), 0) for net in [*nets.host_nets, *nets.bmc_nets]]
    return problems._problems, counts


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hosts, st.booleans(), st.sampled_from([None, "img-a", "img-b"]))
def test_the_bulk_check_skips_the_loop_only_where_the_loop_finds_nothing(
    entries: list[dict[str, Any]], with_bmc_network: bool, default_image: str | None
) -> None:
    cfg = _config(with_bmc_network, default_image, entries)
    assert _check(cfg, loop_only=False) == _check(cfg, loop_only=True)


def test_a_clean_inventory_is_judged_in_bulk() -> None:
    """The examples above would pass with a bulk check that never answers; this one must answer."""
    entries: list[dict[str, Any]] = [
        {"name": "n1", "mac": MACS[1], "ip": "10.0.0.5", "bmc": {"mac": MACS[2], "ip": "10.9.0.3"}},
        {"name": "n2", "mac": MACS[3], "ip": "10.0.1.3"},
    ]
    cfg = _config(True, "img-a", entries)
    with mock.patch.object(provisioning, "_check_each_host", side_effect=AssertionError("the loop ran")):
        problems, counts = _check(cfg, loop_only=False)
    assert problems == [] and sum(counts) == 3
