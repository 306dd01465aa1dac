"""Backups layer: the accounting database through mariadb-operator's scheduled `Backup`, to the S3
bucket or the volume from config; the target's credentials are Pulumi secrets in a Secret, a backup
volume is protected in prod like every other volume.

Not here yet: the directory's LDIF export and the encrypted export of the sealed-secrets and CA keys
(see docs/operations.md, "Back up and restore").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ..config.backups import BackupsConfig
from ..context import DeployContext, Stateful
from ..k8s import secret
from ..renderers.backup import S3_SECRET, mariadb_backup_spec

DATABASE_NAMESPACE = "database"
BACKUP_VOLUME = "hpcforge-backups"


@dataclass(frozen=True)
class BackupsArgs:
    ctx: DeployContext
    config: BackupsConfig
    mariadb: str
    """Name of the MariaDB object in the database namespace."""
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
        self.register_outputs({"schedule": cfg.schedule, "target": "s3" if cfg.s3 is not None else "volume"})


__all__ = ["BACKUP_VOLUME", "Backups", "BackupsArgs"]
