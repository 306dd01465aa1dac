"""Cross-layer checks of the platform as a whole: node pools against nodesets, login pools, flavors and hosts;
provisioning, batch and the lane against the rest; namespaces; the cluster bootstrap; what production requires.
site/root.py runs them with the others of site/checks/."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ground.base import ProblemCollector, duplicates, quantity_value
from ...layers.batch.config import RESOURCE_FLAVOR_MAX, pool_capacity
from ...layers.gitops.config import COMMIT
from ...layers.slurm.config import LoginConfig

if TYPE_CHECKING:
    from ..model import PlatformModel


def check_pools(config: PlatformModel, problems: ProblemCollector) -> None:
    known = ", ".join(pool.name for pool in config.node_pools) or "none defined"
    for name in duplicates(pool.name for pool in config.node_pools):
        problems.add(["nodePools"], f"duplicate node pool {name!r}")
    for index, ns in enumerate(config.slurm.nodesets):
        if ns.pool is None:
            continue
        pool = config.node_pool(ns.pool)
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


def _login_paths(config: PlatformModel) -> list[tuple[list[str | int], LoginConfig]]:
    where: list[list[str | int]] = [["slurm", "login"]]
    where += [["slurm", "extraLogins", i] for i in range(len(config.slurm.extra_logins))]
    return list(zip(where, config.slurm.login_sets(), strict=True))


def check_login(config: PlatformModel, problems: ProblemCollector) -> None:
    for path, login in _login_paths(config):
        pool = config.network.pool(login.pool)
        if pool is None:
            known = ", ".join(p.name for p in config.network.pools)
            problems.add([*path, "pool"], f"unknown MetalLB pool {login.pool!r} (known: {known})")
        elif login.address is not None:
            if not pool.contains(login.address):
                problems.add([*path, "address"], f"{login.address} is not inside pool {login.pool!r}")
            taken = {config.network.ingress.address: "the ingress", config.network.dns.address: "the DNS service"}
            if login.address in taken:
                problems.add([*path, "address"], f"{login.address} is already {taken[login.address]}'s address")
        if login.node_pool is not None:
            node_pool = config.node_pool(login.node_pool)
            if node_pool is None:
                problems.add([*path, "nodePool"], f"unknown node pool {login.node_pool!r}")
            elif login.gpus is not None and (node_pool.gpus_per_node is None or node_pool.gpus_per_node.count < login.gpus.count):
                problems.add([*path, "gpus"], f"node pool {node_pool.name!r} has fewer than {login.gpus.count} GPU(s) per node")
        elif login.gpus is not None:
            problems.add([*path, "nodePool"], "a login pool with GPUs needs the node pool that has them")
        if login.node_pool is not None:
            flavors = {f.pool: f.name for f in config.batch.flavors} if config.batch is not None and config.batch.enabled else {}
            slurm_pools = config.slurm_pools()
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


def check_provisioning(config: PlatformModel, problems: ProblemCollector) -> None:
    prov = config.provisioning
    if prov is None or not prov.enabled:
        return
    attachment = config.network.attachment(prov.attachment)
    if attachment is None:
        known = ", ".join(a.name for a in config.network.attachments) or "none defined"
        problems.add(["provisioning", "attachment"], f"unknown network attachment {prov.attachment!r} (known: {known})")
    elif attachment.namespace != prov.namespace:
        problems.add(
            ["provisioning", "attachment"],
            f"attachment {prov.attachment!r} is in namespace {attachment.namespace!r}, but Grendel runs in {prov.namespace!r}",
        )
    elif attachment.ipam.type != "static":
        problems.add(
            ["provisioning", "attachment"],
            f"attachment {prov.attachment!r} must use static IPAM (Grendel needs a fixed address)",
        )
    nodesets = {ns.name for ns in config.slurm.nodesets}
    known = ", ".join(sorted(nodesets))
    if not {host.nodeset for host in prov.hosts if host.nodeset is not None} <= nodesets:
        for index, host in enumerate(prov.hosts):
            if host.nodeset is not None and host.nodeset not in nodesets:
                problems.add(
                    ["provisioning", "hosts", index, "nodeset"],
                    f"host {host.name!r}: unknown nodeset {host.nodeset!r} (known: {known})",
                )
    joining = [host.name for host in prov.joining_hosts()]
    service = config.slurm.controller.service
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
        pool = config.network.pool(service.pool)
        if pool is None:
            problems.add(["slurm", "controller", "service", "pool"], f"unknown MetalLB pool {service.pool!r}")
        elif service.address is not None and not pool.contains(service.address):
            problems.add(["slurm", "controller", "service", "address"], f"{service.address} is not inside pool {service.pool!r}")


def check_batch(config: PlatformModel, problems: ProblemCollector) -> None:  # noqa: PLR0912 (one branch per cross-reference checked, each with its own message)
    batch = config.batch
    if batch is None or not batch.enabled:
        return
    known = ", ".join(pool.name for pool in config.node_pools) or "none defined"
    slurm_pools = config.slurm_pools()
    for index, flavor in enumerate(batch.flavors):
        if config.node_pool(flavor.pool) is None:
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
        flavor_pool = config.node_pool(flavor.pool)
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
        pool = config.node_pool(quota_flavor.pool) if quota_flavor else None
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


def check_namespaces(config: PlatformModel, problems: ProblemCollector) -> None:
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
        config.slurm.namespace,
        "kueue-system",
        "appwrapper-system",
        "argo",
        "registry",
        "monitoring",
        "backups",
    }
    if config.provisioning is not None:
        reserved.add(config.provisioning.namespace)
    if config.devops is not None:
        reserved.add(config.devops.namespace)
    if config.batch is not None:
        for index, team in enumerate(config.batch.teams):
            if team.namespace in reserved:
                problems.add(["batch", "teams", index, "namespace"], f"{team.namespace!r} is a platform namespace; pick another")


def check_operations(config: PlatformModel, problems: ProblemCollector) -> None:
    if config.cluster.bootstrap is not None and config.ssh_private_key is None:
        problems.add(
            ["sshPrivateKey"],
            "required when cluster.bootstrap is set (pulumi config set --secret hpcforge:sshPrivateKey < KEY)",
        )
    if config.cluster.bootstrap is not None and config.kubernetes.context is not None:
        problems.add(["kubernetes", "context"], "a bootstrapped cluster brings its own kubeconfig: remove kubernetes.context")
    if config.backups is not None and not config.slurm.accounting.enabled:
        problems.add(
            ["backups"],
            "backups include the accounting database, which a site with slurm.accounting.enabled: false does not deploy;"
            " turn accounting on or remove hpcforge:backups",
        )
    evidence = config.evidence
    if evidence.test_partition is not None and evidence.test_partition not in {p.name for p in config.slurm.partitions}:
        problems.add(["evidence", "testPartition"], f"unknown partition {evidence.test_partition!r}")
    if evidence.lookup_user is not None and evidence.lookup_user not in {u.name for u in config.directory.users}:
        problems.add(["evidence", "lookupUser"], f"unknown directory user {evidence.lookup_user!r}")


def check_production(config: PlatformModel, problems: ProblemCollector) -> None:
    if not config.is_production:
        return
    # A tag can be deleted and pushed again: whoever can push to the repository would deploy. Only a commit is fixed.
    for index, app in enumerate(config.gitops.apps):
        if not COMMIT.match(app.target_revision):
            problems.add(
                ["gitops", "apps", index, "targetRevision"],
                f"app {app.name!r}: {app.target_revision!r} can be moved; production needs a full commit SHA",
            )
    if config.gitops.root_repo_url and not COMMIT.match(config.gitops.root_revision):
        problems.add(
            ["gitops", "rootRevision"],
            f"{config.gitops.root_revision!r} can be moved; production needs a full commit SHA of the app-of-apps root",
        )
    for path, login in _login_paths(config):
        if login.root_ssh_authorized_keys:
            problems.add(
                [*path, "rootSshAuthorizedKeys"],
                "refused in production: root on a login pod reads the Slurm key, and login pods run users' code and "
                "face the site network; use kubectl exec for admin access",
            )
    backups = config.backups
    if backups is not None and backups.key_recipient is not None and not backups.sealing_keys:
        problems.add(
            ["backups", "sealingKeys"],
            "production exports the platform's keys (keyRecipient is set): name the sealed-secrets keys it reads "
            "(kubectl -n kube-system get secret -l sealedsecrets.bitnami.com/sealed-secrets-key -o name)",
        )
    if config.protection_mode == "none":
        problems.add(["protection", "mode"], "prod cannot run with protection 'none' (stateful data would be deletable)")
