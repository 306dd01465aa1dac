"""RDMA data plane (`hpcforge:rdma`): fabrics, the NICs of each node pool and the GPUs each NIC serves (rails)."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from ...ground.base import InterfaceName, K8sName, ProblemCollector, StrictModel, duplicates


class Fabric(StrictModel):
    """One RDMA network (a rail): InfiniBand or RoCE, with its MTU and address range."""

    name: K8sName
    """Fabric name: the NetworkAttachmentDefinition `<name>` in the Slurm namespace and the device-plugin resource
    `rdma/<name with - as _>`."""
    type: Literal["infiniband", "roce"]
    """`infiniband` (IPoIB attachment, ipoib CNI) or `roce` (macvlan attachment on the Ethernet port)."""
    mtu: int = Field(ge=576, le=65520)
    """MTU of the attachment (RoCE: up to 9000 on the switch ports; a shared RoCE fabric's host ports need at least
    this MTU, or macvlan refuses the pod; InfiniBand IPoIB: 2044 datagram, 4092, or 65520 connected mode, checked but
    not sent: ipoib-cni has no MTU setting, the pod's IPoIB interface takes the host port's)."""
    range: str
    """Pod addresses on this fabric (CIDR), allocated by the fabric's `ipam`."""
    ipam: Literal["nv-ipam", "whereabouts"] = "nv-ipam"
    """IPAM of the fabric's pod addresses: `nv-ipam` (NVIDIA's IPAM, deployed by the Network Operator from the
    NicClusterPolicy, with one IPPool per fabric: nothing to install) or `whereabouts` (must already run in the
    cluster: Network Operator 26.4.1 no longer deploys it)."""
    addresses_per_node: int = Field(default=16, ge=2, le=65536)
    """`ipam: nv-ipam`: addresses a node takes from `range` in one block (the IPPool's `perNodeBlockSize`): at least
    the pods on one node that attach this fabric. nv-ipam cuts the blocks from `range` without its network address
    (and, in IPv4, its broadcast address): `range` must have room for a block per node of the pools that reach the
    fabric."""
    mode: Literal["shared", "sriov"] = "shared"
    """How pods get the fabric's RDMA devices: `shared` (the RDMA shared device plugin: every pod on a node shares the
    port, resource `rdma/<name with - as _>`) or `sriov` (the SR-IOV network operator gives each pod its own virtual function,
    resource `nvidia.com/sriov_<name>`)."""
    vfs: int = Field(default=8, ge=1, le=128)
    """SR-IOV virtual functions per port (`mode: sriov`): at most this many pods per node use the fabric."""

    @property
    def resource(self) -> str:
        """The device-plugin resource a pod requests for this fabric."""
        return f"rdma/{self.shared_resource_name}" if self.mode == "shared" else f"nvidia.com/{self.sriov_resource_name}"

    @property
    def shared_resource_name(self) -> str:
        """The RDMA shared device plugin's `resourceName` for this fabric: the name with `-` made `_`, since the plugin
        refuses its whole configuration over any other character (Mellanox/k8s-rdma-shared-dev-plugin
        pkg/resources/resources_manager.go `ValidateConfigs`: `validResourceName`, `^[a-zA-Z0-9_]+$`)."""
        return self.name.replace("-", "_")

    @property
    def sriov_resource_name(self) -> str:
        return "sriov_" + self.name.replace("-", "_")

    @field_validator("range")
    @classmethod
    def _cidr(cls, value: str) -> str:
        try:
            ipaddress.ip_network(value, strict=True)
        except ValueError as error:
            raise ValueError(f"{value!r} is not a network in CIDR form: {error}") from None
        return value

    @property
    def addresses(self) -> int:
        return ipaddress.ip_network(self.range).num_addresses

    @property
    def usable_addresses(self) -> int:
        """The addresses of `range` that nv-ipam hands out: all but the network address, and in IPv4 the broadcast
        address; a /31 (/127) has 2, a /32 (/128) 1 (Mellanox/nvidia-k8s-ipam network-operator-v26.4.1,
        api/v1alpha1/helpers.go `GetPossibleIPCount`)."""
        network = ipaddress.ip_network(self.range)
        host_bits = network.max_prefixlen - network.prefixlen
        if host_bits <= 1:
            return network.num_addresses
        return network.num_addresses - (2 if network.version == 4 else 1)

    @property
    def node_blocks(self) -> int:
        """How many nodes nv-ipam's controller gives a block of `addresses_per_node`: blocks follow each other from the
        first usable address, and the last must end before the broadcast address (pkg/ipam-controller/allocator/
        allocator.go `AllocateFromPool`, `allocationValid`); a node beyond them gets none (event `NoFreeRanges`)."""
        return self.usable_addresses // self.addresses_per_node

    @model_validator(mode="after")
    def _block(self) -> Fabric:
        # nv-ipam refuses an IPPool whose perNodeBlockSize is larger than GetPossibleIPCount of the subnet
        # (api/v1alpha1/ippool_validate.go `Validate`, applied by the controller even with the webhook off).
        if self.ipam == "nv-ipam" and self.addresses_per_node > self.usable_addresses:
            raise ValueError(
                f"fabric {self.name!r}: addressesPerNode {self.addresses_per_node} is more than the"
                f" {self.usable_addresses} addresses nv-ipam hands out in range {self.range}"
            )
        return self

    @model_validator(mode="after")
    def _mtu(self) -> Fabric:
        if self.type == "roce" and self.mtu > 9216:
            raise ValueError(f"fabric {self.name!r}: RoCE MTU {self.mtu} is above Ethernet jumbo frames (9216)")
        if self.type == "infiniband" and self.mtu not in (2044, 4092, 65520):
            raise ValueError(f"fabric {self.name!r}: IPoIB MTU is 2044, 4092 (datagram) or 65520 (connected), not {self.mtu}")
        return self


