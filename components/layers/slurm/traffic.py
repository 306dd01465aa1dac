"""Slurm traffic: the NetworkPolicy rules (pure) of the operator's namespace and of the Slurm namespace, whose pods
talk to the database, the directory and bare-metal Slurm hosts."""

from __future__ import annotations

from collections.abc import Sequence

from ...k8s.resources import Allow, Port, egress_to_apiserver, egress_to_namespaces, ingress_from_anywhere
from .config import SlurmConfig
from .objects import OPERATOR_NAMESPACE
from .slurm_conf import SLURMCTLD_PORT, SLURMD_PORT

SLURMD_POD = {"app.kubernetes.io/name": "slurmd"}
"""Labels of the NodeSet pods (slurm-operator v1.2.1 internal/builder/labels/labels.go: AppLabel = WorkerApp)."""


def slurm_bare_metal_allows(
    bare_metal: Sequence[str], srun_ports: tuple[int, int], job_ports: tuple[int, int] | None = None
) -> list[Allow]:
    """Slurm traffic between the Slurm namespace's pods and bare-metal Slurm hosts, and nothing else (pure).

    A job spanning pods and bare-metal nodes needs: slurmd on either side reaching slurmd on the other (6818: the
    launch fan-out and its forwarding tree), and slurmstepd reaching the srun that started the step (SrunPortRange),
    which runs on login pods or on bare-metal hosts. slurmctld (6817) is already open to its LoadBalancer clients.
    Its ranks talk to each other too (MPI/PMIx out-of-band wire-up, NCCL bootstrap and sockets): `job_ports`
    (controller.jobPortRange, the ephemeral port range of the compute pods and hosts) between the NodeSet pods and
    the hosts, both ways.
    """
    if not bare_metal:
        return []
    cidrs = tuple(bare_metal)
    srun = Port(srun_ports[0], end_port=srun_ports[1])
    allows = [
        Allow("allow-ingress-bare-metal-slurmd", "ingress", (Port(SLURMD_PORT),), cidrs=cidrs),
        Allow("allow-ingress-bare-metal-srun", "ingress", (srun,), cidrs=cidrs),
        Allow("allow-egress-bare-metal-slurmd", "egress", (Port(SLURMD_PORT),), cidrs=cidrs),
        Allow("allow-egress-bare-metal-srun", "egress", (srun,), cidrs=cidrs),
    ]
    if job_ports is not None:
        ranks = Port(job_ports[0], end_port=job_ports[1])
        allows += [
            Allow("allow-ingress-bare-metal-job-ranks", "ingress", (ranks,), cidrs=cidrs, pod_labels=SLURMD_POD),
            Allow("allow-egress-bare-metal-job-ranks", "egress", (ranks,), cidrs=cidrs, pod_labels=SLURMD_POD),
        ]
    return allows


def operator_namespace_allows(slurm_namespace: str) -> list[Allow]:
    """The operator's namespace: the API server, its webhook, and the Slurm namespace (the operator talks to
    slurmctld/slurmrestd to drain nodes before deleting pods)."""
    return [
        egress_to_apiserver(),
        ingress_from_anywhere("allow-ingress-webhook", Port(9443)),
        egress_to_namespaces("allow-egress-slurm", [slurm_namespace]),
    ]


def slurm_namespace_allows(cfg: SlurmConfig, bare_metal: Sequence[str]) -> list[Allow]:
    """The Slurm namespace: ssh to the login pods and slurmctld from anywhere, the operator, the accounting database
    (when accounting is on), the directory, the API server, and Slurm traffic with bare-metal hosts."""
    return [
        ingress_from_anywhere("allow-ingress-ssh", Port(22)),
        ingress_from_anywhere("allow-ingress-slurmctld", Port(SLURMCTLD_PORT)),
        Allow("allow-ingress-from-operator", "ingress", namespaces=(OPERATOR_NAMESPACE,)),
        *([egress_to_namespaces("allow-egress-database", ["database"], Port(3306))] if cfg.accounting.enabled else []),
        egress_to_namespaces("allow-egress-directory", ["directory"], Port(3636)),
        egress_to_apiserver(),
        *slurm_bare_metal_allows(bare_metal, cfg.controller.srun_port_range, cfg.controller.job_port_range),
    ]
