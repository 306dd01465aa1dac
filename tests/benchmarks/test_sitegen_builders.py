"""benchmarks/sitegen.py: a generated site has exactly the sizes asked for, grown along hosts (with racks), nodesets
(with partitions) and users (with project groups and accounts), the growing sections in inventory files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.sitegen import RACK_HOSTS, address_plan, generate_site, write_site


@pytest.fixture(scope="module")
def site() -> dict[str, Any]:
    return generate_site(hosts=95, nodesets=27, users=250)


def test_hosts_get_unique_addresses_in_the_planned_subnet_and_racks_of_forty(site: dict[str, Any]) -> None:
    hosts = site["hpcforge:provisioning"]["hosts"]
    assert len(hosts) == 95
    assert len({h["ip"] for h in hosts} | {h["bmc"]["ip"] for h in hosts}) == 2 * 95
    assert len({h["mac"] for h in hosts} | {h["bmc"]["mac"] for h in hosts}) == 2 * 95
    assert max(Counter(h["switch"] for h in hosts).values()) <= RACK_HOSTS
    assert site["hpcforge:provisioning"]["subnet"] == address_plan(95)["subnet"]
    switches = site["hpcforge:slurm"]["topology"]["switches"]
    racks = sorted({h["switch"] for h in hosts})
    assert set(racks) <= set(switches[0]["switches"]) and switches[0]["name"] == "spine"


def test_exactly_the_nodesets_asked_for_with_the_extra_ones_in_partitions_of_ten(site: dict[str, Any]) -> None:
    slurm = site["hpcforge:slurm"]
    names = [ns["name"] for ns in slurm["nodesets"]]
    assert len(names) == 27 and len(set(names)) == 27 and "cpu-bm" in names
    scale = [p for p in slurm["partitions"] if p["name"].startswith("scale-")]
    assert [len(p["nodesets"]) for p in scale] == [10, 10, 3]
    assert any(pool["name"] == "scale-cpu" for pool in site["hpcforge:nodePools"])


def test_fewer_nodesets_keep_the_bare_metal_one_and_a_default_partition() -> None:
    small = generate_site(hosts=3, nodesets=1, users=5)["hpcforge:slurm"]
    assert [ns["name"] for ns in small["nodesets"]] == ["cpu-bm"]
    assert any(p.get("default") for p in small["partitions"])
    assert all(set(p["nodesets"]) <= {"cpu-bm"} for p in small["partitions"])


def test_users_spread_over_project_groups_each_an_account(site: dict[str, Any]) -> None:
    directory, slurm = site["hpcforge:directory"], site["hpcforge:slurm"]
    assert len(directory["users"]) == 250
    projects = [g["name"] for g in directory["groups"] if g["name"].startswith("proj")]
    assert len(projects) == 2
    assert {a["name"] for a in slurm["accounts"]["accounts"]} == {"science", *projects}
    assert not any("allowAccounts" in p for p in slurm["partitions"])


def test_write_site_moves_the_growing_sections_into_inventory_files(tmp_path: Path) -> None:
    path = write_site(tmp_path / "Pulumi.small.yaml", hosts=3, nodesets=4, users=5)
    config = yaml.safe_load(path.read_text())["config"]
    for section, suffix, key in (
        ("provisioning", "hosts", "hosts"),
        ("directory", "users", "users"),
        ("slurm", "slurm", "accounts"),
    ):
        values = config[f"hpcforge:{section}"]
        assert key not in values
        inventory = Path(values["inventory"]["file"])
        assert inventory == tmp_path / f"Pulumi.small.{suffix}.yaml"
        assert key in yaml.safe_load(inventory.read_text())


def test_write_site_makes_the_folder_it_writes_into(tmp_path: Path) -> None:
    # benchmarks/inventory_load.py's docstring tells users to generate into /tmp/site/, which need not exist.
    path = write_site(tmp_path / "site" / "Pulumi.small.yaml", hosts=3, nodesets=4, users=5)
    assert path.is_file()
    assert (tmp_path / "site" / "Pulumi.small.hosts.yaml").is_file()
