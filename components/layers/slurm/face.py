"""What the Slurm layer publishes to the other layers (they import this module and the Slurm config, nothing else
of the layer): the controller's name, the NCCL settings of a pool's jobs, the script that makes a bare-metal host a
Slurm dynamic node, and the annotation that carries an active GPU check's cost."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Sequence

from ...ground.hosts import Host
from ...k8s.addresses import PORT_RANGE_SYSCTL
from ..rdma.config import RdmaConfig
from .config import SlurmConfig
from .script_settings import GPU_CHECK_SCOPE_FILE
from .slurm_conf import SLURMCTLD_PORT, bare_metal_slurmd_argv, conf_text, host_parameters, shell_command

CONTROLLER = "slurm"
"""The name of the Slinky Controller (and Accounting) custom resource: the controller pod and Service are
`<CONTROLLER>-controller`."""

ACTIVE_CHECK_CRONJOB_PREFIX = "gpu-check-"
"""Each active GPU check's CronJob is `gpu-check-<name>` (components/layers/slurm/active_checks.py); the observability
layer's alerts select them by it."""
ACTIVE_CHECK_STARTING_DEADLINE_SECONDS = 3600
"""The checks' CronJobs' `startingDeadlineSeconds`: a run not started that long after its time is not started at all
(GpuActiveCheckMissed fires then)."""

GPU_HOURS_ANNOTATION = "hpcforge.io/gpu-hours-per-week"
"""On each check's CronJob: the GPU-hours a week it holds GPU nodes away from jobs, at most (`weekly_gpu_hours`);
`./hpcforge preview` and `./hpcforge diff` print it from the recorded objects."""


def nccl_settings(rdma: RdmaConfig | None, pool: str | None) -> dict[str, str]:
    """NCCL variables for jobs on a pool's nodes (empty: the pool reaches no RDMA fabric)."""
    nics = rdma.pool_nics(pool) if rdma is not None else None
    if nics is None:
        return {}
    settings = {"NCCL_SOCKET_IFNAME": "=eth0"}
    hcas = [nic.hca for nic in nics.nics]
    if all(hcas):
        settings["NCCL_IB_HCA"] = "=" + ",".join(dict.fromkeys(h for h in hcas if h))
    return settings


def render_join_script(
    slurm: SlurmConfig,
    nodeset: str,
    controller_address: str,
    port: int = SLURMCTLD_PORT,
    hosts: Sequence[Host] = (),
    mounts: Sequence[str] = (),
) -> str:
    """The script a bare-metal host of `nodeset` runs after boot: slurmd as a configless dynamic node.

    Hosts of `hosts` with their own features or GRES get their own `--conf`, chosen by the short host
    name (which is also the Slurm node name of a dynamic node).
    """
    spec = slurm.nodeset(nodeset)
    if spec is None:
        raise ValueError(f"unknown nodeset {nodeset!r}")
    argv = bare_metal_slurmd_argv(spec, f"{controller_address}:{port}")
    job_first, job_last = slurm.controller.job_port_range
    header = (
        "#!/bin/sh\n"
        f"# hpcforge: join Slurm cluster {slurm.cluster_name!r} as a dynamic node of nodeset {nodeset!r}.\n"
        "# slurmd fetches slurm.conf from the controller (configless) and registers with the nodeset's\n"
        "# features and GRES. The Slurm auth key (/etc/slurm/slurm.key, auth/slurm) must be on the host.\n"
        "set -eu\n"
        "# Ephemeral ports in hpcforge:slurm.controller.jobPortRange, as in the compute pods: the ports the jobs'\n"
        "# ranks listen on (MPI/PMIx wire-up, NCCL bootstrap) are the ones the Slurm namespace opens to this host.\n"
        f"sysctl -w {PORT_RANGE_SYSCTL}='{job_first} {job_last}' >/dev/null\n"
    )
    if spec.gpus is not None:
        scope = "node" if spec.gpus.is_mig else "job"
        header += (
            "# Which GPUs the GPU prolog and epilog check: the job's, or with MIG devices every GPU of the node (the\n"
            "# scripts are the same for every nodeset; scripts/slurm/lib/gpu-common.sh read_scope_file).\n"
            f"mkdir -p {posixpath.dirname(GPU_CHECK_SCOPE_FILE)} && echo {scope} > {GPU_CHECK_SCOPE_FILE}\n"
        )
    if mounts:
        header += "# Shared trees (hpcforge:storage.nfsExports), mounted as on the login and compute pods.\n"
        header += "".join(f"{line}\n" for line in mounts)
    default_conf = argv[argv.index("--conf") + 1]
    own = [
        (host.name, conf)
        for host in hosts
        # A host with neither features nor GRES of its own has exactly the nodeset's parameters.
        if host.nodeset == nodeset
        and (host.features or host.gres)
        and (conf := conf_text(host_parameters(spec, host))) != default_conf
    ]
    if not own:
        return header + f'exec {shell_command(argv)} "$@"\n'
    cases = "".join(f"  {host}) conf={shlex.quote(conf)} ;;\n" for host, conf in own)
    before = shell_command(argv[: argv.index("--conf")])
    return (
        header
        + "# Hosts with their own features or GRES (hpcforge:provisioning.hosts[].features/gres).\n"
        + f"conf={shlex.quote(default_conf)}\n"
        + 'case "$(hostname -s)" in\n'
        + cases
        + "esac\n"
        + f'exec {before} --conf "$conf" "$@"\n'
    )
