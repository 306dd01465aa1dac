"""What the scheduled backups run, as pure functions (the tests run exactly these commands): the mariadb-operator
`Backup`, the directory's and the keys' export CronJobs, and what they need around them (the backup volume's claim,
the S3 credentials, the key export's grants and traffic rules).

The accounting database is dumped by mariadb-operator's `Backup`: the operator (v26.6.0,
pkg/command/backup.go `mariadbDumpArgs`/`MariadbDump`) runs
`mariadb-dump <connection flags> --single-transaction --events --routines --databases <db...> > FILE`
and restores with `mariadb <connection flags> < FILE` (`MariadbRestore`). `dump_argv`/`restore_argv`
build the same command lines for a given connection, so the restore runbook's steps are what a test ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...chart_security import RESTRICTED_CONTAINER_SECURITY
from ...k8s.certificates import CA_SECRET as CA_SECRET_NAME
from ...k8s.resources import Allow, container_resources, egress_to_apiserver, egress_to_internet
from ...paths import SCRIPTS
from ...versions import Images
from .config import BackupsConfig

# mariadb-operator v26.6.0 pkg/command/backup.go mariadbDumpArgs (no Galera, no TLS, no extra options)
DUMP_OPTIONS = ("--single-transaction", "--events", "--routines")
ACCOUNTING_DATABASE = "slurm_acct_db"
MARIADB_API = "k8s.mariadb.com/v1alpha1"
"""The API version of mariadb-operator's Backup."""
S3_SECRET = "hpcforge-backup-s3"
LDIF_SCRIPT = SCRIPTS / "directory" / "ldif_backup.py"
KEYS_SCRIPT = SCRIPTS / "backup" / "export_keys.py"
S3PUT_SCRIPT = SCRIPTS / "backup" / "s3put.py"
KEYS_NAMESPACE = "backups"
KEYS_ACCOUNT = "key-export"
KEY_EXPORT_ROLE = "hpcforge-key-export"
DATABASE_NAMESPACE = "database"
DIRECTORY_NAMESPACE = "directory"
BACKUP_VOLUME = "hpcforge-backups"


def dump_argv(connection: Sequence[str], databases: Sequence[str] = (ACCOUNTING_DATABASE,)) -> list[str]:
    """`mariadb-dump` as the operator runs it for a Backup with `spec.databases` (its output goes to the file)."""
    return ["mariadb-dump", *connection, *DUMP_OPTIONS, "--databases", *databases]


def restore_argv(connection: Sequence[str]) -> list[str]:
    """`mariadb` as the operator's Restore runs it (the dump file on stdin)."""
    return ["mariadb", *connection]


def mariadb_backup_spec(cfg: BackupsConfig, *, mariadb: str, volume_claim: str | None) -> dict[str, Any]:
    """The mariadb-operator `Backup` spec of slurm_acct_db (pure)."""
    if cfg.s3 is not None:
        storage: dict[str, Any] = {
            "s3": {
                "bucket": cfg.s3.bucket,
                "endpoint": cfg.s3.endpoint,
                "region": cfg.s3.region,
                "prefix": f"{cfg.s3.prefix.rstrip('/')}/slurm_acct_db",
                "accessKeyIdSecretKeyRef": {"name": S3_SECRET, "key": "access-key-id"},
                "secretAccessKeySecretKeyRef": {"name": S3_SECRET, "key": "secret-access-key"},
                "tls": {"enabled": cfg.s3.tls},
            }
        }
    else:
        assert volume_claim is not None
        # a volume hpcforge creates (and protects in prod), not one the operator would create
        storage = {"volume": {"persistentVolumeClaim": {"claimName": volume_claim}}}
    return {
        "mariaDbRef": {"name": mariadb},
        "databases": [ACCOUNTING_DATABASE],
        "schedule": {"cron": cfg.schedule},
        "maxRetention": cfg.max_retention,
        "storage": storage,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "1Gi"}},
    }


def s3_credentials(cfg: BackupsConfig) -> dict[str, str]:
    """The data of the S3 credentials' Secret in each namespace that uploads (S3_SECRET)."""
    assert cfg.s3 is not None
    return {
        "access-key-id": cfg.s3.access_key_id.get_secret_value(),
        "secret-access-key": cfg.s3.secret_access_key.get_secret_value(),
    }


def backup_claim_spec(cfg: BackupsConfig, storage_class: str | None) -> dict[str, Any]:
    """The backup volume's claim (BACKUP_VOLUME) in a namespace, when the target is a volume (None `storage_class`:
    the cluster default)."""
    assert cfg.volume is not None
    return {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": cfg.volume.size}},
        **({"storageClassName": storage_class} if storage_class else {}),
    }


def directory_s3_policy_spec() -> dict[str, Any]:
    """The NetworkPolicy that lets the directory's backup pods reach the S3 endpoint (the directory namespace denies
    egress by default)."""
    rule = egress_to_internet(443, 80, 9000)
    return {
        **rule.to_spec(),
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "dirsrv", "app.kubernetes.io/component": "backups"}},
    }


def key_export_allows(cfg: BackupsConfig) -> list[Allow]:
    """The key export namespace's traffic rules: the API server, and the S3 endpoint (inside or outside the cluster)."""
    allows = [egress_to_apiserver()]
    if cfg.s3 is not None:
        allows.append(egress_to_internet(443, 80, 9000))
    return allows


def key_export_grants() -> list[tuple[str, list[dict[str, Any]]]]:
    """Read access to exactly what is exported, per namespace: the sealed-secrets keys (generated names: list by
    label) and the CA's Secret by name."""
    grants = (("kube-system", ["get", "list"], None), ("cert-manager", ["get"], [CA_SECRET_NAME]))
    roles: list[tuple[str, list[dict[str, Any]]]] = []
    for namespace, verbs, names in grants:
        rule: dict[str, Any] = {"apiGroups": [""], "resources": ["secrets"], "verbs": verbs}
        if names:
            rule["resourceNames"] = names
        roles.append((namespace, [rule]))
    return roles


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
                                "securityContext": {**RESTRICTED_CONTAINER_SECURITY, "readOnlyRootFilesystem": True},
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


__all__ = [
    "ACCOUNTING_DATABASE",
    "BACKUP_VOLUME",
    "DUMP_OPTIONS",
    "directory_backup_spec",
    "dump_argv",
    "key_export_spec",
    "mariadb_backup_spec",
    "restore_argv",
]