class Nic(StrictModel):
    """One RDMA NIC port of the nodes of a pool, and the GPUs it is next to (same PCIe switch / NUMA node)."""

    interface: InterfaceName
    """The port's network interface on the host (e.g. ibp12s0, ens1f0np0): the device plugin selects it by name. A
    `shared` fabric has one NetworkAttachmentDefinition whose `master` is this name on every node: every port on the
    fabric, in every pool, must have the same name."""
    fabric: K8sName
    """The fabric (rail) this port is cabled to."""
    gpus: tuple[Annotated[int, Field(ge=0, le=63)], ...] = ()
    """GPU indexes this NIC serves (0 to 63) (the rail: `nvidia-smi topo -m` shows PIX/PXB between them)."""
    hca: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_]{1,32}$")
    """The port's RDMA device (`ibv_devices`, e.g. `mlx5_0`). When every NIC of a pool names it, jobs on the pool get
    `NCCL_IB_HCA==<these devices>` (exact names), so NCCL uses the rails and not other ports a privileged slurmd pod
    sees. Not known in advance for SR-IOV virtual functions: leave it out there."""
    rate_gbps: int | None = Field(default=None, ge=1, le=3200)
    """The port's link rate in Gb/s, as the HCA reports it (`ibstat` "Rate:", sysfs `ports/<n>/rate`: 400 for NDR 4x,
    200 for HDR 4x or 200GbE). The node's NIC bandwidth, the sum over its ports, bounds what an NCCL all-reduce across
    nodes can reach: `gpu.activeChecks[].minBusBandwidth` and `gpu.evidence.minBusBandwidth` above it are refused."""


class PoolNics(StrictModel):
    """The RDMA NICs of every node of one node pool."""

    pool: K8sName
    """Node pool (hpcforge:nodePools) whose nodes have these NICs."""
    nics: tuple[Nic, ...] = Field(min_length=1)
    """The RDMA ports of each node."""

    @property
    def bandwidth_gbytes(self) -> float | None:
        """A node's NIC bandwidth in GB/s (the declared port rates in Gb/s, summed, / 8); None unless every port
        declares its rate."""
        rates = [nic.rate_gbps for nic in self.nics]
        if any(rate is None for rate in rates):
            return None
        return sum(rate for rate in rates if rate is not None) / 8


