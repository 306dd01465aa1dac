"""Scheduled active GPU checks (hpcforge:gpu.activeChecks) in the Slurm namespace (pure; components/layers/slurm/layer.py
registers them): one ConfigMap with the checks and their scripts, and one CronJob per check that runs
scripts/gpu/active_checks.py against Slurm.

Why a CronJob and not scrontab: the schedule then lives in the stack's config and in one Kubernetes object that
Pulumi and Argo CD see (drift, review, history of Jobs, kube-state-metrics for the alerts), with
`concurrencyPolicy: Forbid` so that a slow run is never overlapped. scrontab entries live in slurmctld's state per
user, are edited with `scrontab` by hand and need `ScronParameters=enable`: nothing reviews or restores them.

Who the checks run as (issue 35 item 12). With `gpu.activeCheckUser`, the CronJob's pod holds a JWT for that one
user and nothing else: Slinky's Token custom resource signs it with the Controller's JWT key and keeps it fresh in a
Secret (`token_spec`), which the pod mounts; the driver reads it again before each Slurm command (--token-file), and
the Slinky login image's clients (sinfo, sbatch, scontrol, sacct) use auth/jwt when SLURM_JWT is set (Slurm 26.05.3
src/interfaces/auth.c). The user needs AdminLevel=Administrator (drain and resume: src/slurmctld/proc_req.c
`_slurm_rpc_update_node`) and must be known by name to slurmctld and slurmdbd (components/layers/slurm/passwd.py).
slurm.key, which would let the pod sign a credential for any user, never reaches it
(tests/scripts/gpu/test_real_active_checks.py proves each operation on the real daemons). Without a user, the pod
reaches Slurm as the accounts reconciler's does (components/layers/slurm/accounts_job.py): slurm.conf and slurm.key
in /etc/slurm, as root, sackd started first (SACK_START).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...k8s.resources import container_resources
from ...paths import PROJECT_ROOT, SCRIPTS
from ...versions import Images
from ..gpu.config import ActiveCheck, runs_per_week
from ..gpu.face import DCGM_HOSTENGINE
from ..rdma.config import RdmaConfig
from .accounts_job import SACK_START, slurm_client_pod
from .config import SlurmConfig
from .face import ACTIVE_CHECK_CRONJOB_PREFIX, ACTIVE_CHECK_STARTING_DEADLINE_SECONDS
from .objects import JWT_KEY_SECRET
from .script_include import inline_includes

CHECK_SCRIPT = SCRIPTS / "gpu" / "active-check.sh"
DRIVER = SCRIPTS / "gpu" / "active_checks.py"
ACTIVE_CHECKS_MAP = "gpu-active-checks"
MOUNT = "/etc/hpcforge/active-checks"
ACTIVE_CHECKS_COMPONENT = "gpu-active-check"
TOKEN = "gpu-active-checks"
"""The Token custom resource, and (with `-jwt`) the Secret it writes the JWT to, under TOKEN_KEY."""
TOKEN_KEY = "SLURM_JWT"
TOKEN_MOUNT = "/etc/hpcforge/token"
TOKEN_LIFETIME = "2h"
"""Slinky refreshes the JWT when 1/5 of its lifetime is left (v1.2.1 internal/controller/token/token_sync.go): 24
minutes, ample for the kubelet to update the mounted Secret before the old token expires."""
NOBODY = 65534


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


JOB_IMAGES_ANNOTATION = "hpcforge.io/job-images"
"""Annotation of the checks' ConfigMap: the images its jobs run through Pyxis (comma-separated), which no container of
any object names, so that the security pack's images-by-digest judges them too (policies/rules/security/privilege.py
reads the same key)."""


def job_images(checks: Sequence[ActiveCheck]) -> str:
    """The images the checks' tasks run in (`check_image`), each once, sorted, comma-separated ("" for none)."""
    return ",".join(sorted({image for check in checks if (image := check_image(check))}))


def nodeset_hcas(rdma: RdmaConfig | None, nodeset_pools: Mapping[str, str]) -> dict[str, list[str]]:
    """The RDMA devices of each nodeset's pool (`rdma.pools[].nics[].hca`, in NIC order, each once), for the nodesets
    whose pool names a device for every NIC: what an ib-link check judges there."""
    found: dict[str, list[str]] = {}
    for nodeset, pool in nodeset_pools.items():
        nics = rdma.pool_nics(pool) if rdma is not None else None
        if nics is not None and all(nic.hca for nic in nics.nics):
            found[nodeset] = list(dict.fromkeys(nic.hca for nic in nics.nics if nic.hca))
    return found


