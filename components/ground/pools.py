"""Kubernetes node pools: the hardware that Slurm nodesets and Kueue flavors are given."""

from __future__ import annotations

from pydantic import Field

from .base import K8sName, LabelKey, LabelValue, Quantity, StrictModel
from .gpus import GpuSpec


class NodePool(StrictModel):
    """A set of Kubernetes nodes selected by labels, described as the hardware it is."""

    name: K8sName
    """Pool name; nodesets (`slurm.nodesets[].pool`) and Kueue flavors (`batch.flavors[].pool`) refer to it, never both to
    the same pool."""
    labels: dict[LabelKey, LabelValue] = Field(min_length=1)
    """Node labels that select the pool (they become node selectors): Kubernetes label keys and values (at most 8
    on a pool given to Kueue: they become a ResourceFlavor's nodeLabels)."""
    nodes: int = Field(ge=1, le=100000)
    """Number of nodes in the pool (bounds the replicas of StatefulSet nodesets and the Kueue quotas)."""
    cpu_per_node: Quantity
    """CPUs of one node (the Kueue quota check adds them up)."""
    memory_per_node: Quantity
    """Memory of one node (the Kueue quota check adds it up)."""
    gpus_per_node: GpuSpec | None = None
    """GPUs of one node; the GPU requests of nodesets and Kueue quotas on the pool are checked against it."""
    taints: tuple[LabelKey, ...] = ()
    """Taint keys on the pool's nodes that workloads must tolerate (e.g. nvidia.com/gpu); the pool's nodesets and
    Kueue flavors tolerate them automatically (`NoSchedule`; at most 8 on a pool given to Kueue)."""
