"""Slurm traffic: the NetworkPolicy rules (pure) of the operator's namespace and of the Slurm namespace.

Users' code runs in the Slurm namespace (login pods, slurmd pods) beside the daemons that hold the keys and the
database password, so the namespace has no same-namespace allow: each rule names the component it opens and the
components it opens it to. The flows are Slurm's own (doc/html/network.shtml of Slurm 26.05.3, "Communication for
..."): slurmd, slurmdbd and every client command reach slurmctld (6817); sacct, sacctmgr and sreport reach slurmdbd
(6819) directly, as slurmctld does; slurmctld and srun reach slurmd (6818); slurmstepd reaches srun back on
SrunPortRange; slurmdbd alone reaches the database (3306). The operator reaches slurmrestd (6820,
slurm-operator v1.2.1 internal/controller/slurmclient/slurmclient_sync.go) to drain nodes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...k8s.resources import ANYWHERE, Allow, PodPeer, Port, egress_to_apiserver, ingress_from_apiserver
from .config import LoginConfig, SlurmConfig
from .objects import OPERATOR_NAMESPACE
from .slurm_conf import SLURMCTLD_PORT, SLURMD_PORT

SLURMD_POD = {"app.kubernetes.io/name": "slurmd"}
"""Labels of the NodeSet pods (slurm-operator v1.2.1 internal/builder/labels/labels.go: AppLabel = WorkerApp)."""
SLURMCTLD_POD = {"app.kubernetes.io/name": "slurmctld"}
SLURMDBD_POD = {"app.kubernetes.io/name": "slurmdbd"}
SLURMRESTD_POD = {"app.kubernetes.io/name": "slurmrestd"}
LOGIN_POD = {"app.kubernetes.io/name": "login"}
"""Labels of the Controller's, Accounting's, RestApi's and LoginSets' pods (the same labels.go: ControllerApp,
AccountingApp, RestapiApp, LoginApp)."""
SLURMDBD_PORT = 6819
"""slurm-operator v1.2.1 internal/builder/common/const.go SlurmdbdPort."""
SLURMRESTD_PORT = 6820
"""slurm-operator v1.2.1 internal/builder/restapibuilder/restapi_app.go SlurmrestdPort."""
USER_CODE = ("login", "slurmd")
"""The `app.kubernetes.io/name` of the pods where users' code runs."""
SLURM_CLIENTS = ("slurmctld", "login", "slurmd")
"""The pods that reach slurmd: slurmctld, and srun on the login and compute pods."""
MONITORING_NAMESPACE = "monitoring"


def slurm_bare_metal_allows(
    bare_metal: Sequence[str], srun_ports: tuple[int, int], job_ports: tuple[int, int] | None = None
) -> list[Allow]:
    """Slurm traffic between the Slurm namespace's pods and bare-metal Slurm hosts, and nothing else (pure).

    A job spanning pods and bare-metal nodes needs: slurmd on either side reaching slurmd on the other (6818: the
    launch fan-out and its forwarding tree), and slurmstepd reaching the srun that started the step (SrunPortRange),
    which runs on login pods or on bare-metal hosts. slurmctld (6817) takes the hosts in its own rule
    (`slurm_namespace_allows`). Its ranks talk to each other too (MPI/PMIx out-of-band wire-up, NCCL bootstrap and
    sockets): `job_ports` (controller.jobPortRange, the ephemeral port range of the compute pods and hosts) between
    the NodeSet pods and the hosts, both ways.
    """
    if not bare_metal:
        return []
    cidrs = tuple(bare_metal)
    srun = Port(srun_ports[0], end_port=srun_ports[1])
    allows = [
        Allow("allow-ingress-bare-metal-slurmd", "ingress", (Port(SLURMD_PORT),), cidrs=cidrs, pod_labels=SLURMD_POD),
        Allow("allow-ingress-bare-metal-srun", "ingress", (srun,), cidrs=cidrs, pod_apps=USER_CODE),
        Allow("allow-egress-bare-metal-slurmd", "egress", (Port(SLURMD_PORT),), cidrs=cidrs, pod_apps=SLURM_CLIENTS),
        Allow("allow-egress-bare-metal-srun", "egress", (srun,), cidrs=cidrs, pod_labels=SLURMD_POD),
    ]
    if job_ports is not None:
        ranks = Port(job_ports[0], end_port=job_ports[1])
        allows += [
            Allow("allow-ingress-bare-metal-job-ranks", "ingress", (ranks,), cidrs=cidrs, pod_labels=SLURMD_POD),
            Allow("allow-egress-bare-metal-job-ranks", "egress", (ranks,), cidrs=cidrs, pod_labels=SLURMD_POD),
        ]
    return allows


def operator_namespace_allows(slurm_namespace: str) -> list[Allow]:
    """The operator's namespace: the API server, its webhook (called by the API server), and slurmrestd and
    slurmctld of the Slurm namespace (the operator drains nodes through slurmrestd before deleting pods)."""
    return [
        egress_to_apiserver(),
        ingress_from_apiserver("allow-ingress-webhook", Port(9443)),
        Allow(
            "allow-egress-slurm",
            "egress",
            (Port(SLURMCTLD_PORT), Port(SLURMRESTD_PORT)),
            pod_peers=(PodPeer(slurm_namespace, SLURMRESTD_POD), PodPeer(slurm_namespace, SLURMCTLD_POD)),
        ),
    ]


