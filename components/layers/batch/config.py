"""Kubernetes-native batch (Kueue + AppWrapper) and the DevOps lane (Argo Workflows, registry)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...ground.base import K8sName, ProblemCollector, Quantity, StrictModel, duplicates, quantity_value
from ...ground.pools import NodePool

# --- Kueue ----------------------------------------------------------------------------------------

RESOURCE_FLAVOR_MAX = 8
"""kueue 0.19.2 ResourceFlavor CRD: at most 8 nodeLabels (maxProperties) and 8 tolerations (maxItems)."""


class Flavor(StrictModel):
    """A Kueue ResourceFlavor: a node pool (hpcforge:nodePools) given to Kubernetes-native batch."""

    name: K8sName
    """Name of the Kueue ResourceFlavor."""
    pool: K8sName
    """Node pool the flavor stands for (its labels and taints); never a pool that a Slurm nodeset uses."""


class Quota(StrictModel):
    flavor: K8sName
    """Flavor the quota is on."""
    cpu: Quantity
    """Nominal CPU quota."""
    memory: Quantity
    """Nominal memory quota."""
    gpus: int = Field(default=0, ge=0, le=1_000_000)
    """nvidia.com/gpu quota (never more than the flavor's pool has)."""
    borrowing_limit_gpus: int | None = Field(default=None, ge=0, le=1_000_000)
    """GPUs the queue may borrow from the cohort above its quota (null: no limit)."""


class ClusterQueue(StrictModel):
    name: K8sName
    """ClusterQueue name; teams refer to it."""
    quotas: tuple[Quota, ...] = Field(min_length=1, max_length=64)
    """Nominal quota per flavor (at most 64: Kueue's resource group takes no more flavors); the quotas of all queues
    together never exceed a pool."""
    in_cohort: bool = True
    """Join the site cohort, so idle quota can be borrowed between queues (a queue outside it takes no
    `borrowingLimitGpus`)."""
    preemption: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "LowerPriority"
    """`preemption.withinClusterQueue` of the ClusterQueue."""
    queueing: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"
    """`queueingStrategy` of the ClusterQueue."""


class Team(StrictModel):
    """A team namespace with a LocalQueue into a ClusterQueue."""

    namespace: K8sName
    """Team namespace, created with a LocalQueue `default` (not a platform namespace)."""
    cluster_queue: K8sName
    """ClusterQueue that the team's LocalQueue feeds."""


class PriorityClass(StrictModel):
    name: K8sName
    """Name of the Kueue WorkloadPriorityClass."""
    value: int = Field(ge=-2147483648, le=1000000000)
    """Priority value (higher goes first, and may preempt lower)."""
    description: str = Field(default="", max_length=2048)
    """Description of the class."""


class BatchConfig(StrictModel):
    enabled: bool = True
    """Deploy the batch layer."""
    cohort: K8sName = "site"
    """Name of the Kueue Cohort in which queues borrow idle quota."""
    flavors: tuple[Flavor, ...] = Field(min_length=1)
    """ResourceFlavors, one per node pool given to Kueue."""
    cluster_queues: tuple[ClusterQueue, ...] = Field(min_length=1)
    """Kueue ClusterQueues with their quotas."""
    teams: tuple[Team, ...] = ()
    """Team namespaces, each with a LocalQueue into a ClusterQueue."""
    priority_classes: tuple[PriorityClass, ...] = ()
    """Kueue WorkloadPriorityClasses."""
    samples: bool = False
    """Render a sample AppWrapper (a two-pod job) into `sampleNamespace`."""
    sample_namespace: K8sName | None = None
    """Team namespace of the sample AppWrapper (required with `samples`)."""

    def flavor(self, name: str) -> Flavor | None:
        return next((f for f in self.flavors if f.name == name), None)

    @model_validator(mode="after")
    def _cross_checks(self) -> BatchConfig:  # noqa: PLR0912 (one branch per cross-reference checked, each with its own message)
        problems = ProblemCollector()
        for field, names in (
            ("flavors", [f.name for f in self.flavors]),
            ("clusterQueues", [q.name for q in self.cluster_queues]),
            ("teams", [t.namespace for t in self.teams]),
            ("priorityClasses", [p.name for p in self.priority_classes]),
        ):
            for name in duplicates(names):
                problems.add([field], f"duplicate name {name!r}")
        flavors = {f.name for f in self.flavors}
        queues = {q.name for q in self.cluster_queues}
        for qi, queue in enumerate(self.cluster_queues):
            for fi, quota in enumerate(queue.quotas):
                if quota.flavor not in flavors:
                    problems.add(
                        ["clusterQueues", qi, "quotas", fi, "flavor"],
                        f"cluster queue {queue.name!r}: unknown flavor {quota.flavor!r} (known: {', '.join(sorted(flavors))})",
                    )
            for name in duplicates(q.flavor for q in queue.quotas):
                problems.add(["clusterQueues", qi, "quotas"], f"cluster queue {queue.name!r}: flavor {name!r} listed twice")
            if not queue.in_cohort:
                # kueue 0.19.2 refuses a ClusterQueue without cohortName that sets a borrowingLimit (the
                # CRD rule on spec; pkg/webhooks/clusterqueue_webhook.go validateLimit).
                for fi, quota in enumerate(queue.quotas):
                    if quota.borrowing_limit_gpus is not None:
                        problems.add(
                            ["clusterQueues", qi, "quotas", fi, "borrowingLimitGpus"],
                            f"cluster queue {queue.name!r} is outside the cohort (inCohort: false), so it has nothing to "
                            "borrow and Kueue refuses a borrowing limit on it: drop borrowingLimitGpus or set inCohort: true",
                        )
        for ti, team in enumerate(self.teams):
            if team.cluster_queue not in queues:
                problems.add(
                    ["teams", ti, "clusterQueue"],
                    f"team {team.namespace!r}: unknown cluster queue {team.cluster_queue!r} (known: {', '.join(sorted(queues))})",
                )
        if self.samples:
            teams = [t.namespace for t in self.teams]
            if self.sample_namespace is None:
                problems.add(["sampleNamespace"], "required when samples is true (one of the team namespaces)")
            elif self.sample_namespace not in teams:
                problems.add(
                    ["sampleNamespace"],
                    f"unknown namespace {self.sample_namespace!r}: samples go into a team namespace (known: {', '.join(teams) or 'none'})",
                )
        problems.raise_if_any()
        return self


# --- DevOps lane ------------------------------------------------------------------------------------


def pool_capacity(pool: NodePool) -> dict[str, float]:
    """What a node pool offers in total (used by the quota-over-capacity check)."""
    gpus = pool.gpus_per_node.count if pool.gpus_per_node else 0
    return {
        "cpu": quantity_value(pool.cpu_per_node) * pool.nodes,
        "memory": quantity_value(pool.memory_per_node) * pool.nodes,
        "gpus": float(gpus * pool.nodes),
    }
