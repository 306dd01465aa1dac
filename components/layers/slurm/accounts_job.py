"""Slurm accounting as code, deployed (pure; components/layers/slurm/layer.py registers it): the desired state in
ConfigMaps (chunked, components/k8s/chunks.py), the script in another, and the Job that reconciles slurmdbd with it
(scripts/slurm/sacct_sync.py, run with `sacctmgr` in the Slinky login image).

The Job's pod sees Slurm the way the operator's own pods do: the operator's `<controller>-config`
ConfigMap (slurm.conf, whose `AccountingStorageHost` is the Accounting's service) and the slurm.key
Secret, projected into /etc/slurm with mode 0600 (slurm-operator 1.2.1,
internal/builder/controllerbuilder/controller_app.go `controllerVolumes`; auth/slurm, as
internal/builder/common/const.go sets). It runs as root: slurmdbd lets root administer accounts.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ...k8s.chunks import Assembly
from ...k8s.resources import container_resources
from ...paths import SCRIPTS
from ...versions import Images

SYNC_SCRIPT = SCRIPTS / "slurm" / "sacct_sync.py"
ACCOUNTS_MAP = "slurm-accounts"
"""The ConfigMap of the reconciler's script."""
DESIRED_KEY = "accounts.json"
SCRIPT_KEY = "sacct_sync.py"
MOUNT = "/etc/hpcforge/accounts"
DESIRED_MAPS = "slurm-accounts-desired"
"""The desired state's ConfigMaps (`-00`, `-01` ...): plain, or gzip parts once it outgrows one map."""
DESIRED_DIR = "/etc/hpcforge/desired"


def sync_command(check: bool = False) -> list[str]:
    """The reconciler's command line in the Job (and, with `check`, in the drift workflow)."""
    return ["python3", f"{MOUNT}/{SCRIPT_KEY}", "--desired", f"{DESIRED_DIR}/{DESIRED_KEY}", *(["--check"] if check else [])]


SACK_RUN_DIR = "/run/slurm"
"""Where sackd puts its socket in the Job (an emptyDir: the root filesystem is read-only)."""
SACK_START = (
    'sackd -D & i=0; until [ -S "${RUNTIME_DIRECTORY:-/run/slurm}/sack.socket" ]; do '
    'i=$((i+1)); [ "$i" -le 150 ] || { echo "sackd did not start" >&2; exit 1; }; sleep 0.2; done; exec "$@"'
)
"""The Job's shell: sackd first, then the reconciler. Under auth/slurm a client (sacctmgr, squeue) never reads
slurm.key itself; it asks a sack socket for a token (Slurm 26.05.3 src/common/sack_api.c; without one: "create_external:
failed to create token", tests/components/layers/slurm/test_real_accounting.py). The login pods run sackd; a Job has to start its own, which reads
/etc/slurm/slurm.conf and the slurm.key beside it (src/plugins/auth/slurm/internal.c)."""


def job_command() -> list[str]:
    """The Job container's command: SACK_START, then sync_command()."""
    return ["/bin/sh", "-c", SACK_START, "sacct-sync", *sync_command()]


def accounts_digest(desired: str, script: str) -> str:
    """What names the reconciler Job after its content (a changed desired state or script replaces it)."""
    return hashlib.sha256((desired + "\0" + script).encode()).hexdigest()[:10]


def slurm_client_pod(
    *,
    container: str,
    command: list[str],
    restart_policy: str,
    controller: str,
    slurm_key_secret: str,
    files: tuple[str, str, str],
) -> dict[str, Any]:
    """The pod of a Job that runs Slurm clients against `controller` (the accounts reconcile, the active GPU checks):
    the login image, `/etc/slurm` from the Controller's slurm.conf and the auth/slurm key, a run directory for the
    sackd it starts first (SACK_START), and `files` = (volume, ConfigMap, mount path) with what it runs. Pure."""
    volume, files_map, mount = files
    return {
        "restartPolicy": restart_policy,
        "automountServiceAccountToken": False,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": container,
                "image": Images.LOGIN.ref,
                "command": command,
                "resources": container_resources("50m", "64Mi", "256Mi"),
                # Not RESTRICTED_CONTAINER_SECURITY: the clients run as root (who may administer accounts, create
                # reservations and drain nodes), which runAsNonRoot would refuse to start.
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                    "readOnlyRootFilesystem": True,
                },
                "volumeMounts": [
                    {"name": "slurm-etc", "mountPath": "/etc/slurm", "readOnly": True},
                    {"name": volume, "mountPath": mount, "readOnly": True},
                    {"name": "sack", "mountPath": SACK_RUN_DIR},
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
            {"name": volume, "configMap": {"name": files_map}},
            {"name": "sack", "emptyDir": {}},
        ],
    }


def accounts_job_spec(
    *, controller: str, slurm_key_secret: str, labels: dict[str, str], assembly: Assembly | None = None
) -> dict[str, Any]:
    """The reconciler Job's spec (pure: tested directly). `assembly` puts the desired state, shipped in
    chunks, back together in DESIRED_DIR before the reconciler starts."""
    spec = _job_spec(controller=controller, slurm_key_secret=slurm_key_secret, labels=labels)
    if assembly is not None:
        pod = spec["template"]["spec"]
        pod["initContainers"] = [assembly.container]
        pod["volumes"] += assembly.volumes
        pod["containers"][0]["volumeMounts"] += assembly.mounts
    return spec


def _job_spec(*, controller: str, slurm_key_secret: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "backoffLimit": 6,
        # No ttlSecondsAfterFinished: a Job that deleted itself would show as drift (see the directory's Job).
        "template": {
            "metadata": {"labels": labels},
            "spec": slurm_client_pod(
                container="sacct-sync",
                # python3 in the login image: SlinkyProject/containers (snapshot 05efda0, 2026-06-25),
                # schedmd/slurm/26.05/ubuntu26.04/Dockerfile line 108 installs `supervisor` in the `base`
                # stage that `login` builds on (lines 115, 283, 344); Debian/Ubuntu's supervisor package
                # Depends on python3:any, and `sssd` (line 362) on python3-sss. No line installs python3 by
                # name: a rebuilt image without supervisor would break this Job.
                command=job_command(),
                restart_policy="OnFailure",
                controller=controller,
                slurm_key_secret=slurm_key_secret,
                files=("accounts", ACCOUNTS_MAP, MOUNT),
            ),
        },
    }


__all__ = [
    "ACCOUNTS_MAP",
    "DESIRED_KEY",
    "DESIRED_MAPS",
    "SACK_START",
    "accounts_digest",
    "accounts_job_spec",
    "job_command",
    "sync_command",
]
