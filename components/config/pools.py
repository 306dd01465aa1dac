"""Kubernetes node pools: the hardware that Slurm nodesets and Kueue flavors are given."""

from __future__ import annotations

from pydantic import Field

from .base import K8sName, Quantity, StrictModel
from .slurm import GpuSpec


class NodePool(StrictModel):
    """A set of Kubernetes nodes selected by labels, described as the hardware it is."""

    name: K8sName
    labels: dict[str, str] = Field(min_length=1)
    """Node labels that select the pool (they become node selectors)."""
    nodes: int = Field(ge=1, le=100000)
    cpu_per_node: Quantity
    memory_per_node: Quantity
    gpus_per_node: GpuSpec | None = None
    taints: tuple[str, ...] = ()
    """Taint keys on the pool's nodes that workloads must tolerate (e.g. nvidia.com/gpu)."""
