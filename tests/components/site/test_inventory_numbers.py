"""Inventory files keep YAML 1.2 core-schema strings that yaml-rs reads as numbers (components/site/inventory_numbers.py)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
import yaml_rs

from components.site.inventory import _CORE_RESOLVERS, Yaml12Dumper
from components.site.inventory_numbers import (
    is_yaml_rs_only_number,
    last_candidate_line,
    restore_core_strings,
    yaml_rs_only_number,
)
from components.site.loader import ConfigError, load_config
from components.site.root import PlatformConfig
from tests.helpers import config_values, raw_config

# Plain scalars yaml-rs 0.1.6 reads as numbers (the value it gives) and the core schema as strings.
FORMS = {
    "1_000": 1000,
    "_12": 12,
    "12_": 12,
    "1__0": 10,
    "0b101": 5,
    "0X1F": 31,
    "0O17": 15,
    "+0x1F": 31,
    "-0x1F": -31,
    "0x_1F": 31,
    "1_0.5": 10.5,
}


def _core_kind(text: str) -> str:
    for tag, pattern, _ in _CORE_RESOLVERS:
        if pattern.match(text):
            return tag.rsplit(":", 1)[1]
    return "str"


def _yaml_rs_kind(text: str) -> str:
    try:
        value = yaml_rs.loads(f"k: {text}\n", parse_datetime=False)
    except yaml_rs.YAMLDecodeError:
        return "error"
    value = value["k"] if isinstance(value, dict) else value
    return {type(None): "null", bool: "bool", int: "int", float: "float", str: "str"}.get(type(value), "other")


@pytest.mark.parametrize(("text", "number"), FORMS.items())
def test_yaml_rs_reads_the_form_as_a_number_and_it_is_flagged(text: str, number: float) -> None:
    assert yaml_rs.loads(f"k: {text}\n", parse_datetime=False) == {"k": number}
    assert _core_kind(text) == "str"
    assert is_yaml_rs_only_number(text)
    assert yaml_rs_only_number(text) == number


@pytest.mark.parametrize("text", ["12", "-3", "0x1F", "0o17", "1.5", "1e3", ".inf", "-.inf", ".nan", "vm01", "1_a", "true", "~"])
def test_core_schema_numbers_and_other_scalars_are_not_flagged(text: str) -> None:
    assert not is_yaml_rs_only_number(text)


def test_every_short_scalar_differs_only_by_yaml_rs_numbers_that_are_flagged() -> None:
    # Every plain scalar of up to three characters from the characters of number forms: where yaml-rs and the
    # core schema disagree, yaml-rs reads a number and the core schema a string, and the scalar is flagged.
    alphabet = "019_.eE+-xXoObBafFinN"
    for size in (1, 2, 3):
        for chars in itertools.product(alphabet, repeat=size):
            text = "".join(chars)
            core, fast = _core_kind(text), _yaml_rs_kind(text)
            if fast in ("error", core):
                assert not is_yaml_rs_only_number(text), text
                continue
            assert (core, fast in ("int", "float")) == ("str", True), text
            assert is_yaml_rs_only_number(text), text
            # ... and the search that bounds the walk finds it (inventory_numbers._TRIGGER and _TOKEN).
            assert last_candidate_line(f"a: b\nk: {text}\n") == 2, text


def test_the_inventory_writer_quotes_every_string_yaml_rs_would_read_as_a_number() -> None:
    # migrate-inventory, the site generator and the fuzzer write inventories with Yaml12Dumper; yaml-rs reads them.
    texts = [*FORMS, "node_01", "a_b", "rack1", "10.0.0.1", "0c:c4:10:00:00:0b"]
    texts += ["".join(chars) for chars in itertools.product("019_.xXoObB+-", repeat=3)]
    written = yaml.dump({"tags": texts}, Dumper=Yaml12Dumper, default_flow_style=True, width=10**9)
    assert yaml_rs.loads(written, parse_datetime=False) == {"tags": texts}


def test_restoring_puts_strings_back_in_values_list_items_and_keys_only_where_plain() -> None:
    text = 'hosts:\n- {name: 0b101, tags: [1_000, "_12", 12, 0x1F], labels: {1_0: a, 7: b, x: 0X1F}}\n12_: top\n'
    document = yaml_rs.loads(text, parse_datetime=False)
    assert document == {"hosts": [{"name": 5, "tags": [1000, "_12", 12, 31], "labels": {10: "a", 7: "b", "x": 31}}], 12: "top"}
    restored, duplicates = restore_core_strings(text, document)
    assert (restored, duplicates) == (5, [])
    assert document == {
        "hosts": [{"name": "0b101", "tags": ["1_000", "_12", 12, 31], "labels": {"1_0": "a", 7: "b", "x": "0X1F"}}],
        "12_": "top",
    }
    assert list(document["hosts"][0]["labels"]) == ["1_0", 7, "x"]


def test_a_walk_that_stops_at_the_last_candidate_line_still_renames_the_keys_of_mappings_left_open() -> None:
    # The last candidate is the key on line 2; the walk stops at the list on line 3, inside `top` and `1_0`.
    text = "top:\n  1_0:\n    - a\n  mac: 0c:c4:10:00:00:0b\n  other: [b]\n"
    assert last_candidate_line(text) == 2
    document = yaml_rs.loads(text, parse_datetime=False)
    assert restore_core_strings(text, document) == (1, [])
    assert document == {"top": {"1_0": ["a"], "mac": "0c:c4:10:00:00:0b", "other": ["b"]}}
    assert list(document["top"]) == ["1_0", "mac", "other"]


def test_the_candidate_search_counts_quoted_text_and_skips_mac_pieces() -> None:
    text = "hosts:\n- {name: a, mac: 0c:c4:10:00:00:0b, note: '# 0b101 in quotes is a string already'}\n"
    assert last_candidate_line(text) == 2  # a superset: quoted text counts, and the walk finds nothing to change
    assert last_candidate_line("hosts:\n- {name: a, mac: 0c:c4:10:00:00:0b, mtu: 9000}\n") == 0
    document = yaml_rs.loads(text, parse_datetime=False)
    assert restore_core_strings(text, document) == (0, [])


def test_restoring_reports_a_key_that_the_core_schema_reads_twice() -> None:
    text = '{1_0: a, "1_0": b}\n'
    document = yaml_rs.loads(text, parse_datetime=False)
    assert restore_core_strings(text, document) == (0, ["1_0"])


# --- through the real loader, from files on disk -------------------------------------------------------


def _hosts_file(tmp_path: Path, hosts: str) -> dict[str, Any]:
    values = config_values("dev")
    (tmp_path / "hosts.yaml").write_text(f"hosts:\n{hosts}")
    values["hpcforge:provisioning"]["inventory"]["file"] = str(tmp_path / "hosts.yaml")
    return values


def _users_file(tmp_path: Path, values: dict[str, Any], users: str) -> None:
    (tmp_path / "users.yaml").write_text(
        f"groups:\n- {{name: hpc-users, gidNumber: 5000}}\n- {{name: hpc-admins, gidNumber: 5001}}\nusers:\n{users}"
    )
    values["hpcforge:directory"]["inventory"]["file"] = str(tmp_path / "users.yaml")


def _slurm_file(tmp_path: Path, values: dict[str, Any], accounts: str) -> None:
    (tmp_path / "slurm.yaml").write_text(f"accounts:\n{accounts}")
    slurm = values["hpcforge:slurm"]
    del slurm["accounts"]
    slurm["inventory"] = {"file": str(tmp_path / "slurm.yaml")}


_HOST = "- {{name: {name}, mac: '52:54:00:77:00:{n:02x}', ip: 10.77.0.{n}, nodeset: vm, tags: [{tag}]}}\n"


@pytest.mark.parametrize("form", FORMS)
def test_a_host_tag_a_full_name_and_an_account_description_keep_the_form_as_a_string(tmp_path: Path, form: str) -> None:
    values = _hosts_file(tmp_path, _HOST.format(name="vm01", n=11, tag=form) + _HOST.format(name="vm02", n=12, tag="x"))
    _users_file(tmp_path, values, f"- {{name: alice, uidNumber: 10001, primaryGroup: hpc-users, fullName: {form}}}\n")
    description = form if "+" not in form else "x"  # account descriptions take no '+'
    _slurm_file(tmp_path, values, f"  accounts:\n  - {{name: lab, description: {description}}}\n  defaultAccount: lab\n")
    config = load_config(raw_config(values))
    assert config.provisioning is not None and config.directory is not None and config.slurm is not None
    assert config.provisioning.hosts[0].tags == (form,)
    assert config.directory.users[0].full_name == form
    assert config.slurm.accounts.accounts[0].description == description


def test_a_host_and_a_user_named_with_a_form_are_accepted_by_that_name(tmp_path: Path) -> None:
    values = _hosts_file(tmp_path, _HOST.format(name="0b101", n=11, tag="x") + _HOST.format(name="1__0", n=12, tag="x"))
    _users_file(
        tmp_path,
        values,
        "- {name: alice, uidNumber: 10001, primaryGroup: hpc-users}\n- {name: _12, uidNumber: 10002, primaryGroup: hpc-users}\n",
    )
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    # `1__0` is not a host name ('_'): refused for that, under the file and path, not as "expected a string".
    assert raised.value.messages == [
        f"{tmp_path / 'hosts.yaml'}: hosts[1].name: '1__0' is not a valid hostname (lowercase letters, digits and '-', at most 63 characters)"
    ]
    (tmp_path / "hosts.yaml").write_text("hosts:\n" + _HOST.format(name="0b101", n=11, tag="x"))
    config: PlatformConfig = load_config(raw_config(values))
    assert config.provisioning is not None and config.directory is not None
    assert [host.name for host in config.provisioning.hosts] == ["0b101"]
    assert [user.name for user in config.directory.users] == ["alice", "_12"]


def test_an_account_named_with_a_form_gets_the_core_schema_message(tmp_path: Path) -> None:
    values = config_values("dev")
    _slurm_file(tmp_path, values, "  accounts:\n  - {name: 0b101}\n  qos:\n  - {name: debug, maxTresPerUser: {1_0: 4}}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    file = tmp_path / "slurm.yaml"
    assert raised.value.messages == [
        f"{file}: accounts.qos[0].maxTresPerUser: '1_0' is not a TRES name (cpu, mem, node, billing, gres/<name>[:<type>], license/<name>)",
        f"{file}: accounts.accounts[0].name: '0b101' is not a Slurm accounting name (lowercase letters, digits, '_' and '-', "
        "starting with a letter, at most 40 characters; sacctmgr lowercases names)",
    ]


def test_really_bad_values_name_the_file_and_path_with_the_core_reading(tmp_path: Path) -> None:
    # A real number where a string belongs, a bad address, and a form beside them that is a valid tag.
    values = _hosts_file(
        tmp_path,
        _HOST.format(name="12", n=11, tag="1_000")
        + "- {name: vm02, mac: '52:54:00:77:00:12', ip: 10.77.0.300, nodeset: vm, tags: [0b101]}\n",
    )
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    file = tmp_path / "hosts.yaml"
    assert raised.value.messages == [
        f"{file}: hosts[0].name: expected a string (got 12, a number; put it in quotes to keep it as text)",
        f"{file}: hosts[1].ip: 10.77.0.300 is not an IPv4 address",
    ]


def test_an_integer_field_given_a_form_is_refused_only_when_the_file_is_read_again(tmp_path: Path) -> None:
    # The documented gap: alone, `uidNumber: 0X2711` validates as yaml-rs's 10001 (nothing is refused, nothing is
    # read again). With another number refused in the same file, the file is read with the core schema's
    # strings and the uid is refused too, as a core-schema reader refuses it.
    values = _hosts_file(tmp_path, _HOST.format(name="vm01", n=11, tag="x"))
    _users_file(tmp_path, values, "- {name: alice, uidNumber: 0X2711, primaryGroup: hpc-users}\n")
    config = load_config(raw_config(values))
    assert config.directory is not None and config.directory.users[0].uid_number == 10001
    _users_file(tmp_path, values, "- {name: alice, uidNumber: 0X2711, primaryGroup: hpc-users, fullName: 7}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    file = tmp_path / "users.yaml"
    assert raised.value.messages == [
        f"{file}: users[0].uidNumber: expected an integer (got '0X2711')",
        f"{file}: users[0].fullName: expected a string (got 7, a number; put it in quotes to keep it as text)",
    ]


def test_a_key_read_twice_by_the_core_schema_is_refused_naming_the_file(tmp_path: Path) -> None:
    values = _hosts_file(tmp_path, "- {name: 12, 1_0: a, '1_0': b}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert raised.value.messages == [
        f"{tmp_path / 'hosts.yaml'}: the key '1_0' appears twice in one mapping (an unquoted 1_0 is a string in YAML 1.2)"
    ]


def test_an_integer_field_given_a_form_whose_number_is_refused_gets_the_core_schema_message(tmp_path: Path) -> None:
    # yaml-rs's 5 is refused as a uid; the file is then read again and the core schema's "0b101" is what is refused.
    values = _hosts_file(tmp_path, _HOST.format(name="vm01", n=11, tag="x"))
    _users_file(tmp_path, values, "- {name: alice, uidNumber: 0b101, primaryGroup: hpc-users}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert raised.value.messages == [f"{tmp_path / 'users.yaml'}: users[0].uidNumber: expected an integer (got '0b101')"]
