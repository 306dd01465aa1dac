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
from ...ground.hosts import Host
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.resources import USER_CODE_LABEL
from ...k8s.scope import Scope
from ...versions import Charts
from ..database.face import DatabaseEndpoint
from ..directory.face import DirectoryEndpoint
from ..gpu.config import ActiveCheck
from ..rdma.config import RdmaConfig
from ..rdma.face import RESOURCE_ANNOTATION
from ..storage.config import StorageConfig
from ..storage.face import claim_name, tree_claim_spec
from .accounts_job import (
    ACCOUNTS_MAP,
    DESIRED_DIR,
    DESIRED_KEY,
    DESIRED_MAPS,
    SCRIPT_KEY,
    SYNC_SCRIPT,
    accounts_digest,
    accounts_job_spec,
)
from .active_checks import (
    ACTIVE_CHECKS_COMPONENT,
    ACTIVE_CHECKS_MAP,
    JOB_IMAGES_ANNOTATION,
    TOKEN,
    checks_files,
    cronjob_name,
    cronjob_spec,
    job_images,
    nodeset_hcas,
    token_spec,
    weekly_gpu_hours,
)
from .config import SlurmConfig
from .enroot import ENROOT_DROPIN, ENROOT_PROLOG, enroot_conf, enroot_prolog
from .face import CONTROLLER, GPU_HOURS_ANNOTATION
from .nccl import attachment_spec, nccl_config_map_name, nccl_files, nodeset_fabrics, shared_fabrics
from .objects import (
    CA_TRUST_SECRET,
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
    controller_host,
    controller_ranges,
    controller_spec,
    login_spec,
    nodeset_spec,
    operator_namespace_allows,
    operator_values,
    restapi_spec,
    script_files,
    slurm_namespace_allows,
)
from .passwd import PasswdEntry
from .reservation_script import reservation_script
from .site import RESERVATIONS_MAP, reservation_job_spec, script_digest
from .sssd import SssdSettings, render_sssd_conf
from .topology_files import node_annotations

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
    nodeset_nodes: dict[str, int] = field(default_factory=dict)
    """How many Slurm nodes each nodeset has (components/site/placement.py `nodeset_nodes`): what an active check
    holds."""
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
    """Scheduled active GPU checks (a ConfigMap and a CronJob each, components/layers/slurm/active_checks.py)."""
    active_check_user: PasswdEntry | None = None
    """The user the active checks run as, with a JWT (None: root with slurm.key); slurmctld and slurmdbd are given
    its passwd line (components/layers/slurm/passwd.py)."""
    accounts_state: str | None = None
    """Desired slurmdbd state (`render_desired_state`), reconciled by a Job; None: no accounting as code."""


