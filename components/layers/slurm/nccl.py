"""NCCL's settings for jobs on RDMA GPU nodes (pure): which network NCCL bootstraps on and which RDMA devices it uses,
and the RDMA attachments and NCCL ConfigMaps of the nodesets that carry them.

A slurmd pod runs privileged (slurm-operator v1.2.1 worker_app.go), so it sees every RDMA device and network
interface of its host, not only the rails the device plugin gave it: left alone, NCCL picks its bootstrap interface and
IB devices from all of them (NCCL docs, "Environment Variables": NCCL_SOCKET_IFNAME, NCCL_IB_HCA; a leading `=` asks
for exact names instead of prefixes). hpcforge writes them, from the fabric config, where NCCL reads them:
- /etc/nccl.conf (NCCL reads it at init, NCCL docs "NCCL_CONF_FILE" / "/etc/nccl.conf"), for jobs in the pod;
- an enroot environ.d file, which enroot adds to the environment of every container it starts
  (NVIDIA/enroot doc/configuration.md, "environ.d"), for Pyxis jobs whose /etc is the image's.

`NCCL_SOCKET_IFNAME==eth0`: the pod's own interface (Kubernetes' pod network), which every rank of a job can reach;
the RDMA attachments (`net1`...) and the host's ports are for the IB transport, not the bootstrap.
`NCCL_IB_HCA`: the pool's rail devices (`hpcforge:rdma.pools[].nics[].hca`), only when every NIC names one.
The settings themselves are `nccl_settings` (face.py: the evidence layer's NCCL check reads them too).
"""

from __future__ import annotations

from typing import Any

from ..rdma.config import Fabric, RdmaConfig
from ..rdma.face import attachment_config, rdma_resource
from .config import NodeSetConfig
from .face import nccl_settings

NCCL_CONF_PATH = "/etc/nccl.conf"
ENROOT_ENVIRON = "/etc/enroot/environ.d/90-hpcforge-nccl.env"


def nccl_conf(settings: dict[str, str]) -> str:
    """`NAME=value` lines: the format of /etc/nccl.conf and of enroot's environ.d files alike."""
    return "".join(f"{name}={value}\n" for name, value in sorted(settings.items()))


def shared_fabrics(rdma: RdmaConfig | None) -> list[Fabric]:
    """The fabrics whose NetworkAttachmentDefinition the Slurm layer makes: the shared-mode ones (the SR-IOV
    operator makes those of SR-IOV fabrics)."""
    return [f for f in (rdma.fabrics if rdma else ()) if f.mode == "shared"]


def attachment_spec(rdma: RdmaConfig, fabric: Fabric) -> dict[str, Any]:
    """The NetworkAttachmentDefinition spec of a shared-mode fabric, on its master interface."""
    return {"config": attachment_config(fabric, rdma.master_interface(fabric.name))}


def nodeset_fabrics(rdma: RdmaConfig | None, nodeset: NodeSetConfig, pool: str | None) -> dict[str, str]:
    """The RDMA fabrics a GPU nodeset's pods attach (name -> device-plugin resource): those its pool's nodes reach."""
    if rdma is None or nodeset.gpus is None:
        return {}
    return {name: rdma_resource(rdma, name) for name in rdma.fabrics_of(pool)}


def nccl_config_map_name(nodeset: NodeSetConfig) -> str:
    return f"slurm-nccl-{nodeset.name}"


def nccl_files(rdma: RdmaConfig | None, nodeset: NodeSetConfig, pool: str | None) -> dict[str, str]:
    """The NCCL settings ConfigMap of a GPU nodeset on an RDMA pool (nccl.conf, and nccl.env for enroot); empty when
    it has none."""
    nccl = nccl_settings(rdma, pool) if nodeset.gpus is not None else {}
    if not nccl:
        return {}
    return {"nccl.conf": nccl_conf(nccl), "nccl.env": nccl_conf(nccl)}


__all__ = [
    "ENROOT_ENVIRON",
    "NCCL_CONF_PATH",
    "attachment_spec",
    "nccl_conf",
    "nccl_config_map_name",
    "nccl_files",
    "nodeset_fabrics",
    "shared_fabrics",
]
