"""Backups layer: the accounting database through mariadb-operator's scheduled `Backup`, to the S3
bucket or the volume from config; with a volume target, also the directory as LDIF (a CronJob running
scripts/directory/ldif_backup.py in the 389ds image). The target's credentials are Pulumi secrets in a
Secret; backup volumes are protected in prod like every other volume.

Not here yet: the directory's export to S3, and the encrypted export of the sealed-secrets and CA
keys (see docs/operations.md, "Back up and restore the accounting database").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..config.backups import BackupsConfig
from ..context import DeployContext, Stateful
from ..k8s import config_map, container_resources, secret
from ..renderers.backup import S3_SECRET, mariadb_backup_spec
from ..versions import Images

LDIF_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "directory" / "ldif_backup.py"

DATABASE_NAMESPACE = "database"
DIRECTORY_NAMESPACE = "directory"
BACKUP_VOLUME = "hpcforge-backups"


@dataclass(frozen=True)
class BackupsArgs:
    ctx: DeployContext
    config: BackupsConfig
    mariadb: str
    """Name of the MariaDB object in the database namespace."""
    directory_suffix: str
    directory_uri: str
    """LDAPS URI of the directory service inside the cluster."""
    depends_on: Sequence[pulumi.Resource] = ()


class Backups(pulumi.ComponentResource):
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: BackupsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:backups:Backups", name, None, opts)
        ctx, cfg = args.ctx, args.config
        depends: list[pulumi.Resource] = list(args.depends_on)
        claim: str | None = None
        if cfg.s3 is not None:
            depends.append(
                secret(
                    ctx,
                    S3_SECRET,
                    DATABASE_NAMESPACE,
                    {
                        "access-key-id": cfg.s3.access_key_id.get_secret_value(),
                        "secret-access-key": cfg.s3.secret_access_key.get_secret_value(),
                    },
                    component="backups",
                    parent=self,
                    depends_on=args.depends_on,
                )
            )
        else:
            assert cfg.volume is not None
            storage_class = ctx.storage_class_for(cfg.volume.storage_class)
            claim = BACKUP_VOLUME
            depends.append(
                k8s.core.v1.PersistentVolumeClaim(
                    f"{DATABASE_NAMESPACE}/{BACKUP_VOLUME}",
                    metadata=ctx.meta(BACKUP_VOLUME, "backups", DATABASE_NAMESPACE, stateful=Stateful.VOLUME),
                    spec={
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": cfg.volume.size}},
                        **({"storageClassName": storage_class} if storage_class else {}),
                    },
                    opts=ctx.opts(self, depends_on=list(args.depends_on), stateful=Stateful.VOLUME),
                )
            )
        backup = k8s.apiextensions.CustomResource(
            f"{DATABASE_NAMESPACE}/backup-slurm-acct-db",
            api_version="k8s.mariadb.com/v1alpha1",
            kind="Backup",
            metadata=ctx.meta("slurm-acct-db-backup", "backups", DATABASE_NAMESPACE, stateful=Stateful.DATABASE),
            spec=mariadb_backup_spec(cfg, mariadb=args.mariadb, volume_claim=claim),
            opts=ctx.opts(self, depends_on=depends, stateful=Stateful.DATABASE),
        )
        self.ready = [*depends[len(args.depends_on) :], backup]
        if cfg.volume is not None:
            self.ready += self._directory_backup(args, cfg.volume.size, ctx.storage_class_for(cfg.volume.storage_class))
        self.register_outputs({"schedule": cfg.schedule, "target": "s3" if cfg.s3 is not None else "volume"})

    def _directory_backup(self, args: BackupsArgs, size: str, storage_class: str | None) -> list[pulumi.Resource]:
        ctx = args.ctx
        claim = k8s.core.v1.PersistentVolumeClaim(
            f"{DIRECTORY_NAMESPACE}/{BACKUP_VOLUME}",
            metadata=ctx.meta(BACKUP_VOLUME, "backups", DIRECTORY_NAMESPACE, stateful=Stateful.VOLUME),
            spec={
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}},
                **({"storageClassName": storage_class} if storage_class else {}),
            },
            opts=ctx.opts(self, depends_on=list(args.depends_on), stateful=Stateful.VOLUME),
        )
        script = config_map(
            ctx,
            "dirsrv-backup",
            DIRECTORY_NAMESPACE,
            {"ldif_backup.py": LDIF_SCRIPT.read_text()},
            component="backups",
            parent=self,
            depends_on=args.depends_on,
        )
        job = k8s.batch.v1.CronJob(
            f"{DIRECTORY_NAMESPACE}/dirsrv-backup",
            metadata=ctx.meta("dirsrv-backup", "backups", DIRECTORY_NAMESPACE),
            spec=directory_backup_spec(
                args.config, suffix=args.directory_suffix, uri=args.directory_uri, labels=ctx.labels("dirsrv", "backups")
            ),
            opts=ctx.opts(self, depends_on=[claim, script]),
        )
        return [claim, script, job]


def directory_backup_spec(cfg: BackupsConfig, *, suffix: str, uri: str, labels: dict[str, str]) -> dict[str, Any]:
    """The directory backup CronJob's spec (pure): ldif_backup.py export onto the backup volume."""
    keep_days = max(1, int(cfg.max_retention.removesuffix("h")) // 24)
    return {
        "schedule": cfg.schedule,
        "concurrencyPolicy": "Forbid",
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 3,
        "jobTemplate": {
            "spec": {
                "backoffLimit": 3,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "automountServiceAccountToken": False,
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": 389,
                            "runAsGroup": 389,
                            "fsGroup": 389,
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "containers": [
                            {
                                "name": "export",
                                "image": Images.DIRSRV.ref,
                                "command": [
                                    "python3",
                                    "/scripts/ldif_backup.py",
                                    "export",
                                    "--uri",
                                    uri,
                                    "--ca-file",
                                    "/tls/ca.crt",
                                    "--suffix",
                                    suffix,
                                    "--dir",
                                    "/backup",
                                    "--keep-days",
                                    str(keep_days),
                                ],
                                "env": [
                                    {
                                        "name": "LDAP_BIND_PASSWORD",
                                        "valueFrom": {"secretKeyRef": {"name": "dirsrv-dm-password", "key": "password"}},
                                    }
                                ],
                                "resources": container_resources("50m", "64Mi", "512Mi"),
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]},
                                    "readOnlyRootFilesystem": True,
                                },
                                "volumeMounts": [
                                    {"name": "scripts", "mountPath": "/scripts", "readOnly": True},
                                    {"name": "tls", "mountPath": "/tls", "readOnly": True},
                                    {"name": "backup", "mountPath": "/backup"},
                                ],
                            }
                        ],
                        "volumes": [
                            {"name": "scripts", "configMap": {"name": "dirsrv-backup"}},
                            {
                                "name": "tls",
                                "secret": {"secretName": "dirsrv-tls", "items": [{"key": "ca.crt", "path": "ca.crt"}]},
                            },
                            {"name": "backup", "persistentVolumeClaim": {"claimName": BACKUP_VOLUME}},
                        ],
                    },
                },
            }
        },
    }


__all__ = ["BACKUP_VOLUME", "Backups", "BackupsArgs", "directory_backup_spec"]
