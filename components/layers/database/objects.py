"""The database layer's objects as pure functions: the mariadb-operator chart values, the allows of the operator's
and the server's namespaces, and the specs of its `MariaDB`, `Database`, `User` and `Grant` custom resources (all
with `cleanupPolicy: Skip`, so that deleting a resource never drops data)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...k8s.resources import (
    Allow,
    Port,
    container_resources,
    egress_to_apiserver,
    egress_to_namespaces,
    ingress_from_anywhere,
    ingress_from_namespaces,
)
from .config import DatabaseConfig

OPERATOR_NAMESPACE = "mariadb-system"
NAMESPACE = "database"
MARIADB_API = "k8s.mariadb.com/v1alpha1"
SERVER = "mariadb"
ROOT_SECRET = "mariadb-root"
ACCOUNTING_DATABASE = "slurm_acct_db"
ACCOUNTING_USER = "slurm"
PASSWORD_SECRET = "slurm-db-password"
PASSWORD_KEY = "password"


def operator_namespace_allows() -> list[Allow]:
    """The operator's namespace: the API server, its webhook (called by the API server), and MariaDB, whose
    databases, users and grants it manages over SQL."""
    return [
        egress_to_apiserver(),
        ingress_from_anywhere("allow-ingress-webhook", Port(9443), Port(10250)),
        egress_to_namespaces("allow-egress-mysql", [NAMESPACE], Port(3306)),
    ]


def server_namespace_allows(client_namespaces: Sequence[str]) -> list[Allow]:
    """The server's namespace: MySQL from the clients' namespaces (slurmdbd's) and the operator's."""
    return [ingress_from_namespaces("allow-ingress-mysql", [*client_namespaces, OPERATOR_NAMESPACE], Port(3306))]


def my_cnf(config: DatabaseConfig) -> str:
    """Server settings for slurmdbd (SchedMD's accounting guide: large buffer pool, long lock waits)."""
    return (
        "[mariadb]\n"
        "bind-address=*\n"
        "default_storage_engine=InnoDB\n"
        "binlog_format=row\n"
        "innodb_autoinc_lock_mode=2\n"
        f"innodb_buffer_pool_size={config.innodb_buffer_pool_size}\n"
        f"innodb_log_file_size={config.innodb_log_file_size}\n"
        f"innodb_lock_wait_timeout={config.innodb_lock_wait_timeout}\n"
        f"max_allowed_packet={config.max_allowed_packet}\n"
    )


def operator_values() -> dict[str, Any]:
    """mariadb-operator chart values (the CRDs come from their own chart; security contexts for `restricted`
    from components/chart_security.py)."""
    return {
        "crds": {"enabled": False},
        "resources": container_resources("50m", "128Mi", "512Mi"),
        "webhook": {"resources": container_resources("20m", "64Mi", "256Mi")},
        "certController": {"resources": container_resources("20m", "64Mi", "256Mi")},
        "metrics": {"enabled": False},
    }


def mariadb_spec(cfg: DatabaseConfig, *, image: str, storage_class: str | None) -> dict[str, Any]:
    """The `MariaDB` server: one replica, its root password from the `mariadb-root` Secret."""
    return {
        "image": image,
        "rootPasswordSecretKeyRef": {"name": ROOT_SECRET, "key": PASSWORD_KEY, "generate": False},
        "replicas": 1,
        "storage": {
            "size": cfg.storage.size,
            **({"storageClassName": storage_class} if storage_class else {}),
            "resizeInUseVolumes": True,
            "waitForVolumeResize": True,
        },
        "myCnf": my_cnf(cfg),
        "resources": container_resources(cfg.cpu, cfg.memory, cfg.memory_limit),
        # Not RESTRICTED_CONTAINER_SECURITY: the operator's MariaDB pods are not shown to run as non-root (the layer's
        # namespace is `baseline` for that reason), and with runAsNonRoot the kubelet refuses a container run as root.
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        "metrics": {"enabled": False},
    }


def _server_ref() -> dict[str, Any]:
    return {"name": SERVER, "waitForIt": True}


def database_spec() -> dict[str, Any]:
    """The accounting `Database`."""
    return {
        "name": ACCOUNTING_DATABASE,
        "mariaDbRef": _server_ref(),
        "characterSet": "utf8mb4",
        "collate": "utf8mb4_unicode_ci",
        "cleanupPolicy": "Skip",
    }


def user_spec() -> dict[str, Any]:
    """slurmdbd's `User`, its password from the `slurm-db-password` Secret."""
    return {
        "name": ACCOUNTING_USER,
        "mariaDbRef": _server_ref(),
        "host": "%",
        "passwordSecretKeyRef": {"name": PASSWORD_SECRET, "key": PASSWORD_KEY},
        "maxUserConnections": 100,
        "cleanupPolicy": "Skip",
    }


def grant_spec() -> dict[str, Any]:
    """The `Grant` of every privilege on the accounting database only, without GRANT OPTION."""
    return {
        "mariaDbRef": _server_ref(),
        "privileges": ["ALL PRIVILEGES"],
        "database": ACCOUNTING_DATABASE,
        "table": "*",
        "username": ACCOUNTING_USER,
        "host": "%",
        "grantOption": False,
        "cleanupPolicy": "Skip",
    }


__all__ = [
    "ACCOUNTING_DATABASE",
    "ACCOUNTING_USER",
    "PASSWORD_KEY",
    "PASSWORD_SECRET",
    "SERVER",
    "database_spec",
    "grant_spec",
    "mariadb_spec",
    "my_cnf",
    "operator_values",
    "user_spec",
]
