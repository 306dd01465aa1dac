"""Site-layout objects of the Slurm layer (pure, tested directly): the topology file and the Job that makes the
configured reservations; components/layers/slurm/layer.py registers them, with the Kubernetes node topology
annotations that Slinky 1.2.1 reads (topology_files.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ...chart_security import RESTRICTED_CONTAINER_SECURITY
from ...ground.hosts import Host
from ...k8s.resources import container_resources
from ...versions import Images
from .config import SlurmConfig
from .topology_files import topology_yaml

SLURM_UID = 401
"""The `slurm` user of the Slinky images (slurm-operator v1.2.1, internal/builder/common/const.go): the
SlurmUser, which may create reservations."""
RESERVATIONS_MAP = "slurm-reservations"


def topology_files(slurm: SlurmConfig, hosts: Sequence[Host]) -> dict[str, str]:
    """Config files for the Controller's `configFileRefs`: topology.yaml when a topology is configured.

    topology.yaml (not topology.conf): Slinky's node annotation names topologies (`<name>:<switch>`),
    which only topology.yaml defines, and it carries the tree and the blocks together.
    """
    if slurm.topology is None:
        return {}
    return {"topology.yaml": topology_yaml(slurm.topology, hosts)}


def script_digest(script: str) -> str:
    """What names the reservations Job after its script: a Job's pod template is immutable, so a changed script runs a
    new Job under a new name."""
    return hashlib.sha256(script.encode()).hexdigest()[:10]


def reservation_job_spec(*, controller: str, key_secret: str, script_map: str, labels: dict[str, str]) -> dict[str, Any]:
    """The Job that runs the reservation script with `scontrol`, as the SlurmUser, against slurmctld.

    It reads the operator's slurm.conf (ConfigMap `<controller>-config`) and the auth/slurm key, the
    same two files a Slinky login pod has.
    """
    return {
        "backoffLimit": 6,
        # No ttlSecondsAfterFinished: a Job that deleted itself would show as drift.
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "restartPolicy": "OnFailure",
                "automountServiceAccountToken": False,
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": SLURM_UID,
                    "runAsGroup": SLURM_UID,
                    "fsGroup": SLURM_UID,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [
                    {
                        "name": "reservations",
                        # The slurmctld image has scontrol: the operator runs `scontrol reconfigure` in it
                        # (slurm-operator v1.2.1 internal/builder/controllerbuilder/scripts/reconfigure.sh).
                        "image": Images.SLURMCTLD.ref,
                        "command": ["/bin/sh", "/scripts/reservations.sh"],
                        "env": [{"name": "SLURM_CONF", "value": "/etc/slurm/slurm.conf"}],
                        "resources": container_resources("10m", "32Mi", "128Mi"),
                        "securityContext": RESTRICTED_CONTAINER_SECURITY,
                        "volumeMounts": [
                            {"name": "slurm-etc", "mountPath": "/etc/slurm", "readOnly": True},
                            {"name": "scripts", "mountPath": "/scripts", "readOnly": True},
                        ],
                    }
                ],
                "volumes": [
                    {
                        "name": "slurm-etc",
                        "projected": {
                            "defaultMode": 0o440,
                            "sources": [
                                {
                                    "configMap": {
                                        "name": f"{controller}-config",
                                        "items": [{"key": "slurm.conf", "path": "slurm.conf"}],
                                    }
                                },
                                {
                                    "secret": {
                                        "name": key_secret,
                                        "items": [{"key": "slurm.key", "path": "slurm.key"}],
                                    }
                                },
                            ],
                        },
                    },
                    {"name": "scripts", "configMap": {"name": script_map}},
                ],
            },
        },
    }
