"""Inventories in files: loading (YAML 1.2, bounded, digests), errors naming the file, migration, budgets."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from components.ground.inventory_ref import INVENTORY_ANNOTATION
from components.site.inventory import InventoryError, read_yaml_file
from components.site.loader import ConfigError, load_config
from components.site.root import PlatformConfig
from offline.program.engine import ProgramConfigError
from scripts.migrate_inventory import MigrationError, plan_migration
from tests.helpers import REPO, config_values, inline_inventories, raw_config, run_stack, run_stack_file, write_variant

SECTION_BUDGET = 6 * 1024
"""Bytes of one `hpcforge:*` key of prod's stack config, as the CLI passes it (a JSON string). The largest,
`hpcforge:slurm` (nodesets, partitions, accounting, topology), is 4.8 KiB; hosts and users are in files."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_prod_stack_config_stays_within_budget_per_section() -> None:
    over = {key: len(value) for key, value in raw_config(config_values("prod")).items() if len(value) > SECTION_BUDGET}
    assert over == {}, f"sections of Pulumi.prod.yaml over {SECTION_BUDGET} bytes: {over}"


def test_inventory_lists_come_from_the_files() -> None:
    prod = load_config(raw_config(config_values("prod")))
    hosts = yaml.safe_load((REPO / "inventory/prod/hosts.yaml").read_text())["hosts"]
    users = yaml.safe_load((REPO / "inventory/prod/users.yaml").read_text())["users"]
    assert prod.provisioning is not None
    assert [h.name for h in prod.provisioning.hosts] == [h["name"] for h in hosts]
    assert [u.name for u in prod.directory.users] == [u["name"] for u in users]
    assert prod.provisioning.inventory is not None
    assert prod.provisioning.inventory.sha256 == _sha256(REPO / "inventory/prod/hosts.yaml")
    assert prod.directory.inventory is not None
    assert prod.directory.inventory.sha256 == _sha256(REPO / "inventory/prod/users.yaml")


def test_objects_made_from_an_inventory_carry_its_digest() -> None:
    stack = run_stack("prod")
    hosts_digest = _sha256(REPO / "inventory/prod/hosts.yaml")
    users_digest = _sha256(REPO / "inventory/prod/users.yaml")
    annotated = {
        r.name: (r.inputs["metadata"].get("annotations") or {}).get(INVENTORY_ANNOTATION)
        for r in stack.kubernetes_objects()
        if (r.inputs["metadata"].get("annotations") or {}).get(INVENTORY_ANNOTATION)
    }
    assert annotated == {
        "provisioning/grendel-inventory-00": hosts_digest,
        "site-dns/site-dns-zones-00": hosts_digest,
        "directory/dirsrv-ldif-00": users_digest,
    }


def test_a_changed_inventory_file_changes_the_digest_annotation(tmp_path: Path) -> None:
    path = write_variant(tmp_path, "dev", lambda v: v["hpcforge:directory"]["users"][1].update(fullName="Bob Renamed"))
    stack = run_stack_file(path, "dev")
    ldif = stack.find("kubernetes:core/v1:ConfigMap", "directory/dirsrv-ldif-00")
    digest = ldif.inputs["metadata"]["annotations"][INVENTORY_ANNOTATION]
    assert digest == _sha256(tmp_path / "users.yaml")
    assert digest != _sha256(REPO / "inventory/dev/users.yaml")


def test_inline_hosts_in_the_stack_config_are_refused_with_how_to_move_them() -> None:
    values = inline_inventories(config_values("prod"))
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    messages = raised.value.messages
    assert any(
        m.startswith("hpcforge:provisioning.hosts: inline inventories are not read from the stack config")
        and "./hpcforge migrate-inventory --stack STACK" in m
        for m in messages
    ), messages
    assert any(m.startswith("hpcforge:directory.users: inline inventories") for m in messages), messages


