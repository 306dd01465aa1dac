"""Slurm accounting as code, deployed: the desired state as a ConfigMap, and the Job that reconciles
slurmdbd with it (scripts/slurm/sacct_sync.py, run with `sacctmgr` in the Slinky login image).

The Job's pod sees Slurm the way the operator's own pods do: the operator's `<controller>-config`
ConfigMap (slurm.conf, whose `AccountingStorageHost` is the Accounting's service) and the slurm.key
Secret, projected into /etc/slurm with mode 0600 (slurm-operator 1.2.1,
internal/builder/controllerbuilder/controller_app.go `controllerVolumes`; auth/slurm, as
internal/builder/common/const.go sets). It runs as root: slurmdbd lets root administer accounts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..context import DeployContext
from ..k8s import config_map, container_resources
from ..versions import Images

SYNC_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "slurm" / "sacct_sync.py"
CONFIG_MAP = "slurm-accounts"
DESIRED_KEY = "accounts.json"
SCRIPT_KEY = "sacct_sync.py"
MOUNT = "/etc/hpcforge/accounts"


def sync_command(check: bool = False) -> list[str]:
    """The reconciler's command line in the Job (and, with `check`, in the drift workflow)."""
    return ["python3", f"{MOUNT}/{SCRIPT_KEY}", "--desired", f"{MOUNT}/{DESIRED_KEY}", *(["--check"] if check else [])]


def digest(desired: str, script: str) -> str:
    return hashlib.sha256((desired + "\0" + script).encode()).hexdigest()[:10]


def accounts_job_spec(*, controller: str, slurm_key_secret: str, labels: dict[str, str]) -> dict[str, Any]:
    """The reconciler Job's spec (pure: tested directly)."""
    return {
        "backoffLimit": 6,
        # No ttlSecondsAfterFinished: a Job that deleted itself would show as drift (see the directory's Job).
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "restartPolicy": "OnFailure",
                "automountServiceAccountToken": False,
                "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [
                    {
                        "name": "sacct-sync",
                        "image": Images.LOGIN.ref,
                        "command": sync_command(),
                        "resources": container_resources("50m", "64Mi", "256Mi"),
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]},
                            "readOnlyRootFilesystem": True,
                        },
                        "volumeMounts": [
                            {"name": "slurm-etc", "mountPath": "/etc/slurm", "readOnly": True},
                            {"name": "accounts", "mountPath": MOUNT, "readOnly": True},
                        ],
                    }
                ],
                "volumes": [
                    {
                        "name": "slurm-etc",
                        "projected": {
                            "defaultMode": 0o600,
                            "sources": [
                                {
                                    "configMap": {
                                        "name": f"{controller}-config",
                                        "items": [{"key": "slurm.conf", "path": "slurm.conf"}],
                                    }
                                },
                                {"secret": {"name": slurm_key_secret, "items": [{"key": "slurm.key", "path": "slurm.key"}]}},
                            ],
                        },
                    },
                    {"name": "accounts", "configMap": {"name": CONFIG_MAP}},
                ],
            },
        },
    }


def deploy_accounts(
    ctx: DeployContext,
    parent: pulumi.Resource,
    *,
    namespace: str,
    controller: str,
    slurm_key_secret: str,
    desired: str,
    depends_on: Sequence[pulumi.Resource],
) -> list[pulumi.Resource]:
    """The ConfigMap with the desired state and the script, and the Job named after their content:
    a changed desired state (or script) replaces the Job, so it runs again; an unchanged one is left alone."""
    script = SYNC_SCRIPT.read_text()
    data = config_map(
        ctx,
        CONFIG_MAP,
        namespace,
        {DESIRED_KEY: desired, SCRIPT_KEY: script},
        component="slurm-accounts",
        parent=parent,
        app=controller,
        depends_on=depends_on,
    )
    job = k8s.batch.v1.Job(
        f"{namespace}/slurm-accounts-sync",
        metadata=ctx.meta(f"slurm-accounts-sync-{digest(desired, script)}", "slurm-accounts", namespace, app=controller),
        spec=accounts_job_spec(
            controller=controller, slurm_key_secret=slurm_key_secret, labels=ctx.labels(controller, "slurm-accounts")
        ),
        opts=ctx.opts(parent, depends_on=[data, *depends_on], delete_before_replace=True),
    )
    return [data, job]


__all__ = ["CONFIG_MAP", "DESIRED_KEY", "accounts_job_spec", "deploy_accounts", "digest", "sync_command"]
