"""RDMA layer: the NVIDIA Network Operator (chart network-operator 26.4.1) and its NicClusterPolicy, from
`hpcforge:rdma`: the RDMA shared device plugin offers `rdma/<fabric with - as _>` on the pools' nodes, the secondary-network CNI
plugins (and ipoib for InfiniBand) back one NetworkAttachmentDefinition per fabric, which the Slurm layer creates in
its namespace and attaches to the GPU NodeSets (see components/layers/slurm/layer.py).

Chart hooks (helm.v4.Chart drops them; docs/layers/gpu.md): `upgradeCRDs` renders a pre-install/pre-upgrade CRD Job,
switched off (the chart's `crds/` are applied as resources); `templates/keep-ncp-hook.yaml` is an unconditional
pre-install/pre-upgrade hook that protects a chart-made NicClusterPolicy, and hpcforge writes its own; the
sriov-network-operator subchart's pre-delete hook deletes the `default` SriovOperatorConfig so that the operator
removes its webhook configurations: hpcforge creates that SriovOperatorConfig itself (the chart's is switched off),
depending on the chart, so a destroy deletes it while the operator still runs (components/chart_hooks.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi

from ...charts import WAIT_FOR_ANNOTATION, ChartDeployer, ChartUse
from ...context import DeployContext
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.scope import Scope
from ...versions import Charts
from .config import RdmaConfig
from .objects import (
    MELLANOX_API,
    NAMESPACE,
    NIC_CLUSTER_POLICY,
    NIC_CLUSTER_POLICY_READY,
    NV_IPAM_API,
    SRIOV_API,
    SRIOV_OPERATOR_CONFIG,
    ip_pool_spec,
    network_operator_values,
    nic_cluster_policy_spec,
    operator_namespace_allows,
    sriov_network,
    sriov_node_policies,
    sriov_operator_config_spec,
)

CHARTS = (ChartUse("network-operator", Charts.NETWORK_OPERATOR, NAMESPACE),)


@dataclass(frozen=True)
class NetworkOperatorArgs:
    ctx: DeployContext
    config: RdmaConfig
    charts: ChartDeployer
    deploy_nfd: bool
    pool_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Node labels of each node pool (the SR-IOV node policies select the pool's nodes)."""
    pool_taints: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Taint keys of each node pool (the operator's DaemonSets tolerate those of the RDMA pools)."""
    attachment_namespace: str = "slurm"
    """Where the SR-IOV operator creates the fabrics' NetworkAttachmentDefinitions (the Slurm namespace)."""
    depends_on: Sequence[pulumi.Resource] = ()
    nfd_crds: Sequence[pulumi.Resource] = ()
    """What installs Node Feature Discovery's CRDs when `deploy_nfd` is False (the GPU Operator's chart, whose NFD
    subchart runs): the chart's NodeFeatureRule (`templates/nodefeaturerules.yaml`) needs them, so the chart waits
    for it (an Application: until Argo CD has synced it and it is Healthy)."""


class NetworkOperator(pulumi.ComponentResource):
    ready: list[pulumi.Resource]
    chart: pulumi.Resource
    """The chart (helm.v4.Chart or Argo CD Application): what installs its CRDs, the NetworkAttachmentDefinition's too."""

    def __init__(self, name: str, args: NetworkOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:rdma:NetworkOperator", name, None, opts)
        ctx = args.ctx
        namespace = LayerNamespace(
            ctx,
            self,
            NAMESPACE,
            component="network-operator",
            # The device plugin and CNI DaemonSets write to host paths and use the host network.
            pod_security="privileged",
            allows=operator_namespace_allows(),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        chart = namespace.chart(
            "network-operator",
            Charts.NETWORK_OPERATOR,
            network_operator_values(nfd=args.deploy_nfd, sriov=any(f.mode == "sriov" for f in args.config.fabrics)),
            depends_on=[*namespace.ready, *args.nfd_crds],
            component="network-operator",
        )
        self.chart = chart
        nv_ipam = [f for f in args.config.fabrics if f.ipam == "nv-ipam"]
        scope = namespace.scope.but(app="network-operator", depends_on=(chart,))
        policy = scope.custom(
            MELLANOX_API,
            "NicClusterPolicy",
            NIC_CLUSTER_POLICY,
            nic_cluster_policy_spec(args.config, args.pool_taints),
            cluster_scoped=True,
            # The IPPools need nv-ipam's CRDs, which the operator applies while it reconciles this policy.
            annotations={WAIT_FOR_ANNOTATION: NIC_CLUSTER_POLICY_READY} if nv_ipam else None,
        )
        pools: list[pulumi.Resource] = [
            scope.but(app="nv-ipam").custom(
                NV_IPAM_API,
                "IPPool",
                fabric.name,
                ip_pool_spec(fabric, args.pool_labels, args.config.pools_of(fabric.name)),
                resource_name=f"{NAMESPACE}/ip-pool-{fabric.name}",
                depends_on=[policy],
            )
            for fabric in nv_ipam
        ]
        sriov = self._sriov(scope, args)
        self.ready = [chart, policy, *pools, *sriov]
        self.register_outputs({"fabrics": [f.name for f in args.config.fabrics]})

    def _sriov(self, scope: Scope, args: NetworkOperatorArgs) -> list[pulumi.Resource]:
        """The SR-IOV operator's objects (after the chart, `scope`'s): its SriovOperatorConfig, the node policies, one
        network per SR-IOV fabric."""
        sriov: list[pulumi.Resource] = []
        if any(f.mode == "sriov" for f in args.config.fabrics):
            spec = sriov_operator_config_spec()
            resource_name = f"{NAMESPACE}/sriov-operator-config"
            sriov.append(scope.custom(SRIOV_API, "SriovOperatorConfig", SRIOV_OPERATOR_CONFIG, spec, resource_name=resource_name))
        for policy_name, spec in sriov_node_policies(args.config, args.pool_labels).items():
            resource_name = f"{NAMESPACE}/sriov-policy-{policy_name}"
            sriov.append(scope.custom(SRIOV_API, "SriovNetworkNodePolicy", policy_name, spec, resource_name=resource_name))
        for fabric in (f for f in args.config.fabrics if f.mode == "sriov"):
            kind, spec = sriov_network(fabric, args.attachment_namespace)
            resource_name = f"{NAMESPACE}/sriov-network-{fabric.name}"
            sriov.append(scope.custom(SRIOV_API, kind, fabric.name, spec, resource_name=resource_name))
        return sriov


__all__ = ["CHARTS", "NetworkOperator", "NetworkOperatorArgs"]
