"""Slurm traffic between the Slurm namespace's pods and bare-metal Slurm hosts: the NetworkPolicy rules (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from ...k8s.resources import Allow, Port
from .slurm_conf import SLURMD_PORT

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
