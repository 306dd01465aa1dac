"""The Slurm/Kubernetes contract: Slurm's view of the hardware and Kubernetes' view agree, and updates
never break running jobs or lock users out (Slinky slurm-operator v1beta1 CRs).

- nodeset-gres-matches-gpus: a NodeSet's `Gres=gpu...` equals the slurmd container's nvidia.com/gpu.
- slurm-partitions-reference-nodesets (stack): every partition in a Controller's extraConf names
  NodeSets of that Controller.
- nodeset-rolling-update-bounded: a NodeSet rolls at most the configured share of its nodes at once.
- nodeset-disruption-protection: busy NodeSet pods are protected by a PodDisruptionBudget.
- loginset-update-keeps-login-available: a login update never takes every login pod down.
- argocd-nodeset-customization (stack): where Argo CD and NodeSets meet, Argo CD knows that a
  NodeSet's spec.template.spec is a PodSpec.
- nodeset-extraconf-well-formed: a NodeSet's extraConf is `Key=Value` items with values, none of the
  keys that Slinky 1.2.1 or its slurmd image own (an empty `Topology=` swallows the next item:
  slurm-operator#261).
- nodeset-slurm-sees-pod-resources: slurmd has CPU and memory limits (the CPU limit equal to the
  request), so the Slinky image's CoreSpecCount/MemSpecLimit make Slurm schedule what the pod has.
- nodeset-rdma-complete: a NodeSet that requests RDMA devices (`rdma/*`) attaches networks and may
  lock memory (IPC_LOCK), and one that attaches networks requests their RDMA devices.

One module per family: hardware.py (GRES, pod resources, RDMA), conf.py (partitions, extraConf), updates.py (rolling
updates, disruption, login updates), argocd.py (Argo CD's view of NodeSets); slinky.py holds what they read of the CRs.
"""

from __future__ import annotations

from .argocd import ARGOCD_NODESET_CUSTOMIZATION, NODESET_KEY, CustomizationConfig, check_argocd_nodeset_customization
from .conf import (
    NODESET_EXTRA_CONF,
    PARTITIONS_REFERENCE_NODESETS,
    ExtraConfConfig,
    PartitionsConfig,
    check_nodeset_extra_conf,
    check_partitions,
)
from .hardware import (
    NODESET_GRES,
    NODESET_POD_RESOURCES,
    NODESET_RDMA,
    GresConfig,
    PodResourcesConfig,
    RdmaConfig,
    check_nodeset_gres,
    check_nodeset_pod_resources,
    check_nodeset_rdma,
    gres_count,
)
from .slinky import is_slinky, parse_conf, slurmd_container
from .updates import (
    LOGINSET_UPDATE,
    NODESET_DISRUPTION,
    NODESET_ROLLING_UPDATE,
    DisruptionConfig,
    LoginUpdateConfig,
    RollingUpdateConfig,
    check_loginset_update,
    check_nodeset_disruption,
    check_nodeset_rolling_update,
)

RULES = (
    NODESET_EXTRA_CONF,
    NODESET_RDMA,
    NODESET_POD_RESOURCES,
    NODESET_GRES,
    PARTITIONS_REFERENCE_NODESETS,
    NODESET_ROLLING_UPDATE,
    NODESET_DISRUPTION,
    LOGINSET_UPDATE,
    ARGOCD_NODESET_CUSTOMIZATION,
)

__all__ = [
    "ARGOCD_NODESET_CUSTOMIZATION",
    "LOGINSET_UPDATE",
    "NODESET_DISRUPTION",
    "NODESET_EXTRA_CONF",
    "NODESET_GRES",
    "NODESET_KEY",
    "NODESET_POD_RESOURCES",
    "NODESET_RDMA",
    "NODESET_ROLLING_UPDATE",
    "PARTITIONS_REFERENCE_NODESETS",
    "RULES",
    "CustomizationConfig",
    "DisruptionConfig",
    "ExtraConfConfig",
    "GresConfig",
    "LoginUpdateConfig",
    "PartitionsConfig",
    "PodResourcesConfig",
    "RdmaConfig",
    "RollingUpdateConfig",
    "check_argocd_nodeset_customization",
    "check_loginset_update",
    "check_nodeset_disruption",
    "check_nodeset_extra_conf",
    "check_nodeset_gres",
    "check_nodeset_pod_resources",
    "check_nodeset_rdma",
    "check_nodeset_rolling_update",
    "check_partitions",
    "gres_count",
    "is_slinky",
    "parse_conf",
    "slurmd_container",
]
