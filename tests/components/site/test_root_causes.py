"""One mistake, one message: cascades that a single fix repairs are folded into their root cause.

Each case is a one-key edit of a real stack file that used to produce a message per consequence
(every host outside a mistyped subnet, every user of a renamed group, every partition of a renamed
nodeset); now the root cause is reported once, with the consequences counted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.ground.root_causes import fold_unknown_references
from components.site.loader import ConfigError, load_config
from tests.helpers import config_values, inline_inventories, outline_inventories, raw_config


def _messages(stack: str, edit: Callable[[dict[str, Any]], None], tmp_path: Path) -> list[str]:
    values = inline_inventories(config_values(stack))
    edit(values)
    outline_inventories(values, tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_config(raw_config(values))
    return caught.value.messages


def test_a_mistyped_provisioning_subnet_is_one_message_at_the_subnet(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:provisioning"]["subnet"] = "10.250.0.0/23"

    messages = _messages("prod", edit, tmp_path)
    hosts = [host for host in inline_inventories(config_values("prod"))["hpcforge:provisioning"]["hosts"]]
    on_main = sum(1 for host in hosts if host["ip"].startswith(("10.20.0.", "10.20.1.")))
    assert messages == [
        f"hpcforge:provisioning.subnet: 10.250.0.0/23: none of the {4 + on_main} addresses that must be in the "
        f"provisioning subnet is in it (address, gateway, dhcp.range.start, dhcp.range.end, {on_main} host addresses); "
        "the gateway 10.20.0.1 is in 10.20.0.0/23: is that the network you meant?"
    ]


def test_a_mistyped_bmc_network_is_one_message_at_its_subnet(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:provisioning"]["bmcNetwork"]["subnet"] = "10.250.2.0/24"

    messages = _messages("prod", edit, tmp_path)
    assert len(messages) == 1, messages
    assert messages[0].startswith("hpcforge:provisioning.bmcNetwork.subnet: 10.250.2.0/24: none of the ")
    assert "(bmcNetwork.gateway, " in messages[0] and "the gateway 10.20.2.254 is in 10.20.2.0/24" in messages[0]


def test_one_host_outside_a_right_subnet_is_still_reported_at_the_host(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:provisioning"]["hosts"][0]["ip"] = "10.99.0.1"

    messages = _messages("prod", edit, tmp_path)
    assert len(messages) == 1 and messages[0].endswith("hosts.yaml: hosts[0].ip: host 'cn001': IP 10.99.0.1 is outside "
                                                       "the provisioning subnets 10.20.0.0/23, 10.21.0.0/24"), messages  # fmt: skip


def test_a_renamed_group_is_reported_once_with_the_users_counted(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:directory"]["groups"][0]["name"] = "hpc-people"

    messages = _messages("prod", edit, tmp_path)
    users = inline_inventories(config_values("prod"))["hpcforge:directory"]["users"]
    named = [m for m in messages if "unknown group 'hpc-users'" in m]
    assert len(named) == 1, messages
    others = sum(1 for user in users if user["primaryGroup"] == "hpc-users") - 1
    assert f"; {others} more keys name group 'hpc-users' too (users[1].primaryGroup, " in named[0]
    assert named[0].endswith("one fix (define it, or correct the name) repairs them all")


def test_a_renamed_nodeset_is_reported_once_for_all_its_partitions(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:slurm"]["nodesets"][0]["name"] = "cpu-renamed"

    messages = _messages("prod", edit, tmp_path)
    named = [m for m in messages if "unknown nodeset 'cpu'" in m]
    assert named == [
        "hpcforge:slurm.partitions[0].nodesets[0]: partition 'cpu': unknown nodeset 'cpu' (known: cpu-renamed, cpu-bm, "
        "gpu-a100, gpu-h100); 2 more keys name nodeset 'cpu' too (hpcforge:slurm.partitions[3].nodesets[0], "
        "hpcforge:slurm.partitions[5].nodesets[0]): one fix (define it, or correct the name) repairs them all"
    ]


def test_unknown_references_fold_by_name_not_by_kind() -> None:
    pairs = [
        ("hpcforge:a[0].pool", "unknown pool 'x' (known: y)"),
        ("hpcforge:a[1].pool", "unknown pool 'z' (known: y)"),
        ("hpcforge:b.pool", "unknown pool 'x' (known: y)"),
        ("hpcforge:c", "something else"),
    ]
    assert fold_unknown_references(pairs) == [
        (
            "hpcforge:a[0].pool",
            "unknown pool 'x' (known: y); 1 more key names pool 'x' too (hpcforge:b.pool): one fix (define it, or "
            "correct the name) repairs them all",
        ),
        ("hpcforge:a[1].pool", "unknown pool 'z' (known: y)"),
        ("hpcforge:c", "something else"),
    ]


def test_a_mistyped_pool_range_is_one_message_for_the_addresses_outside_it(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:network"]["pools"][0]["addresses"] = ["10.250.0.100-10.250.0.149"]

    assert _messages("prod", edit, tmp_path) == [
        "hpcforge:network.ingress.address: 10.10.0.100 is not inside pool 'services' (10.250.0.100-10.250.0.149); "
        "1 more key names an address outside pool 'services' too (hpcforge:network.dns.address): is the address range "
        "of pool 'services' right?"
    ]


def test_references_to_a_kind_of_which_none_is_defined_are_one_message(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:directory"]["groups"] = []

    messages = _messages("prod", edit, tmp_path)
    assert len(messages) == 1, messages
    assert "unknown group 'hpc-users' (known: none); " in messages[0]
    assert messages[0].endswith("no group is defined: define them (or remove the references)")


def test_a_dhcp_range_over_many_hosts_is_one_message_at_the_range(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:provisioning"]["dhcp"]["range"] = {"start": "10.20.1.1", "end": "10.20.1.250"}

    hosts = inline_inventories(config_values("prod"))["hpcforge:provisioning"]["hosts"]
    covered = sum(1 for host in hosts if host["ip"].startswith("10.20.1.") and int(host["ip"].rsplit(".", 1)[1]) <= 250)
    assert _messages("prod", edit, tmp_path) == [
        f"hpcforge:provisioning.dhcp.range: 10.20.1.1-10.20.1.250 covers the fixed addresses of {covered} inventory hosts "
        "(hosts[0], hosts[1], hosts[2], ...); DHCP could hand them to other machines: shrink the range, or move the "
        "hosts out of it"
    ]


def test_a_switch_given_twice_is_one_message_not_one_per_child(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        switches = values["hpcforge:slurm"]["topology"]["switches"]
        switches.append(dict(switches[0]))

    assert _messages("prod", edit, tmp_path) == ["hpcforge:slurm.topology.switches: duplicate switch 'spine'"]


def test_a_switch_listing_a_child_twice_is_still_refused(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        spine = values["hpcforge:slurm"]["topology"]["switches"][0]
        spine["switches"] = [*spine["switches"], spine["switches"][0]]

    messages = _messages("prod", edit, tmp_path)
    assert len(messages) == 1 and messages[0].endswith("switch 'spine' lists 'rack1' twice"), messages


def test_an_emptied_users_file_folds_every_reference_to_its_users_and_groups(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:directory"]["users"] = []
        values["hpcforge:directory"]["groups"] = []

    messages = _messages("prod", edit, tmp_path)
    assert len(messages) == 2, messages
    assert messages[0].startswith("hpcforge:evidence.lookupUser: unknown directory user 'alice'; 4 more keys name a user")
    assert messages[0].endswith("no user is defined: define them (or remove the references)")
    assert messages[1].endswith("no group is defined: define them (or remove the references)")


def test_a_leaf_switch_given_twice_is_one_message_not_one_per_node(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        switches = values["hpcforge:slurm"]["topology"]["switches"]
        switches.append(dict(switches[2]))

    name = config_values("prod")["hpcforge:slurm"]["topology"]["switches"][2]["name"]
    assert _messages("prod", edit, tmp_path) == [f"hpcforge:slurm.topology.switches: duplicate switch '{name}'"]


def test_a_missing_default_image_is_one_message_at_default_image(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        del values["hpcforge:provisioning"]["defaultImage"]

    hosts = inline_inventories(config_values("prod"))["hpcforge:provisioning"]["hosts"]
    imageless = [index for index, host in enumerate(hosts) if not host.get("image")]
    messages = _messages("prod", edit, tmp_path)
    assert len(messages) == 1, messages
    assert messages[0].startswith(
        f"hpcforge:provisioning.defaultImage: not set, and {len(imageless)} hosts name no image of their own "
        f"(hosts[{imageless[0]}], hosts[{imageless[1]}], hosts[{imageless[2]}], ...): set it to one of "
    )
