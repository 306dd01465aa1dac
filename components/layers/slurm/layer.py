"""Slurm layer on SchedMD's Slinky slurm-operator: the operator charts, and the Controller,
Accounting, LoginSet, NodeSet and RestApi custom resources from typed config.

The operator owns pods and slurm.conf; hpcforge declares the CRs, the keys, the config files and
the scripts. Updates are job-safe: NodeSets roll with a bounded `maxUnavailable` and the operator
drains a Slurm node before deleting its pod; login pods are replaced one at a time at most.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext, Stateful
from ...k8s.resources import (
    Allow,
    Namespace,
    Port,
    container_resources,
    egress_to_apiserver,
    egress_to_namespaces,
    ingress_from_anywhere,
)
from ...k8s.scope import Scope
from ...versions import Charts
from ..database.layer import DatabaseEndpoint
from ..directory.layer import DirectoryEndpoint
from ..gpu.active_checks import deploy_active_checks
from ..gpu.checks_config import ActiveCheck
from ..provisioning.config import Host
from ..rdma.config import RdmaConfig
from ..rdma.layer import RESOURCE_ANNOTATION, attachment_config, rdma_resource
from ..storage.config import StorageConfig
from .accounts_job import deploy_accounts
from .config import SlurmConfig
from .enroot import ENROOT_DROPIN, enroot_conf
from .nccl import nccl_conf, nccl_settings
from .objects import (
    CA_TRUST_SECRET,
    CONTROLLER,
    DB_PASSWORD_SECRET,
    ENROOT_CONFIG_MAP,
    JWT_KEY_SECRET,
    NODESET_KIND,
    OPERATOR_NAMESPACE,
    OPERATOR_REPLICAS_IGNORED,
    SLINKY_API,
    SLURM_KEY_SECRET,
    SSSD_SECRET,
    accounting_spec,
    config_files,
    controller_spec,
    login_spec,
    nodeset_spec,
    restapi_spec,
    script_files,
)
from .site import shared_tree_claims, site_objects
from .slurm_conf import (
    SLURMCTLD_PORT,
)
from .sssd import SssdSettings, render_sssd_conf
from .traffic import slurm_bare_metal_allows

CHARTS = (
    ChartUse("slurm-operator-crds", Charts.SLURM_OPERATOR_CRDS, OPERATOR_NAMESPACE),
    ChartUse("slurm-operator", Charts.SLURM_OPERATOR, OPERATOR_NAMESPACE),
)


@dataclass(frozen=True)
class SlurmArgs:
    ctx: DeployContext
    config: SlurmConfig
    charts: ChartDeployer
    database: DatabaseEndpoint | None
    """The accounting database (None when accounting is off: nothing is deployed for it)."""
    directory: DirectoryEndpoint
    node_selectors: dict[str, dict[str, str]]
    """Node selector per nodeset (from its node pool's labels, or its own nodeSelector)."""
    ca_issuer: str
    certificate_duration: str
    renew_before: str
    pool_taints: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Taint keys of each nodeset's node pool, which its pods tolerate."""
    bare_metal_subnets: Sequence[str] = ()
    """Networks of bare-metal dynamic nodes (slurmctld must reach their slurmd)."""
    rdma: RdmaConfig | None = None
    """RDMA fabrics: one NetworkAttachmentDefinition each in the Slurm namespace; GPU nodesets on their pools attach them."""
    nodeset_pools: dict[str, str] = field(default_factory=dict)
    """Node pool of each nodeset (to find the RDMA fabrics its nodes reach)."""
    script_settings: Mapping[str, str] = field(default_factory=dict)
    """Values for the settings blocks of prolog/epilog scripts (e.g. the GPU health thresholds)."""
    gpu_job_mapping_dir: str | None = None
    """Host directory of dcgm-exporter's HPC job mapping, mounted into GPU slurmd pods (None: not written)."""
    hosts: Sequence[Host] = ()
    """The bare-metal inventory (its topology tags go into topology.yaml)."""
    login_node_selectors: dict[str, dict[str, str]] = field(default_factory=dict)
    """Node selector per login pool that names a node pool (its labels)."""
    login_pool_taints: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Taint keys of each login pool's node pool, which its pods tolerate."""
    storage: StorageConfig | None = None
    """Shared NFS trees mounted on login and compute pods (claims bound to the storage layer's volumes)."""
    depends_on: Sequence[pulumi.Resource] = ()
    metrics: bool = False
    """Turn on slurmctld's OpenMetrics endpoints and the operator's ServiceMonitor (observability layer on)."""
    active_checks: Sequence[ActiveCheck] = ()
    """Scheduled active GPU checks (a ConfigMap and a CronJob each, components/layers/gpu/active_checks.py)."""
    accounts_state: str | None = None
    """Desired slurmdbd state (`render_desired_state`), reconciled by a Job; None: no accounting as code."""


class Slurm(pulumi.ComponentResource):
    namespace: str
    controller_host: str
    controller_address: str | None
    login_address: str | None
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: SlurmArgs, opts: pulumi.ResourceOptions | None = None) -> None:  # noqa: PLR0915 (registers the layer's objects in dependency order; they are built in objects.py)
        super().__init__("hpcforge:slurm:Slurm", name, None, opts)
        ctx, cfg = args.ctx, args.config
        ns = cfg.namespace
        self.namespace = ns
        operator_ns = Namespace(
            ctx,
            OPERATOR_NAMESPACE,
            component="slurm-operator",
            parent=self,
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-webhook", Port(9443)),
                # The operator talks to slurmctld/slurmrestd to drain nodes before deleting pods.
                egress_to_namespaces("allow-egress-slurm", [ns]),
            ],
            depends_on=args.depends_on,
        )
        bare_metal = tuple(args.bare_metal_subnets)
        slurm_ns = Namespace(
            ctx,
            ns,
            component="slurm",
            parent=self,
            # slurmd manages cgroups and devices for jobs: its pods run privileged.
            pod_security="privileged",
            allows=[
                ingress_from_anywhere("allow-ingress-ssh", Port(22)),
                ingress_from_anywhere("allow-ingress-slurmctld", Port(SLURMCTLD_PORT)),
                Allow("allow-ingress-from-operator", "ingress", namespaces=(OPERATOR_NAMESPACE,)),
                *([egress_to_namespaces("allow-egress-database", ["database"], Port(3306))] if cfg.accounting.enabled else []),
                egress_to_namespaces("allow-egress-directory", ["directory"], Port(3636)),
                egress_to_apiserver(),
                *slurm_bare_metal_allows(bare_metal, cfg.controller.srun_port_range, cfg.controller.job_port_range),
            ],
            depends_on=args.depends_on,
        )
        crds = args.charts.deploy(
            "slurm-operator-crds", Charts.SLURM_OPERATOR_CRDS, OPERATOR_NAMESPACE, {}, parent=self, depends_on=operator_ns.ready
        )
        operator = args.charts.deploy(
            "slurm-operator",
            Charts.SLURM_OPERATOR,
            OPERATOR_NAMESPACE,
            {
                "crds": {"enabled": False},
                # Security contexts for `restricted` come from components/chart_security.py (ChartDeployer).
                "operator": {"resources": container_resources("100m", "128Mi", "512Mi")},
                # The webhook's serving certificate comes from cert-manager.
                "webhook": {"resources": container_resources("50m", "64Mi", "256Mi")},
            },
            parent=self,
            depends_on=[crds],
            # Runbooks stop the operator (`kubectl scale deployment slurm-operator --replicas=0`, docs/operations.md):
            # Argo CD must neither undo it (selfHeal) nor reset it at a later sync.
            ignore_differences=[OPERATOR_REPLICAS_IGNORED],
        )
        ready_ns = slurm_ns.ready
        scope = Scope(ctx, self, ns, "slurm", app=CONTROLLER, depends_on=ready_ns)

        # --- keys and secrets -------------------------------------------------------------------
        key_secret = scope.generated_secret("slurm-key", SLURM_KEY_SECRET, "slurm.key", length=1024, kind="bytes").secret
        jwt_secret = scope.generated_secret("slurm-jwt-key", JWT_KEY_SECRET, "jwt.key", length=1024, kind="bytes").secret

        # --- config files and scripts -----------------------------------------------------------
        extra_files = scope.config_map(
            "slurm-config-extra",
            config_files(cfg, args.hosts),
            # topology.yaml may come from the Slurm inventory file
            annotations=cfg.inventory_annotations() if cfg.topology is not None else None,
        )
        enroot: list[pulumi.Resource] = []
        if cfg.pyxis_enabled and cfg.has_gpus:
            enroot.append(scope.config_map(ENROOT_CONFIG_MAP, {ENROOT_DROPIN: enroot_conf()}))
        script_maps: dict[str, pulumi.Resource] = {}
        for kind, scripts in (("prolog", cfg.prolog), ("epilog", cfg.epilog)):
            if scripts:
                script_maps[kind] = scope.config_map(f"slurm-{kind}-scripts", script_files(scripts, args.script_settings))

        # --- controller --------------------------------------------------------------------------
        accounting = cfg.accounting.enabled
        self.controller_address = cfg.controller.service.address if cfg.controller.service is not None else None
        pre_controller: list[pulumi.Resource] = [operator, key_secret, jwt_secret, extra_files, *script_maps.values()]

        def cr(
            kind: str, name: str, spec: dict[str, Any], depends: list[pulumi.Resource], stateful: Stateful | None = None
        ) -> k8s.apiextensions.CustomResource:
            return k8s.apiextensions.CustomResource(
                f"{ns}/{kind.lower()}-{name}",
                api_version=SLINKY_API,
                kind=kind,
                metadata=ctx.meta(name, f"slurm-{kind.lower()}", ns, app=CONTROLLER, stateful=stateful),
                spec=spec,
                opts=ctx.opts(self, depends_on=depends, stateful=stateful),
            )

        objects: list[pulumi.Resource] = []
        if accounting:
            db = args.database
            if db is None:
                raise ValueError("slurm.accounting.enabled needs the database layer's endpoint")
            db_secret = scope.secret(DB_PASSWORD_SECRET, {"password": db.password}, stateful=Stateful.KEY_MATERIAL)
            accounting = cr(
                "Accounting",
                CONTROLLER,
                accounting_spec(cfg, host=db.host, port=db.port, database=db.database, user=db.user),
                [operator, key_secret, jwt_secret, db_secret],
            )
            objects.append(accounting)
            pre_controller.append(accounting)
        spec = controller_spec(
            cfg,
            storage_class=ctx.storage_class_for(cfg.controller.storage.storage_class),
            rdma=args.rdma is not None,
            metrics=args.metrics,
            prolog="prolog" in script_maps,
            epilog="epilog" in script_maps,
        )
        controller = cr("Controller", CONTROLLER, spec, pre_controller, Stateful.SLURM_STATE)
        objects.insert(0, controller)
        if args.accounts_state is not None:
            objects += deploy_accounts(
                ctx,
                self,
                namespace=ns,
                controller=CONTROLLER,
                slurm_key_secret=SLURM_KEY_SECRET,
                desired=args.accounts_state,
                depends_on=list(objects),
                annotations=cfg.inventory_annotations(),
            )
        objects += deploy_active_checks(
            ctx,
            self,
            checks=args.active_checks,
            slurm=cfg,
            namespace=ns,
            controller=CONTROLLER,
            slurm_key_secret=SLURM_KEY_SECRET,
            depends_on=[controller],
        )
        self.controller_host = f"{CONTROLLER}-controller.{ns}.svc.cluster.local"

        # --- login -------------------------------------------------------------------------------
        login = cfg.login
        directory = args.directory
        login_scope = scope.but(component="slurm-login")
        ca_trust = login_scope.certificate(
            CA_TRUST_SECRET,
            dns_names=[f"sssd.{ns}.svc"],
            issuer=args.ca_issuer,
            duration=args.certificate_duration,
            renew_before=args.renew_before,
            usages=("client auth",),
        )
        settings = SssdSettings(
            domain=cfg.cluster_name, ldap_uri=directory.ldap_uri, suffix=directory.base_dn, bind_dn=directory.bind_dn
        )
        sssd_conf = directory.bind_password.apply(lambda password: render_sssd_conf(settings, password))
        sssd_secret = login_scope.secret(SSSD_SECRET, {"sssd.conf": sssd_conf})
        self.login_address = login.address
        storage = args.storage
        login_exports = storage.mounted_on("login") if storage else ()
        compute_exports = storage.mounted_on("compute") if storage else ()
        claims = shared_tree_claims(ctx, self, storage, namespace=ns, app=CONTROLLER, depends_on=ready_ns)
        for login_set in cfg.login_sets():
            spec = login_spec(
                login_set,
                node_selector=args.login_node_selectors.get(login_set.name, {}),
                pool_taints=args.login_pool_taints.get(login_set.name, ()),
                exports=login_exports,
                pyxis=cfg.pyxis_enabled,
            )
            objects.append(cr("LoginSet", login_set.name, spec, [controller, sssd_secret, ca_trust, *claims]))

        objects += site_objects(ctx, self, cfg, controller=CONTROLLER, key_secret=SLURM_KEY_SECRET, depends_on=[controller])

        # --- RDMA attachments --------------------------------------------------------------------
        attachments: list[pulumi.Resource] = []
        rdma = args.rdma
        # Shared-mode fabrics get their attachment here; the SR-IOV operator makes those of SR-IOV fabrics.
        for fabric in (f for f in (rdma.fabrics if rdma else ()) if f.mode == "shared"):
            assert rdma is not None
            attachments.append(
                k8s.apiextensions.CustomResource(
                    f"{ns}/attachment-{fabric.name}",
                    api_version="k8s.cni.cncf.io/v1",
                    kind="NetworkAttachmentDefinition",
                    metadata=ctx.meta(
                        fabric.name,
                        "rdma-attachment",
                        ns,
                        app=CONTROLLER,
                        annotations={RESOURCE_ANNOTATION: fabric.resource},
                    ),
                    spec={"config": attachment_config(fabric, rdma.master_interface(fabric.name))},
                    opts=ctx.opts(self, depends_on=ready_ns),
                )
            )

        # --- compute -----------------------------------------------------------------------------
        for nodeset in cfg.nodesets:
            pool = args.nodeset_pools.get(nodeset.name)
            fabrics = (
                {name: rdma_resource(rdma, name) for name in rdma.fabrics_of(pool)}
                if rdma is not None and nodeset.gpus is not None
                else {}
            )
            nccl = nccl_settings(rdma, pool) if nodeset.gpus is not None else {}
            nccl_map: list[pulumi.Resource] = []
            if nccl:
                nccl_map.append(
                    scope.but(component="slurm-nccl").config_map(
                        f"slurm-nccl-{nodeset.name}", {"nccl.conf": nccl_conf(nccl), "nccl.env": nccl_conf(nccl)}
                    )
                )
            spec = nodeset_spec(
                nodeset,
                node_selector=args.node_selectors.get(nodeset.name, {}),
                pool_taints=args.pool_taints.get(nodeset.name, ()),
                fabrics=fabrics,
                namespace=ns,
                exports=compute_exports,
                job_ports=cfg.controller.job_port_range,
                pyxis=cfg.pyxis_enabled,
                job_mapping_dir=args.gpu_job_mapping_dir,
                nccl_config_map=f"slurm-nccl-{nodeset.name}" if nccl else None,
            )
            objects += nccl_map
            objects.append(cr(NODESET_KIND, nodeset.name, spec, [controller, *attachments, *claims, *enroot, *nccl_map]))

        if cfg.restapi.enabled:
            objects.append(cr("RestApi", CONTROLLER, restapi_spec(cfg), [controller]))
        self.ready = objects
        self.register_outputs(
            {
                "clusterName": cfg.cluster_name,
                "controller": self.controller_host,
                "loginAddress": login.address,
                "nodesets": [n.name for n in cfg.nodesets],
                "partitions": [p.name for p in cfg.partitions],
            }
        )


__all__ = ["CHARTS", "Slurm", "SlurmArgs"]
