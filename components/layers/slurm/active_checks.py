"""Scheduled active GPU checks (hpcforge:gpu.activeChecks) in the Slurm namespace (pure; components/layers/slurm/layer.py
registers them): one ConfigMap with the checks and their scripts, and one CronJob per check that runs
scripts/gpu/active_checks.py against Slurm.

Why a CronJob and not scrontab: the schedule then lives in the stack's config and in one Kubernetes object that
Pulumi and Argo CD see (drift, review, history of Jobs, kube-state-metrics for the alerts), with
`concurrencyPolicy: Forbid` so that a slow run is never overlapped. scrontab entries live in slurmctld's state per
user, are edited with `scrontab` by hand and need `ScronParameters=enable`: nothing reviews or restores them.

The CronJob's pod reaches Slurm as the accounts reconciler's does (components/layers/slurm/accounts_job.py): the
operator's `<controller>-config` slurm.conf and the slurm.key Secret projected into /etc/slurm, the Slinky login
image's clients, as root (who may create reservations, submit into them and drain/resume nodes), and sackd started
first (SACK_START): under auth/slurm a client asks a sack socket for its token.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...paths import PROJECT_ROOT, SCRIPTS
from ...versions import Images
from ..gpu.config import ActiveCheck, runs_per_week
from .accounts_job import SACK_START, slurm_client_pod
from .config import SlurmConfig
from .face import ACTIVE_CHECK_CRONJOB_PREFIX, ACTIVE_CHECK_STARTING_DEADLINE_SECONDS
from .script_include import inline_includes

CHECK_SCRIPT = SCRIPTS / "gpu" / "active-check.sh"
DRIVER = SCRIPTS / "gpu" / "active_checks.py"
ACTIVE_CHECKS_MAP = "gpu-active-checks"
MOUNT = "/etc/hpcforge/active-checks"
ACTIVE_CHECKS_COMPONENT = "gpu-active-check"


RESERVATION_MARGIN_MINUTES = 5
"""What a run holds beyond its time limit: scripts/gpu/active_checks.py makes the maintenance reservation the time limit
plus 5 minutes long (`Duration=`), and waits for the jobs as long (the time limit plus its `--grace` of 300 s) before it
cancels them. A check job may start late in the reservation (a user job still running on one of its nodes), so every
node of the reservation is held for all of it."""


def held_minutes(check: ActiveCheck) -> int:
    """Minutes one run keeps the check's nodes away from user jobs, at most: its reservation's length."""
    return check.time_limit_minutes + RESERVATION_MARGIN_MINUTES


def gpus_held(slurm: SlurmConfig, check: ActiveCheck, nodes: Mapping[str, int]) -> int:
    """GPUs one run of `check` holds: every GPU of every node of its nodesets (the reservation takes them all; an
    all-reduce's groups, a short remainder joining the last, cover each node once). `nodes`: how many nodes each
    nodeset runs on (components/site/placement.py `nodeset_nodes`: a StatefulSet's replicas, a DaemonSet's pool, the
    bare-metal hosts that join it)."""
    per_node = {ns.name: ns.gpus.count for ns in slurm.nodesets if ns.gpus is not None}
    return sum(nodes.get(nodeset, 0) * per_node.get(nodeset, 0) for nodeset in check.nodesets)


def weekly_gpu_hours(slurm: SlurmConfig, checks: Sequence[ActiveCheck], nodes: Mapping[str, int]) -> dict[str, float]:
    """GPU-hours per week each active check holds at most (check name -> hours, rounded to 0.1): runs per week of
    its schedule x the GPUs one run holds x its reservation's length (`held_minutes`: the time limit plus
    RESERVATION_MARGIN_MINUTES). Pure; each check's CronJob carries its figure (`hpcforge.io/gpu-hours-per-week`),
    which `./hpcforge preview` and `diff` print."""
    return {
        check.name: round(runs_per_week(check.schedule) * gpus_held(slurm, check, nodes) * held_minutes(check) / 60, 1)
        for check in checks
    }


def cronjob_name(check: ActiveCheck) -> str:
    return f"{ACTIVE_CHECK_CRONJOB_PREFIX}{check.name}"


def check_partition(check: ActiveCheck, slurm: SlurmConfig) -> str | None:
    """The first partition that holds every nodeset of the check (its jobs are submitted there)."""
    for partition in slurm.partitions:
        if set(check.nodesets) <= set(partition.nodesets):
            return partition.name
    return None


def check_image(check: ActiveCheck) -> str:
    """What the check's tasks run in (Pyxis): DCGM's image for dcgmi, the nccl-tests image for the all-reduce; the
    link test runs in the slurmd pod itself (empty: no container)."""
    if check.kind == "dcgm-diag":
        return Images.DCGM.ref
    if check.kind == "nccl-allreduce":
        return Images.NCCL_TESTS.ref
    return ""


def checks_document(checks: Sequence[ActiveCheck], slurm: SlurmConfig) -> str:
    """checks.json, what active_checks.py reads (pure: tested directly)."""
    entries = []
    for check in checks:
        env = {
            "DCGM_LEVEL": str(check.dcgm_level),
            "MIN_BUSBW": f"{check.min_bus_bandwidth:g}",
            "MESSAGE_SIZE": check.message_size,
            "MIN_RATE": str(check.min_rate_gbps),
            "IMAGE": check_image(check),
            # Each tool call must end before the job's time limit does, so the script can still drain and say why.
            "TIMEOUT_SECONDS": str(max(30, check.time_limit_minutes * 60 - 60)),
        }
        entries.append(
            {
                "name": check.name,
                "kind": check.kind,
                "nodesets": list(check.nodesets),
                "timeLimitMinutes": check.time_limit_minutes,
                "nodes": check.nodes,
                "partition": check_partition(check, slurm),
                "qos": check.qos,
                "env": env,
            }
        )
    return json.dumps({"checks": entries}, indent=2, sort_keys=True) + "\n"


def cronjob_spec(check: ActiveCheck, *, controller: str, slurm_key_secret: str, labels: dict[str, str]) -> dict[str, Any]:
    """The CronJob of one check (pure: tested directly)."""
    command = [
        "/bin/sh", "-c", SACK_START, "active-check",
        "python3", f"{MOUNT}/active_checks.py", "--config", f"{MOUNT}/checks.json", "--check", check.name,
        "--script", f"{MOUNT}/active-check.sh",
    ]  # fmt: skip
    return {
        "schedule": check.schedule,
        "concurrencyPolicy": "Forbid",
        "startingDeadlineSeconds": ACTIVE_CHECK_STARTING_DEADLINE_SECONDS,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 3,
        "jobTemplate": {
            "metadata": {"labels": labels},
            "spec": {
                # A failed run is a result (a node failed the check), not something to retry.
                "backoffLimit": 0,
                # The reservation's length plus the driver's grace period and a margin.
                "activeDeadlineSeconds": check.time_limit_minutes * 60 + 900,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": slurm_client_pod(
                        container="active-check",
                        command=command,
                        restart_policy="Never",
                        controller=controller,
                        slurm_key_secret=slurm_key_secret,
                        files=("checks", ACTIVE_CHECKS_MAP, MOUNT),
                    ),
                },
            },
        },
    }


def checks_files(checks: Sequence[ActiveCheck], slurm: SlurmConfig) -> dict[str, str]:
    """The checks' ConfigMap: the checks, the driver that runs them, and the job script its tasks run."""
    return {
        "checks.json": checks_document(checks, slurm),
        "active_checks.py": DRIVER.read_text(),
        # The job script goes to the nodes alone (sbatch sends its text): its include inlined.
        "active-check.sh": inline_includes(CHECK_SCRIPT.read_text(), CHECK_SCRIPT, PROJECT_ROOT),
    }


__all__ = [
    "ACTIVE_CHECKS_COMPONENT",
    "ACTIVE_CHECKS_MAP",
    "RESERVATION_MARGIN_MINUTES",
    "check_partition",
    "checks_document",
    "checks_files",
    "cronjob_name",
    "cronjob_spec",
    "gpus_held",
    "held_minutes",
    "weekly_gpu_hours",
]
