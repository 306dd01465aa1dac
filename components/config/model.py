"""The fields of the root `PlatformConfig` (config/root.py): every layer's config, and what the stack sets once."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from ..layers.backups.config import BackupsConfig
from ..layers.batch.config import RESOURCE_FLAVOR_MAX, BatchConfig, pool_capacity
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
from .base import MULTILINE, DnsName, ProblemCollector, StrictModel, duplicates, quantity_value
from .platform_core import DeliveryMode, KubernetesConfig, Protection
from .pools import NodePool

ProtectionMode = Literal["protect", "retain", "none"]
EnvironmentKind = Literal["production", "development"]


class PlatformModel(StrictModel):
    """Everything under `hpcforge:` in `Pulumi.<stack>.yaml`, each layer's config valid on its own; `PlatformConfig`
    (config/root.py) adds the cross-layer checks."""

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
        return next((pool for pool in self.node_pools if pool.name == name), None)

    def _check_pools(self, problems: ProblemCollector) -> None:
        known = ", ".join(pool.name for pool in self.node_pools) or "none defined"
        for name in duplicates(pool.name for pool in self.node_pools):
            problems.add(["nodePools"], f"duplicate node pool {name!r}")
        for index, ns in enumerate(self.slurm.nodesets):
            if ns.pool is None:
                continue
            pool = self.node_pool(ns.pool)
            if pool is None:
                problems.add(
                    ["slurm", "nodesets", index, "pool"], f"nodeset {ns.name!r}: unknown node pool {ns.pool!r} (known: {known})"
                )
                continue
            if ns.gpus and (pool.gpus_per_node is None or pool.gpus_per_node.count < ns.gpus.count):
                have = pool.gpus_per_node.count if pool.gpus_per_node else 0
                problems.add(
                    ["slurm", "nodesets", index, "gpus", "count"],
                    f"nodeset {ns.name!r} asks for {ns.gpus.count} GPU(s) per pod but node pool {pool.name!r} has {have} per node",
                )
            if ns.gpus and pool.gpus_per_node and ns.gpus.count < pool.gpus_per_node.count and ns.has_pods:
                # A slurmd pod sees every GPU of its node whatever the device plugin gave it: slurm-operator v1.2.1
                # runs slurmd privileged (internal/builder/workerbuilder/worker_app.go), and containerd gives a
                # privileged container all host devices; under CDI (the GPU Operator's default) nothing masks
                # /proc/driver/nvidia/gpus either. Slurm then uses the lowest-numbered devices, File= or autodetected
                # (src/plugins/gres/gpu/gres_gpu.c keeps the first <count> by file name and ignores the rest), so two
                # pods on one node would run jobs on the same GPUs.
                problems.add(
                    ["slurm", "nodesets", index, "gpus", "count"],
                    f"nodeset {ns.name!r} gets {ns.gpus.count} of the {pool.gpus_per_node.count} GPUs of each node in pool "
                    f"{pool.name!r}: its slurmd pods run privileged and see all {pool.gpus_per_node.count}, and Slurm would "
                    f"use /dev/nvidia0-{ns.gpus.count - 1} whichever GPUs the device plugin gave the pod; ask for all "
                    f"{pool.gpus_per_node.count}",
                )
            if ns.gpus and pool.gpus_per_node and pool.gpus_per_node.type != ns.gpus.type:
                problems.add(
                    ["slurm", "nodesets", index, "gpus", "type"],
                    f"nodeset {ns.name!r} asks for GPU type {ns.gpus.type!r} but node pool {pool.name!r} has {pool.gpus_per_node.type!r}",
                )
            if ns.scaling_mode == "StatefulSet" and ns.replicas > pool.nodes:
                problems.add(
                    ["slurm", "nodesets", index, "replicas"],
                    f"nodeset {ns.name!r}: {ns.replicas} replicas but node pool {pool.name!r} has {pool.nodes} node(s) "
                    "(slurmd pods do not share a node)",
                )

    def _check_login(self, problems: ProblemCollector) -> None:
        where: list[list[str | int]] = [["slurm", "login"]]
        where += [["slurm", "extraLogins", i] for i in range(len(self.slurm.extra_logins))]
        for path, login in zip(where, self.slurm.login_sets(), strict=True):
            pool = self.network.pool(login.pool)
            if pool is None:
                known = ", ".join(p.name for p in self.network.pools)
                problems.add([*path, "pool"], f"unknown MetalLB pool {login.pool!r} (known: {known})")
            elif login.address is not None:
                if not pool.contains(login.address):
                    problems.add([*path, "address"], f"{login.address} is not inside pool {login.pool!r}")
                taken = {self.network.ingress.address: "the ingress", self.network.dns.address: "the DNS service"}
                if login.address in taken:
                    problems.add([*path, "address"], f"{login.address} is already {taken[login.address]}'s address")
            if login.node_pool is not None:
                node_pool = self.node_pool(login.node_pool)
                if node_pool is None:
                    problems.add([*path, "nodePool"], f"unknown node pool {login.node_pool!r}")
                elif login.gpus is not None and (
                    node_pool.gpus_per_node is None or node_pool.gpus_per_node.count < login.gpus.count
                ):
                    problems.add(
                        [*path, "gpus"], f"node pool {node_pool.name!r} has fewer than {login.gpus.count} GPU(s) per node"
                    )
            elif login.gpus is not None:
                problems.add([*path, "nodePool"], "a login pool with GPUs needs the node pool that has them")
            if login.node_pool is not None:
                flavors = {f.pool: f.name for f in self.batch.flavors} if self.batch is not None and self.batch.enabled else {}
                slurm_pools = self.slurm_pools()
                if login.node_pool in slurm_pools:
                    problems.add(
                        [*path, "nodePool"],
                        f"node pool {login.node_pool!r} already runs nodeset {slurm_pools[login.node_pool]!r}",
                    )
                elif login.node_pool in flavors:
                    problems.add(
                        [*path, "nodePool"],
                        f"node pool {login.node_pool!r} already backs Kueue flavor {flavors[login.node_pool]!r}",
                    )

    def _check_provisioning(self, problems: ProblemCollector) -> None:
        prov = self.provisioning
        if prov is None or not prov.enabled:
            return
        attachment = self.network.attachment(prov.attachment)
        if attachment is None:
            known = ", ".join(a.name for a in self.network.attachments) or "none defined"
            problems.add(["provisioning", "attachment"], f"unknown network attachment {prov.attachment!r} (known: {known})")
        elif attachment.namespace != prov.namespace:
            problems.add(
                ["provisioning", "attachment"],
                f"attachment {prov.attachment!r} is in namespace {attachment.namespace!r}, "
                f"but Grendel runs in {prov.namespace!r}",
            )
        elif attachment.ipam.type != "static":
            problems.add(
                ["provisioning", "attachment"],
                f"attachment {prov.attachment!r} must use static IPAM (Grendel needs a fixed address)",
            )
        nodesets = {ns.name for ns in self.slurm.nodesets}
        known = ", ".join(sorted(nodesets))
        joining: list[str] = []
        for index, host in enumerate(prov.hosts):
            if host.nodeset is not None and host.nodeset not in nodesets:
                problems.add(
                    ["provisioning", "hosts", index, "nodeset"],
                    f"host {host.name!r}: unknown nodeset {host.nodeset!r} (known: {known})",
                )
            if prov.joins_slurm(host):
                joining.append(host.name)
        service = self.slurm.controller.service
        if joining and service is None:
            problems.add(
                ["slurm", "controller", "service"],
                f"required when bare-metal hosts join Slurm ({', '.join(joining[:3])}{', ...' if len(joining) > 3 else ''}): "
                "give a MetalLB pool (and address) for slurmctld",
            )
        if joining and service is not None and service.address is None:
            problems.add(
                ["slurm", "controller", "service", "address"],
                "required when bare-metal hosts join Slurm: their join scripts name slurmctld's address",
            )
        if service is not None:
            pool = self.network.pool(service.pool)
            if pool is None:
                problems.add(["slurm", "controller", "service", "pool"], f"unknown MetalLB pool {service.pool!r}")
            elif service.address is not None and not pool.contains(service.address):
                problems.add(
                    ["slurm", "controller", "service", "address"], f"{service.address} is not inside pool {service.pool!r}"
                )

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

    def _check_batch(self, problems: ProblemCollector) -> None:
        batch = self.batch
        if batch is None or not batch.enabled:
            return
        known = ", ".join(pool.name for pool in self.node_pools) or "none defined"
        slurm_pools = self.slurm_pools()
        for index, flavor in enumerate(batch.flavors):
            if self.node_pool(flavor.pool) is None:
                problems.add(
                    ["batch", "flavors", index, "pool"],
                    f"flavor {flavor.name!r}: unknown node pool {flavor.pool!r} (known: {known})",
                )
            elif flavor.pool in slurm_pools:
                problems.add(
                    ["batch", "flavors", index, "pool"],
                    f"node pool {flavor.pool!r} is given to both Slurm (nodeset {slurm_pools[flavor.pool]!r}) "
                    f"and Kueue (flavor {flavor.name!r}); a pool serves one scheduler",
                )
        for name in duplicates(f.pool for f in batch.flavors):
            problems.add(["batch", "flavors"], f"node pool {name!r} backs more than one flavor")
        # The flavor's ResourceFlavor carries the pool's labels as nodeLabels and tolerates its taints:
        # kueue 0.19.2's CRD takes at most 8 of each (maxProperties / maxItems).
        for index, flavor in enumerate(batch.flavors):
            flavor_pool = self.node_pool(flavor.pool)
            if flavor_pool is None:
                continue
            for count, what, field in (
                (len(flavor_pool.labels), "labels", "nodeLabels"),
                (len(flavor_pool.taints), "taints", "tolerations"),
            ):
                if count > RESOURCE_FLAVOR_MAX:
                    problems.add(
                        ["batch", "flavors", index, "pool"],
                        f"node pool {flavor.pool!r} has {count} {what}, and Kueue flavor {flavor.name!r} would carry them as "
                        f"{field}: a ResourceFlavor takes at most {RESOURCE_FLAVOR_MAX} (use fewer {what} on pools given to Kueue)",
                    )
        # Nominal quotas of all queues together may not promise more than the pool has.
        totals: dict[str, dict[str, float]] = {}
        where: dict[str, list[str | int]] = {}
        for qi, queue in enumerate(batch.cluster_queues):
            for fi, quota in enumerate(queue.quotas):
                total = totals.setdefault(quota.flavor, {"cpu": 0.0, "memory": 0.0, "gpus": 0.0})
                total["cpu"] += quantity_value(quota.cpu)
                total["memory"] += quantity_value(quota.memory)
                total["gpus"] += quota.gpus
                where[quota.flavor] = ["batch", "clusterQueues", qi, "quotas", fi]
        for flavor_name, total in totals.items():
            quota_flavor = batch.flavor(flavor_name)
            pool = self.node_pool(quota_flavor.pool) if quota_flavor else None
            if pool is None:
                continue
            capacity = pool_capacity(pool)
            for resource, label in (("gpus", "GPU"), ("cpu", "CPU"), ("memory", "memory")):
                if total[resource] > capacity[resource]:
                    have = int(capacity[resource]) if resource != "memory" else f"{capacity[resource] / 2**30:.0f}Gi"
                    want = int(total[resource]) if resource != "memory" else f"{total[resource] / 2**30:.0f}Gi"
                    problems.add(
                        [*where[flavor_name], resource],
                        f"{label} quota of flavor {flavor_name!r} totals {want} across cluster queues, "
                        f"over the capacity of node pool {pool.name!r} ({have})",
                    )

    def _check_namespaces(self, problems: ProblemCollector) -> None:
        """Team namespaces must not be one of the platform's own namespaces."""
        reserved = {
            "kube-system",
            "argocd",
            "cert-manager",
            "metallb-system",
            "traefik",
            "site-dns",
            "mariadb-system",
            "database",
            "directory",
            "slinky",
            self.slurm.namespace,
            "kueue-system",
            "appwrapper-system",
            "argo",
            "registry",
            "monitoring",
            "backups",
        }
        if self.provisioning is not None:
            reserved.add(self.provisioning.namespace)
        if self.devops is not None:
            reserved.add(self.devops.namespace)
        if self.batch is not None:
            for index, team in enumerate(self.batch.teams):
                if team.namespace in reserved:
                    problems.add(
                        ["batch", "teams", index, "namespace"], f"{team.namespace!r} is a platform namespace; pick another"
                    )

    def _check_operations(self, problems: ProblemCollector) -> None:
        if self.cluster.bootstrap is not None and self.ssh_private_key is None:
            problems.add(
                ["sshPrivateKey"],
                "required when cluster.bootstrap is set (pulumi config set --secret hpcforge:sshPrivateKey < KEY)",
            )
        if self.cluster.bootstrap is not None and self.kubernetes.context is not None:
            problems.add(["kubernetes", "context"], "a bootstrapped cluster brings its own kubeconfig: remove kubernetes.context")
        if self.backups is not None and not self.slurm.accounting.enabled:
            problems.add(
                ["backups"],
                "backups include the accounting database, which a site with slurm.accounting.enabled: false does not deploy;"
                " turn accounting on or remove hpcforge:backups",
            )
        evidence = self.evidence
        if evidence.test_partition is not None and evidence.test_partition not in {p.name for p in self.slurm.partitions}:
            problems.add(["evidence", "testPartition"], f"unknown partition {evidence.test_partition!r}")
        if evidence.lookup_user is not None and evidence.lookup_user not in {u.name for u in self.directory.users}:
            problems.add(["evidence", "lookupUser"], f"unknown directory user {evidence.lookup_user!r}")

    def _check_production(self, problems: ProblemCollector) -> None:
        if not self.is_production:
            return
        for index, app in enumerate(self.gitops.apps):
            if not app.revision_is_pinned():
                problems.add(
                    ["gitops", "apps", index, "targetRevision"],
                    f"app {app.name!r}: {app.target_revision!r} is a branch; prod needs a tag or a full commit SHA",
                )
        if self.protection_mode == "none":
            problems.add(["protection", "mode"], "prod cannot run with protection 'none' (stateful data would be deletable)")
