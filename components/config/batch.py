"""Kubernetes-native batch (Kueue + AppWrapper) and the DevOps lane (Argo Workflows, registry)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from .base import DnsName, K8sName, ProblemCollector, Quantity, StrictModel, duplicates, quantity_value
from .identity import Storage
from .pools import NodePool

_IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$")


def _pinned_image(value: str) -> str:
    """An image reference pinned by tag or digest, never `latest` and never bare."""
    if not _IMAGE.match(value):
        raise ValueError(f"{value!r} is not an image reference (registry/repository:tag or @sha256:digest)")
    name = value.split("@", maxsplit=1)[0]
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else None
    if "@sha256:" not in value and tag is None:
        raise ValueError(f"{value!r} has no tag: pin it (e.g. {value}:1.2.3) so builds are reproducible")
    if tag == "latest":
        raise ValueError(f"{value!r} uses the moving tag 'latest': pin a version")
    return value


PinnedImage = Annotated[str, AfterValidator(_pinned_image)]


# --- Kueue ----------------------------------------------------------------------------------------


class Flavor(StrictModel):
    """A Kueue ResourceFlavor: a node pool (hpcforge:nodePools) given to Kubernetes-native batch."""

    name: K8sName
    pool: K8sName


class Quota(StrictModel):
    flavor: K8sName
    cpu: Quantity
    memory: Quantity
    gpus: int = Field(default=0, ge=0)
    """nvidia.com/gpu quota (never more than the flavor's pool has)."""
    borrowing_limit_gpus: int | None = Field(default=None, ge=0)


class ClusterQueue(StrictModel):
    name: K8sName
    quotas: tuple[Quota, ...] = Field(min_length=1)
    in_cohort: bool = True
    """Join the site cohort, so idle quota can be borrowed between queues."""
    preemption: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "LowerPriority"
    queueing: Literal["StrictFIFO", "BestEffortFIFO"] = "BestEffortFIFO"


class Team(StrictModel):
    """A team namespace with a LocalQueue into a ClusterQueue."""

    namespace: K8sName
    cluster_queue: K8sName


class PriorityClass(StrictModel):
    name: K8sName
    value: int = Field(ge=-2147483648, le=1000000000)
    description: str = ""


class BatchConfig(StrictModel):
    enabled: bool = True
    cohort: K8sName = "site"
    flavors: tuple[Flavor, ...] = Field(min_length=1)
    cluster_queues: tuple[ClusterQueue, ...] = Field(min_length=1)
    teams: tuple[Team, ...] = ()
    priority_classes: tuple[PriorityClass, ...] = ()
    samples: bool = False
    """Render a sample AppWrapper (a two-pod job) into `sampleNamespace`."""
    sample_namespace: K8sName | None = None

    def flavor(self, name: str) -> Flavor | None:
        return next((f for f in self.flavors if f.name == name), None)

    @model_validator(mode="after")
    def _cross_checks(self) -> BatchConfig:
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


class NfsShare(StrictModel):
    """The site's shared software storage, mounted read-only by tests and read-write by builds."""

    server: str = Field(min_length=1)
    path: str = Field(pattern=r"^/")
    size: Quantity = "1Ti"


class PipelineStep(StrictModel):
    name: K8sName
    image: PinnedImage
    command: tuple[str, ...] = Field(min_length=1)
    cpu: Quantity = "1"
    memory: Quantity = "2Gi"


class Pipeline(StrictModel):
    """A WorkflowTemplate: one build step, then test steps that run in parallel."""

    name: K8sName = "software-build"
    build: PipelineStep
    tests: tuple[PipelineStep, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_steps(self) -> Pipeline:
        names = [self.build.name, *(t.name for t in self.tests)]
        if dup := duplicates(names):
            raise ValueError(f"duplicate step name {dup[0]!r}")
        return self


class Registry(StrictModel):
    enabled: bool = True
    storage: Storage = Field(default_factory=lambda: Storage(size="100Gi"))
    hostname: DnsName | None = None
    """Also publish the registry through Traefik under this name (TLS from the internal CA)."""


class WorkflowsUi(StrictModel):
    enabled: bool = False
    hostname: DnsName | None = None


class DevOpsConfig(StrictModel):
    enabled: bool = True
    namespace: K8sName = "devops"
    software: NfsShare
    pipeline: Pipeline
    registry: Registry = Field(default_factory=Registry)
    ui: WorkflowsUi = Field(default_factory=WorkflowsUi)

    @model_validator(mode="after")
    def _ui_hostname(self) -> DevOpsConfig:
        if self.ui.enabled and self.ui.hostname is None:
            raise ValueError("ui.hostname is required when ui.enabled is true")
        return self


def pool_capacity(pool: NodePool) -> dict[str, float]:
    """What a node pool offers in total (used by the quota-over-capacity check)."""
    gpus = pool.gpus_per_node.count if pool.gpus_per_node else 0
    return {
        "cpu": quantity_value(pool.cpu_per_node) * pool.nodes,
        "memory": quantity_value(pool.memory_per_node) * pool.nodes,
        "gpus": float(gpus * pool.nodes),
    }