def controller_ranges(cfg: SlurmConfig, bare_metal: Sequence[str], site_ranges: Sequence[str]) -> tuple[str, ...] | None:
    """Who may reach slurmctld from outside the cluster: its service's exposure (default: the bare-metal hosts'
    subnets when hosts join Slurm, else the site's ranges); None: public; () without a service."""
    service = cfg.controller.service
    if service is None:
        return ()
    return service.exposure.ranges(bare_metal or site_ranges)


def _ssh_allows(logins: Sequence[LoginConfig], site_ranges: Sequence[str]) -> list[Allow]:
    allows = []
    for index, login in enumerate(logins):
        ranges = login.exposure.ranges(site_ranges)
        allows.append(
            Allow(
                "allow-ingress-ssh" if index == 0 else f"allow-ingress-ssh-{login.name}",
                "ingress",
                (Port(22),),
                cidrs=(ANYWHERE,) if ranges is None else ranges,
                pod_labels={**LOGIN_POD, "app.kubernetes.io/instance": login.name},
            )
        )
    return allows


def slurm_namespace_allows(
    cfg: SlurmConfig, bare_metal: Sequence[str], *, site_ranges: Sequence[str], monitored: bool = False
) -> list[Allow]:
    """The Slurm namespace, component by component (the namespace has no same-namespace allow): ssh to each login
    set from its exposure's ranges; slurmctld from the namespace's pods, the operator, monitoring (its metrics) and
    its service's ranges; slurmdbd from the namespace's pods; slurmrestd from the operator; slurmd from slurmctld
    and srun; srun's ports from the compute pods; the compute pods among themselves (a job's ranks); the database
    from slurmdbd only; the directory (LDAPS) from the login pods only (only the login image has SSSD,
    slurm-operator issue #129); container registries (HTTPS, not the API server) from the pods that run Pyxis;
    Slurm traffic with bare-metal hosts. No pod of the namespace holds a service account token: no API server."""
    ns = cfg.namespace
    srun = Port(cfg.controller.srun_port_range[0], end_port=cfg.controller.srun_port_range[1])
    outside = controller_ranges(cfg, bare_metal, site_ranges)
    ctld_sources = (ANYWHERE,) if outside is None else outside
    allows = [
        *_ssh_allows(cfg.login_sets(), site_ranges),
        Allow(
            "allow-ingress-slurmctld",
            "ingress",
            (Port(SLURMCTLD_PORT),),
            namespaces=(ns, OPERATOR_NAMESPACE, *([MONITORING_NAMESPACE] if monitored else [])),
            cidrs=ctld_sources,
            pod_labels=SLURMCTLD_POD,
        ),
        Allow(
            "allow-ingress-slurmrestd",
            "ingress",
            (Port(SLURMRESTD_PORT),),
            namespaces=(OPERATOR_NAMESPACE,),
            pod_labels=SLURMRESTD_POD,
        ),
        Allow(
            "allow-ingress-slurmd",
            "ingress",
            (Port(SLURMD_PORT),),
            pod_peers=(PodPeer(ns, apps=SLURM_CLIENTS),),
            pod_labels=SLURMD_POD,
        ),
        Allow("allow-ingress-srun", "ingress", (srun,), pod_peers=(PodPeer(ns, SLURMD_POD),), pod_apps=USER_CODE),
        Allow("allow-ingress-between-compute-pods", "ingress", pod_peers=(PodPeer(ns, SLURMD_POD),), pod_labels=SLURMD_POD),
        Allow("allow-egress-slurmctld", "egress", (Port(SLURMCTLD_PORT),), pod_peers=(PodPeer(ns, SLURMCTLD_POD),)),
        Allow(
            "allow-egress-slurmd",
            "egress",
            (Port(SLURMD_PORT),),
            pod_peers=(PodPeer(ns, SLURMD_POD),),
            pod_apps=SLURM_CLIENTS,
        ),
        Allow("allow-egress-srun", "egress", (srun,), pod_peers=(PodPeer(ns, apps=USER_CODE),), pod_labels=SLURMD_POD),
        Allow("allow-egress-between-compute-pods", "egress", pod_peers=(PodPeer(ns, SLURMD_POD),), pod_labels=SLURMD_POD),
        Allow(
            "allow-egress-directory",
            "egress",
            (Port(3636),),
            pod_peers=(PodPeer("directory", {"app.kubernetes.io/name": "dirsrv", "app.kubernetes.io/component": "directory"}),),
            pod_labels=LOGIN_POD,
        ),
        *slurm_bare_metal_allows(bare_metal, cfg.controller.srun_port_range, cfg.controller.job_port_range),
    ]
    if cfg.accounting.enabled:
        allows += [
            Allow("allow-ingress-slurmdbd", "ingress", (Port(SLURMDBD_PORT),), namespaces=(ns,), pod_labels=SLURMDBD_POD),
            Allow("allow-egress-slurmdbd", "egress", (Port(SLURMDBD_PORT),), pod_peers=(PodPeer(ns, SLURMDBD_POD),)),
            Allow(
                "allow-egress-database",
                "egress",
                (Port(3306),),
                pod_peers=(PodPeer("database", {"app.kubernetes.io/name": "mariadb"}),),
                pod_labels=SLURMDBD_POD,
            ),
        ]
    if cfg.pyxis_enabled:
        allows.append(image_pull_allow())
    return allows


def image_pull_allow() -> Allow:
    """Pyxis and enroot on the login and compute pods pull users' container images over HTTPS from any registry:
    every address but the API server's (`except` it, by address, when the control plane's addresses are known)."""
    return Allow(
        "allow-egress-image-pulls", "egress", (Port(443),), cidrs=(ANYWHERE,), except_api_server=True, pod_apps=USER_CODE
    )
