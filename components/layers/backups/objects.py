"""What the scheduled backups run, as pure functions (the tests run exactly these commands).

The accounting database is dumped by mariadb-operator's `Backup`: the operator (v26.6.0,
pkg/command/backup.go `mariadbDumpArgs`/`MariadbDump`) runs
`mariadb-dump <connection flags> --single-transaction --events --routines --databases <db...> > FILE`
and restores with `mariadb <connection flags> < FILE` (`MariadbRestore`). `dump_argv`/`restore_argv`
build the same command lines for a given connection, so the restore runbook's steps are what a test ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .config import BackupsConfig

# mariadb-operator v26.6.0 pkg/command/backup.go mariadbDumpArgs (no Galera, no TLS, no extra options)
DUMP_OPTIONS = ("--single-transaction", "--events", "--routines")
ACCOUNTING_DATABASE = "slurm_acct_db"
S3_SECRET = "hpcforge-backup-s3"


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


__all__ = ["ACCOUNTING_DATABASE", "DUMP_OPTIONS", "dump_argv", "mariadb_backup_spec", "restore_argv"]
