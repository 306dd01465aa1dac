"""Database layer: mariadb-operator and the MariaDB that slurmdbd keeps its accounting in.

Nothing is created by hand: the `slurm_acct_db` database, the `slurm` user and a grant limited
to that database are mariadb-operator resources, all with `cleanupPolicy: Skip` so that deleting
a resource never drops data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext, Stateful
from ...k8s.generated import generated_secret
from ...k8s.resources import (
    Namespace,
    Port,
    container_resources,
    egress_to_apiserver,
    egress_to_namespaces,
    ingress_from_anywhere,
    ingress_from_namespaces,
)
from ...versions import Charts, Images
from .config import DatabaseConfig

OPERATOR_NAMESPACE = "mariadb-system"
NAMESPACE = "database"
SERVER = "mariadb"
ACCOUNTING_DATABASE = "slurm_acct_db"
ACCOUNTING_USER = "slurm"
PASSWORD_SECRET = "slurm-db-password"
PASSWORD_KEY = "password"

CHARTS = (
    ChartUse("mariadb-operator-crds", Charts.MARIADB_OPERATOR_CRDS, OPERATOR_NAMESPACE),
    ChartUse("mariadb-operator", Charts.MARIADB_OPERATOR, OPERATOR_NAMESPACE),
)


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


@dataclass(frozen=True)
class DatabaseArgs:
    ctx: DeployContext
    config: DatabaseConfig
    charts: ChartDeployer
    client_namespaces: Sequence[str]
    """Namespaces whose pods may connect to MariaDB (slurmdbd's)."""
    depends_on: Sequence[pulumi.Resource] = ()


@dataclass(frozen=True)
class DatabaseEndpoint:
    """What the Slurm layer needs to point slurmdbd at the accounting database."""

    host: str
    port: int
    database: str
    user: str
    password: pulumi.Output[str]
    password_secret: str
    password_key: str


class Database(pulumi.ComponentResource):
    endpoint: DatabaseEndpoint
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: DatabaseArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:database:Database", name, None, opts)
        ctx, cfg = args.ctx, args.config
        operator_ns = Namespace(
            ctx,
            OPERATOR_NAMESPACE,
            component="database-operator",
            parent=self,
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-webhook", Port(9443), Port(10250)),
                # The operator manages databases, users and grants over SQL.
                egress_to_namespaces("allow-egress-mysql", [NAMESPACE], Port(3306)),
            ],
            depends_on=args.depends_on,
        )
        db_ns = Namespace(
            ctx,
            NAMESPACE,
            component="database",
            parent=self,
            # The operator's MariaDB pods are not guaranteed to pass `restricted`; baseline still
            # forbids privilege, host namespaces and host paths (audit/warn stay at restricted).
            pod_security="baseline",
            allows=[
                ingress_from_namespaces("allow-ingress-mysql", [*args.client_namespaces, OPERATOR_NAMESPACE], Port(3306)),
            ],
            depends_on=args.depends_on,
        )
        crds = args.charts.deploy(
            "mariadb-operator-crds",
            Charts.MARIADB_OPERATOR_CRDS,
            OPERATOR_NAMESPACE,
            {},
            parent=self,
            depends_on=operator_ns.ready,
        )
        # Security contexts for `restricted` come from components/chart_security.py (ChartDeployer).
        operator_values: dict[str, Any] = {
            "crds": {"enabled": False},
            "resources": container_resources("50m", "128Mi", "512Mi"),
            "webhook": {"resources": container_resources("20m", "64Mi", "256Mi")},
            "certController": {"resources": container_resources("20m", "64Mi", "256Mi")},
            "metrics": {"enabled": False},
        }
        operator = args.charts.deploy(
            "mariadb-operator",
            Charts.MARIADB_OPERATOR,
            OPERATOR_NAMESPACE,
            operator_values,
            parent=self,
            depends_on=[crds],
        )

        root = generated_secret(
            ctx,
            "mariadb-root",
            "mariadb-root",
            NAMESPACE,
            PASSWORD_KEY,
            length=32,
            component="database",
            parent=self,
            app=SERVER,
            depends_on=db_ns.ready,
        )
        slurm_user = generated_secret(
            ctx,
            "slurm-db",
            PASSWORD_SECRET,
            NAMESPACE,
            PASSWORD_KEY,
            length=32,
            component="database",
            parent=self,
            app=SERVER,
            depends_on=db_ns.ready,
        )
        root_secret, user_secret = root.secret, slurm_user.secret

        def custom(
            kind: str, name: str, spec: dict[str, Any], depends: list[pulumi.Resource], stateful: Stateful | None
        ) -> k8s.apiextensions.CustomResource:
            return k8s.apiextensions.CustomResource(
                f"{NAMESPACE}/{kind.lower()}-{name}",
                api_version="k8s.mariadb.com/v1alpha1",
                kind=kind,
                metadata=ctx.meta(name, "database", NAMESPACE, app=SERVER, stateful=stateful),
                spec=spec,
                opts=ctx.opts(self, depends_on=depends, stateful=stateful),
            )

        server = custom(
            "MariaDB",
            SERVER,
            {
                "image": Images.MARIADB.ref,
                "rootPasswordSecretKeyRef": {"name": "mariadb-root", "key": PASSWORD_KEY, "generate": False},
                "replicas": 1,
                "storage": {
                    "size": cfg.storage.size,
                    **({"storageClassName": sc} if (sc := ctx.storage_class_for(cfg.storage.storage_class)) else {}),
                    "resizeInUseVolumes": True,
                    "waitForVolumeResize": True,
                },
                "myCnf": my_cnf(cfg),
                "resources": container_resources(cfg.cpu, cfg.memory, cfg.memory_limit),
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                "metrics": {"enabled": False},
            },
            [operator, root_secret],
            Stateful.DATABASE,
        )
        ref = {"name": SERVER, "waitForIt": True}
        database = custom(
            "Database",
            "slurm-acct-db",
            {
                "name": ACCOUNTING_DATABASE,
                "mariaDbRef": ref,
                "characterSet": "utf8mb4",
                "collate": "utf8mb4_unicode_ci",
                "cleanupPolicy": "Skip",
            },
            [server],
            Stateful.DATABASE,
        )
        user = custom(
            "User",
            ACCOUNTING_USER,
            {
                "name": ACCOUNTING_USER,
                "mariaDbRef": ref,
                "host": "%",
                "passwordSecretKeyRef": {"name": PASSWORD_SECRET, "key": PASSWORD_KEY},
                "maxUserConnections": 100,
                "cleanupPolicy": "Skip",
            },
            [server, user_secret],
            None,
        )
        grant = custom(
            "Grant",
            "slurm-acct-db",
            {
                "mariaDbRef": ref,
                "privileges": ["ALL PRIVILEGES"],
                "database": ACCOUNTING_DATABASE,
                "table": "*",
                "username": ACCOUNTING_USER,
                "host": "%",
                "grantOption": False,
                "cleanupPolicy": "Skip",
            },
            [database, user],
            None,
        )
        self.endpoint = DatabaseEndpoint(
            host=f"{SERVER}.{NAMESPACE}.svc.cluster.local",
            port=3306,
            database=ACCOUNTING_DATABASE,
            user=ACCOUNTING_USER,
            password=slurm_user.value,
            password_secret=PASSWORD_SECRET,
            password_key=PASSWORD_KEY,
        )
        self.ready = [server, database, user, grant]
        self.register_outputs({"host": self.endpoint.host, "database": ACCOUNTING_DATABASE, "user": ACCOUNTING_USER})
