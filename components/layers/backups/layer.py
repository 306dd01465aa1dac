"""Backups layer, all to the one target from config (an S3 bucket, or a protected volume per namespace):
the accounting database through mariadb-operator's scheduled `Backup`; the directory as LDIF (a CronJob
running scripts/directory/ldif_backup.py in the 389ds image); with `keyRecipient`, the sealed-secrets
keys and the CA key, encrypted to that certificate (scripts/backup/export_keys.py in namespace
`backups`). S3 credentials are Pulumi secrets in a Secret in each namespace that uploads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ...context import DeployContext, Stateful
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.scope import Scope
from .config import BackupsConfig
from .objects import (
    BACKUP_VOLUME,
    DATABASE_NAMESPACE,
    DIRECTORY_NAMESPACE,
    KEY_EXPORT_ROLE,
    KEYS_ACCOUNT,
    KEYS_NAMESPACE,
    KEYS_SCRIPT,
    LDIF_SCRIPT,
    MARIADB_API,
    S3_SECRET,
    S3PUT_SCRIPT,
    backup_claim_spec,
    directory_backup_spec,
    directory_s3_policy_spec,
    key_export_allows,
    key_export_grants,
    key_export_spec,
    mariadb_backup_spec,
    s3_credentials,
)


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
        target = self._target(args, Scope(ctx, self, DATABASE_NAMESPACE, "backups", depends_on=args.depends_on))
        depends: list[pulumi.Resource] = [*args.depends_on, target]
        backup = Scope(ctx, self, DATABASE_NAMESPACE, "backups").custom(
            MARIADB_API,
            "Backup",
            "slurm-acct-db-backup",
            mariadb_backup_spec(cfg, mariadb=args.mariadb, volume_claim=BACKUP_VOLUME if cfg.s3 is None else None),
            resource_name=f"{DATABASE_NAMESPACE}/backup-slurm-acct-db",
            depends_on=depends,
            stateful=Stateful.DATABASE,
        )
        self.ready = [target, backup]
        self.ready += self._directory_backup(args)
        if cfg.key_recipient is not None:
            self.ready += self._key_export(args, cfg.key_recipient)
        self.register_outputs({"schedule": cfg.schedule, "target": "s3" if cfg.s3 is not None else "volume"})

    def _target(self, args: BackupsArgs, scope: Scope) -> pulumi.Resource:
        """The backup volume (protected) or the S3 credentials' Secret in the scope's namespace."""
        ctx, cfg, namespace = args.ctx, args.config, scope.namespace
        if cfg.s3 is not None:
            return scope.secret(S3_SECRET, s3_credentials(cfg))
        assert cfg.volume is not None
        return k8s.core.v1.PersistentVolumeClaim(
            f"{namespace}/{BACKUP_VOLUME}",
            metadata=ctx.meta(BACKUP_VOLUME, "backups", namespace, stateful=Stateful.VOLUME),
            spec=backup_claim_spec(cfg, ctx.storage_class_for(cfg.volume.storage_class)),
            opts=ctx.opts(self, depends_on=list(scope.depends_on), stateful=Stateful.VOLUME),
        )

    def _directory_backup(self, args: BackupsArgs) -> list[pulumi.Resource]:
        ctx = args.ctx
        scope = Scope(ctx, self, DIRECTORY_NAMESPACE, "backups", depends_on=args.depends_on)
        claim = self._target(args, scope)
        script = scope.config_map(
            "dirsrv-backup", {"ldif_backup.py": LDIF_SCRIPT.read_text(), "s3put.py": S3PUT_SCRIPT.read_text()}
        )
        extra: list[pulumi.Resource] = []
        if args.config.s3 is not None:
            extra.append(scope.network_policy("allow-egress-backup-s3", directory_s3_policy_spec()))
        job = k8s.batch.v1.CronJob(
            f"{DIRECTORY_NAMESPACE}/dirsrv-backup",
            metadata=ctx.meta("dirsrv-backup", "backups", DIRECTORY_NAMESPACE),
            spec=directory_backup_spec(
                args.config, suffix=args.directory_suffix, uri=args.directory_uri, labels=ctx.labels("dirsrv", "backups")
            ),
            opts=ctx.opts(self, depends_on=[claim, script, *extra]),
        )
        return [claim, script, *extra, job]

    def _key_export(self, args: BackupsArgs, recipient: str) -> list[pulumi.Resource]:
        ctx = args.ctx
        ns = LayerNamespace(
            ctx, self, KEYS_NAMESPACE, component="backups", allows=key_export_allows(args.config), depends_on=args.depends_on
        )
        claim = self._target(args, ns.scope)
        account = k8s.core.v1.ServiceAccount(
            f"{KEYS_NAMESPACE}/{KEYS_ACCOUNT}",
            metadata=ctx.meta(KEYS_ACCOUNT, "backups", KEYS_NAMESPACE),
            opts=ctx.opts(self, depends_on=ns.ready),
        )
        objects: list[pulumi.Resource] = [claim, account]
        for namespace, rules in key_export_grants():
            role = k8s.rbac.v1.Role(
                f"{namespace}/{KEY_EXPORT_ROLE}",
                metadata=ctx.meta(KEY_EXPORT_ROLE, "backups", namespace),
                rules=rules,
                opts=ctx.opts(self, depends_on=list(args.depends_on)),
            )
            objects.append(role)
            objects.append(
                k8s.rbac.v1.RoleBinding(
                    f"{namespace}/{KEY_EXPORT_ROLE}",
                    metadata=ctx.meta(KEY_EXPORT_ROLE, "backups", namespace),
                    role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": KEY_EXPORT_ROLE},
                    subjects=[{"kind": "ServiceAccount", "name": KEYS_ACCOUNT, "namespace": KEYS_NAMESPACE}],
                    opts=ctx.opts(self, depends_on=[role, account]),
                )
            )
        files = ns.scope.config_map(
            "key-export",
            {"export_keys.py": KEYS_SCRIPT.read_text(), "s3put.py": S3PUT_SCRIPT.read_text(), "recipient.pem": recipient},
        )
        objects.append(files)
        objects.append(
            k8s.batch.v1.CronJob(
                f"{KEYS_NAMESPACE}/key-export-backup",
                metadata=ctx.meta("key-export-backup", "backups", KEYS_NAMESPACE),
                spec=key_export_spec(args.config, labels=ctx.labels("key-export", "backups")),
                opts=ctx.opts(self, depends_on=[*objects]),
            )
        )
        return objects


__all__ = ["Backups", "BackupsArgs"]