def test_inline_inventory_is_refused_before_any_resource(tmp_path: Path) -> None:
    values = inline_inventories(config_values("dev"))
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": values}))
    with pytest.raises(ProgramConfigError) as raised:
        run_stack_file(path, "dev")
    assert raised.value.registered == 0
    assert any(
        "`./hpcforge migrate-inventory --stack dev` (it writes inventory/dev/hosts.yaml" in m for m in raised.value.messages
    )


def test_a_pinned_digest_that_does_not_match_is_refused() -> None:
    values = config_values("dev")
    values["hpcforge:provisioning"]["inventory"]["sha256"] = "0" * 64
    with pytest.raises(
        ConfigError,
        match=r"hpcforge:provisioning.inventory.sha256: inventory/dev/hosts.yaml has sha256 [0-9a-f]{64}, not the pinned 0{64}",
    ):
        load_config(raw_config(values))


def test_a_pinned_digest_that_matches_is_accepted() -> None:
    values = config_values("dev")
    digest = _sha256(REPO / "inventory/dev/hosts.yaml")
    values["hpcforge:provisioning"]["inventory"]["sha256"] = digest
    config = load_config(raw_config(values))
    assert config.provisioning is not None and config.provisioning.inventory is not None
    assert config.provisioning.inventory.sha256 == digest


def test_a_missing_inventory_file_is_named() -> None:
    values = config_values("dev")
    values["hpcforge:directory"]["inventory"]["file"] = "inventory/dev/nobody.yaml"
    with pytest.raises(ConfigError, match=r"inventory/dev/nobody.yaml: no such file"):
        load_config(raw_config(values))


def _load_with_hosts_file(tmp_path: Path, text: str) -> PlatformConfig:
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    values = config_values("dev")
    values["hpcforge:provisioning"]["inventory"]["file"] = str(path)
    return load_config(raw_config(values))


def test_problems_inside_the_file_name_the_file_and_the_path_in_it(tmp_path: Path) -> None:
    text = "hosts:\n- {name: vm01, mac: '52:54:00:77:00:11', ip: 10.77.0.11}\n- {name: vm02, mac: '52:54:00:77:00:12', ip: 10.77.0.300}\n"
    with pytest.raises(ConfigError) as raised:
        _load_with_hosts_file(tmp_path, text)
    assert raised.value.messages == [f"{tmp_path / 'hosts.yaml'}: hosts[1].ip: 10.77.0.300 is not an IPv4 address"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            '{name: vm02, mac: "52:54:00:77:00:12", ip: 10.77.0.12, tags: ["rack\\t1"]}',
            "hosts[1].tags[0]: 'rack\\t1' contains a tab; a value must stay on one line (it is written into configuration files)",
        ),
        (
            '{name: vm02, mac: "52:54:00:77:00:12", ip: 10.77.0.12, bmc: {mac: "52:54:00:77:01:12", ip: "10.77.1.12\\n"}}',
            "hosts[1].bmc.ip: '10.77.1.12\\n' contains a line break; a value must stay on one line (it is written into "
            "configuration files)",
        ),
        (
            "{name: vm02, mac: '52:54:00:77:00:12', ip: 10.77.0.12, vlan: true}",
            "hosts[1].vlan: expected an integer (got true, a boolean)",
        ),
    ],
)
def test_what_the_bulk_check_finds_in_an_entry_is_named_by_the_entry(tmp_path: Path, entry: str, message: str) -> None:
    # Entries are validated a chunk at a time after one search of the chunk (inventory.build_items): what it finds
    # is still reported by the model that holds it, under the entry's path in the file.
    text = f"hosts:\n- {{name: vm01, mac: '52:54:00:77:00:11', ip: 10.77.0.11}}\n- {entry}\n"
    with pytest.raises(ConfigError) as raised:
        _load_with_hosts_file(tmp_path, text)
    assert raised.value.messages == [f"{tmp_path / 'hosts.yaml'}: {message}"]


