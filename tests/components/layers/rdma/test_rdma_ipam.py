"""IPAM of the RDMA fabrics, deployed by the Network Operator's NicClusterPolicy (nv-ipam) instead of assumed.

network-operator 26.4.1's NicClusterPolicy cannot deploy whereabouts any more (its CRD has no
`secondaryNetwork.ipamPlugin`); its `nvIpam` deploys NVIDIA's IPAM, whose IPPools hpcforge declares, one per
fabric. nv-ipam's CRDs are applied by the operator at run time and are not in ../shared/crds (its INDEX.md lists
them as not collected): the IPPool spec is checked here against the schema of that CRD as published at the pinned
tag, transcribed below.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from components.layers.rdma.config import RdmaConfig
from components.layers.rdma.face import attachment_config
from components.layers.rdma.objects import NIC_CLUSTER_POLICY_READY, ip_pool_spec, nic_cluster_policy_spec, sriov_network
from components.site.loader import ConfigError, load_config
from components.versions import Images
from offline.program.documents import render_documents
from offline.program.engine import RecordedStack
from offline.schema import validate as schema
from tests.components.layers.rdma.test_rdma import RDMA
from tests.components.test_argocd_wait import _ready
from tests.helpers import config_values, raw_config, require_shared
from tests.test_layers import objects, one

# The `spec` schema of CRD ippools.nv-ipam.nvidia.com (v1alpha1), descriptions left out, as published in
# https://github.com/Mellanox/network-operator/blob/v26.4.1/manifests/state-nv-ipam-cni/005-nv-ipam.nvidia.com_ippools.yaml
# (commit 85afd6d9c6978eb871a3292b9897f49746cc43cd), with unknown fields refused as the API server prunes/refuses them.
# Also left out: the item schemas of `exclusions`, `perNodeExclusions` and `routes` (hpcforge sets none of them).
# Compared with that file on 2026-11-23 (descriptions, additionalProperties and x-kubernetes-* keys set aside): those
# item schemas are the only difference.
_SELECTOR_REQUIREMENT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["key", "operator"],
    "properties": {
        "key": {"type": "string"},
        "operator": {"type": "string"},
        "values": {"type": "array", "items": {"type": "string"}},
    },
}
IPPOOL_SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["perNodeBlockSize", "subnet"],
    "properties": {
        "defaultGateway": {"type": "boolean"},
        "exclusions": {"type": "array"},
        "gateway": {"type": "string"},
        "nodeSelector": {
            "type": "object",
            "additionalProperties": False,
            "required": ["nodeSelectorTerms"],
            "properties": {
                "nodeSelectorTerms": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "matchExpressions": {"type": "array", "items": _SELECTOR_REQUIREMENT},
                            "matchFields": {"type": "array", "items": _SELECTOR_REQUIREMENT},
                        },
                    },
                }
            },
        },
        "perNodeBlockSize": {"type": "integer"},
        "perNodeExclusions": {"type": "array"},
        "routes": {"type": "array"},
        "subnet": {"type": "string"},
    },
}

POOL_LABELS = {"gpu-h100": {"hpcforge.io/pool": "gpu-h100"}, "gpu-a100": {"hpcforge.io/pool": "gpu-a100"}}


def test_fabrics_default_to_nv_ipam_from_the_nic_cluster_policy() -> None:
    rdma = RdmaConfig.model_validate(RDMA)
    spec = nic_cluster_policy_spec(rdma)
    assert spec["nvIpam"] == {
        "repository": "nvcr.io/nvidia/mellanox",
        "image": "nvidia-k8s-ipam",
        "version": Images.NV_IPAM.tag,
        "enableWebhook": False,
    }
    ib = json.loads(attachment_config(rdma.fabrics[0], "ibp26s0"))
    assert ib["ipam"] == {"type": "nv-ipam", "poolName": "ib-rail0"}
    _, sriov = sriov_network(rdma.fabrics[1], "slurm")
    assert json.loads(sriov["ipam"]) == {"type": "nv-ipam", "poolName": "roce-rail0"}


def test_whereabouts_stays_available_and_then_nothing_of_nv_ipam_is_deployed() -> None:
    rdma = RdmaConfig.model_validate({**RDMA, "fabrics": [{**f, "ipam": "whereabouts"} for f in RDMA["fabrics"]]})
    assert "nvIpam" not in nic_cluster_policy_spec(rdma)
    ib = json.loads(attachment_config(rdma.fabrics[0], "ibp26s0"))
    assert ib["ipam"] == {"type": "whereabouts", "range": "10.60.0.0/16"}


def test_the_pinned_nic_cluster_policy_crd_has_no_whereabouts_option() -> None:
    crd = schema.load_crd_index(require_shared("crds").parent).get(
        schema.GroupVersionKind("mellanox.com", "v1alpha1", "NicClusterPolicy")
    )
    assert crd is not None
    properties = crd.openapi_schema["properties"]["spec"]["properties"]
    assert set(properties["secondaryNetwork"]["properties"]) == {"cniPlugins", "ipoib", "multus"}
    assert {"image", "repository", "version", "enableWebhook"} <= set(properties["nvIpam"]["properties"])


def test_ip_pool_is_valid_for_the_published_crd_and_selects_the_fabric_s_pools() -> None:
    rdma = RdmaConfig.model_validate(RDMA)
    spec = ip_pool_spec(rdma.fabrics[0], POOL_LABELS, rdma.pools_of("ib-rail0"))
    jsonschema.validate(spec, IPPOOL_SPEC_SCHEMA)
    assert spec == {
        "subnet": "10.60.0.0/16",
        "perNodeBlockSize": 16,
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "hpcforge.io/pool", "operator": "In", "values": ["gpu-h100"]}]}]
        },
    }
    with pytest.raises(jsonschema.ValidationError, match="'perNodeBlockSize' is a required property"):
        jsonschema.validate({"subnet": "10.60.0.0/16"}, IPPOOL_SPEC_SCHEMA)
    with pytest.raises(jsonschema.ValidationError, match="Additional properties"):
        jsonschema.validate({**spec, "blockSize": 4}, IPPOOL_SPEC_SCHEMA)
    # A pool without labels cannot be selected: the IPPool then serves every node rather than too few.
    assert "nodeSelector" not in ip_pool_spec(rdma.fabrics[0], {}, ["gpu-h100"])


@pytest.mark.parametrize(
    ("fabric", "message"),
    [
        (
            {"range": "10.60.0.0/28", "addressesPerNode": 16},
            "addressesPerNode 16 is more than the 14 addresses nv-ipam hands out in range 10.60.0.0/28",
        ),
        ({"addressesPerNode": 1}, "greater than or equal to 2"),
    ],
)
def test_block_size_mistakes(fabric: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        RdmaConfig.model_validate({**RDMA, "fabrics": [{**RDMA["fabrics"][0], **fabric}, RDMA["fabrics"][1]]})


def test_a_range_too_small_for_a_block_per_node_names_the_key() -> None:
    values = config_values("prod")
    nodes = next(p["nodes"] for p in values["hpcforge:nodePools"] if p["name"] == "gpu-h100")
    values["hpcforge:rdma"]["fabrics"][0]["range"] = "10.60.0.0/24"
    values["hpcforge:rdma"]["fabrics"][0]["addressesPerNode"] = 128
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert (
        "hpcforge:rdma.fabrics[0].range: 10.60.0.0/24 has room for 1 block(s) of 128 (addressesPerNode; nv-ipam hands"
        f" out 254 of its 256 addresses), too few for one on each of the {nodes} node(s) of gpu-h100"
    ) in str(raised.value)


@pytest.mark.program
def test_prod_deploys_one_ip_pool_per_fabric_after_the_policy_is_ready(prod_stack: RecordedStack) -> None:
    policy = next(r for r in objects(prod_stack, "NicClusterPolicy").values())
    assert policy.inputs["spec"]["nvIpam"]["image"] == "nvidia-k8s-ipam"
    wait_for = policy.inputs["metadata"]["annotations"]["pulumi.com/waitFor"]
    assert wait_for == NIC_CLUSTER_POLICY_READY
    assert _ready(wait_for, {"status": {"state": "ready"}}) and not _ready(wait_for, {"status": {"state": "notReady"}})
    pools = objects(prod_stack, "IPPool")
    fabrics = [f["name"] for f in config_values("prod")["hpcforge:rdma"]["fabrics"]]
    assert sorted(pools) == sorted(f"nvidia-network-operator/{name}" for name in fabrics)
    for key, pool in pools.items():
        jsonschema.validate(pool.inputs["spec"], IPPOOL_SPEC_SCHEMA)
        assert pool.inputs["apiVersion"] == "nv-ipam.nvidia.com/v1alpha1"
        assert any(urn.endswith("::nic-cluster-policy") for urn in pool.depends_on), key
    nad = one(prod_stack, "NetworkAttachmentDefinition", "slurm", "ib-rail0")
    assert json.loads(nad["spec"]["config"])["ipam"] == {"type": "nv-ipam", "poolName": "ib-rail0"}
    network = one(prod_stack, "SriovNetwork", "nvidia-network-operator", "roce-rail0")["spec"]
    assert json.loads(network["ipam"]) == {"type": "nv-ipam", "poolName": "roce-rail0"}


@pytest.mark.program
def test_schema_tier_lists_ip_pools_as_checked_here_and_still_refuses_other_kinds_without_a_crd(
    prod_stack: RecordedStack,
) -> None:
    shared = require_shared("crds").parent
    version = str(config_values("prod")["hpcforge:kubernetes"]["version"])
    documents = render_documents(prod_stack)
    report = schema.check_documents(documents, version, shared)
    assert set(report.runtime_crds) == {"nv-ipam.nvidia.com/v1alpha1 IPPool"}
    assert "tests/components/layers/rdma/test_rdma_ipam.py" in report.runtime_crds["nv-ipam.nvidia.com/v1alpha1 IPPool"]
    assert not [e for e in report.errors if "IPPool" in e]
    stranger = {"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "CIDRPool", "metadata": {"name": "x", "namespace": "n"}}
    errors = schema.check_documents([("x.yaml", stranger)], version, shared).errors
    assert errors == [
        "x.yaml: nv-ipam.nvidia.com/v1alpha1 CIDRPool x: nv-ipam.nvidia.com/v1alpha1 CIDRPool: no CustomResourceDefinition"
        " for this kind under shared/crds (nor declared by the program)"
    ]


def test_the_operator_daemonsets_tolerate_the_rdma_pools_taints() -> None:
    rdma = RdmaConfig.model_validate(RDMA)
    taints = {"gpu-h100": ["nvidia.com/gpu", "hpc.example.org/dedicated"], "cpu": ["cpu-only"]}
    assert nic_cluster_policy_spec(rdma, taints)["tolerations"] == [
        {"key": "hpc.example.org/dedicated", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]  # cpu is not an RDMA pool: its taint is not tolerated
    assert "tolerations" not in nic_cluster_policy_spec(rdma)
