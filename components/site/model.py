"""The fields of the root `PlatformConfig` (site/root.py): every layer's config, and what the stack sets once."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from ..ground.base import MULTILINE, DnsName, StrictModel, first_by_name
from ..ground.platform_core import DeliveryMode, KubernetesConfig, Protection, ProtectionMode
from ..ground.pools import NodePool
from ..layers.backups.config import BackupsConfig
from ..layers.batch.config import BatchConfig
from ..layers.bootstrap.config import ClusterConfig
from ..layers.certificates.config import TlsConfig
from ..layers.database.config import DatabaseConfig
from ..layers.devops.config import DevOpsConfig
from ..layers.directory.config import DirectoryConfig
from ..layers.evidence.config import EvidenceConfig
from ..layers.gitops.config import GitOpsConfig
from ..layers.gpu.config import GpuConfig
from ..layers.network.config import NetworkConfig
from ..layers.observability.config import ObservabilityConfig
from ..layers.provisioning.config import ProvisioningConfig
from ..layers.rdma.config import RdmaConfig
from ..layers.slurm.config import SlurmConfig
from ..layers.storage.config import StorageConfig

EnvironmentKind = Literal["production", "development"]


class PlatformModel(StrictModel):
    """Everything under `hpcforge:` in `Pulumi.<stack>.yaml`, each layer's config valid on its own; `PlatformConfig`
    (site/root.py) adds the cross-layer checks."""

    environment: str
    """Environment name: lowercase letters, digits and `-`, starting with a letter, at most 20 characters
    (`dev`, `prod`, `staging`, ...). It labels every object; it does not decide how strict the stack is:
    `environmentKind` does."""
    environment_kind: EnvironmentKind
    """`production` or `development`, stated, never guessed from the name. `production` switches on the strict
    defaults (protected stateful data, pinned app revisions, two cert-manager replicas) and selects the
    mandatory policy configuration (`policies/config/prod.json`); `development` the advisory one
    (`policies/config/dev.json`)."""
    delivery: DeliveryMode = "pulumi"
    """How third-party charts are delivered: `pulumi` (helm.v4.Chart) or `argocd` (Applications)."""
    domain: DnsName
    """The site's DNS domain, at least two labels (e.g. `hpc.example.org`): default host names (`argocd.<domain>`, `ldap.<domain>`), the DNS records of the bare-metal
    inventory, Grendel's DHCP search domain."""
    kubernetes: KubernetesConfig = Field(default_factory=KubernetesConfig)
    """Kubernetes version, storage class and kubeconfig context."""
    protection: Protection = Field(default_factory=Protection)
    """Protection of stateful data: `protect` (the prod default), `retain` or `none`."""
    node_pools: tuple[NodePool, ...] = ()
    """The cluster's node pools, described as hardware; Slurm nodesets and Kueue flavors are placed on them."""
    network: NetworkConfig
    """Network layer: MetalLB pools and adverts, Traefik, Multus/IPVLAN attachments and the site DNS."""
    tls: TlsConfig = Field(default_factory=TlsConfig)
    """Certificates layer: the private CA, certificate lifetimes and an optional ACME issuer."""
    gitops: GitOpsConfig = Field(default_factory=GitOpsConfig)
    """GitOps layer: Argo CD and the site's own Argo CD applications."""
    database: DatabaseConfig = Field(default_factory=DatabaseConfig)
    """Database layer: the MariaDB server that holds Slurm's accounting."""
    directory: DirectoryConfig
    """Directory layer: the site's users and groups."""
    slurm: SlurmConfig
    """Slurm layer (Slinky slurm-operator): controller, accounting, login, nodesets, partitions, prolog and epilog."""
    gpu: GpuConfig = Field(default_factory=GpuConfig)
    """GPU data plane: the NVIDIA GPU Operator and the GPU health checks of the Slurm prolog and epilog."""
    rdma: RdmaConfig | None = None
    """RDMA data plane: NVIDIA Network Operator, fabrics and the NICs of each pool (null: no RDMA)."""
    storage: StorageConfig = Field(default_factory=StorageConfig)
    """Shared storage: NFS exports (home, software, scratch) mounted on login pods, compute pods and bare-metal
    hosts alike, and local-path-provisioner for a lab without a storage class."""
    provisioning: ProvisioningConfig | None = None
    """Provisioning layer: Grendel on the provisioning network (null: no bare-metal provisioning)."""
    batch: BatchConfig | None = None
    """Kubernetes-native batch beside Slurm: Kueue queues over node pools that Slurm does not use."""
    devops: DevOpsConfig | None = None
    """Build and test lane for the site's software: Argo Workflows, shared software storage, a registry."""
    # MULTILINE: BackupsConfig guards its own fields; only its keyRecipient (a PEM certificate) may span lines.
    backups: BackupsConfig | None = Field(default=None, json_schema_extra=MULTILINE)
    """Scheduled backups of the accounting database to S3 or a volume (null: none)."""
    observability: ObservabilityConfig | None = None
    """Monitoring (kube-prometheus-stack), alert rules, receivers and dashboards (null: none)."""
    evidence: EvidenceConfig = Field(default_factory=EvidenceConfig)
    """Evidence checks at the end of `pulumi up` (off by default)."""
    cluster: ClusterConfig = Field(default_factory=ClusterConfig)
    """Where the Kubernetes cluster comes from: an existing one (default) or k0s installed over SSH."""
    ssh_private_key: SecretStr | None = None
    """Private key for the cluster bootstrap over SSH; set it as a secret:
    `pulumi config set --secret hpcforge:sshPrivateKey < ~/.ssh/id_ed25519`."""

    @field_validator("environment")
    @classmethod
    def _environment(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9-]{0,19}", value):
            raise ValueError(f"{value!r} is not an environment name (lowercase letters, digits, '-')")
        if value in ("true", "false", "null"):
            raise ValueError(f"{value!r} is a YAML keyword, not an environment name (e.g. dev, staging, prod)")
        return value

    @field_validator("domain")
    @classmethod
    def _site_domain(cls, value: str) -> str:
        if "." not in value:
            raise ValueError(f"{value!r} is not a site domain (at least two labels, e.g. hpc.example.org)")
        return value

    @property
    def is_production(self) -> bool:
        return self.environment_kind == "production"

    @property
    def protection_mode(self) -> ProtectionMode:
        """The one place where the stateful-data protection mode is decided (see docs/operations.md)."""
        if self.protection.mode is not None:
            return self.protection.mode
        return "protect" if self.is_production else "none"

    def node_pool(self, name: str) -> NodePool | None:
        return self._node_pools_by_name.get(name)

    @cached_property
    def _node_pools_by_name(self) -> dict[str, NodePool]:
        """The first node pool of each name (what a scan finds): a lookup per nodeset costs one step, not one per pool."""
        return first_by_name(self.node_pools)

    def slurm_pools(self) -> dict[str, str]:
        """Node pool name -> the nodeset that uses it (by reference or by an equal node selector)."""
        used: dict[str, str] = {}
        for ns in self.slurm.nodesets:
            if ns.pool is not None:
                used.setdefault(ns.pool, ns.name)
            for pool in self.node_pools:
                if ns.node_selector and all(ns.node_selector.get(k) == v for k, v in pool.labels.items()):
                    used.setdefault(pool.name, ns.name)
        return used

    # --- what the layers are given, resolved once from the config -------------------------------------------------

    @property
    def argocd_hostname(self) -> str:
        """Argo CD's host name: as configured, else `argocd.<domain>`."""
        return self.gitops.argocd.hostname or f"argocd.{self.domain}"

    @property
    def directory_hostname(self) -> str | None:
        """The directory's host name behind Traefik's LDAPS entry point (`ldap.<domain>`), or None when not exposed."""
        return f"ldap.{self.domain}" if self.directory.expose else None

    @property
    def active_rdma(self) -> RdmaConfig | None:
        """The RDMA data plane when it is configured and switched on, else None."""
        return self.rdma if self.rdma is not None and self.rdma.enabled else None

    @property
    def active_provisioning(self) -> ProvisioningConfig | None:
        """Grendel's provisioning when it is configured and switched on, else None."""
        return self.provisioning if self.provisioning is not None and self.provisioning.enabled else None

    @property
    def monitored(self) -> bool:
        """Whether the site runs its monitoring (kube-prometheus-stack)."""
        return self.observability is not None and self.observability.enabled

    @property
    def distribution(self) -> Literal["k0s", "rke2"] | None:
        """The Kubernetes distribution hpcforge bootstraps, or None on an existing cluster."""
        return self.cluster.bootstrap.distribution if self.cluster.bootstrap is not None else None

    def bare_metal_subnets(self) -> list[str]:
        """The provisioning subnets (CIDRs) that bare-metal hosts boot in (none without active provisioning)."""
        prov = self.active_provisioning
        return [prov.subnet, *(extra.subnet for extra in prov.subnets)] if prov is not None else []

    def dns_records(self) -> dict[str, dict[str, str]]:
        """Records the site DNS serves for the bare-metal inventory (Grendel, the hosts and their BMCs), by zone."""
        prov = self.active_provisioning
        if prov is None or not prov.hosts:
            return {}
        records: dict[str, str] = {"grendel": prov.grendel_ip}
        for host in prov.hosts:
            records[host.name] = host.ip
            if host.bmc is not None:
                records[f"{host.name}-bmc"] = host.bmc.ip
        return {self.domain: records}
