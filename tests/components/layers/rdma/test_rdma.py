"""The RDMA data plane: NVIDIA Network Operator, NicClusterPolicy, one attachment per fabric, GPU NodeSets wired up."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import ValidationError

from components.chart_hooks import with_hooks_off
from components.layers.rdma.config import RdmaConfig
from components.layers.rdma.face import attachment_config
from components.layers.rdma.objects import (
    network_operator_values,
    nic_cluster_policy_spec,
    sriov_network,
    sriov_node_policies,
    sriov_operator_config_spec,
)
from components.site.loader import ConfigError, load_config
from components.versions import Charts, Images
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config
from tests.test_layers import one

RDMA: dict[str, Any] = {
    "fabrics": [
        {"name": "ib-rail0", "type": "infiniband", "mtu": 4092, "range": "10.60.0.0/16"},
        {"name": "roce-rail0", "type": "roce", "mtu": 9000, "range": "10.70.0.0/16"},
    ],
    "pools": [
        {"pool": "gpu-h100", "nics": [{"interface": "ibp26s0", "fabric": "ib-rail0", "gpus": [0, 1]}]},
        {"pool": "gpu-a100", "nics": [{"interface": "ens1f0np0", "fabric": "roce-rail0", "gpus": [0, 1, 2, 3]}]},
    ],
}


def test_nic_cluster_policy_offers_one_rdma_resource_per_fabric() -> None:
    spec = nic_cluster_policy_spec(RdmaConfig.model_validate(RDMA))
    plugin = spec["rdmaSharedDevicePlugin"]
    assert plugin["image"] == "k8s-rdma-shared-dev-plugin" and plugin["version"] == Images.RDMA_SHARED_DEVICE_PLUGIN.tag
    assert json.loads(plugin["config"])["configList"] == [
        # the plugin takes only [a-zA-Z0-9_] in a resource name (test_rdma_device_plugin.py)
        {"rdmaHcaMax": 63, "resourceName": "ib_rail0", "resourcePrefix": "rdma", "selectors": {"ifNames": ["ibp26s0"]}},
        {"rdmaHcaMax": 63, "resourceName": "roce_rail0", "resourcePrefix": "rdma", "selectors": {"ifNames": ["ens1f0np0"]}},
    ]
    assert set(spec["secondaryNetwork"]) == {"cniPlugins", "ipoib"}  # ipoib only because a fabric is InfiniBand


def test_attachment_is_ipoib_for_infiniband_and_macvlan_for_roce() -> None:
    rdma = RdmaConfig.model_validate(RDMA)
    ib = json.loads(attachment_config(rdma.fabrics[0], "ibp26s0"))
    assert ib == {
        "cniVersion": "0.3.1",
        "name": "ib-rail0",
        "type": "ipoib",
        "master": "ibp26s0",
        "ipam": {"type": "nv-ipam", "poolName": "ib-rail0"},  # tests/components/layers/rdma/test_rdma_ipam.py
    }
    roce = json.loads(attachment_config(rdma.fabrics[1], "ens1f0np0"))
    assert roce["type"] == "macvlan" and roce["mtu"] == 9000 and roce["master"] == "ens1f0np0"


def test_chart_hooks_off_and_one_node_feature_discovery() -> None:
    values = network_operator_values(nfd=False)
    assert values["upgradeCRDs"] is False and values["nfd"]["enabled"] is False
    assert values["sriovNetworkOperator"]["enabled"] is False


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"fabrics": [{"name": "ib", "type": "infiniband", "mtu": 9000, "range": "10.60.0.0/16"}]}, "IPoIB MTU is 2044, 4092"),
        ({"fabrics": [{"name": "r", "type": "roce", "mtu": 9000, "range": "10.60.0.1/16"}]}, "is not a network in CIDR form"),
    ],
)
def test_fabric_mistakes(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        RdmaConfig.model_validate({**RDMA, **change})


def test_unknown_fabric_and_missing_gpu_name_the_key() -> None:
    values = config_values("prod")
    values["hpcforge:rdma"]["pools"][0]["nics"][0]["fabric"] = "ib-rail9"
    with pytest.raises(ConfigError, match=re.escape("hpcforge:rdma.pools[0].nics[0].fabric: unknown fabric 'ib-rail9'")):
        load_config(raw_config(values))
    values = config_values("prod")
    values["hpcforge:rdma"]["pools"][0]["nics"][0]["gpus"] = [8]
    with pytest.raises(ConfigError, match=re.escape("GPU 8 does not exist on node pool 'gpu-h100' (8 GPU(s) per node)")):
        load_config(raw_config(values))


@pytest.mark.program
def test_prod_gpu_nodesets_get_rdma_devices_networks_and_ipc_lock(prod_stack: RecordedStack) -> None:
    spec = one(prod_stack, "NodeSet", "slurm", "gpu-h100")["spec"]
    rails = [f"ib-rail{i}" for i in range(4)]
    assert all(spec["slurmd"]["resources"]["limits"][f"rdma/{rail.replace('-', '_')}"] == 1 for rail in rails)
    assert spec["template"]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == ",".join(f"slurm/{r}" for r in rails)
    assert spec["slurmd"]["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    nad = one(prod_stack, "NetworkAttachmentDefinition", "slurm", "ib-rail0")
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "rdma/ib_rail0"
    cpu = one(prod_stack, "NodeSet", "slurm", "cpu")["spec"]
    assert "metadata" not in cpu["template"] and not any(k.startswith("rdma/") for k in cpu["slurmd"]["resources"]["limits"])
    assert "PropagateResourceLimitsExcept=MEMLOCK" in one(prod_stack, "Controller", "slurm", "slurm")["spec"]["extraConf"]
    assert one(prod_stack, "NicClusterPolicy", "", "nic-cluster-policy")["spec"]["rdmaSharedDevicePlugin"]


def test_sriov_fabric_gets_node_policies_and_a_network_instead_of_shared_devices() -> None:
    config = RdmaConfig.model_validate(
        {**RDMA, "fabrics": [RDMA["fabrics"][0], {**RDMA["fabrics"][1], "mode": "sriov", "vfs": 4}]}
    )
    assert config.fabrics[1].resource == "nvidia.com/sriov_roce_rail0"
    policies = sriov_node_policies(config, {"gpu-a100": {"hpcforge.io/pool": "gpu-a100"}})
    assert policies == {
        "gpu-a100-ens1f0np0": {
            "resourceName": "sriov_roce_rail0",
            "nodeSelector": {"hpcforge.io/pool": "gpu-a100"},
            "numVfs": 4,
            "nicSelector": {"pfNames": ["ens1f0np0"]},
            "deviceType": "netdevice",
            "isRdma": True,
            "linkType": "eth",
            "mtu": 9000,
        }
    }
    kind, spec = sriov_network(config.fabrics[1], "slurm")
    assert kind == "SriovNetwork" and spec["networkNamespace"] == "slurm" and spec["resourceName"] == "sriov_roce_rail0"
    shared = json.loads(nic_cluster_policy_spec(config)["rdmaSharedDevicePlugin"]["config"])["configList"]
    assert [entry["resourceName"] for entry in shared] == ["ib_rail0"]  # the SR-IOV fabric is not shared
    assert network_operator_values(nfd=False, sriov=True)["sriovNetworkOperator"]["enabled"] is True


@pytest.mark.program
def test_prod_sriov_rails_on_the_a100_pool(prod_stack: RecordedStack) -> None:
    spec = one(prod_stack, "NodeSet", "slurm", "gpu-a100")["spec"]
    limits = spec["slurmd"]["resources"]["limits"]
    assert limits["nvidia.com/sriov_roce_rail0"] == limits["nvidia.com/sriov_roce_rail1"] == 1
    assert spec["template"]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "slurm/roce-rail0,slurm/roce-rail1"
    network = one(prod_stack, "SriovNetwork", "nvidia-network-operator", "roce-rail0")["spec"]
    assert network["networkNamespace"] == "slurm"
    policy = one(prod_stack, "SriovNetworkNodePolicy", "nvidia-network-operator", "gpu-a100-ens1f0np0")["spec"]
    assert policy["nodeSelector"] == {"hpcforge.io/pool": "gpu-a100"} and policy["isRdma"] is True
    nads = {
        r.inputs["metadata"]["name"] for r in prod_stack.kubernetes_objects() if r.inputs["kind"] == "NetworkAttachmentDefinition"
    }
    assert nads >= {"ib-rail0", "ib-rail3"} and not nads & {"roce-rail0", "roce-rail1"}  # those come from the SR-IOV operator


@pytest.mark.program
def test_prod_sriov_operator_config_is_hpcforge_s_and_depends_on_the_chart(prod_stack: RecordedStack) -> None:
    # The subchart's pre-delete hook (dropped by helm.v4.Chart) deletes `default` while the operator still
    # runs; owning it, after the chart, gives a destroy that order (components/chart_hooks.py).
    found = next(
        r
        for r in prod_stack.kubernetes_objects()
        if r.inputs["kind"] == "SriovOperatorConfig" and r.inputs["metadata"]["name"] == "default"
    )
    assert found.inputs["metadata"]["namespace"] == "nvidia-network-operator"
    assert found.inputs["spec"] == sriov_operator_config_spec()
    assert any("network-operator" in urn for urn in found.depends_on)
    values = with_hooks_off(Charts.NETWORK_OPERATOR, network_operator_values(nfd=False, sriov=True))
    assert values["sriov-network-operator"]["sriovOperatorConfig"]["deploy"] is False
