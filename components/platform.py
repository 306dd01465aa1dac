"""The Platform: every layer of the site, wired in dependency order from one PlatformConfig."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .charts import ChartDeployer, ChartUse
from .config.checks.gpu import gpu_job_mapping_dir, gpu_operator_enabled, gpu_pool_taints
from .config.inventory_ref import digest_annotations
from .config.placement import login_node_selectors, login_pool_taints, node_selectors, nodeset_pool_taints, nodeset_pools
from .config.root import PlatformConfig
from .context import DeployContext
from .k8s.certificates import CA_ISSUER
from .layers.backups.layer import Backups, BackupsArgs
from .layers.batch import layer as batch
from .layers.batch.layer import Batch, BatchArgs
from .layers.bootstrap.layer import BootstrapArgs, ClusterBootstrap
from .layers.certificates import layer as certificates
from .layers.certificates.layer import Certificates, CertificatesArgs
from .layers.database import layer as database
from .layers.database.layer import Database, DatabaseArgs
from .layers.devops import layer as devops
from .layers.devops.layer import DevOps, DevOpsArgs
from .layers.directory import layer as directory
from .layers.directory.layer import Directory, DirectoryArgs
from .layers.evidence.layer import Evidence, EvidenceArgs
from .layers.gitops import layer as gitops
from .layers.gitops.layer import GitOps, GitOpsArgs
from .layers.gpu import layer as gpu_operator
from .layers.gpu.layer import GpuOperator, GpuOperatorArgs
from .layers.network import layer as network
from .layers.network.layer import Network, NetworkArgs, TcpEntryPoint
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
from .layers.slurm.sacct import render_desired_state
from .layers.slurm.script_settings import gpu_health_settings
from .layers.storage.layer import K0S_KUBELET_DIR, Storage, StorageArgs, charts_for


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
    if config.rdma is not None and config.rdma.enabled:
        uses += network_operator.CHARTS
    if config.batch is not None and config.batch.enabled:
        uses += batch.CHARTS
    if config.devops is not None and config.devops.enabled:
        uses += devops.CHARTS
    if config.observability is not None and config.observability.enabled:
        uses += observability.CHARTS
    return uses


def dns_records(config: PlatformConfig) -> dict[str, dict[str, str]]:
    """Records the site DNS serves for the bare-metal inventory (hosts and their BMCs)."""
    prov = config.provisioning
    if prov is None or not prov.enabled or not prov.hosts:
        return {}
    records: dict[str, str] = {"grendel": prov.grendel_ip}
    for host in prov.hosts:
        records[host.name] = host.ip
        if host.bmc is not None:
            records[f"{host.name}-bmc"] = host.bmc.ip
    return {config.domain: records}


class Platform(pulumi.ComponentResource):
    outputs: dict[str, Any]

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:  # noqa: PLR0915 (wires the layers in dependency order)
        super().__init__("hpcforge:platform:Platform", name, None, opts)
        cfg = args.config
        kubeconfig: pulumi.Output[str] | None = None
        if cfg.cluster.bootstrap is not None:
            assert cfg.ssh_private_key is not None  # enforced by config validation
            cluster = ClusterBootstrap(
                "cluster",
                BootstrapArgs(
                    config=cfg.cluster.bootstrap,
                    ssh_private_key=pulumi.Output.secret(cfg.ssh_private_key.get_secret_value()),
                    protection=cfg.protection_mode,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            kubeconfig = cluster.kubeconfig
        provider = k8s.Provider(
            "kubernetes",
            context=cfg.kubernetes.context,
            kubeconfig=kubeconfig,
            opts=pulumi.ResourceOptions(parent=self),
        )
        ctx = DeployContext(
            environment=cfg.environment,
            delivery=cfg.delivery,
            domain=cfg.domain,
            kubernetes_version=cfg.kubernetes.version,
            storage_class=cfg.kubernetes.storage_class,
            protection=cfg.protection_mode,
            provider=provider,
            production=cfg.is_production,
        )
        plan = planned_charts(cfg)
        by_pulumi = ChartDeployer(ctx, plan, mode="pulumi")
        argocd_host = cfg.gitops.argocd.hostname or f"argocd.{cfg.domain}"

        # Argo CD first: in argocd delivery every other chart is an Application it reconciles.
        git = GitOps(
            "gitops",
            GitOpsArgs(
                ctx=ctx,
                config=cfg.gitops,
                charts=by_pulumi,
                platform_charts=plan,
                hostname=argocd_host,
                ingress_class=network.INGRESS_CLASS,
                issuer=certificates.ACME_ISSUER if cfg.tls.acme else CA_ISSUER,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        charts = by_pulumi.with_argocd(git.ready)

        directory_host = f"ldap.{cfg.domain}" if cfg.directory.expose else None
        rdma = cfg.rdma if cfg.rdma is not None and cfg.rdma.enabled else None
        net = Network(
            "network",
            NetworkArgs(
                ctx=ctx,
                config=cfg.network,
                charts=charts,
                dns_records=dns_records(cfg),
                inventory_annotations=digest_annotations(cfg.provisioning.inventory if cfg.provisioning else None),
                tcp_entrypoints=[TcpEntryPoint(directory.LDAPS_ENTRYPOINT, 8636, 636)] if directory_host else [],
                # The Network Operator's chart ships the NetworkAttachmentDefinition CRD in its crds/: it owns it then.
                attachment_crd_chart="network-operator" if rdma is not None else None,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        certs = Certificates(
            "certificates",
            CertificatesArgs(ctx=ctx, config=cfg.tls, charts=charts, ingress_class=net.ingress_class),
            opts=pulumi.ResourceOptions(parent=self),
        )
        sealed = SealedSecrets(
            "sealed-secrets",
            SealedSecretsArgs(ctx=ctx, charts=charts),
            opts=pulumi.ResourceOptions(parent=self),
        )

        tls = cfg.tls
        slurm_namespace = cfg.slurm.namespace
        storage = Storage(
            "storage",
            StorageArgs(
                ctx=ctx,
                config=cfg.storage,
                charts=charts,
                slurm_namespace=slurm_namespace,
                kubelet_dir=K0S_KUBELET_DIR
                if cfg.cluster.bootstrap is not None and cfg.cluster.bootstrap.distribution == "k0s"
                else None,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        db = (
            Database(
                "database",
                DatabaseArgs(ctx=ctx, config=cfg.database, charts=charts, client_namespaces=[slurm_namespace]),
                opts=pulumi.ResourceOptions(parent=self),
            )
            if cfg.slurm.accounting.enabled
            else None
        )
        ldap = Directory(
            "directory",
            DirectoryArgs(
                ctx=ctx,
                config=cfg.directory,
                issuer=certs.ca_issuer,
                certificate_duration=tls.certificate_duration,
                renew_before=tls.renew_before,
                client_namespaces=[slurm_namespace],
                expose_hostname=directory_host,
                depends_on=certs.ready,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        prov = cfg.provisioning if cfg.provisioning is not None and cfg.provisioning.enabled else None
        monitored = cfg.observability is not None and cfg.observability.enabled
        gpu_operator_on = gpu_operator_enabled(cfg)
        # GPU metrics exist wherever the operator runs dcgm-exporter (Slurm GPU nodesets or GPU pools for Kueue).
        dcgm_scraped = monitored and gpu_operator_on and cfg.gpu.operator.dcgm_exporter
        job_mapping_dir = gpu_job_mapping_dir(cfg)
        gpus: GpuOperator | None = None
        if gpu_operator_on:
            gpus = GpuOperator(
                "gpu-operator",
                GpuOperatorArgs(
                    ctx=ctx,
                    config=cfg.gpu.operator,
                    charts=charts,
                    depends_on=net.ready,
                    site_scrapes_dcgm=dcgm_scraped,
                    gpu_pool_taints=gpu_pool_taints(cfg),
                    distribution=cfg.cluster.bootstrap.distribution if cfg.cluster.bootstrap is not None else None,
                    gpudirect_rdma=cfg.rdma is not None and cfg.rdma.enabled,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        nics: NetworkOperator | None = None
        if rdma is not None:
            nics = NetworkOperator(
                "network-operator",
                NetworkOperatorArgs(
                    ctx=ctx,
                    config=rdma,
                    charts=charts,
                    deploy_nfd=not gpu_operator_on,
                    pool_labels={pool.name: pool.labels for pool in cfg.node_pools},
                    pool_taints={pool.name: pool.taints for pool in cfg.node_pools},
                    attachment_namespace=cfg.slurm.namespace,
                    depends_on=net.ready,
                    # Its NodeFeatureRule needs NFD's CRDs, which the GPU Operator's chart installs then.
                    nfd_crds=gpus.ready if gpus is not None else [],
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            # The attachments' CRD comes with the Network Operator's chart (Network's attachment_crd_chart).
            net.add_attachments([nics.chart])
        hpc = Slurm(
            "slurm",
            SlurmArgs(
                ctx=ctx,
                config=cfg.slurm,
                charts=charts,
                database=db.endpoint if db is not None else None,
                directory=ldap.endpoint,
                node_selectors=node_selectors(cfg),
                pool_taints=nodeset_pool_taints(cfg),
                ca_issuer=certs.ca_issuer,
                certificate_duration=tls.certificate_duration,
                renew_before=tls.renew_before,
                bare_metal_subnets=[prov.subnet, *(extra.subnet for extra in prov.subnets)] if prov else [],
                # The topology places the inventory's hosts even when Grendel is switched off.
                hosts=cfg.provisioning.hosts if cfg.provisioning is not None else (),
                storage=cfg.storage,
                login_node_selectors=login_node_selectors(cfg),
                login_pool_taints=login_pool_taints(cfg),
                script_settings=gpu_health_settings(
                    cfg.gpu.health,
                    mig=cfg.gpu.operator.mig_strategy != "none",
                    nvml_order=all(ns.gpus.autodetect == "nvml" for ns in cfg.slurm.nodesets if ns.gpus is not None),
                    job_mapping_dir=job_mapping_dir,
                ),
                gpu_job_mapping_dir=job_mapping_dir,
                rdma=rdma,
                nodeset_pools=nodeset_pools(cfg),
                metrics=monitored,
                active_checks=cfg.gpu.active_checks,
                accounts_state=(
                    render_desired_state(cfg.slurm.cluster_name, cfg.slurm.accounts, cfg.directory)
                    if cfg.slurm.accounts is not None
                    else None
                ),
                depends_on=[
                    *certs.ready,
                    *net.ready,
                    *storage.ready,
                    *(gpus.ready if gpus else []),
                    *(nics.ready if nics else []),
                ],
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        provisioning_address: str | None = None
        if prov is not None:
            grendel = Provisioning(
                "provisioning",
                ProvisioningArgs(
                    ctx=ctx,
                    config=prov,
                    slurm=cfg.slurm,
                    domain=cfg.domain,
                    controller_address=hpc.controller_address,
                    ingress_class=net.ingress_class,
                    issuer=certs.ca_issuer,
                    certificate_duration=tls.certificate_duration,
                    renew_before=tls.renew_before,
                    host_mounts=tuple(cfg.storage.mounted_on("compute")),
                    depends_on=[*net.ready, *certs.ready],
                    issuer_ready=certs.ready,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            provisioning_address = grendel.address

        layers: list[pulumi.Resource] = [
            git,
            net,
            certs,
            sealed,
            storage,
            *([db] if db is not None else []),
            ldap,
            hpc,
            *([gpus] if gpus else []),
            *([nics] if nics else []),
        ]
        if prov is not None:
            layers.append(grendel)
        batch_queues: list[str] = []
        if cfg.batch is not None and cfg.batch.enabled:
            Batch(
                "batch",
                BatchArgs(ctx=ctx, config=cfg.batch, pools=cfg.node_pools, charts=charts, depends_on=certs.ready),
                opts=pulumi.ResourceOptions(parent=self),
            )
            batch_queues = [q.name for q in cfg.batch.cluster_queues]
        registry: str | None = None
        if cfg.devops is not None and cfg.devops.enabled:
            lane = DevOps(
                "devops",
                DevOpsArgs(
                    ctx=ctx,
                    config=cfg.devops,
                    charts=charts,
                    ingress_class=net.ingress_class,
                    issuer=certs.ca_issuer,
                    certificate_duration=tls.certificate_duration,
                    renew_before=tls.renew_before,
                    depends_on=certs.ready,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            registry = lane.registry_host

        if cfg.backups is not None:
            assert db is not None  # PlatformConfig refuses backups without the database
            Backups(
                "backups",
                BackupsArgs(
                    ctx=ctx,
                    config=cfg.backups,
                    mariadb=database.SERVER,
                    directory_suffix=cfg.directory.suffix,
                    directory_uri=f"ldaps://{directory.APP}.{directory.NAMESPACE}.svc.cluster.local:{directory.LDAPS_PORT}",
                    depends_on=[*db.ready, *ldap.ready],
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        if cfg.observability is not None and cfg.observability.enabled:
            Observability(
                "observability",
                ObservabilityArgs(
                    ctx=ctx,
                    config=cfg.observability,
                    charts=charts,
                    rules=RuleSettings(
                        slurm_namespace=slurm_namespace,
                        slurm_accounting="slurm-accounting" if cfg.slurm.accounting.enabled else None,
                        gpus=dcgm_scraped,
                        nodes_unavailable_ratio=cfg.observability.nodes_unavailable_ratio,
                        backup_max_age_hours=cfg.observability.backup_max_age_hours,
                    ),
                    gpus=dcgm_scraped,
                    database=db is not None,
                    # its NetworkPolicies go into the scraped layers' namespaces
                    depends_on=[*certs.ready, *net.ready, *(db.ready if db is not None else []), *git.ready],
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )

        evidence: dict[str, pulumi.Output[str]] = {}
        if cfg.evidence.enabled:
            checks = Evidence(
                "evidence",
                EvidenceArgs(config=cfg, kube_context=cfg.kubernetes.context, depends_on=layers, kubeconfig=kubeconfig),
                opts=pulumi.ResourceOptions(parent=self),
            )
            evidence = checks.results

        self.outputs = {
            "environment": cfg.environment,
            "delivery": cfg.delivery,
            "argocdUrl": git.url,
            "argocdAdminPassword": git.admin_password,
            "ingressAddress": net.ingress_address,
            "caIssuer": certs.ca_issuer,
            "sealedSecretsController": f"{sealed.namespace}/{sealed.controller_name}",
            "ldapUri": ldap.endpoint.ldap_uri,
            "ldapBaseDn": ldap.endpoint.base_dn,
            "ldapBindDn": ldap.endpoint.bind_dn,
            "ldapBindPassword": ldap.endpoint.bind_password,
            "databaseHost": db.endpoint.host if db is not None else None,
            "slurmCluster": cfg.slurm.cluster_name,
            "slurmController": hpc.controller_host,
            "slurmControllerAddress": hpc.controller_address,
            "slurmLoginAddress": hpc.login_address,
            "grendelAddress": provisioning_address,
            "kueueClusterQueues": batch_queues,
            "registry": registry,
            "evidence": evidence,
        }
        self.register_outputs(self.outputs)
