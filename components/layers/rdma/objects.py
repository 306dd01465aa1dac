"""RDMA layer builders (pure): the operator's namespace allows, the Network Operator chart's values, the
NicClusterPolicy, nv-ipam's IPPools, the SR-IOV operator's objects, the RDMA shared device plugin's config and the
fabrics' CNI configs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...k8s.resources import Allow, egress_to_apiserver
from ...versions import ImagePin, Images
from .config import Fabric, RdmaConfig
from .face import ipam_config

NAMESPACE = "nvidia-network-operator"
NIC_CLUSTER_POLICY = "nic-cluster-policy"  # the one name the operator reconciles
RESOURCE_PREFIX = "rdma"
MELLANOX_API = "mellanox.com/v1alpha1"
"""The API version of the NicClusterPolicy."""
SRIOV_API = "sriovnetwork.openshift.io/v1"
"""The API version of the SR-IOV operator's objects."""


def operator_namespace_allows() -> list[Allow]:
    """The operator's namespace: the API server (its DaemonSets' pods use the host network)."""
    return [egress_to_apiserver()]


def _image(pin: ImagePin) -> dict[str, str]:
    repository, _, image = pin.repository.rpartition("/")
    return {"repository": repository, "image": image, "version": pin.tag}


def shared_device_plugin_config(rdma: RdmaConfig) -> str:
    """The RDMA shared device plugin's config: one resource per fabric, selecting its ports by interface name."""
    config_list = []
    for fabric in (f for f in rdma.fabrics if f.mode == "shared"):
        interfaces = sorted({nic.interface for pool in rdma.pools for nic in pool.nics if nic.fabric == fabric.name})
        config_list.append(
            {
                "resourceName": fabric.shared_resource_name,
                "resourcePrefix": RESOURCE_PREFIX,
                "rdmaHcaMax": rdma.rdma_hca_max,
                "selectors": {"ifNames": interfaces},
            }
        )
    return json.dumps({"configList": config_list}, sort_keys=True)


