"""The Platform: every layer of the site, wired in dependency order from one PlatformConfig."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .charts import ChartDeployer, ChartUse
from .context import DeployContext
from .ground.inventory_ref import digest_annotations
from .k8s.certificates import CA_ISSUER
from .layers.backups.layer import Backups, BackupsArgs
from .layers.batch import layer as batch
from .layers.batch.layer import Batch, BatchArgs
from .layers.bootstrap.layer import BootstrapArgs, ClusterBootstrap
from .layers.certificates import layer as certificates
from .layers.certificates.layer import Certificates, CertificatesArgs
from .layers.database import layer as database
from .layers.database import objects as database_objects
from .layers.database.layer import Database, DatabaseArgs
from .layers.devops import layer as devops
from .layers.devops.layer import DevOps, DevOpsArgs
from .layers.directory import objects as directory_objects
from .layers.directory.layer import Directory, DirectoryArgs
from .layers.evidence.layer import Evidence, EvidenceArgs
from .layers.gitops import layer as gitops
from .layers.gitops.layer import GitOps, GitOpsArgs
from .layers.gpu import layer as gpu_operator
from .layers.gpu.layer import GpuOperator, GpuOperatorArgs
from .layers.network import layer as network
from .layers.network.layer import Network, NetworkArgs
from .layers.network.objects import INGRESS_CLASS, TcpEntryPoint
from .layers.observability import layer as observability
from .layers.observability.alerts import RuleSettings
from .layers.observability.layer import Observability, ObservabilityArgs
from .layers.provisioning.layer import Provisioning, ProvisioningArgs
from .layers.rdma import layer as network_operator
from .layers.rdma.layer import NetworkOperator, NetworkOperatorArgs
from .layers.sealed_secrets import layer as sealed_secrets
from .layers.sealed_secrets.layer import SealedSecrets, SealedSecretsArgs
from .layers.slurm import layer as slurm
from .layers.slurm.layer import Slurm, SlurmArgs
from .layers.slurm.passwd import PasswdEntry
from .layers.slurm.sacct import render_desired_state
from .layers.slurm.script_settings import gpu_health_settings
from .layers.storage.layer import K0S_KUBELET_DIR, Storage, StorageArgs, charts_for
from .site.checks.gpu import dcgm_scraped, gpu_job_mapping_dir, gpu_operator_enabled, gpu_pool_taints, gpus_in_nvml_order
from .site.placement import (
    login_node_selectors,
    login_pool_taints,
    node_selectors,
    nodeset_nodes,
    nodeset_pool_taints,
    nodeset_pools,
    pool_labels,
    pool_taints,
)
from .site.root import PlatformConfig


@dataclass(frozen=True)
class PlatformArgs:
    config: PlatformConfig


def planned_charts(config: PlatformConfig) -> list[ChartUse]:
    """Every chart release the stack deploys (the platform AppProject allows exactly these)."""
    uses: list[ChartUse] = [
        *gitops.CHARTS,
        *network.CHARTS,
        *certificates.CHARTS,
        *sealed_secrets.CHARTS,
        # A lab without Slurm accounting deploys no database (no mariadb-operator, no MariaDB).
        *(database.CHARTS if config.slurm.accounting.enabled else ()),
        *slurm.CHARTS,
        *charts_for(config.storage),
    ]
    if gpu_operator_enabled(config):
        uses += gpu_operator.CHARTS
    if config.active_rdma is not None:
        uses += network_operator.CHARTS
    if config.batch is not None and config.batch.enabled:
        uses += batch.CHARTS
    if config.devops is not None and config.devops.enabled:
        uses += devops.CHARTS
    if config.monitored:
        uses += observability.CHARTS
    return uses


def active_check_user(config: PlatformConfig) -> PasswdEntry | None:
    """The directory user the active GPU checks run as (`gpu.activeCheckUser`), with its uid and primary group's gid
    (None: no such user, or no checks)."""
    name = config.gpu.active_check_user
    if name is None or not config.gpu.active_checks:
        return None
    user = next(u for u in config.directory.users if u.name == name)
    gid = next(g.gid_number for g in config.directory.groups if g.name == user.primary_group)
    return PasswdEntry(name, user.uid_number, gid)


@dataclass(frozen=True)
class _Core:
    """What every later layer builds on: Argo CD, the network, certificates, sealed secrets and storage."""

    ctx: DeployContext
    charts: ChartDeployer
    git: GitOps
    net: Network
    certs: Certificates
    sealed: SealedSecrets
    storage: Storage


@dataclass(frozen=True)
class _Identity:
    db: Database | None
    ldap: Directory


@dataclass(frozen=True)
class _DataPlane:
    gpus: GpuOperator | None
    nics: NetworkOperator | None


class Platform(pulumi.ComponentResource):
    """Every layer of the site, each a child component, in dependency order."""

    outputs: dict[str, Any]

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:platform:Platform", name, None, opts)
        cfg = args.config
        kubeconfig = self._cluster(cfg)
        core = self._core(cfg, self._context(cfg, kubeconfig))
        identity = self._identity(cfg, core)
        data_plane = self._data_plane(cfg, core)
        hpc = self._slurm(cfg, core, identity, data_plane)
        grendel = self._provisioning(cfg, core, hpc)
        layers: list[pulumi.Resource] = [
            core.git,
            core.net,
            core.certs,
            core.sealed,
            core.storage,
            *([identity.db] if identity.db is not None else []),
            identity.ldap,
            hpc,
            *([data_plane.gpus] if data_plane.gpus else []),
            *([data_plane.nics] if data_plane.nics else []),
            *([grendel] if grendel is not None else []),
        ]
        batch_queues = self._batch(cfg, core)
        registry = self._devops(cfg, core)
        self._backups(cfg, core, identity)
        self._observability(cfg, core, identity)
        evidence = self._evidence(cfg, layers, kubeconfig)
        self.outputs = {
            "environment": cfg.environment,
            "delivery": cfg.delivery,
            "argocdUrl": core.git.url,
            "argocdAdminPassword": core.git.admin_password,
            "ingressAddress": core.net.ingress_address,
            "caIssuer": core.certs.ca_issuer,
            "sealedSecretsController": f"{core.sealed.namespace}/{core.sealed.controller_name}",
            "ldapUri": identity.ldap.endpoint.ldap_uri,
            "ldapBaseDn": identity.ldap.endpoint.base_dn,
            "ldapBindDn": identity.ldap.endpoint.bind_dn,
            "ldapBindPassword": identity.ldap.endpoint.bind_password,
            "databaseHost": identity.db.endpoint.host if identity.db is not None else None,
            "slurmCluster": cfg.slurm.cluster_name,
            "slurmController": hpc.controller_host,
            "slurmControllerAddress": hpc.controller_address,
            "slurmLoginAddress": hpc.login_address,
            "grendelAddress": grendel.address if grendel is not None else None,
            "kueueClusterQueues": batch_queues,
            "registry": registry,
            "evidence": evidence,
        }
        self.register_outputs(self.outputs)

    def _child(self) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self)

    # --- the cluster and the deploy context ------------------------------------------------------------------

    def _cluster(self, cfg: PlatformConfig) -> pulumi.Output[str] | None:
        """The kubeconfig of the cluster hpcforge bootstraps, or None for an existing cluster."""
        if cfg.cluster.bootstrap is None:
            return None
        assert cfg.ssh_private_key is not None  # enforced by config validation
        cluster = ClusterBootstrap(
            "cluster",
            BootstrapArgs(
                config=cfg.cluster.bootstrap,
                ssh_private_key=pulumi.Output.secret(cfg.ssh_private_key.get_secret_value()),
                protection=cfg.protection_mode,
            ),
            opts=self._child(),
        )
        return cluster.kubeconfig

    def _context(self, cfg: PlatformConfig, kubeconfig: pulumi.Output[str] | None) -> DeployContext:
        provider = k8s.Provider("kubernetes", context=cfg.kubernetes.context, kubeconfig=kubeconfig, opts=self._child())
        return DeployContext(
            environment=cfg.environment,
            delivery=cfg.delivery,
            domain=cfg.domain,
            kubernetes_version=cfg.kubernetes.version,
            storage_class=cfg.kubernetes.storage_class,
            protection=cfg.protection_mode,
            provider=provider,
            production=cfg.is_production,
        )

    # --- core: GitOps, network, certificates, sealed secrets, storage ------------------------------------------

    def _core(self, cfg: PlatformConfig, ctx: DeployContext) -> _Core:
        plan = planned_charts(cfg)
        by_pulumi = ChartDeployer(ctx, plan, mode="pulumi")
        # Argo CD first: in argocd delivery every other chart is an Application it reconciles.
        git = GitOps(
            "gitops",
            GitOpsArgs(
                ctx=ctx,
                config=cfg.gitops,
                charts=by_pulumi,
                platform_charts=plan,
                hostname=cfg.argocd_hostname,
                ingress_class=INGRESS_CLASS,
                issuer=certificates.ACME_ISSUER if cfg.tls.acme else CA_ISSUER,
            ),
            opts=self._child(),
        )
        charts = by_pulumi.with_argocd(git.ready)
        net = Network(
            "network",
            NetworkArgs(
                ctx=ctx,
                config=cfg.network,
                charts=charts,
                dns_records=cfg.dns_records(),
                inventory_annotations=digest_annotations(cfg.provisioning.inventory if cfg.provisioning else None),
                tcp_entrypoints=[TcpEntryPoint(directory_objects.LDAPS_ENTRYPOINT, 8636, 636)] if cfg.directory_hostname else [],
                # The Network Operator's chart ships the NetworkAttachmentDefinition CRD in its crds/: it owns it then.
                attachment_crd_chart="network-operator" if cfg.active_rdma is not None else None,
            ),
            opts=self._child(),
        )
        certs = Certificates(
            "certificates",
            CertificatesArgs(ctx=ctx, config=cfg.tls, charts=charts, ingress_class=net.ingress_class),
            opts=self._child(),
        )
        sealed = SealedSecrets("sealed-secrets", SealedSecretsArgs(ctx=ctx, charts=charts), opts=self._child())
        storage = Storage(
            "storage",
            StorageArgs(
                ctx=ctx,
                config=cfg.storage,
                charts=charts,
                slurm_namespace=cfg.slurm.namespace,
                kubelet_dir=K0S_KUBELET_DIR if cfg.distribution == "k0s" else None,
            ),
            opts=self._child(),
        )
        return _Core(ctx, charts, git, net, certs, sealed, storage)

    # --- identity: the accounting database and the directory ----------------------------------------------------

    def _identity(self, cfg: PlatformConfig, core: _Core) -> _Identity:
        ctx, tls = core.ctx, cfg.tls
        db = (
            Database(
                "database",
                DatabaseArgs(ctx=ctx, config=cfg.database, charts=core.charts, client_namespaces=[cfg.slurm.namespace]),
                opts=self._child(),
            )
            if cfg.slurm.accounting.enabled
            else None
        )
        ldap = Directory(
            "directory",
            DirectoryArgs(
                ctx=ctx,
                config=cfg.directory,
                issuer=core.certs.ca_issuer,
                certificate_duration=tls.certificate_duration,
                renew_before=tls.renew_before,
                client_namespaces=[cfg.slurm.namespace],
                expose_hostname=cfg.directory_hostname,
                depends_on=core.certs.ready,
            ),
            opts=self._child(),
        )
        return _Identity(db, ldap)

    # --- the GPU and RDMA data plane ------------------------------------------------------------------------------

    def _data_plane(self, cfg: PlatformConfig, core: _Core) -> _DataPlane:
        gpu_operator_on = gpu_operator_enabled(cfg)
        gpus: GpuOperator | None = None
        if gpu_operator_on:
            gpus = GpuOperator(
                "gpu-operator",
                GpuOperatorArgs(
                    ctx=core.ctx,
                    config=cfg.gpu.operator,
                    charts=core.charts,
                    depends_on=core.net.ready,
                    site_scrapes_dcgm=dcgm_scraped(cfg),
                    gpu_pool_taints=gpu_pool_taints(cfg),
                    distribution=cfg.distribution,
                    gpudirect_rdma=cfg.active_rdma is not None,
                    dcgm_clients=(cfg.slurm.namespace,) if any(c.kind == "dcgm-diag" for c in cfg.gpu.active_checks) else (),
                ),
                opts=self._child(),
            )
        rdma = cfg.active_rdma
        if rdma is None:
            return _DataPlane(gpus, None)
        nics = NetworkOperator(
            "network-operator",
            NetworkOperatorArgs(
                ctx=core.ctx,
                config=rdma,
                charts=core.charts,
                deploy_nfd=not gpu_operator_on,
                pool_labels=pool_labels(cfg),
                pool_taints=pool_taints(cfg),
                attachment_namespace=cfg.slurm.namespace,
                depends_on=core.net.ready,
                # Its NodeFeatureRule needs NFD's CRDs, which the GPU Operator's chart installs then.
                nfd_crds=gpus.ready if gpus is not None else [],
            ),
            opts=self._child(),
        )
        # The attachments' CRD comes with the Network Operator's chart (Network's attachment_crd_chart).
        core.net.add_attachments([nics.chart])
        return _DataPlane(gpus, nics)

    # --- Slurm and the bare-metal hosts that join it ----------------------------------------------------------------

    def _slurm(self, cfg: PlatformConfig, core: _Core, identity: _Identity, data_plane: _DataPlane) -> Slurm:
        tls, job_mapping_dir = cfg.tls, gpu_job_mapping_dir(cfg)
        gpus, nics = data_plane.gpus, data_plane.nics
        return Slurm(
            "slurm",
            SlurmArgs(
                ctx=core.ctx,
                config=cfg.slurm,
                charts=core.charts,
                database=identity.db.endpoint if identity.db is not None else None,
                directory=identity.ldap.endpoint,
                node_selectors=node_selectors(cfg),
                pool_taints=nodeset_pool_taints(cfg),
                ca_issuer=core.certs.ca_issuer,
                certificate_duration=tls.certificate_duration,
                renew_before=tls.renew_before,
                bare_metal_subnets=cfg.bare_metal_subnets(),
                # The topology places the inventory's hosts even when Grendel is switched off.
                hosts=cfg.provisioning.hosts if cfg.provisioning is not None else (),
                storage=cfg.storage,
                login_node_selectors=login_node_selectors(cfg),
                login_pool_taints=login_pool_taints(cfg),
                script_settings=gpu_health_settings(
                    cfg.gpu.health,
                    nvml_order=gpus_in_nvml_order(cfg),
                    job_mapping_dir=job_mapping_dir,
                ),
                gpu_job_mapping_dir=job_mapping_dir,
                rdma=cfg.active_rdma,
                nodeset_pools=nodeset_pools(cfg),
                nodeset_nodes=nodeset_nodes(cfg),
                metrics=cfg.monitored,
                active_checks=cfg.gpu.active_checks,
                active_check_user=active_check_user(cfg),
                accounts_state=(
                    render_desired_state(cfg.slurm.cluster_name, cfg.slurm.accounts, cfg.directory)
                    if cfg.slurm.accounts is not None
                    else None
                ),
                depends_on=[
                    *core.certs.ready,
                    *core.net.ready,
                    *core.storage.ready,
                    *(gpus.ready if gpus else []),
                    *(nics.ready if nics else []),
                ],
            ),
            opts=self._child(),
        )

    def _provisioning(self, cfg: PlatformConfig, core: _Core, hpc: Slurm) -> Provisioning | None:
        prov = cfg.active_provisioning
        if prov is None:
            return None
        tls = cfg.tls
        return Provisioning(
            "provisioning",
            ProvisioningArgs(
                ctx=core.ctx,
                config=prov,
                slurm=cfg.slurm,
                domain=cfg.domain,
                controller_address=hpc.controller_address,
                ingress_class=core.net.ingress_class,
                issuer=core.certs.ca_issuer,
                certificate_duration=tls.certificate_duration,
                renew_before=tls.renew_before,
                host_mounts=tuple(cfg.storage.mounted_on("compute")),
                depends_on=[*core.net.ready, *core.certs.ready],
                issuer_ready=core.certs.ready,
            ),
            opts=self._child(),
        )

    # --- optional layers: batch queues, the build lane, backups, monitoring, evidence ------------------------------

    def _batch(self, cfg: PlatformConfig, core: _Core) -> list[str]:
        """Kueue's queues; their names (none without batch)."""
        if cfg.batch is None or not cfg.batch.enabled:
            return []
        Batch(
            "batch",
            BatchArgs(ctx=core.ctx, config=cfg.batch, pools=cfg.node_pools, charts=core.charts, depends_on=core.certs.ready),
            opts=self._child(),
        )
        return [q.name for q in cfg.batch.cluster_queues]

    def _devops(self, cfg: PlatformConfig, core: _Core) -> str | None:
        """The build-and-test lane; its registry's host (None without it)."""
        if cfg.devops is None or not cfg.devops.enabled:
            return None
        lane = DevOps(
            "devops",
            DevOpsArgs(
                ctx=core.ctx,
                config=cfg.devops,
                charts=core.charts,
                ingress_class=core.net.ingress_class,
                issuer=core.certs.ca_issuer,
                certificate_duration=cfg.tls.certificate_duration,
                renew_before=cfg.tls.renew_before,
                depends_on=core.certs.ready,
            ),
            opts=self._child(),
        )
        return lane.registry_host

    def _backups(self, cfg: PlatformConfig, core: _Core, identity: _Identity) -> None:
        if cfg.backups is None:
            return
        assert identity.db is not None  # PlatformConfig refuses backups without the database
        Backups(
            "backups",
            BackupsArgs(
                ctx=core.ctx,
                config=cfg.backups,
                mariadb=database_objects.SERVER,
                directory_suffix=cfg.directory.suffix,
                directory_uri=identity.ldap.endpoint.ldap_uri,
                depends_on=[*identity.db.ready, *identity.ldap.ready],
            ),
            opts=self._child(),
        )

    def _observability(self, cfg: PlatformConfig, core: _Core, identity: _Identity) -> None:
        if cfg.observability is None or not cfg.observability.enabled:
            return
        db, scraped = identity.db, dcgm_scraped(cfg)
        Observability(
            "observability",
            ObservabilityArgs(
                ctx=core.ctx,
                config=cfg.observability,
                charts=core.charts,
                rules=RuleSettings(
                    slurm_namespace=cfg.slurm.namespace,
                    slurm_accounting="slurm-accounting" if cfg.slurm.accounting.enabled else None,
                    gpus=scraped,
                    nodes_unavailable_ratio=cfg.observability.nodes_unavailable_ratio,
                    backup_max_age_hours=cfg.observability.backup_max_age_hours,
                ),
                gpus=scraped,
                database=db is not None,
                # its NetworkPolicies go into the scraped layers' namespaces
                depends_on=[*core.certs.ready, *core.net.ready, *(db.ready if db is not None else []), *core.git.ready],
            ),
            opts=self._child(),
        )

    def _evidence(
        self, cfg: PlatformConfig, layers: list[pulumi.Resource], kubeconfig: pulumi.Output[str] | None
    ) -> dict[str, pulumi.Output[str]]:
        """The evidence checks at the end of `pulumi up`, after every layer; their results (none when off)."""
        if not cfg.evidence.enabled:
            return {}
        checks = Evidence(
            "evidence",
            EvidenceArgs(config=cfg, kube_context=cfg.kubernetes.context, depends_on=layers, kubeconfig=kubeconfig),
            opts=self._child(),
        )
        return checks.results
