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

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext, Stateful
from ...k8s.layer_namespace import LayerNamespace
from ...versions import Charts, Images
from .config import DatabaseConfig
from .face import DatabaseEndpoint
from .objects import (
    ACCOUNTING_DATABASE,
    ACCOUNTING_USER,
    MARIADB_API,
    NAMESPACE,
    OPERATOR_NAMESPACE,
    PASSWORD_KEY,
    PASSWORD_SECRET,
    ROOT_SECRET,
    SERVER,
    database_spec,
    grant_spec,
    mariadb_spec,
    operator_namespace_allows,
    operator_values,
    server_namespace_allows,
    user_spec,
)

CHARTS = (
    ChartUse("mariadb-operator-crds", Charts.MARIADB_OPERATOR_CRDS, OPERATOR_NAMESPACE),
    ChartUse("mariadb-operator", Charts.MARIADB_OPERATOR, OPERATOR_NAMESPACE),
)


@dataclass(frozen=True)
class DatabaseArgs:
    ctx: DeployContext
    config: DatabaseConfig
    charts: ChartDeployer
    client_namespaces: Sequence[str]
    """Namespaces whose pods may connect to MariaDB (slurmdbd's)."""
    depends_on: Sequence[pulumi.Resource] = ()


class Database(pulumi.ComponentResource):
    endpoint: DatabaseEndpoint
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: DatabaseArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:database:Database", name, None, opts)
        ctx, cfg = args.ctx, args.config
        operator_ns = LayerNamespace(
            ctx,
            self,
            OPERATOR_NAMESPACE,
            component="database-operator",
            allows=operator_namespace_allows(),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        db_ns = LayerNamespace(
            ctx,
            self,
            NAMESPACE,
            component="database",
            app=SERVER,
            # The operator's MariaDB pods are not guaranteed to pass `restricted`; baseline still
            # forbids privilege, host namespaces and host paths (audit/warn stay at restricted).
            pod_security="baseline",
            allows=server_namespace_allows(args.client_namespaces),
            depends_on=args.depends_on,
        )
        crds = operator_ns.chart("mariadb-operator-crds", Charts.MARIADB_OPERATOR_CRDS, {})
        operator = operator_ns.chart("mariadb-operator", Charts.MARIADB_OPERATOR, operator_values(), depends_on=[crds])
        root = db_ns.scope.generated_secret("mariadb-root", ROOT_SECRET, PASSWORD_KEY, length=32)
        slurm_user = db_ns.scope.generated_secret("slurm-db", PASSWORD_SECRET, PASSWORD_KEY, length=32)

        def custom(
            kind: str, name: str, spec: dict[str, Any], depends: list[pulumi.Resource], stateful: Stateful | None = None
        ) -> pulumi.Resource:
            resource_name = f"{NAMESPACE}/{kind.lower()}-{name}"
            return db_ns.scope.custom(
                MARIADB_API, kind, name, spec, resource_name=resource_name, depends_on=depends, stateful=stateful
            )

        storage_class = ctx.storage_class_for(cfg.storage.storage_class)
        server_spec = mariadb_spec(cfg, image=Images.MARIADB.ref, storage_class=storage_class)
        server = custom("MariaDB", SERVER, server_spec, [operator, root.secret], Stateful.DATABASE)
        database = custom("Database", "slurm-acct-db", database_spec(), [server], Stateful.DATABASE)
        user = custom("User", ACCOUNTING_USER, user_spec(), [server, slurm_user.secret])
        grant = custom("Grant", "slurm-acct-db", grant_spec(), [database, user])
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
