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
import math
from collections.abc import Sequence
from typing import Any

from ...paths import PROJECT_ROOT, SCRIPTS
from ...versions import Images
from ..gpu.config import ActiveCheck, runs_per_week
from .accounts_job import SACK_START, slurm_client_pod
from .config import SlurmConfig
from .script_include import inline_includes

CHECK_SCRIPT = SCRIPTS / "gpu" / "active-check.sh"
DRIVER = SCRIPTS / "gpu" / "active_checks.py"
ACTIVE_CHECKS_MAP = "gpu-active-checks"
MOUNT = "/etc/hpcforge/active-checks"
ACTIVE_CHECKS_COMPONENT = "gpu-active-check"


def _gpu_nodes(slurm: SlurmConfig, nodeset: str) -> tuple[int, int]:
    """(nodes, GPUs per node) of a nodeset: its replicas (pods), or 0 where they are not known in advance."""
    for ns in slurm.nodesets:
        if ns.name == nodeset and ns.gpus is not None:
            return (ns.replicas if ns.scaling_mode == "StatefulSet" else 0), ns.gpus.count
    return 0, 0


def gpus_held(slurm: SlurmConfig, check: ActiveCheck) -> int:
    """GPUs one run of `check` holds: every GPU of its nodesets' nodes; an all-reduce tests nodes in groups of
    `nodes`, and a last, partial group is filled up with nodes tested already (so it holds `nodes` nodes too)."""
    total = 0
    for nodeset in check.nodesets:
        nodes, per_node = _gpu_nodes(slurm, nodeset)
        if check.kind == "nccl-allreduce" and nodes:
            nodes = math.ceil(nodes / check.nodes) * check.nodes
        total += nodes * per_node
    return total


def weekly_gpu_hours(slurm: SlurmConfig, checks: Sequence[ActiveCheck]) -> dict[str, float]:
    """GPU-hours per week each active check holds at most (check name -> hours, rounded to 0.1): runs per week of
    its schedule x the GPUs one run holds x its time limit. Pure; each check's CronJob carries its figure
    (`hpcforge.io/gpu-hours-per-week`), which `./hpcforge preview` and `diff` print."""
    return {
        check.name: round(runs_per_week(check.schedule) * gpus_held(slurm, check) * check.time_limit_minutes / 60, 1)
        for check in checks
    }


def cronjob_name(check: ActiveCheck) -> str:
    return f"gpu-check-{check.name}"


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
        "startingDeadlineSeconds": 3600,
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
    "check_partition",
    "checks_document",
    "checks_files",
    "cronjob_name",
    "cronjob_spec",
    "gpus_held",
    "weekly_gpu_hours",
]
