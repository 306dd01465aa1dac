"""hpcforge's CNI configs held against the rules of the plugins that read them, where those cannot run here.

The consumers, at the versions network-operator v26.4.1 pins (hack/release.yaml: each `sourceRepository` is built at
its `network-operator-v26.4.1` tag): Mellanox/ipoib-cni (the InfiniBand fabrics' attachments), Mellanox/nvidia-k8s-ipam
(the fabrics' IPAM: the CNI plugin's config, the IPPool's validation and the controller's per-node blocks),
Mellanox/sriov-network-operator (branch network-operator-26.4.x: how a SriovNetwork's `ipam` enters the attachment it
makes), and k8snetworkplumbingwg/whereabouts v0.9.4 (the newest tag; hpcforge does not install whereabouts, so no
version is pinned). tests/components/layers/rdma/cni_rules.go writes their rules down, each function citing the file it follows, and decodes
with Go's encoding/json (Debian's golang-go) as they do. The plugins that Debian packages (ipvlan, macvlan, static)
run for real in tests/components/layers/rdma/test_cni_plugins.py.

Found with these rules, and fixed: a shared fabric's attachment named the first of its ports' names (sorted), so on a
pool whose port has another name ipoib-cni fails every pod ("failed to lookup master"); hpcforge accepted IPPools that
nv-ipam refuses (a block larger than the subnet's usable addresses) or serves only in part (a block per node counted
against all addresses, where nv-ipam skips the network and broadcast addresses: the last node got no block); and a
whereabouts attachment's gateway went to the first pod (whereabouts allocates from the first address on and skips
only `exclude`).
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from components.layers.network.config import NetworkAttachment
from components.layers.network.objects import ipvlan_cni_config
from components.layers.rdma.config import Fabric, RdmaConfig
from components.layers.rdma.face import attachment_config
from components.layers.rdma.objects import NAMESPACE, ip_pool_spec, shared_device_plugin_config
from components.site.loader import ConfigError, load_config
from components.site.root import PlatformConfig
from offline.program.engine import RecordedStack
from tests.components.layers.rdma.test_rdma import RDMA
from tests.components.layers.rdma.test_rdma_device_plugin import validate
from tests.helpers import REPO, config_values, go_program, raw_config
from tests.test_layers import objects

RULES_SOURCE = REPO / "tests" / "components" / "layers" / "rdma" / "cni_rules.go"
IB = {"name": "ib-rail0", "type": "infiniband", "mtu": 4092, "range": "10.60.0.0/16"}


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return go_program(tmp_path_factory.mktemp("cni-rules"), RULES_SOURCE.read_text(), "cni-rules")


def run_rules(program: Path, mode: str, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(program), mode, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False)


def accepted(program: Path, mode: str, stdin: str, *args: str) -> Any:
    result = run_rules(program, mode, stdin, *args)
    assert result.returncode == 0, f"{mode} refuses: {result.stderr}"
    return json.loads(result.stdout)


def cluster_nodes(config: PlatformConfig) -> list[dict[str, Any]]:
    """One Kubernetes node per node of each pool, labelled as the pool says (`pool` is for the test, not the rules)."""
    return [
        {"name": f"{pool.name}-{index}", "labels": dict(pool.labels), "pool": pool.name}
        for pool in config.node_pools
        for index in range(pool.nodes)
    ]


def reconcile(program: Path, name: str, spec: dict[str, Any], nodes: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    return run_rules(program, "ippool", json.dumps({"name": name, "spec": spec, "nodes": nodes}))


@pytest.fixture(scope="module")
def prod_config() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


@pytest.mark.program
def test_prod_infiniband_attachments_pass_ipoib_cni_and_nv_ipam_on_every_node_of_their_pools(
    prod_stack: RecordedStack, prod_config: PlatformConfig, rules: Path
) -> None:
    rdma = prod_config.rdma
    assert rdma is not None
    ip_pools = {key: r.inputs for key, r in objects(prod_stack, "IPPool").items()}
    nodes = cluster_nodes(prod_config)
    checked = []
    for resource in objects(prod_stack, "NetworkAttachmentDefinition").values():
        config = resource.inputs["spec"]["config"]
        fabric = json.loads(config)["name"]
        if json.loads(config)["type"] != "ipoib":
            continue
        for pool in rdma.pools_of(fabric):
            nics = rdma.pool_nics(pool)
            assert nics is not None
            # A node of the pool has an IPoIB interface for each of the pool's ports on an InfiniBand fabric.
            ipoib_ports = ",".join(n.interface for n in nics.nics if (f := rdma.fabric(n.fabric)) and f.type == "infiniband")
            assert accepted(rules, "ipoib", config, ipoib_ports)["ipam"] == "nv-ipam"
            checked.append((fabric, pool))
        # ipoib-cni runs the IPAM plugin on its own stdin; nv-ipam takes the pool from the IPPools of its namespace.
        found = accepted(rules, "nv-ipam", config)
        assert found["poolType"] == "ippool"
        for name in found["pools"]:
            spec = ip_pools[f"{NAMESPACE}/{name}"]["spec"]
            reconciled = json.loads(reconcile(rules, name, spec, nodes).stdout)
            assert reconciled["noFreeRanges"] == []
            assert sorted(reconciled["allocations"]) == sorted(n["name"] for n in nodes if n["pool"] in rdma.pools_of(fabric))
    shared_ib = [
        (f.name, p) for f in rdma.fabrics if f.type == "infiniband" and f.mode == "shared" for p in rdma.pools_of(f.name)
    ]
    assert checked and sorted(checked) == sorted(shared_ib)


@pytest.mark.program
def test_prod_sriov_networks_ipam_names_an_ip_pool_once_the_operator_embeds_it(
    prod_stack: RecordedStack, prod_config: PlatformConfig, rules: Path
) -> None:
    ip_pools = {key: r.inputs for key, r in objects(prod_stack, "IPPool").items()}
    networks = [(r, "sriov") for r in objects(prod_stack, "SriovNetwork").values()]
    networks += [(r, "ib-sriov") for r in objects(prod_stack, "SriovIBNetwork").values()]
    assert networks
    for resource, cni_type in networks:
        name = resource.inputs["metadata"]["name"]
        stdin = json.dumps({"name": name, "type": cni_type, "ipam": resource.inputs["spec"]["ipam"]})
        rendered = run_rules(rules, "sriov-network", stdin)
        assert rendered.returncode == 0, rendered.stderr
        for pool in accepted(rules, "nv-ipam", rendered.stdout)["pools"]:
            reconciled = reconcile(rules, pool, ip_pools[f"{NAMESPACE}/{pool}"]["spec"], cluster_nodes(prod_config))
            assert reconciled.returncode == 0 and json.loads(reconciled.stdout)["noFreeRanges"] == [], reconciled.stderr


def test_a_shared_fabric_whose_ports_have_two_names_is_refused_since_no_master_serves_both_pools(rules: Path) -> None:
    fabric = Fabric.model_validate(IB)
    # Two pools on ib-rail0, their ports named ibp26s0 and ibp12s0: whichever name the one attachment carries,
    # ipoib-cni on the other pool's nodes cannot find it.
    for master in ("ibp26s0", "ibp12s0"):
        config = attachment_config(fabric, master)
        verdicts = {port: run_rules(rules, "ipoib", config, port) for port in ("ibp26s0", "ibp12s0")}
        assert verdicts[master].returncode == 0
        (other,) = (port for port in verdicts if port != master)
        assert f'failed to lookup master "{master}": Link not found' in verdicts[other].stderr

    values = config_values("prod")
    values["hpcforge:rdma"]["pools"][1]["nics"].append({"interface": "ibp12s0", "fabric": "ib-rail0"})
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert (
        "hpcforge:rdma.pools[1].nics[2].interface: 'ibp12s0' is on shared fabric 'ib-rail0', whose ports are already"
        " named 'ibp26s0' (pool 'gpu-h100')"
    ) in str(raised.value)
    # An SR-IOV fabric has no master (the VF comes from the device plugin): its ports may be named per pool.
    values = config_values("prod")
    # (named and rated like the pool's other ports, which gpu-h100's link and all-reduce checks require)
    port = {"interface": "ens9f0np0", "fabric": "roce-rail0", "hca": "mlx5_4", "rateGbps": 400}
    values["hpcforge:rdma"]["pools"][0]["nics"].append(port)
    load_config(raw_config(values))


def test_a_fabric_no_pool_reaches_is_refused_since_the_device_plugin_would_drop_every_resource(
    prod_config: PlatformConfig, tmp_path: Path
) -> None:
    spare = {"name": "ib-spare", "type": "infiniband", "mtu": 4092, "range": "10.64.0.0/16"}
    rdma = prod_config.rdma
    assert rdma is not None
    # Before: rendered with an empty selector, which the RDMA shared device plugin refuses, and its whole config with it.
    unreached = rdma.model_copy(update={"fabrics": (*rdma.fabrics, Fabric.model_validate(spare))})
    refused = validate(tmp_path, shared_device_plugin_config(unreached))
    assert refused.returncode == 1 and "neither selectors nor devices" in refused.stderr
    values = config_values("prod")
    values["hpcforge:rdma"]["fabrics"].append(spare)
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert "hpcforge:rdma.fabrics[6].name: no NIC of any pool is on fabric 'ib-spare'" in str(raised.value)


@pytest.mark.parametrize(
    ("subnet", "block"),
    [
        ("10.60.0.0/28", 14),
        ("10.60.0.0/28", 15),  # hpcforge took it (less than 16 addresses); nv-ipam counts 14 usable
        ("10.60.0.0/28", 16),
        ("10.60.0.0/30", 2),
        ("10.60.0.0/31", 2),  # point to point: both addresses are usable
        ("fd00:60::/124", 15),
        ("fd00:60::/124", 16),
    ],
)
def test_hpcforge_takes_exactly_the_block_sizes_nv_ipam_takes(rules: Path, subnet: str, block: int) -> None:
    theirs = reconcile(rules, "ib-rail0", {"subnet": subnet, "perNodeBlockSize": block}, [])
    try:
        Fabric.model_validate({**IB, "range": subnet, "addressesPerNode": block})
    except ValidationError as error:
        assert theirs.returncode == 1 and "perNodeBlockSize: is larger then amount of IPs" in theirs.stderr
        assert f"addressesPerNode {block} is more than the" in str(error)
    else:
        assert theirs.returncode == 0, theirs.stderr


@pytest.mark.parametrize(
    ("subnet", "block"),
    [
        ("10.60.0.0/26", 15),
        ("10.60.0.0/26", 16),  # 4 x 16 = 64 addresses, as hpcforge counted; nv-ipam fits 3 blocks in 62
        ("10.60.0.0/25", 31),
        ("10.60.0.0/25", 32),
        ("fd00:60::/122", 16),  # IPv6: only the network address is left out, 63 usable
        ("10.60.0.0/16", 16),
    ],
)
def test_hpcforge_takes_a_fabric_exactly_when_nv_ipam_gives_each_of_its_nodes_a_block(
    rules: Path, prod_config: PlatformConfig, subnet: str, block: int
) -> None:
    values = config_values("prod")
    values["hpcforge:rdma"]["fabrics"][0].update(range=subnet, addressesPerNode=block)
    rdma = prod_config.rdma
    assert rdma is not None
    fabric = Fabric.model_validate({**IB, "range": subnet, "addressesPerNode": block})
    labels = {pool.name: pool.labels for pool in prod_config.node_pools}
    reconciled = reconcile(
        rules, fabric.name, ip_pool_spec(fabric, labels, rdma.pools_of(fabric.name)), cluster_nodes(prod_config)
    )
    assert reconciled.returncode == 0, reconciled.stderr
    starved = json.loads(reconciled.stdout)["noFreeRanges"]
    try:
        load_config(raw_config(values))
    except ConfigError as error:
        assert starved, f"nv-ipam serves every node, hpcforge refused: {error}"
        assert f"hpcforge:rdma.fabrics[0].range: {subnet} has room for" in str(error)
    else:
        assert starved == [], f"hpcforge took it, nv-ipam leaves {starved} without addresses"


@pytest.mark.parametrize("gateway", ["10.5.0.1", "10.5.0.14", "10.5.0.9", "10.5.1.1", None])
def test_whereabouts_hands_out_every_address_of_the_range_but_the_gateway_and_the_exclusions(
    rules: Path, gateway: str | None
) -> None:
    ipam = {"type": "whereabouts", "range": "10.5.0.0/28", "exclude": ["10.5.0.8/30"], "gateway": gateway}
    attachment = NetworkAttachment.model_validate({"name": "data", "namespace": "p", "master": "eth2", "ipam": ipam})
    result = accepted(rules, "whereabouts", ipvlan_cni_config(attachment), "100")
    excluded = ipaddress.ip_network("10.5.0.8/30")
    expected = [str(a) for a in ipaddress.ip_network("10.5.0.0/28").hosts() if a not in excluded and str(a) != gateway]
    assert result["allocated"] == expected
    assert result["gateway"] == (gateway or "")


@pytest.mark.parametrize("fabric", [IB, RDMA["fabrics"][1]])
def test_a_whereabouts_fabric_attachment_passes_its_plugin_and_whereabouts(rules: Path, fabric: dict[str, Any]) -> None:
    rdma = RdmaConfig.model_validate({**RDMA, "fabrics": [{**f, "ipam": "whereabouts"} for f in RDMA["fabrics"]]})
    found = rdma.fabric(fabric["name"])
    assert found is not None
    master = rdma.master_interface(found.name)
    config = attachment_config(found, master)
    if found.type == "infiniband":
        assert accepted(rules, "ipoib", config, master) == {"master": master, "ipam": "whereabouts"}
    network = ipaddress.ip_network(found.range)
    assert accepted(rules, "whereabouts", config, "2")["allocated"] == [str(network[1]), str(network[2])]