class RdmaConfig(StrictModel):
    """NVIDIA Network Operator with the RDMA shared device plugin; GPU nodesets on these pools get the fabrics."""

    enabled: bool = True
    """Deploy the Network Operator, the NicClusterPolicy and the fabrics' attachments."""
    fabrics: tuple[Fabric, ...] = Field(min_length=1)
    """The RDMA networks (one per rail)."""
    pools: tuple[PoolNics, ...] = Field(min_length=1)
    """Which node pools have which NICs."""
    rdma_hca_max: int = Field(default=63, ge=1, le=1000)
    """Pods that may share one RDMA device (`rdmaHcaMax` of the shared device plugin)."""

    def fabric(self, name: str) -> Fabric | None:
        return next((f for f in self.fabrics if f.name == name), None)

    def pool_nics(self, pool: str | None) -> PoolNics | None:
        return next((p for p in self.pools if p.pool == pool), None)

    def pools_of(self, fabric: str) -> list[str]:
        """The node pools whose nodes reach a fabric, in config order."""
        return [pool.pool for pool in self.pools if any(nic.fabric == fabric for nic in pool.nics)]

    def master_interface(self, fabric: str) -> str:
        """The host interface of a fabric's ports: the `master` of its attachment (one name, checked in validation)."""
        return next(nic.interface for pool in self.pools for nic in pool.nics if nic.fabric == fabric)

    def fabrics_of(self, pool: str | None) -> list[str]:
        """The fabrics a pool's nodes reach, in NIC order, each once."""
        nics = self.pool_nics(pool)
        names: list[str] = []
        for nic in nics.nics if nics else ():
            if nic.fabric not in names:
                names.append(nic.fabric)
        return names

    @model_validator(mode="after")
    def _references(self) -> RdmaConfig:
        problems = ProblemCollector()
        for name in duplicates(f.name for f in self.fabrics):
            problems.add(["fabrics"], f"duplicate fabric {name!r}")
        known = ", ".join(f.name for f in self.fabrics)
        for pi, pool in enumerate(self.pools):
            for ni, nic in enumerate(pool.nics):
                if self.fabric(nic.fabric) is None:
                    problems.add(["pools", pi, "nics", ni, "fabric"], f"unknown fabric {nic.fabric!r} (known: {known})")
            for name in duplicates(n.interface for n in pool.nics):
                problems.add(["pools", pi, "nics"], f"interface {name!r} is listed twice")
            for gpu in duplicates(g for n in pool.nics for g in n.gpus):
                problems.add(["pools", pi, "nics"], f"GPU {gpu} is served by more than one NIC")
        for name in duplicates(p.pool for p in self.pools):
            problems.add(["pools"], f"node pool {name!r} is listed twice")
        for fi, fabric in enumerate(self.fabrics):
            if not self.pools_of(fabric.name):
                # The shared device plugin would get an empty selector for it and refuse its whole configuration.
                problems.add(["fabrics", fi, "name"], f"no NIC of any pool is on fabric {fabric.name!r}")
        self._one_master_per_shared_fabric(problems)
        problems.raise_if_any()
        return self

    def _one_master_per_shared_fabric(self, problems: ProblemCollector) -> None:
        """A shared fabric's attachment names one host interface (`master`) for every node: ipoib-cni and macvlan look
        it up by name on the pod's node and fail the pod where it does not exist (Mellanox/ipoib-cni
        network-operator-v26.4.1 pkg/ipoib/ipoib.go `CreateIpoibLink`: "failed to lookup master")."""
        first: dict[str, tuple[str, str]] = {}
        for pi, pool in enumerate(self.pools):
            for ni, nic in enumerate(pool.nics):
                fabric = self.fabric(nic.fabric)
                if fabric is None or fabric.mode != "shared":
                    continue
                interface, where = first.setdefault(nic.fabric, (nic.interface, pool.pool))
                if nic.interface != interface:
                    problems.add(
                        ["pools", pi, "nics", ni, "interface"],
                        f"{nic.interface!r} is on shared fabric {nic.fabric!r}, whose ports are already named"
                        f" {interface!r} (pool {where!r}): its one attachment names one host interface for every node;"
                        " give the ports one name, or use a fabric per name, or `mode: sriov`",
                    )
