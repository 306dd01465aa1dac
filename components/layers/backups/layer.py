"""Backups layer, all to the one target from config (an S3 bucket, or a protected volume per namespace):
the accounting database through mariadb-operator's scheduled `Backup`; the directory as LDIF (a CronJob
running scripts/directory/ldif_backup.py in the 389ds image); with `keyRecipient`, the sealed-secrets
keys and the CA key, encrypted to that certificate (scripts/backup/export_keys.py in namespace
`backups`). S3 credentials are Pulumi secrets in a Secret in each namespace that uploads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...context import DeployContext, Stateful
from ...k8s.certificates import CA_SECRET as CA_SECRET_NAME
from ...k8s.resources import Namespace, config_map, container_resources, egress_to_apiserver, egress_to_internet, secret
from ...versions import Images
from .config import BackupsConfig
from .objects import S3_SECRET, mariadb_backup_spec

LDIF_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "directory" / "ldif_backup.py"
KEYS_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "backup" / "export_keys.py"
S3PUT_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "backup" / "s3put.py"
KEYS_NAMESPACE = "backups"
KEYS_ACCOUNT = "key-export"

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
        self.ready += self._directory_backup(args)
        if cfg.key_recipient is not None:
            self.ready += self._key_export(args, cfg.key_recipient)
        self.register_outputs({"schedule": cfg.schedule, "target": "s3" if cfg.s3 is not None else "volume"})

    def _target(self, args: BackupsArgs, namespace: str, depends_on: Sequence[pulumi.Resource]) -> pulumi.Resource:
        """The backup volume (protected) or the S3 credentials' Secret in `namespace`."""
        ctx, cfg = args.ctx, args.config
        if cfg.s3 is not None:
            return secret(
                ctx,
                S3_SECRET,
                namespace,
                {
                    "access-key-id": cfg.s3.access_key_id.get_secret_value(),
                    "secret-access-key": cfg.s3.secret_access_key.get_secret_value(),
                },
                component="backups",
                parent=self,
                depends_on=depends_on,
            )
        assert cfg.volume is not None
        storage_class = ctx.storage_class_for(cfg.volume.storage_class)
        return k8s.core.v1.PersistentVolumeClaim(
            f"{namespace}/{BACKUP_VOLUME}",
            metadata=ctx.meta(BACKUP_VOLUME, "backups", namespace, stateful=Stateful.VOLUME),
            spec={
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": cfg.volume.size}},
                **({"storageClassName": storage_class} if storage_class else {}),
            },
            opts=ctx.opts(self, depends_on=list(depends_on), stateful=Stateful.VOLUME),
        )

    def _directory_backup(self, args: BackupsArgs) -> list[pulumi.Resource]:
        ctx = args.ctx
        claim = self._target(args, DIRECTORY_NAMESPACE, args.depends_on)
        script = config_map(
            ctx,
            "dirsrv-backup",
            DIRECTORY_NAMESPACE,
            {"ldif_backup.py": LDIF_SCRIPT.read_text(), "s3put.py": S3PUT_SCRIPT.read_text()},
            component="backups",
            parent=self,
            depends_on=args.depends_on,
        )
        extra: list[pulumi.Resource] = []
        if args.config.s3 is not None:
            # the directory namespace denies egress by default: let the backup pods reach the S3 endpoint
            rule = egress_to_internet(443, 80, 9000)
            extra.append(
                k8s.networking.v1.NetworkPolicy(
                    f"{DIRECTORY_NAMESPACE}/allow-egress-backup-s3",
                    metadata=ctx.meta("allow-egress-backup-s3", "network-policy", DIRECTORY_NAMESPACE),
                    spec={
                        **rule.to_spec(),
                        "podSelector": {
                            "matchLabels": {"app.kubernetes.io/name": "dirsrv", "app.kubernetes.io/component": "backups"}
                        },
                    },
                    opts=ctx.opts(self, depends_on=list(args.depends_on)),
                )
            )
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
        allows = [egress_to_apiserver()]
        if args.config.s3 is not None:
            allows.append(egress_to_internet(443, 80, 9000))  # the S3 endpoint, inside or outside the cluster
        ns = Namespace(ctx, KEYS_NAMESPACE, component="backups", parent=self, allows=allows, depends_on=args.depends_on)
        claim = self._target(args, KEYS_NAMESPACE, ns.ready)
        account = k8s.core.v1.ServiceAccount(
            f"{KEYS_NAMESPACE}/{KEYS_ACCOUNT}",
            metadata=ctx.meta(KEYS_ACCOUNT, "backups", KEYS_NAMESPACE),
            opts=ctx.opts(self, depends_on=ns.ready),
        )
        objects: list[pulumi.Resource] = [claim, account]
        # Read access to exactly what is exported: the sealed-secrets keys (generated names: list by label)
        # and the CA's Secret by name.
        grants = (("kube-system", ["get", "list"], None), ("cert-manager", ["get"], [CA_SECRET_NAME]))
        for namespace, verbs, names in grants:
            rule: dict[str, Any] = {"apiGroups": [""], "resources": ["secrets"], "verbs": verbs}
            if names:
                rule["resourceNames"] = names
            role = k8s.rbac.v1.Role(
                f"{namespace}/hpcforge-key-export",
                metadata=ctx.meta("hpcforge-key-export", "backups", namespace),
                rules=[rule],
                opts=ctx.opts(self, depends_on=list(args.depends_on)),
            )
            objects.append(role)
            objects.append(
                k8s.rbac.v1.RoleBinding(
                    f"{namespace}/hpcforge-key-export",
                    metadata=ctx.meta("hpcforge-key-export", "backups", namespace),
                    role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "hpcforge-key-export"},
                    subjects=[{"kind": "ServiceAccount", "name": KEYS_ACCOUNT, "namespace": KEYS_NAMESPACE}],
                    opts=ctx.opts(self, depends_on=[role, account]),
                )
            )
        files = config_map(
            ctx,
            "key-export",
            KEYS_NAMESPACE,
            {"export_keys.py": KEYS_SCRIPT.read_text(), "s3put.py": S3PUT_SCRIPT.read_text(), "recipient.pem": recipient},
            component="backups",
            parent=self,
            depends_on=ns.ready,
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


def backup_volume(cfg: BackupsConfig) -> dict[str, Any]:
    """Where the exports are written: the backup volume, or scratch space before the S3 upload."""
    if cfg.s3 is not None:
        return {"name": "backup", "emptyDir": {}}
    return {"name": "backup", "persistentVolumeClaim": {"claimName": BACKUP_VOLUME}}


def s3_env(cfg: BackupsConfig, what: str) -> list[dict[str, Any]]:
    """The environment of scripts/backup/s3put.py (empty: no S3 target)."""
    if cfg.s3 is None:
        return []
    s3 = cfg.s3
    return [
        {"name": "S3_ENDPOINT", "value": s3.endpoint},
        {"name": "S3_BUCKET", "value": s3.bucket},
        {"name": "S3_PREFIX", "value": f"{s3.prefix.strip('/')}/{what}".lstrip("/")},
        {"name": "S3_REGION", "value": s3.region},
        {"name": "S3_TLS", "value": "true" if s3.tls else "false"},
        {"name": "AWS_ACCESS_KEY_ID", "valueFrom": {"secretKeyRef": {"name": S3_SECRET, "key": "access-key-id"}}},
        {"name": "AWS_SECRET_ACCESS_KEY", "valueFrom": {"secretKeyRef": {"name": S3_SECRET, "key": "secret-access-key"}}},
    ]


def _keep_days(cfg: BackupsConfig) -> int:
    """How many days of exports the scripts keep (`maxRetention` in whole days, at least one)."""
    return max(1, int(cfg.max_retention.removesuffix("h")) // 24)


def _export_cronjob(
    cfg: BackupsConfig,
    *,
    labels: dict[str, str],
    pod: dict[str, Any],
    command: list[str],
    env: list[dict[str, Any]],
    memory_limit: str,
    mounts: list[dict[str, Any]],
    volumes: list[dict[str, Any]],
) -> dict[str, Any]:
    """A scheduled export as the directory's dirsrv user (389), restricted Pod Security, onto the backup volume."""
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
                        **pod,
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
                                # python3 + python-ldap and /usr/bin/openssl in docker.io/389ds/dirsrv: its build
                                # recipe lives on the openSUSE Build Service (home:firstyear/389-ds-container, not
                                # on GitHub; 389ds/389-ds-base removed its docker/ folder in b8f7533af as unused), so
                                # this rests on what the image's own entrypoint needs, read at 389-ds-base-3.1.4:
                                # `dscontainer -r` is python3 importing lib389 (src/lib389/cli/dscontainer lines
                                # 37-42), lib389 depends on python-ldap (src/lib389/pyproject.toml line 48), and its
                                # first start creates the self-signed CA (lib389/instance/setup.py lines 994-1002 ->
                                # nss_ssl.py create_rsa_ca -> openssl_rehash, lines 252/258, `/usr/bin/openssl`);
                                # the RPM spec makes python3-lib389 require openssl (rpm/389-ds-base.spec.in line 328).
                                "image": Images.DIRSRV.ref,
                                "command": command,
                                "env": env,
                                "resources": container_resources("50m", "64Mi", memory_limit),
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]},
                                    "readOnlyRootFilesystem": True,
                                },
                                "volumeMounts": [*mounts, {"name": "backup", "mountPath": "/backup"}],
                            }
                        ],
                        "volumes": [*volumes, backup_volume(cfg)],
                    },
                },
            }
        },
    }


