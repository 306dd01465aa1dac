"""Batch layer: Kueue and the AppWrapper controller, with flavors, queues, a borrowing cohort,
team LocalQueues and WorkloadPriorityClasses from typed config (their bodies built in objects.py).

The contract with Slurm is validated in config: a node pool is given either to Slurm nodesets or
to Kueue flavors, never both, and queue quotas never promise more than the pools have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...ground.pools import NodePool
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.resources import Namespace
from ...k8s.scope import Scope
from ...versions import Charts, Manifests
from .config import BatchConfig
from .objects import (
    APPWRAPPER_NAMESPACE,
    KUEUE_API,
    LOCAL_QUEUE,
    LOCAL_QUEUE_IMMUTABLE,
    NAMESPACE,
    QUEUE_LABEL,
    appwrapper_namespace_allows,
    cluster_queue_spec,
    kueue_namespace_allows,
    kueue_values,
    local_queue_spec,
    priority_class_body,
    resource_flavor_spec,
    sample_appwrapper,
)

CHARTS = (ChartUse("kueue", Charts.KUEUE, NAMESPACE),)


@dataclass(frozen=True)
class BatchArgs:
    ctx: DeployContext
    config: BatchConfig
    pools: Sequence[NodePool]
    charts: ChartDeployer
    depends_on: Sequence[pulumi.Resource] = ()


class Batch(pulumi.ComponentResource):
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: BatchArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:batch:Batch", name, None, opts)
        self._ctx, cfg = args.ctx, args.config
        kueue, appwrapper, appwrapper_ready = self._controllers(args)
        queue_objects, cluster_queues = self._queues(cfg, args.pools, kueue)
        team_ready = self._teams(cfg, cluster_queues, args.depends_on)
        objects: list[pulumi.Resource] = [kueue, appwrapper, *appwrapper_ready, *queue_objects]
        objects += [r for ready in team_ready.values() for r in ready]
        if cfg.samples and cfg.sample_namespace:
            objects.append(self._sample(cfg.sample_namespace, [appwrapper, *team_ready[cfg.sample_namespace]]))
        self.ready = objects
        self.register_outputs(
            {
                "clusterQueues": [q.name for q in cfg.cluster_queues],
                "teams": [t.namespace for t in cfg.teams],
                "cohort": cfg.cohort,
            }
        )

    def _controllers(self, args: BatchArgs) -> tuple[pulumi.Resource, pulumi.Resource, list[pulumi.Resource]]:
        """Kueue (its namespace and chart) and the AppWrapper controller (its release manifest and namespace)."""
        ctx = self._ctx
        namespace = LayerNamespace(
            ctx,
            self,
            NAMESPACE,
            component="batch",
            allows=kueue_namespace_allows(),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        kueue = namespace.chart("kueue", Charts.KUEUE, kueue_values())
        # AppWrapper has no chart: its pinned release manifest, applied by Pulumi in both delivery modes.
        appwrapper = k8s.yaml.v2.ConfigFile(
            "appwrapper",
            file=Manifests.APPWRAPPER.url,
            opts=ctx.opts(self, depends_on=[kueue]),
        )
        appwrapper_ns = Namespace(
            ctx,
            APPWRAPPER_NAMESPACE,
            component="batch",
            parent=self,
            created_by=appwrapper,
            allows=appwrapper_namespace_allows(),
        )
        return kueue, appwrapper, list(appwrapper_ns.ready)

    def _queues(
        self, cfg: BatchConfig, pools: Sequence[NodePool], kueue: pulumi.Resource
    ) -> tuple[list[pulumi.Resource], list[pulumi.Resource]]:
        """The ResourceFlavors, the Cohort, the ClusterQueues and the WorkloadPriorityClasses (all cluster-wide):
        all of them, and the ClusterQueues alone."""
        by_name = {pool.name: pool for pool in pools}
        flavors = [
            self._kueue("ResourceFlavor", f.name, {"spec": resource_flavor_spec(by_name[f.pool])}, None, [kueue])
            for f in cfg.flavors
        ]
        cohort = self._kueue("Cohort", cfg.cohort, {"spec": {}}, None, [kueue])
        queues: list[pulumi.Resource] = [
            self._kueue("ClusterQueue", q.name, {"spec": cluster_queue_spec(q, cfg.cohort)}, None, [*flavors, cohort])
            for q in cfg.cluster_queues
        ]
        classes = [
            self._kueue("WorkloadPriorityClass", p.name, priority_class_body(p), None, [kueue]) for p in cfg.priority_classes
        ]
        return [*flavors, cohort, *queues, *classes], queues

    def _teams(
        self, cfg: BatchConfig, queues: Sequence[pulumi.Resource], depends_on: Sequence[pulumi.Resource]
    ) -> dict[str, list[pulumi.Resource]]:
        """Each team's namespace (labelled with its ClusterQueue) and LocalQueue: what workloads going into the
        namespace need first, by namespace name."""
        team_ready: dict[str, list[pulumi.Resource]] = {}
        for team in cfg.teams:
            team_ns = Namespace(
                self._ctx,
                team.namespace,
                component="batch-team",
                parent=self,
                extra_labels={QUEUE_LABEL: team.cluster_queue},
                depends_on=depends_on,
            )
            # kueue 0.19.2 LocalQueue CRD: `spec.clusterQueue` is immutable (CEL `self == oldSelf`), so a
            # team moved to another ClusterQueue gets a new LocalQueue of the same name; when it is
            # created Kueue queues the namespace's pending workloads in it again
            # (pkg/cache/queue/manager.go addLocalQueueLocked), admitted ones keep their admission.
            local = self._kueue(
                "LocalQueue",
                LOCAL_QUEUE,
                {"spec": local_queue_spec(team)},
                team.namespace,
                [*team_ns.ready, *queues],
                immutable=LOCAL_QUEUE_IMMUTABLE,
            )
            team_ready[team.namespace] = [*team_ns.ready, local]
        return team_ready

    def _kueue(
        self,
        kind: str,
        name: str,
        body: dict[str, Any],
        namespace: str | None,
        depends: Sequence[pulumi.Resource],
        immutable: Sequence[str] = (),
    ) -> pulumi.Resource:
        """Registers one Kueue object (cluster-scoped when `namespace` is None) from its body: its `spec`, or the
        top-level fields of a kind without one (a WorkloadPriorityClass's `value`); fields the API server refuses to
        change in place (`immutable`) replace it instead, deleting the old object first (the new one has the same name)."""
        # A cluster-scoped object is in no namespace: its scope is the layer's own (Kueue's), which it does not name.
        scope = Scope(self._ctx, self, namespace or NAMESPACE, "batch", app="kueue")
        fields = {key: value for key, value in body.items() if key != "spec"}
        return scope.custom(
            KUEUE_API,
            kind,
            name,
            body.get("spec"),
            cluster_scoped=namespace is None,
            resource_name=f"{namespace or '_cluster'}/{kind.lower()}-{name}",
            depends_on=depends,
            fields=fields,
            immutable=immutable,
        )

    def _sample(self, namespace: str, depends: Sequence[pulumi.Resource]) -> pulumi.Resource:
        """The sample AppWrapper in its team's namespace."""
        sample = sample_appwrapper(namespace)
        scope = Scope(self._ctx, self, namespace, "batch-sample", app="appwrapper")
        return scope.custom(
            sample["apiVersion"],
            sample["kind"],
            "sample-pair",
            sample["spec"],
            resource_name=f"{namespace}/appwrapper-sample-pair",
            depends_on=depends,
            extra_labels=sample["metadata"]["labels"],
        )