def nic_cluster_policy_spec(rdma: RdmaConfig, pool_taints: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """NicClusterPolicy spec (mellanox.com/v1alpha1): shared device plugin, CNI plugins, ipoib for InfiniBand, and
    nv-ipam for the fabrics whose addresses it allocates. The OFED driver is preinstalled on the hosts (as the GPU
    driver), Multus comes from hpcforge's network layer.

    IPAM: network-operator 26.4.1's NicClusterPolicy has no `secondaryNetwork.ipamPlugin` any more (its CRD lists
    only `cniPlugins`, `ipoib` and `multus` there; removed upstream by "Remove ipamPlugin from NicClusterPolicy",
    Mellanox/network-operator 63c7ea65): whereabouts cannot come from it. Its `nvIpam` deploys NVIDIA's IPAM (the
    operator applies nv-ipam's CRDs, a controller and a node DaemonSet from manifests/state-nv-ipam-cni/); the
    validating webhook stays off (it would need the API server to reach the controller through this namespace's
    default deny).

    `pool_taints`: taint keys of each node pool; the operator's DaemonSets (device plugin, CNI plugins, nv-ipam's node
    agent) tolerate those of the RDMA pools (NicClusterPolicy `tolerations`: "Tolerations to inject to the DaemonSets
    objects that are managed by the operator"), or they would not run where the fabrics are."""
    secondary: dict[str, Any] = {"cniPlugins": _image(Images.CNI_PLUGINS)}
    if any(f.type == "infiniband" and f.mode == "shared" for f in rdma.fabrics):
        secondary["ipoib"] = _image(Images.IPOIB_CNI)
    spec: dict[str, Any] = {"secondaryNetwork": secondary}
    if any(f.ipam == "nv-ipam" for f in rdma.fabrics):
        spec["nvIpam"] = {**_image(Images.NV_IPAM), "enableWebhook": False}
    taints = sorted({key for pool in rdma.pools for key in (pool_taints or {}).get(pool.pool, ())})
    if taints:
        spec["tolerations"] = [{"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in taints]
    if any(f.mode == "shared" for f in rdma.fabrics):
        spec["rdmaSharedDevicePlugin"] = {
            **_image(Images.RDMA_SHARED_DEVICE_PLUGIN),
            "config": shared_device_plugin_config(rdma),
        }
    return spec


NV_IPAM_API = "nv-ipam.nvidia.com/v1alpha1"
NIC_CLUSTER_POLICY_READY = "jsonpath={.status.state}=ready"
"""What `pulumi up` waits for on the NicClusterPolicy when IPPools follow it: the operator has applied every state,
nv-ipam's CRDs included (status.state, enum ignore/notReady/ready/error in the NicClusterPolicy CRD)."""


def ip_pool_spec(fabric: Fabric, pool_labels: Mapping[str, Mapping[str, str]], pools: Sequence[str]) -> dict[str, Any]:
    """IPPool spec (nv-ipam.nvidia.com/v1alpha1) of a fabric: its range, one block of `addressesPerNode` per node,
    handed out only to the nodes of `pools` (the pools that reach the fabric; one nodeSelectorTerm per pool, terms
    are ORed). The IPPool lives in the operator's namespace: nv-ipam's controller reads pools from its own namespace
    (`--ippools-namespace=$(POD_NAMESPACE)`, manifests/state-nv-ipam-cni/040-nv-ipam-controller.yaml)."""
    spec: dict[str, Any] = {"subnet": fabric.range, "perNodeBlockSize": fabric.addresses_per_node}
    terms = [
        {"matchExpressions": [{"key": key, "operator": "In", "values": [value]} for key, value in sorted(labels.items())]}
        for labels in (pool_labels.get(pool, {}) for pool in pools)
        if labels
    ]
    if terms and len(terms) == len(pools):
        spec["nodeSelector"] = {"nodeSelectorTerms": terms}
    return spec


def sriov_node_policies(rdma: RdmaConfig, pool_labels: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, Any]]:
    """SriovNetworkNodePolicy specs (sriovnetwork.openshift.io/v1), one per SR-IOV port of each pool, by object name:
    virtual functions with RDMA on the port, offered as the fabric's resource on the pool's nodes."""
    policies: dict[str, dict[str, Any]] = {}
    for pool in rdma.pools:
        for nic in pool.nics:
            fabric = rdma.fabric(nic.fabric)
            if fabric is None or fabric.mode != "sriov":
                continue
            spec: dict[str, Any] = {
                "resourceName": fabric.sriov_resource_name,
                "nodeSelector": dict(pool_labels.get(pool.pool, {})),
                "numVfs": fabric.vfs,
                "nicSelector": {"pfNames": [nic.interface]},
                "deviceType": "netdevice",
                "isRdma": True,
                "linkType": "ib" if fabric.type == "infiniband" else "eth",
            }
            if fabric.type == "roce":
                spec["mtu"] = fabric.mtu
            policies[f"{pool.pool}-{nic.interface}".lower().replace("_", "-").replace(".", "-")] = spec
    return policies


def sriov_network(fabric: Fabric, attachment_namespace: str) -> tuple[str, dict[str, Any]]:
    """(kind, spec) of the SR-IOV network of a fabric; the operator makes the NetworkAttachmentDefinition
    `<attachment_namespace>/<fabric>` from it."""
    spec = {
        "resourceName": fabric.sriov_resource_name,
        "networkNamespace": attachment_namespace,
        "ipam": json.dumps(ipam_config(fabric), sort_keys=True),
    }
    return ("SriovIBNetwork" if fabric.type == "infiniband" else "SriovNetwork"), spec


def network_operator_values(*, nfd: bool, sriov: bool = False) -> dict[str, Any]:
    """Helm values of the network-operator chart (pure). `nfd`: deploy Node Feature Discovery here (off when the GPU
    Operator already runs one)."""
    return {
        "upgradeCRDs": False,  # a Helm hook (module docstring)
        "nfd": {"enabled": nfd, "deployNodeFeatureRules": True},
        "sriovNetworkOperator": {"enabled": sriov},
        "maintenanceOperator": {"enabled": False},
        "operator": {"resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}},
    }


SRIOV_OPERATOR_CONFIG = "default"  # the one name the SR-IOV operator reconciles


def sriov_operator_config_spec() -> dict[str, Any]:
    """SriovOperatorConfig spec (sriovnetwork.openshift.io/v1): what the chart would render from network-operator 26.4.1's
    values (`sriov-network-operator.sriovOperatorConfig` and the subchart's defaults), admission controllers off."""
    return {
        "enableInjector": False,
        "enableOperatorWebhook": False,
        "configDaemonNodeSelector": {"beta.kubernetes.io/os": "linux", "network.nvidia.com/operator.mofed.wait": "false"},
        "logLevel": 2,
        "disableDrain": False,
        "configurationMode": "daemon",
    }
