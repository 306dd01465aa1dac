"""NCCL's settings for jobs on RDMA GPU nodes (pure): which network NCCL bootstraps on and which RDMA devices it uses.

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

NCCL_CONF_PATH = "/etc/nccl.conf"
ENROOT_ENVIRON = "/etc/enroot/environ.d/90-hpcforge-nccl.env"


def nccl_conf(settings: dict[str, str]) -> str:
    """`NAME=value` lines: the format of /etc/nccl.conf and of enroot's environ.d files alike."""
    return "".join(f"{name}={value}\n" for name, value in sorted(settings.items()))


__all__ = ["ENROOT_ENVIRON", "NCCL_CONF_PATH", "nccl_conf"]