def checks_document(checks: Sequence[ActiveCheck], slurm: SlurmConfig, hcas: Mapping[str, Sequence[str]] | None = None) -> str:
    """checks.json, what active_checks.py reads (pure: tested directly). `hcas`: each nodeset's RDMA devices
    (`nodeset_hcas`), which an ib-link check judges (and no other device its pods see)."""
    entries = []
    for check in checks:
        env = {
            "DCGM_LEVEL": str(check.dcgm_level),
            "MIN_BUSBW": f"{check.min_bus_bandwidth:g}",
            "MESSAGE_SIZE": check.message_size,
            "MIN_RATE": str(check.min_rate_gbps),
            "IMAGE": check_image(check),
            # dcgm-diag: the host engine of the job's node (gpu face DCGM_HOSTENGINE), which dcgmi asks.
            **({"DCGM_HOST": DCGM_HOSTENGINE} if check.kind == "dcgm-diag" else {}),
            # Each tool call must end before the job's time limit does, so the script can still record its verdict.
            "TIMEOUT_SECONDS": str(max(30, check.time_limit_minutes * 60 - 60)),
        }
        entries.append(
            {
                "name": check.name,
                "kind": check.kind,
                "nodesets": list(check.nodesets),
                "action": check.action,
                # The GPUs of each nodeset's nodes, which the check's jobs ask for (--gres=gpu:N): a step gets only
                # the GRES its job requested, not those an exclusive job holds (srun(1) --gres, Slurm 26.05.3).
                "gpus": {ns.name: ns.gpus.count for ns in slurm.nodesets if ns.name in check.nodesets and ns.gpus},
                "timeLimitMinutes": check.time_limit_minutes,
                "nodes": check.nodes,
                "partition": check_partition(check, slurm),
                "qos": check.qos,
                "env": env,
                **({"hcas": {ns: list((hcas or {}).get(ns, ())) for ns in check.nodesets}} if check.kind == "ib-link" else {}),
            }
        )
    return json.dumps({"checks": entries}, indent=2, sort_keys=True) + "\n"


def token_spec(user: str) -> dict[str, Any]:
    """The Token custom resource's spec: a JWT for `user`, refreshed, in Secret `<TOKEN>-jwt` (pure)."""
    return {
        "jwtKeyRef": {"name": JWT_KEY_SECRET, "key": "jwt.key"},
        "username": user,
        "lifetime": TOKEN_LIFETIME,
        "refresh": True,
        "secretRef": {"name": f"{TOKEN}-jwt", "key": TOKEN_KEY},
    }


def token_client_pod(*, command: list[str], controller: str) -> dict[str, Any]:
    """The pod of a check run with a JWT (pure): slurm.conf alone in /etc/slurm, the token, the checks; as nobody."""
    return {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": NOBODY,
            "runAsGroup": NOBODY,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "active-check",
                "image": Images.LOGIN.ref,
                "command": command,
                "resources": container_resources("50m", "64Mi", "256Mi"),
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                    "readOnlyRootFilesystem": True,
                },
                "volumeMounts": [
                    {"name": "slurm-etc", "mountPath": "/etc/slurm", "readOnly": True},
                    {"name": "checks", "mountPath": MOUNT, "readOnly": True},
                    {"name": "token", "mountPath": TOKEN_MOUNT, "readOnly": True},
                ],
            }
        ],
        "volumes": [
            {
                "name": "slurm-etc",
                "configMap": {"name": f"{controller}-config", "items": [{"key": "slurm.conf", "path": "slurm.conf"}]},
            },
            {"name": "checks", "configMap": {"name": ACTIVE_CHECKS_MAP}},
            {"name": "token", "secret": {"secretName": f"{TOKEN}-jwt", "items": [{"key": TOKEN_KEY, "path": TOKEN_KEY}]}},
        ],
    }


def cronjob_spec(
    check: ActiveCheck, *, controller: str, slurm_key_secret: str, labels: dict[str, str], user: str | None = None
) -> dict[str, Any]:
    """The CronJob of one check (pure: tested directly); with `user`, run with its JWT (token_client_pod)."""
    driver = [
        "python3", f"{MOUNT}/active_checks.py", "--config", f"{MOUNT}/checks.json", "--check", check.name,
        "--script", f"{MOUNT}/active-check.sh",
    ]  # fmt: skip
    if user is not None:
        pod = token_client_pod(command=[*driver, "--token-file", f"{TOKEN_MOUNT}/{TOKEN_KEY}"], controller=controller)
    else:
        pod = slurm_client_pod(
            container="active-check",
            command=["/bin/sh", "-c", SACK_START, "active-check", *driver],
            restart_policy="Never",
            controller=controller,
            slurm_key_secret=slurm_key_secret,
            files=("checks", ACTIVE_CHECKS_MAP, MOUNT),
        )
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
                "template": {"metadata": {"labels": labels}, "spec": pod},
            },
        },
    }


def checks_files(
    checks: Sequence[ActiveCheck], slurm: SlurmConfig, hcas: Mapping[str, Sequence[str]] | None = None
) -> dict[str, str]:
    """The checks' ConfigMap: the checks, the driver that runs them, and the job script its tasks run."""
    return {
        "checks.json": checks_document(checks, slurm, hcas),
        "active_checks.py": DRIVER.read_text(),
        # The job script goes to the nodes alone (sbatch sends its text): its include inlined.
        "active-check.sh": inline_includes(CHECK_SCRIPT.read_text(), CHECK_SCRIPT, PROJECT_ROOT),
    }


__all__ = [
    "ACTIVE_CHECKS_COMPONENT",
    "ACTIVE_CHECKS_MAP",
    "JOB_IMAGES_ANNOTATION",
    "RESERVATION_MARGIN_MINUTES",
    "TOKEN",
    "check_partition",
    "checks_document",
    "checks_files",
    "cronjob_name",
    "cronjob_spec",
    "gpus_held",
    "held_minutes",
    "job_images",
    "nodeset_hcas",
    "token_client_pod",
    "token_spec",
    "weekly_gpu_hours",
]