def test_an_unknown_key_in_an_inventory_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"hosts.yaml: users: unknown key \(allowed: hosts\)"):
        _load_with_hosts_file(tmp_path, "hosts: []\nusers: []\n")


def test_inventory_files_are_read_as_yaml_1_2(tmp_path: Path) -> None:
    # YAML 1.1 (PyYAML's default) reads an unquoted 12:34:56 as the base-60 integer 45296 and `on`
    # as true; YAML 1.2 keeps both strings.
    path = tmp_path / "inventory.yaml"
    path.write_text("hosts:\n- {name: 'on', mac: 02:00:00:12:34:56, tags: [on, off, yes, 0777, 12:34:56, 2024-01-01]}\n")
    document, _ = read_yaml_file(path, "inventory.yaml")
    assert document["hosts"][0] == {
        "name": "on",
        "mac": "02:00:00:12:34:56",
        "tags": ["on", "off", "yes", 777, "12:34:56", "2024-01-01"],
    }


def test_anchors_and_aliases_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "users.yaml"
    path.write_text("groups: &g [{name: a, gidNumber: 5000}]\nusers: *g\n")
    with pytest.raises(InventoryError, match="anchors and aliases are not allowed"):
        read_yaml_file(path, "users.yaml")


def test_an_alias_is_refused_naming_the_entry_and_line(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("hosts:\n- {name: a}\n- &h {name: b}\n- *h\n")
    with pytest.raises(InventoryError) as raised:
        read_yaml_file(path, "inventory/dev/hosts.yaml")
    assert raised.value.messages == [
        "inventory/dev/hosts.yaml: hosts[2] (line 4): the alias *h repeats another entry: YAML anchors and aliases "
        "are not allowed in inventory files (write the entry out)"
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [("!custom x", "!custom"), ("!!binary aGVsbG8=", "!!binary"), ("!!set {a, b}", "!!set"), ("!!omap [{a: 1}]", "!!omap")],
)
def test_a_tag_outside_the_core_schema_is_refused_naming_the_entry_and_line(tmp_path: Path, value: str, shown: str) -> None:
    # yaml-rs alone reads `!custom x` as "x" and `!!set {a, b}` as a Python set, silently.
    path = tmp_path / "hosts.yaml"
    path.write_text(f"hosts:\n- {{name: a, mac: '02:00:00:00:00:01'}}\n- name: b\n  mac: {value}\n")
    with pytest.raises(InventoryError) as raised:
        read_yaml_file(path, "inventory/dev/hosts.yaml")
    assert raised.value.messages == [
        f"inventory/dev/hosts.yaml: hosts[1].mac (line 4): the YAML tag {shown} has no JSON equivalent (inventory values "
        "are strings, numbers, booleans, null, lists and mappings): remove the tag, or quote the value to make it a string"
    ]


def test_core_schema_tags_and_exclamation_marks_in_strings_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "users.yaml"
    path.write_text("users:\n- {name: a, fullName: Hello !world, uidNumber: !!int '10001', shell: !!str /bin/bash}\n")
    document, _ = read_yaml_file(path, "users.yaml")
    assert document["users"][0] == {"name": "a", "fullName": "Hello !world", "uidNumber": 10001, "shell": "/bin/bash"}


def test_a_tag_in_an_inventory_file_is_a_config_error_before_any_resource(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        _load_with_hosts_file(tmp_path, "hosts:\n- {name: vm01, mac: !!binary AgAAAAAB, ip: 10.77.0.11}\n")
    assert raised.value.messages == [
        f"{tmp_path / 'hosts.yaml'}: hosts[0].mac (line 2): the YAML tag !!binary has no JSON equivalent (inventory values "
        "are strings, numbers, booleans, null, lists and mappings): remove the tag, or quote the value to make it a string"
    ]


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("hosts:\n- {name: a, name: b}\n")
    with pytest.raises(
        InventoryError, match=r"hosts\.yaml: hosts\[0\] \(line 2\): not valid YAML: duplicate mapping key: 'name'"
    ):
        read_yaml_file(path, "hosts.yaml")


def test_an_oversized_inventory_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("hosts: []\n" + "#" * 2048 + "\n")
    with pytest.raises(InventoryError, match=r"hosts.yaml: larger than"):
        read_yaml_file(path, "hosts.yaml", max_bytes=1024)


def _inline_stack_text(stack: str) -> str:
    """The stack file as it was before inventories moved out (the lists inline under their keys)."""
    text = (REPO / f"Pulumi.{stack}.yaml").read_text()
    for section, name in (("provisioning", "hosts"), ("directory", "users")):
        inventory = (REPO / f"inventory/{stack}/{name}.yaml").read_text()
        body = "".join(f"    {line}\n" for line in inventory.splitlines() if not line.startswith("#"))
        text = text.replace(f"    inventory:\n      file: inventory/{stack}/{name}.yaml\n", body, 1)
        assert body in text, section
    return text


def test_migration_moves_the_lists_and_keeps_everything_else() -> None:
    before = _inline_stack_text("prod")
    migration = plan_migration("prod", before)
    assert migration.stack_text == (REPO / "Pulumi.prod.yaml").read_text()
    for name, text in migration.files.items():
        original = yaml.safe_load((REPO / name).read_text())
        assert yaml.safe_load(text) == original, name


def test_migration_result_loads_to_the_same_config(tmp_path: Path) -> None:
    before = _inline_stack_text("dev")
    migration = plan_migration("dev", before)
    for name, text in migration.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    config = yaml.safe_load(migration.stack_text)["config"]
    migrated = load_config(raw_config(config), root=tmp_path)
    current = load_config(raw_config(config_values("dev")))
    assert migrated.model_dump() == current.model_dump()


def test_migration_refuses_a_stack_without_inline_inventory() -> None:
    with pytest.raises(MigrationError, match="no inline inventory"):
        plan_migration("prod", (REPO / "Pulumi.prod.yaml").read_text())


def test_migration_refuses_a_flow_style_section() -> None:
    text = 'config:\n  hpcforge:provisioning: {node: a, hosts: [{name: h1, mac: "02:00:00:00:00:01", ip: 10.0.0.5}]}\n'
    with pytest.raises(MigrationError, match="flow style"):
        plan_migration("x", text)


def test_prod_config_json_is_small() -> None:
    """What the CLI puts in PULUMI_CONFIG for prod stays far under Linux's 128 KiB per string."""
    size = len(json.dumps(raw_config(config_values("prod")), separators=(",", ":")))
    assert size < 32 * 1024, size


def test_a_byte_order_mark_at_the_start_is_accepted(tmp_path: Path) -> None:
    # YAML 1.2.2 section 5.2 allows a BOM at the start of a stream; yaml-rs alone reads it as part of the first key.
    path = tmp_path / "hosts.yaml"
    path.write_bytes(b"\xef\xbb\xbf# exported\nhosts: []\n")
    assert read_yaml_file(path, "hosts.yaml")[0] == {"hosts": []}


def test_a_syntax_error_names_the_entry_and_line(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("hosts:\n- name: a\n  mac: '02:00:00:00:00:01'\n- name: b\n  mac: [x\n")
    with pytest.raises(InventoryError) as raised:
        read_yaml_file(path, "inventory/dev/hosts.yaml")
    assert raised.value.messages == [
        "inventory/dev/hosts.yaml: hosts[1].mac[0] (line 5): not valid YAML: unclosed bracket '[' (column 8)"
    ]


def test_a_value_nested_too_deep_is_refused_with_a_short_path(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("hosts:\n- name: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InventoryError) as raised:
        read_yaml_file(path, "hosts.yaml")
    (message,) = raised.value.messages
    assert message.startswith("hosts.yaml: hosts[0].name[0][0][0][0][0]... (line 2): not valid YAML: ")
    assert len(message) < 200


def test_an_unused_anchor_is_refused_naming_the_entry_and_line(tmp_path: Path) -> None:
    # yaml-rs reads an anchor that no alias repeats without complaint; docs/inventories.md says anchors are refused.
    path = tmp_path / "hosts.yaml"
    path.write_text("hosts:\n- {name: a}\n- &b {name: b}\n")
    with pytest.raises(InventoryError) as raised:
        read_yaml_file(path, "inventory/dev/hosts.yaml")
    assert raised.value.messages == [
        "inventory/dev/hosts.yaml: hosts[1] (line 3): the anchor &b: YAML anchors and aliases are not allowed in "
        "inventory files (remove it)"
    ]


def test_an_ampersand_inside_a_string_is_not_an_anchor(tmp_path: Path) -> None:
    path = tmp_path / "users.yaml"
    path.write_text("users:\n- {name: rd, fullName: R &D team, description: 'a &b'}\n")
    assert read_yaml_file(path, "users.yaml")[0] == {"users": [{"name": "rd", "fullName": "R &D team", "description": "a &b"}]}


@pytest.mark.parametrize(
    ("text", "line"),
    [("hosts: []\n---\nhosts: [{name: a}]\n", 2), ("# exported\n---\n- a\n...\n---\n- b\n", 5), ("hosts: []\n---\n", 2)],
    ids=["mapping, mapping", "list, list", "an empty second document"],
)
def test_a_second_yaml_document_is_refused_as_a_second_document(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    with pytest.raises(InventoryError) as raised:
        read_yaml_file(path, "inventory/dev/hosts.yaml")
    assert raised.value.messages == [
        f"inventory/dev/hosts.yaml (line {line}): a second YAML document ('---'): an inventory file holds one document; "
        "remove the '---' and merge what follows into the first"
    ]


def test_one_document_that_is_a_list_is_refused_as_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("---\n- {name: a}\n")
    values = config_values("dev")
    values["hpcforge:provisioning"]["inventory"]["file"] = str(path)
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert raised.value.messages == [f"{path}: expected a mapping with the keys hosts"]


def test_a_directory_named_as_the_inventory_file_is_refused_as_a_directory(tmp_path: Path) -> None:
    values = config_values("dev")
    values["hpcforge:provisioning"]["inventory"]["file"] = str(tmp_path)
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert raised.value.messages == [f"{tmp_path}: is a directory, not an inventory file"]


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("hosts:\n- {name: vm01\x00, ip: 10.77.0.11}\n", "hosts[0].name (line 2)", "a NUL byte (U+0000) at column 14"),
        ("hosts:\n- name: vm\x0001\n", "hosts[0].name (line 2)", "a NUL byte (U+0000) at column 11"),
        ("# exported\x00\nhosts: []\n", "(line 1)", "a NUL byte (U+0000) at column 11"),
        ("hosts:\n- name: 'vm\x0701'\n", "hosts[0].name (line 2)", "the control character U+0007 at column 12"),
        ("hosts:\n- name: vm\u009b01\n", "hosts[0].name (line 2)", "the control character U+009B at column 11"),
    ],
    ids=["NUL in a flow mapping", "NUL in a plain value", "NUL in a comment", "BEL in a quoted value", "C1 CSI"],
)
def test_a_control_character_is_refused_naming_it_and_where_it_is(tmp_path: Path, text: str, where: str, what: str) -> None:
    # yaml-rs reports a NUL in a flow mapping as an unclosed bracket, cuts a plain value at it (`vm`), and reads a
    # NUL in a comment and other control characters without complaint; YAML allows none of them (c-printable).
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    with pytest.raises(InventoryError) as raised:
        read_yaml_file(path, "hosts.yaml")
    label = f"hosts.yaml: {where}" if where[0] != "(" else f"hosts.yaml {where}"
    assert raised.value.messages == [
        f"{label}: {what}: YAML does not allow control characters in a file (YAML 1.2.2, 5.1 c-printable); remove it"
    ]
