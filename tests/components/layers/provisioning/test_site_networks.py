"""Networks and profiles as sites have them: several provisioning subnets, BMCs on their own network
(grendel.toml and Grendel's inventory), and a lab profile without Slurm accounting that deploys no
database."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from components.layers.provisioning.grendel import GrendelSecrets, render_grendel_toml, render_inventory
from components.site.loader import load_config
from components.site.root import PlatformConfig
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config, run_stack_file, write_variant
from tests.site_helpers import load_edited, refusal


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def test_grendel_toml_has_a_subnet_per_network_with_its_gateway(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    document = tomllib.loads(render_grendel_toml(prod.provisioning, prod.domain, GrendelSecrets("api", "$2a$10$x")))
    subnets = document["dhcp"]["subnets"]
    # Grendel parses each gateway as a prefix and picks the one containing a host's address.
    assert [s["gateway"] for s in subnets] == ["10.20.0.1/23", "10.21.0.1/24", "10.20.2.254/24"]
    assert all(s["mtu"] == "9000" and s["dns"] == "10.20.0.2" for s in subnets)


def test_hosts_and_bmcs_carry_the_prefix_of_their_own_network(tmp_path: Path) -> None:
    def add_host(values: dict[str, Any]) -> None:
        values["hpcforge:provisioning"]["hosts"].append(
            {"name": "cn201", "mac": "0c:c4:7a:50:00:01", "ip": "10.21.0.11", "nodeset": "cpu-bm",
             "bmc": {"mac": "0c:c4:7a:60:00:01", "ip": "10.20.2.150"}, "switch": "rack4"}
        )  # fmt: skip

    config = load_edited(tmp_path, add_host)
    assert config.provisioning is not None
    records = {h["name"]: h for h in json.loads(render_inventory(config.provisioning, config.domain, None)[0])}
    assert [nic["ip"] for nic in records["cn201"]["interfaces"]] == ["10.21.0.11/24", "10.20.2.150/24"]
    assert [nic["ip"] for nic in records["cn001"]["interfaces"]] == ["10.20.1.1/23", "10.20.2.1/24"]
    assert "switch:rack4" in records["cn201"]["tags"]


def _provisioning(edit: Any) -> Any:
    return lambda values: edit(values["hpcforge:provisioning"])


BAD = [
    (
        "BMC outside the BMC network",
        _provisioning(lambda p: p["hosts"][0]["bmc"].update(ip="10.20.1.99")),
        "{hosts}: hosts[0].bmc.ip: host 'cn001': IP 10.20.1.99 is outside the BMC network 10.20.2.0/24",
    ),
    (
        "host on the BMC network",
        _provisioning(lambda p: p["hosts"][0].update(ip="10.20.2.77")),
        "{hosts}: hosts[0].ip: host 'cn001': IP 10.20.2.77 is outside the provisioning subnets",
    ),
    (
        "BMC network overlapping a provisioning network",
        _provisioning(lambda p: p["bmcNetwork"].update(subnet="10.20.0.0/22", gateway="10.20.3.254")),
        "hpcforge:provisioning.bmcNetwork.subnet: 10.20.0.0/22 overlaps the provisioning network 10.20.0.0/23",
    ),
    (
        "subnet gateway outside its subnet",
        _provisioning(lambda p: p["subnets"][0].update(gateway="10.22.0.1")),
        "hpcforge:provisioning.subnets[0].gateway: 10.22.0.1 is not in subnet 10.21.0.0/24",
    ),
    (
        "overlapping provisioning subnets",
        _provisioning(lambda p: p["subnets"].append({"subnet": "10.21.0.128/25", "gateway": "10.21.0.129"})),
        "hpcforge:provisioning.subnets[1].subnet: 10.21.0.128/25 overlaps subnets[0] 10.21.0.0/24",
    ),
    (
        "host inside a subnet's discovery range",
        _provisioning(lambda p: p["hosts"][1].update(ip="10.21.0.210")),
        "{hosts}: hosts[1].ip: host 'cn002': IP 10.21.0.210 is inside the DHCP dynamic range 10.21.0.200-10.21.0.250",
    ),
    (
        "host on a subnet's gateway",
        _provisioning(lambda p: p["hosts"][1].update(ip="10.21.0.1")),
        "{hosts}: hosts[1].ip: host 'cn002': IP 10.21.0.1 is already used by the gateway of subnets[0]",
    ),
    (
        "host on a subnet's network address",
        _provisioning(lambda p: p["hosts"][1].update(ip="10.21.0.0")),
        "{hosts}: hosts[1].ip: host 'cn002': IP 10.21.0.0 is the network address of 10.21.0.0/24, not a host address",
    ),
    (
        "host on the broadcast address",
        _provisioning(lambda p: p["hosts"][0].update(ip="10.20.1.255")),
        "{hosts}: hosts[0].ip: host 'cn001': IP 10.20.1.255 is the broadcast address of 10.20.0.0/23, not a host address",
    ),
    (
        "BMC on the BMC network's broadcast address",
        _provisioning(lambda p: p["hosts"][0]["bmc"].update(ip="10.20.2.255")),
        "{hosts}: hosts[0].bmc.ip: host 'cn001': IP 10.20.2.255 is the broadcast address of 10.20.2.0/24, not a host address",
    ),
    (
        "gateway on the network address",
        _provisioning(lambda p: p.update(gateway="10.20.0.0")),
        "hpcforge:provisioning.gateway: 10.20.0.0 is the network address of the provisioning subnet 10.20.0.0/23, not a "
        "host address",
    ),
    (
        "subnet gateway on the broadcast address",
        _provisioning(lambda p: p["subnets"][0].update(gateway="10.21.0.255")),
        "hpcforge:provisioning.subnets[0].gateway: 10.21.0.255 is the broadcast address of subnet 10.21.0.0/24, not a host "
        "address",
    ),
    (
        "Grendel on the broadcast address",
        _provisioning(lambda p: p.update(address="10.20.1.255/23")),
        "hpcforge:provisioning.address: 10.20.1.255/23 is the broadcast address of the provisioning subnet 10.20.0.0/23, "
        "not a host address",
    ),
    (
        "DHCP range ending on the broadcast address",
        _provisioning(lambda p: p["subnets"][0]["range"].update(end="10.21.0.255")),
        "hpcforge:provisioning.subnets[0].range.end: 10.21.0.255 is the broadcast address of subnet 10.21.0.0/24, not a "
        "host address",
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), BAD, ids=[case for case, _, _ in BAD])
def test_bad_networks_are_refused_naming_the_key(tmp_path: Path, case: str, edit: Any, expected: str) -> None:
    refusal(tmp_path, edit, expected)


def _slurm_policy_names(stack: RecordedStack) -> set[str]:
    return {
        r.inputs["metadata"]["name"]
        for r in stack.kubernetes_objects()
        if r.inputs["kind"] == "NetworkPolicy" and r.inputs["metadata"]["namespace"] == "slurm"
    }


def test_lab_without_accounting_deploys_no_database(tmp_path: Path, dev_stack: RecordedStack) -> None:
    # The same stack with accounting has all of it.
    assert "hpcforge:database:Database" in {r.type for r in dev_stack.resources}
    assert "allow-egress-database" in _slurm_policy_names(dev_stack)

    def lab(values: dict[str, Any]) -> None:
        values["hpcforge:slurm"].update(accounting={"enabled": False})
        values["hpcforge:slurm"].pop("accounts", None)  # Slurm accounts need slurmdbd
        values.pop("hpcforge:backups", None)  # nothing to back up without the database

    path = write_variant(tmp_path, "dev", lab, name="lab")
    stack = run_stack_file(path, "lab")
    types = {r.type for r in stack.resources}
    assert "hpcforge:database:Database" not in types
    kinds = {r.inputs["kind"] for r in stack.kubernetes_objects()}
    assert not {"MariaDB", "Database", "User", "Grant", "Accounting"} & kinds
    charts = json.dumps([r.inputs for r in stack.resources if r.is_chart or r.inputs.get("kind") == "Application"])
    assert "mariadb-operator" not in charts
    controller = next(r.inputs for r in stack.kubernetes_objects() if r.inputs["kind"] == "Controller")
    assert "accountingRef" not in controller["spec"]
    assert "AccountingStorageEnforce" not in controller["spec"]["extraConf"]
    assert "allow-egress-database" not in _slurm_policy_names(stack)


def test_gpu_login_pool_is_its_own_loginset_on_its_gpu_nodes(prod_stack: RecordedStack) -> None:
    loginsets = {
        r.inputs["metadata"]["name"]: r.inputs["spec"] for r in prod_stack.kubernetes_objects() if r.inputs["kind"] == "LoginSet"
    }
    assert set(loginsets) == {"login", "login-gpu"}
    gpu = loginsets["login-gpu"]
    assert gpu["login"]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert gpu["template"]["spec"]["nodeSelector"] == {"hpcforge.io/pool": "login-gpu"}
    assert gpu["template"]["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert gpu["service"]["metadata"]["annotations"]["metallb.io/loadBalancerIPs"] == "10.10.0.151"
    assert "nodeSelector" not in loginsets["login"]["template"]["spec"]


def _login(**changes: Any) -> Any:
    return lambda values: values["hpcforge:slurm"]["extraLogins"][0].update(changes)


LOGIN_BAD = [
    (
        "login pool on a nodeset's node pool",
        _login(nodePool="gpu-a100", gpus={"type": "a100", "count": 1}),
        "hpcforge:slurm.extraLogins[0].nodePool: node pool 'gpu-a100' already runs nodeset 'gpu-a100'",
    ),
    (
        "GPU login pool without a node pool",
        _login(nodePool=None),
        "hpcforge:slurm.extraLogins[0].nodePool: a login pool with GPUs needs the node pool that has them",
    ),
    (
        "two login sets on one address",
        _login(address="10.10.0.150"),
        "hpcforge:slurm.extraLogins: login address 10.10.0.150 is used by two login sets",
    ),
    (
        "login set named like a nodeset",
        _login(name="cpu"),
        "hpcforge:slurm.extraLogins[0].name: login set name 'cpu' is already used",
    ),
    (
        "more GPUs than the node has",
        _login(gpus={"type": "l40s", "count": 4}),
        "hpcforge:slurm.extraLogins[0].gpus: node pool 'login-gpu' has fewer than 4 GPU(s) per node",
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), LOGIN_BAD, ids=[case for case, _, _ in LOGIN_BAD])
def test_bad_login_pools_are_refused_naming_the_key(tmp_path: Path, case: str, edit: Any, expected: str) -> None:
    refusal(tmp_path, edit, expected)