def key_export_spec(cfg: BackupsConfig, *, labels: dict[str, str]) -> dict[str, Any]:
    """The key-export CronJob's spec (pure): export_keys.py with the service account's token, onto the volume."""
    return _export_cronjob(
        cfg,
        labels=labels,
        pod={"serviceAccountName": KEYS_ACCOUNT},
        command=[
            "python3",
            "/scripts/export_keys.py",
            "--recipient",
            "/scripts/recipient.pem",
            "--dir",
            "/backup",
            "--keep-days",
            str(_keep_days(cfg)),
            "--ca-secret",
            CA_SECRET_NAME,
        ],
        env=s3_env(cfg, "keys"),
        memory_limit="256Mi",
        mounts=[{"name": "scripts", "mountPath": "/scripts", "readOnly": True}],
        volumes=[{"name": "scripts", "configMap": {"name": "key-export"}}],
    )


def directory_backup_spec(cfg: BackupsConfig, *, suffix: str, uri: str, labels: dict[str, str]) -> dict[str, Any]:
    """The directory backup CronJob's spec (pure): ldif_backup.py export onto the backup volume."""
    return _export_cronjob(
        cfg,
        labels=labels,
        pod={"automountServiceAccountToken": False},
        command=[
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
            str(_keep_days(cfg)),
        ],
        env=[
            {"name": "LDAP_BIND_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "dirsrv-dm-password", "key": "password"}}},
            *s3_env(cfg, "directory"),
        ],
        memory_limit="512Mi",
        mounts=[
            {"name": "scripts", "mountPath": "/scripts", "readOnly": True},
            {"name": "tls", "mountPath": "/tls", "readOnly": True},
        ],
        volumes=[
            {"name": "scripts", "configMap": {"name": "dirsrv-backup"}},
            {"name": "tls", "secret": {"secretName": "dirsrv-tls", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        ],
    )


__all__ = ["BACKUP_VOLUME", "Backups", "BackupsArgs", "directory_backup_spec", "key_export_spec"]
