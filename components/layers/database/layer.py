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
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.resources import Port, egress_to_apiserver, egress_to_namespaces, ingress_from_anywhere, ingress_from_namespaces
from ...versions import Charts, Images
from .config import DatabaseConfig
from .face import DatabaseEndpoint
from .objects import (
    ACCOUNTING_DATABASE,
    ACCOUNTING_USER,
    PASSWORD_KEY,
    PASSWORD_SECRET,
    ROOT_SECRET,
    SERVER,
    database_spec,
    grant_spec,
    mariadb_spec,
    operator_values,
    user_spec,
)

OPERATOR_NAMESPACE = "mariadb-system"
NAMESPACE = "database"

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
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-webhook", Port(9443), Port(10250)),
                # The operator manages databases, users and grants over SQL.
                egress_to_namespaces("allow-egress-mysql", [NAMESPACE], Port(3306)),
            ],
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
            allows=[
                ingress_from_namespaces("allow-ingress-mysql", [*args.client_namespaces, OPERATOR_NAMESPACE], Port(3306)),
            ],
            depends_on=args.depends_on,
        )
        crds = operator_ns.chart("mariadb-operator-crds", Charts.MARIADB_OPERATOR_CRDS, {})
        operator = operator_ns.chart("mariadb-operator", Charts.MARIADB_OPERATOR, operator_values(), depends_on=[crds])
        root = db_ns.scope.generated_secret("mariadb-root", ROOT_SECRET, PASSWORD_KEY, length=32)
        slurm_user = db_ns.scope.generated_secret("slurm-db", PASSWORD_SECRET, PASSWORD_KEY, length=32)

        def custom(
            kind: str, name: str, spec: dict[str, Any], depends: list[pulumi.Resource], stateful: Stateful | None = None
        ) -> k8s.apiextensions.CustomResource:
            return k8s.apiextensions.CustomResource(
                f"{NAMESPACE}/{kind.lower()}-{name}",
                api_version="k8s.mariadb.com/v1alpha1",
                kind=kind,
                metadata=ctx.meta(name, "database", NAMESPACE, app=SERVER, stateful=stateful),
                spec=spec,
                opts=ctx.opts(self, depends_on=depends, stateful=stateful),
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
