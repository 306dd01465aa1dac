"""Site-layout objects of the Slurm layer: the topology file, the Kubernetes node topology annotations
that Slinky 1.2.1 reads, and the Job that makes the configured reservations.

They are children of the `Slurm` component (called from `components/layers/slurm/layer.py`); each spec comes
from a pure function tested directly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...context import Stateful
from ...ground.hosts import Host
from ...k8s.resources import container_resources
from ...k8s.scope import Scope
from ...versions import Images
from ..storage.config import StorageConfig
from ..storage.face import claim_name, tree_claim_spec
from .config import SlurmConfig
from .reservation_script import reservation_script
from .topology_files import node_annotations, topology_yaml

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
                        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
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


def shared_tree_claims(scope: Scope, storage: StorageConfig | None) -> list[pulumi.Resource]:
    """One claim per NFS export mounted on login or compute pods, bound to the storage layer's volume of
    the export's root (in the scope's namespace, with its app label, after what it waits for)."""
    ctx, namespace = scope.ctx, scope.namespace
    claims: list[pulumi.Resource] = []
    for export in storage.nfs_exports if storage else ():
        if not (export.login or export.compute):
            continue
        claims.append(
            k8s.core.v1.PersistentVolumeClaim(
                f"{namespace}/{claim_name(export)}",
                metadata=ctx.meta(claim_name(export), "storage", namespace, app=scope.app, stateful=Stateful.VOLUME),
                spec=tree_claim_spec(export, f"slurm-{export.name}"),
                opts=ctx.opts(scope.parent, depends_on=list(scope.depends_on), stateful=Stateful.VOLUME),
            )
        )
    return claims


def site_objects(scope: Scope, slurm: SlurmConfig, *, controller: str, key_secret: str) -> list[pulumi.Resource]:
    """Node annotations for the topology and the reservations Job (none when neither is configured); the Job and its
    script's ConfigMap go in the scope's namespace, after what it waits for (the Controller)."""
    ctx, parent = scope.ctx, scope.parent
    created: list[pulumi.Resource] = []
    if slurm.topology is not None:
        for node, annotations in node_annotations(slurm.topology).items():
            # A patch (server-side apply) of a node hpcforge does not own: only this annotation is ours.
            created.append(
                k8s.core.v1.NodePatch(
                    f"node-topology-{node}",
                    # Our labels go with the patch (and leave with it): the node shows who set the annotation.
                    metadata=ctx.meta(node, "slurm-topology", app=controller, annotations=annotations),
                    opts=ctx.opts(parent),
                )
            )
    if slurm.reservations:
        ns = scope.namespace
        script = reservation_script(slurm.reservations)
        script_map = scope.config_map(RESERVATIONS_MAP, {"reservations.sh": script})
        # A Job's pod template is immutable: a changed script runs a new Job under a new name.
        digest = hashlib.sha256(script.encode()).hexdigest()[:10]
        created.append(
            k8s.batch.v1.Job(
                f"{ns}/slurm-reservations",
                metadata=ctx.meta(f"slurm-reservations-{digest}", "slurm-reservations", ns, app=controller),
                spec=reservation_job_spec(
                    controller=controller,
                    key_secret=key_secret,
                    script_map=RESERVATIONS_MAP,
                    labels=ctx.labels(controller, "slurm-reservations"),
                ),
                opts=ctx.opts(parent, depends_on=[*scope.depends_on, script_map]),
            )
        )
    return created