class Slurm(pulumi.ComponentResource):
    namespace: str
    controller_host: str
    controller_address: str | None
    login_address: str | None
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: SlurmArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        """Registers the layer's objects in dependency order: the namespaces and the operator, the keys and files, the
        shared-tree claims and the RDMA attachments, the controller (and what runs against it), the login pools, the
        nodesets, slurmrestd.

        The Controller also waits for what the login and compute pods mount (the claims, the attachments, enroot's
        drop-in), so that a LoginSet or a NodeSet waits for the Controller alone (and its NCCL settings): the same
        objects before each of them as when each listed them all, and at 500 nodesets the SDK's dependency cycle
        check (`pulumi.runtime.resource_cycle_breaker`, which walks every transitive dependency of each one listed)
        walks the Controller's dependencies once per NodeSet instead of nine times."""
        super().__init__("hpcforge:slurm:Slurm", name, None, opts)
        self._ctx, cfg = args.ctx, args.config
        self.namespace = ns = cfg.namespace
        operator, scope = self._operator(args)
        keys = self._keys_and_files(scope, args)
        claims = self._shared_tree_claims(scope, args.storage)
        attachments = self._attachments(args, scope.depends_on)
        self.controller_address = cfg.controller.service.address if cfg.controller.service is not None else None
        mounted = [*claims, *attachments, *keys.enroot]
        controller, objects = self._controller(scope, args, operator, keys, mounted)
        self.controller_host = controller_host(ns)
        login_deps = self._login_secrets(scope, args)
        self.login_address = cfg.login.address
        objects += self._login_sets(args, [controller, *login_deps])
        objects += self._site_layout(scope.but(depends_on=(controller,)), cfg)
        objects += self._nodesets(scope, args, [controller])
        if cfg.restapi.enabled:
            objects.append(self._slinky("RestApi", CONTROLLER, restapi_spec(cfg), [controller]))
        self.ready = objects
        self.register_outputs(
            {
                "clusterName": cfg.cluster_name,
                "controller": self.controller_host,
                "loginAddress": cfg.login.address,
                "nodesets": [n.name for n in cfg.nodesets],
                "partitions": [p.name for p in cfg.partitions],
            }
        )

    def _operator(self, args: SlurmArgs) -> tuple[pulumi.Resource, Scope]:
        """The operator's namespace and charts, and the Slurm namespace: the operator, and the scope of the Slurm
        namespace's objects (they wait for the namespace and its policies)."""
        ctx, ns = args.ctx, args.config.namespace
        operator_ns = LayerNamespace(
            ctx,
            self,
            OPERATOR_NAMESPACE,
            component="slurm-operator",
            allows=operator_namespace_allows(ns),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        slurm_ns = LayerNamespace(
            ctx,
            self,
            ns,
            component="slurm",
            app=CONTROLLER,
            # slurmd manages cgroups and devices for jobs: its pods run privileged.
            pod_security="privileged",
            allows=slurm_namespace_allows(
                args.config,
                tuple(args.bare_metal_subnets),
                site_ranges=ctx.site_ranges,
                monitored=args.metrics,
                dcgm=any(check.kind == "dcgm-diag" for check in args.active_checks),
            ),
            depends_on=args.depends_on,
            # Users' code runs here beside the daemons: only what the allows name (objects.py).
            same_namespace=False,
            extra_labels={USER_CODE_LABEL: "beside-services"},
        )
        crds = operator_ns.chart("slurm-operator-crds", Charts.SLURM_OPERATOR_CRDS, {})
        operator = operator_ns.chart(
            "slurm-operator",
            Charts.SLURM_OPERATOR,
            operator_values(),
            depends_on=[crds],
            # Runbooks stop the operator (`kubectl scale deployment slurm-operator --replicas=0`, docs/operations.md):
            # Argo CD must neither undo it (selfHeal) nor reset it at a later sync.
            ignore_differences=[OPERATOR_REPLICAS_IGNORED],
        )
        return operator, slurm_ns.scope

    def _keys_and_files(self, scope: Scope, args: SlurmArgs) -> _KeysAndFiles:
        """The auth/slurm and JWT keys, the extra config files, enroot's drop-in (Pyxis on GPU nodesets) and the
        prolog and epilog scripts."""
        cfg = args.config
        key_secret = scope.generated_secret("slurm-key", SLURM_KEY_SECRET, "slurm.key", length=1024, kind="bytes").secret
        jwt_secret = scope.generated_secret("slurm-jwt-key", JWT_KEY_SECRET, "jwt.key", length=1024, kind="bytes").secret
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
            files = script_files(scripts, args.script_settings)
            if kind == "prolog" and enroot:
                # Before every other prolog: the job user's enroot directories, made by root (enroot.py).
                files = {ENROOT_PROLOG: enroot_prolog(), **files}
            if files:
                script_maps[kind] = scope.config_map(f"slurm-{kind}-scripts", files)
        return _KeysAndFiles(
            key_secret, jwt_secret, [key_secret, jwt_secret, extra_files, *script_maps.values()], enroot, set(script_maps)
        )

    def _controller(
        self, scope: Scope, args: SlurmArgs, operator: pulumi.Resource, keys: _KeysAndFiles, mounted: list[pulumi.Resource]
    ) -> tuple[pulumi.Resource, list[pulumi.Resource]]:
        """The Accounting (when accounting is on) and the Controller (after the keys and files and what the login and
        compute pods mount), then the accounts Job and the active GPU checks, which run against it: the Controller, and
        all of them (the Controller first)."""
        cfg = args.config
        pre_controller = [operator, *keys.pre_controller]
        objects: list[pulumi.Resource] = []
        if cfg.accounting.enabled:
            db = args.database
            if db is None:
                raise ValueError("slurm.accounting.enabled needs the database layer's endpoint")
            db_secret = scope.secret(DB_PASSWORD_SECRET, {"password": db.password}, stateful=Stateful.KEY_MATERIAL)
            accounting = self._slinky(
                "Accounting",
                CONTROLLER,
                accounting_spec(cfg, host=db.host, port=db.port, database=db.database, user=db.user, passwd=_passwd(args)),
                [operator, keys.key_secret, keys.jwt_secret, db_secret],
            )
            objects.append(accounting)
            pre_controller.append(accounting)
        spec = controller_spec(
            cfg,
            storage_class=args.ctx.storage_class_for(cfg.controller.storage.storage_class),
            rdma=args.rdma is not None,
            metrics=args.metrics,
            prolog="prolog" in keys.scripts,
            epilog="epilog" in keys.scripts,
            outside=controller_ranges(cfg, tuple(args.bare_metal_subnets), args.ctx.site_ranges),
            passwd=_passwd(args),
        )
        controller = self._slinky("Controller", CONTROLLER, spec, [*pre_controller, *mounted], Stateful.SLURM_STATE)
        objects.insert(0, controller)
        if args.accounts_state is not None:
            objects += self._accounts(scope.but(depends_on=tuple(objects)), cfg, args.accounts_state)
        objects += self._active_checks(scope.but(depends_on=(controller,)), args)
        return controller, objects

    def _accounts(self, scope: Scope, cfg: SlurmConfig, desired: str) -> list[pulumi.Resource]:
        """Slurm accounting as code (accounts_job.py): the ConfigMaps of the reconciler's script and of the desired
        state (chunked), and the Job named after their content, after what `scope` waits for (the Controller and the
        Accounting): a changed desired state (or script) replaces the Job, so it runs again; an unchanged one is left
        alone. The Slurm inventory file's digest, when the accounts come from one, annotates all of them."""
        ctx, ns = scope.ctx, scope.namespace
        annotations = cfg.inventory_annotations()
        accounts = scope.but(component="slurm-accounts")
        script = SYNC_SCRIPT.read_text()
        data = accounts.config_map(ACCOUNTS_MAP, {SCRIPT_KEY: script}, annotations=annotations)
        # One entry per user: a site with tens of thousands of users outgrows a ConfigMap's 1 MiB.
        desired_maps, assembly = accounts.chunked_file(
            DESIRED_MAPS, {DESIRED_KEY: desired}, target_dir=DESIRED_DIR, annotations=annotations
        )
        job = k8s.batch.v1.Job(
            f"{ns}/slurm-accounts-sync",
            metadata=ctx.meta(
                f"slurm-accounts-sync-{accounts_digest(desired, script)}",
                "slurm-accounts",
                ns,
                app=CONTROLLER,
                annotations=dict(annotations) or None,
            ),
            spec=accounts_job_spec(
                controller=CONTROLLER,
                slurm_key_secret=SLURM_KEY_SECRET,
                labels=ctx.labels(CONTROLLER, "slurm-accounts"),
                assembly=assembly,
            ),
            opts=ctx.opts(self, depends_on=[data, *desired_maps, *scope.depends_on], delete_before_replace=True),
        )
        return [data, *desired_maps, job]

    def _active_checks(self, scope: Scope, args: SlurmArgs) -> list[pulumi.Resource]:
        """The active GPU checks (active_checks.py): their ConfigMap, with a check user the Token for its JWT, and
        one CronJob per check, after what `scope` waits for (the Controller); nothing without checks."""
        cfg, checks = args.config, args.active_checks
        user = args.active_check_user.name if args.active_check_user is not None else None
        if not checks:
            return []
        ctx, ns = scope.ctx, scope.namespace
        checks_scope = scope.but(component=ACTIVE_CHECKS_COMPONENT)
        images = job_images(checks)
        first = [
            checks_scope.config_map(
                ACTIVE_CHECKS_MAP,
                checks_files(checks, cfg, nodeset_hcas(args.rdma, args.nodeset_pools)),
                annotations={JOB_IMAGES_ANNOTATION: images} if images else None,
            )
        ]
        if user is not None:
            first.append(
                checks_scope.custom(
                    SLINKY_API, "Token", TOKEN, token_spec(user), resource_name=f"{ns}/token-{TOKEN}", depends_on=scope.depends_on
                )
            )
        cost = weekly_gpu_hours(cfg, checks, args.nodeset_nodes)
        cronjobs: list[pulumi.Resource] = []
        for check in checks:
            labels = {**ctx.labels(CONTROLLER, ACTIVE_CHECKS_COMPONENT), "hpcforge.io/active-check": check.name}
            cronjobs.append(
                k8s.batch.v1.CronJob(
                    f"{ns}/{cronjob_name(check)}",
                    metadata=ctx.meta(
                        cronjob_name(check),
                        ACTIVE_CHECKS_COMPONENT,
                        ns,
                        app=CONTROLLER,
                        annotations={GPU_HOURS_ANNOTATION: f"{cost[check.name]:.1f}"},
                    ),
                    spec=cronjob_spec(check, controller=CONTROLLER, slurm_key_secret=SLURM_KEY_SECRET, labels=labels, user=user),
                    opts=ctx.opts(self, depends_on=[*first, *scope.depends_on]),
                )
            )
        return [*first, *cronjobs]

    def _login_secrets(self, scope: Scope, args: SlurmArgs) -> list[pulumi.Resource]:
        """What login pods mount: SSSD's configuration (with the directory's bind password) and the CA that signs
        the directory's certificate (a client certificate issued by it carries ca.crt)."""
        cfg, directory = args.config, args.directory
        login_scope = scope.but(component="slurm-login")
        ca_trust = login_scope.certificate(
            CA_TRUST_SECRET,
            dns_names=[f"sssd.{cfg.namespace}.svc"],
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
        return [sssd_secret, ca_trust]

    def _login_sets(self, args: SlurmArgs, depends: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """One LoginSet per login pool."""
        cfg = args.config
        exports = args.storage.mounted_on("login") if args.storage else ()
        login_sets: list[pulumi.Resource] = []
        for login_set in cfg.login_sets():
            spec = login_spec(
                login_set,
                node_selector=args.login_node_selectors.get(login_set.name, {}),
                pool_taints=args.login_pool_taints.get(login_set.name, ()),
                exports=exports,
                pyxis=cfg.pyxis_enabled,
                site_ranges=args.ctx.site_ranges,
            )
            login_sets.append(self._slinky("LoginSet", login_set.name, spec, depends))
        return login_sets

    def _shared_tree_claims(self, scope: Scope, storage: StorageConfig | None) -> list[pulumi.Resource]:
        """One claim per NFS export mounted on login or compute pods, bound to the storage layer's volume of the
        export's root (in the Slurm namespace, after what `scope` waits for)."""
        ctx, ns = scope.ctx, scope.namespace
        claims: list[pulumi.Resource] = []
        for export in storage.nfs_exports if storage else ():
            if not (export.login or export.compute):
                continue
            claims.append(
                k8s.core.v1.PersistentVolumeClaim(
                    f"{ns}/{claim_name(export)}",
                    metadata=ctx.meta(claim_name(export), "storage", ns, app=scope.app, stateful=Stateful.VOLUME),
                    spec=tree_claim_spec(export, f"slurm-{export.name}"),
                    opts=ctx.opts(self, depends_on=list(scope.depends_on), stateful=Stateful.VOLUME),
                )
            )
        return claims

    def _site_layout(self, scope: Scope, cfg: SlurmConfig) -> list[pulumi.Resource]:
        """site.py's objects: the node annotations of the topology and the Job that makes the reservations (none when
        neither is configured); the Job and its script's ConfigMap after what `scope` waits for (the Controller)."""
        ctx, ns = scope.ctx, scope.namespace
        created: list[pulumi.Resource] = []
        if cfg.topology is not None:
            for node, annotations in node_annotations(cfg.topology).items():
                # A patch (server-side apply) of a node hpcforge does not own: only this annotation is ours.
                created.append(
                    k8s.core.v1.NodePatch(
                        f"node-topology-{node}",
                        # Our labels go with the patch (and leave with it): the node shows who set the annotation.
                        metadata=ctx.meta(node, "slurm-topology", app=CONTROLLER, annotations=annotations),
                        opts=ctx.opts(self),
                    )
                )
        if cfg.reservations:
            script = reservation_script(cfg.reservations)
            script_map = scope.config_map(RESERVATIONS_MAP, {"reservations.sh": script})
            # A Job's pod template is immutable: a changed script runs a new Job under a new name.
            created.append(
                k8s.batch.v1.Job(
                    f"{ns}/slurm-reservations",
                    metadata=ctx.meta(f"slurm-reservations-{script_digest(script)}", "slurm-reservations", ns, app=CONTROLLER),
                    spec=reservation_job_spec(
                        controller=CONTROLLER,
                        key_secret=SLURM_KEY_SECRET,
                        script_map=RESERVATIONS_MAP,
                        labels=ctx.labels(CONTROLLER, "slurm-reservations"),
                    ),
                    opts=ctx.opts(self, depends_on=[*scope.depends_on, script_map]),
                )
            )
        return created

    def _attachments(self, args: SlurmArgs, ready_ns: Sequence[pulumi.Resource]) -> list[pulumi.Resource]:
        """A NetworkAttachmentDefinition per shared-mode RDMA fabric, in the Slurm namespace."""
        ctx, ns, rdma = args.ctx, args.config.namespace, args.rdma
        scope = Scope(ctx, self, ns, "rdma-attachment", app=CONTROLLER, depends_on=tuple(ready_ns))
        attachments: list[pulumi.Resource] = []
        for fabric in shared_fabrics(rdma):
            assert rdma is not None
            attachments.append(
                scope.custom(
                    "k8s.cni.cncf.io/v1",
                    "NetworkAttachmentDefinition",
                    fabric.name,
                    attachment_spec(rdma, fabric),
                    resource_name=f"{ns}/attachment-{fabric.name}",
                    annotations={RESOURCE_ANNOTATION: fabric.resource},
                )
            )
        return attachments

    def _nodesets(self, scope: Scope, args: SlurmArgs, depends: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """One NodeSet per configured nodeset, each after its NCCL settings ConfigMap (GPU nodesets on RDMA pools)."""
        cfg, rdma = args.config, args.rdma
        exports = args.storage.mounted_on("compute") if args.storage else ()
        objects: list[pulumi.Resource] = []
        for nodeset in cfg.nodesets:
            pool = args.nodeset_pools.get(nodeset.name)
            nccl = nccl_files(rdma, nodeset, pool)
            nccl_map = [scope.but(component="slurm-nccl").config_map(nccl_config_map_name(nodeset), nccl)] if nccl else []
            spec = nodeset_spec(
                nodeset,
                node_selector=args.node_selectors.get(nodeset.name, {}),
                pool_taints=args.pool_taints.get(nodeset.name, ()),
                fabrics=nodeset_fabrics(rdma, nodeset, pool),
                namespace=cfg.namespace,
                exports=exports,
                job_ports=cfg.controller.job_port_range,
                pyxis=cfg.pyxis_enabled,
                job_mapping_dir=args.gpu_job_mapping_dir,
                nccl_config_map=nccl_config_map_name(nodeset) if nccl else None,
            )
            objects += nccl_map
            objects.append(self._slinky(NODESET_KIND, nodeset.name, spec, [*depends, *nccl_map]))
        return objects

    def _slinky(
        self, kind: str, name: str, spec: dict[str, Any], depends: list[pulumi.Resource], stateful: Stateful | None = None
    ) -> pulumi.Resource:
        """Registers one of the operator's custom resources in the Slurm namespace."""
        scope = Scope(self._ctx, self, self.namespace, f"slurm-{kind.lower()}", app=CONTROLLER)
        resource_name = f"{self.namespace}/{kind.lower()}-{name}"
        return scope.custom(SLINKY_API, kind, name, spec, resource_name=resource_name, depends_on=depends, stateful=stateful)


def _passwd(args: SlurmArgs) -> list[PasswdEntry]:
    """Users slurmctld and slurmdbd must find by name: the active checks' (when there are checks)."""
    return [args.active_check_user] if args.active_check_user is not None and args.active_checks else []


@dataclass(frozen=True)
class _KeysAndFiles:
    """What `Slurm._keys_and_files` registered."""

    key_secret: pulumi.Resource
    jwt_secret: pulumi.Resource
    pre_controller: list[pulumi.Resource]
    """The keys, the extra config files and the scripts: what the Controller waits for."""
    enroot: list[pulumi.Resource]
    """enroot's drop-in ConfigMap (Pyxis on GPU nodesets), which the NodeSets wait for."""
    scripts: set[str]
    """The kinds of scripts that have a ConfigMap ("prolog", "epilog")."""


__all__ = ["CHARTS", "Slurm", "SlurmArgs"]
