"""GPU layer: the NVIDIA GPU Operator (chart gpu-operator v26.7.0) on the GPU nodes, from `hpcforge:gpu.operator`.

It runs the device plugin that offers the `nvidia.com/gpu` (or `nvidia.com/mig-<profile>`) resources that GPU
NodeSets request, GPU Feature Discovery, the container toolkit, DCGM and dcgm-exporter, the MIG manager, and the
driver when the hosts do not bring one.

Chart hooks (helm.v4.Chart drops them; see docs/layers/gpu.md):
- `operator.upgradeCRD` renders a pre-upgrade Job that re-applies the CRDs. It is switched off: in `pulumi`
  delivery helm.v4.Chart renders the chart's `crds/` as ordinary resources, so a chart bump updates the CRDs
  through Pulumi's own diff; in `argocd` delivery Argo CD applies `crds/` the same way.
- `templates/cleanup_gpucluster.yaml` is an unconditional pre-delete hook that deletes GPUCluster objects before an
  uninstall. hpcforge creates no GPUCluster (`gpuCluster` stays off), so nothing is left for it to clean up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...k8s.layer_namespace import LayerNamespace
from ...versions import Charts
from .config import GpuOperatorConfig
from .objects import NAMESPACE, gpu_operator_values, operator_namespace_allows

CHARTS = (ChartUse("gpu-operator", Charts.GPU_OPERATOR, NAMESPACE),)


@dataclass(frozen=True)
class GpuOperatorArgs:
    ctx: DeployContext
    config: GpuOperatorConfig
    charts: ChartDeployer
    depends_on: Sequence[pulumi.Resource] = ()
    site_scrapes_dcgm: bool = False
    """The observability layer scrapes dcgm-exporter (gpu_operator_values)."""
    gpu_pool_taints: Sequence[str] = ()
    """Taint keys of the GPU node pools (gpu_operator_values)."""
    distribution: str | None = None
    """`k0s` or `rke2` when hpcforge bootstraps the cluster (gpu_operator_values)."""
    gpudirect_rdma: bool = False
    """GPU nodes reach an RDMA fabric (gpu_operator_values)."""
    dcgm_clients: Sequence[str] = ()
    """Namespaces whose pods talk to the DCGM host engine (the Slurm namespace, where an active check runs `dcgmi
    diag`): the operator's namespace lets them in on its port (operator_namespace_allows)."""


class GpuOperator(pulumi.ComponentResource):
    namespace: str
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:gpu:GpuOperator", name, None, opts)
        namespace = LayerNamespace(
            args.ctx,
            self,
            NAMESPACE,
            component="gpu-operator",
            # The driver, toolkit, device plugin and DCGM DaemonSets use host paths, host PID and privileges.
            pod_security="privileged",
            allows=operator_namespace_allows(args.dcgm_clients),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        chart = namespace.chart(
            "gpu-operator",
            Charts.GPU_OPERATOR,
            gpu_operator_values(
                args.config,
                site_scrapes_dcgm=args.site_scrapes_dcgm,
                gpu_pool_taints=args.gpu_pool_taints,
                distribution=args.distribution,
                gpudirect_rdma=args.gpudirect_rdma,
            ),
            component="gpu-operator",
        )
        self.namespace = NAMESPACE
        self.ready = [chart]
        self.register_outputs({"namespace": NAMESPACE, "migStrategy": args.config.mig_strategy})


__all__ = ["CHARTS", "GpuOperator", "GpuOperatorArgs"]
