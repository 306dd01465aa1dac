"""The Slurm topology and accounts from an inventory file (`hpcforge:slurm.inventory`): loading, the key in
both places, errors naming the file and the path in it, the digest annotation, and migration."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.ground.inventory_ref import INVENTORY_ANNOTATION
from components.site.inventory import Yaml12Dumper
from components.site.loader import ConfigError, load_config
from scripts.migrate_inventory import plan_migration
from tests.helpers import REPO, config_values, raw_config, run_stack_file, write_variant


def _move_to_file(values: dict[str, Any], path: Path, keys: tuple[str, ...] = ("topology", "accounts")) -> None:
    slurm = values["hpcforge:slurm"]
    document = {key: slurm.pop(key) for key in keys if key in slurm}
    path.write_text(yaml.dump(document, Dumper=Yaml12Dumper, sort_keys=False))
    slurm["inventory"] = {"file": str(path)}


def test_topology_and_accounts_load_from_the_file_as_they_do_inline(tmp_path: Path) -> None:
    values = config_values("prod")
    inline = load_config(raw_config(values))
    path = tmp_path / "slurm.yaml"
    _move_to_file(values, path)
    loaded = load_config(raw_config(values))
    assert "topology" not in values["hpcforge:slurm"] and "accounts" not in values["hpcforge:slurm"]
    assert loaded.slurm.topology == inline.slurm.topology
    assert loaded.slurm.accounts == inline.slurm.accounts
    assert loaded.slurm.inventory is not None
    assert loaded.slurm.inventory.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_one_key_in_the_file_and_the_other_inline_is_accepted(tmp_path: Path) -> None:
    values = config_values("prod")
    _move_to_file(values, tmp_path / "slurm.yaml", ("accounts",))
    loaded = load_config(raw_config(values))
    assert loaded.slurm.topology is not None and loaded.slurm.accounts is not None


def test_a_key_both_inline_and_in_the_file_is_refused(tmp_path: Path) -> None:
    values = config_values("prod")
    path = tmp_path / "slurm.yaml"
    _move_to_file(values, path, ("accounts",))
    values["hpcforge:slurm"]["accounts"] = config_values("prod")["hpcforge:slurm"]["accounts"]
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert raised.value.messages == [
        f"hpcforge:slurm.accounts: set both inline and in {path}; keep one (large values belong in the file)"
    ]


def test_a_problem_inside_the_file_names_the_file_and_the_path_in_it(tmp_path: Path) -> None:
    values = config_values("prod")
    values["hpcforge:slurm"]["accounts"]["accounts"][1]["name"] = "Not An Account"
    path = tmp_path / "slurm.yaml"
    _move_to_file(values, path)
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert len(raised.value.messages) == 1
    assert raised.value.messages[0].startswith(f"{path}: accounts.accounts[1].name: "), raised.value.messages


def test_a_cross_check_problem_inside_the_file_names_the_file(tmp_path: Path) -> None:
    values = config_values("prod")
    values["hpcforge:slurm"]["topology"]["switches"].append({"name": "orphan", "switches": ["nowhere"]})
    path = tmp_path / "slurm.yaml"
    _move_to_file(values, path)
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert raised.value.messages and all(m.startswith(f"{path}: topology.switches") for m in raised.value.messages), (
        raised.value.messages
    )


def test_an_unknown_key_in_the_slurm_file_is_refused(tmp_path: Path) -> None:
    values = config_values("dev")
    path = tmp_path / "slurm.yaml"
    path.write_text("nodesets: []\n")
    values["hpcforge:slurm"]["inventory"] = {"file": str(path)}
    with pytest.raises(ConfigError, match=r"slurm.yaml: nodesets: unknown key \(allowed: topology, accounts\)"):
        load_config(raw_config(values))


def _annotations(stack: Any) -> dict[str, str | None]:
    return {
        r.name: (r.inputs["metadata"].get("annotations") or {}).get(INVENTORY_ANNOTATION)
        for r in stack.kubernetes_objects()
        if r.name.startswith("slurm/")
    }


def test_objects_made_from_the_slurm_file_carry_its_digest(tmp_path: Path) -> None:
    path = write_variant(tmp_path, "prod", lambda values: None)
    document = yaml.safe_load(path.read_text())
    slurm_file = tmp_path / "slurm.yaml"
    _move_to_file(document["config"], slurm_file)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    digest = hashlib.sha256(slurm_file.read_bytes()).hexdigest()
    annotated = {name: value for name, value in _annotations(run_stack_file(path, "prod")).items() if value}
    assert annotated == {
        "slurm/slurm-config-extra": digest,  # topology.yaml
        "slurm/slurm-accounts": digest,  # the reconcile script
        "slurm/slurm-accounts-desired-00": digest,  # the desired state
        "slurm/slurm-accounts-sync": digest,  # the reconcile Job
    }


def test_without_a_slurm_file_no_slurm_object_carries_a_digest() -> None:
    from tests.helpers import run_stack

    assert {name: value for name, value in _annotations(run_stack("prod")).items() if value} == {}


def test_migration_moves_topology_and_accounts_only_when_asked(tmp_path: Path) -> None:
    text = (REPO / "Pulumi.prod.yaml").read_text()
    migration = plan_migration("prod", text, slurm=True)
    assert set(migration.files) == {"inventory/prod/slurm.yaml"}
    moved = yaml.safe_load(migration.files["inventory/prod/slurm.yaml"])
    assert moved == {key: config_values("prod")["hpcforge:slurm"][key] for key in ("topology", "accounts")}
    for name, content in migration.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    for name in ("inventory/prod/hosts.yaml", "inventory/prod/users.yaml"):
        (tmp_path / name).write_bytes((REPO / name).read_bytes())
    config = yaml.safe_load(migration.stack_text)["config"]
    assert config["hpcforge:slurm"]["inventory"] == {"file": "inventory/prod/slurm.yaml"}
    migrated = load_config(raw_config(config), root=tmp_path)
    current = load_config(raw_config(config_values("prod")))
    assert migrated.slurm.topology == current.slurm.topology
    assert migrated.slurm.accounts == current.slurm.accounts
