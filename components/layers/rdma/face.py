"""What the RDMA layer publishes to the other layers (they import this module and the RDMA config, nothing else of
the layer): the annotations that attach a pod to a fabric, a fabric's device-plugin resource, and the CNI config of
a shared fabric's NetworkAttachmentDefinition."""

from __future__ import annotations

import json
from typing import Any

from .config import Fabric, RdmaConfig

NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"


def rdma_resource(rdma: RdmaConfig, fabric: str) -> str:
    """The device-plugin resource of a fabric: `rdma/<fabric with - as _>` (shared) or `nvidia.com/sriov_<fabric>` (SR-IOV)."""
    found = rdma.fabric(fabric)
    assert found is not None, fabric
    return found.resource


def ipam_config(fabric: Fabric) -> dict[str, Any]:
    """The `ipam` section of a fabric's CNI config: nv-ipam's pool of the same name, or whereabouts on the range."""
    if fabric.ipam == "nv-ipam":
        return {"type": "nv-ipam", "poolName": fabric.name}
    return {"type": "whereabouts", "range": fabric.range}


def attachment_config(fabric: Fabric, master: str) -> str:
    """The CNI config of a shared fabric's NetworkAttachmentDefinition (IPoIB for InfiniBand, macvlan for RoCE) on
    the host interface `master`, which every node of the fabric has (`RdmaConfig.master_interface`). ipoib-cni has no
    MTU setting: the IPoIB child takes its parent's."""
    plugin: dict[str, Any] = {"cniVersion": "0.3.1", "name": fabric.name}
    if fabric.type == "infiniband":
        plugin |= {"type": "ipoib", "master": master}
    else:
        plugin |= {"type": "macvlan", "master": master, "mode": "bridge", "mtu": fabric.mtu}
    plugin["ipam"] = ipam_config(fabric)
    return json.dumps(plugin, sort_keys=True)
