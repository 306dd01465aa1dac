"""Batch layer: Kueue and the AppWrapper controller, with flavors, queues, a borrowing cohort,
team LocalQueues and WorkloadPriorityClasses from typed config.

The contract with Slurm is validated in config: a node pool is given either to Slurm nodesets or
to Kueue flavors, never both, and queue quotas never promise more than the pools have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from ...charts import ChartDeployer, ChartUse
from ...config.pools import NodePool
from ...context import DeployContext
from ...k8s.resources import (
    RESTRICTED_CONTAINER_SECURITY,
    KubernetesObject,
    Namespace,
    Port,
    container_resources,
    egress_to_apiserver,
    ingress_from_anywhere,
)
from ...versions import Charts, Images, Manifests
from .config import BatchConfig, ClusterQueue, Quota

NAMESPACE = "kueue-system"
APPWRAPPER_NAMESPACE = "appwrapper-system"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
LOCAL_QUEUE = "default"
QUEUE_LABEL = "hpcforge.io/cluster-queue"
GPU = "nvidia.com/gpu"
LOCAL_QUEUE_IMMUTABLE = ("spec.clusterQueue",)
"""LocalQueue fields Kueue's CRD refuses to change in place (localqueue_types.go, v0.19.2)."""

CHARTS = (ChartUse("kueue", Charts.KUEUE, NAMESPACE),)


def resource_flavor_spec(pool: NodePool) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeLabels": dict(pool.labels)}
    if pool.taints:
        spec["tolerations"] = [{"key": taint, "operator": "Exists", "effect": "NoSchedule"} for taint in pool.taints]
    return spec


def _quota_resources(quota: Quota, with_gpus: bool) -> list[dict[str, Any]]:
    resources: list[dict[str, Any]] = [
        {"name": "cpu", "nominalQuota": quota.cpu},
        {"name": "memory", "nominalQuota": quota.memory},
    ]
    if with_gpus:
        gpu: dict[str, Any] = {"name": GPU, "nominalQuota": quota.gpus}
        if quota.borrowing_limit_gpus is not None:
            gpu["borrowingLimit"] = quota.borrowing_limit_gpus
        resources.append(gpu)
    return resources


def cluster_queue_spec(queue: ClusterQueue, cohort: str) -> dict[str, Any]:
    """One resource group covering cpu, memory (and GPUs when any quota has them), per flavor."""
    with_gpus = any(quota.gpus for quota in queue.quotas)
    covered = ["cpu", "memory", *([GPU] if with_gpus else [])]
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {QUEUE_LABEL: queue.name}},
        "queueingStrategy": queue.queueing,
        "preemption": {"withinClusterQueue": queue.preemption, "reclaimWithinCohort": "Any"},
        "resourceGroups": [
            {
                "coveredResources": covered,
                "flavors": [{"name": q.flavor, "resources": _quota_resources(q, with_gpus)} for q in queue.quotas],
            }
        ],
    }
    if queue.in_cohort:
        spec["cohortName"] = cohort
    return spec


def sample_appwrapper(namespace: str) -> dict[str, Any]:
    """A two-pod job wrapped so that Kueue admits (or queues) both pods as one unit."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "sample-pair"},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "completionMode": "Indexed",
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [
                        {
                            "name": "worker",
                            "image": Images.ALPINE.ref,
                            "command": ["/bin/sh", "-c", 'echo "worker $JOB_COMPLETION_INDEX of 2 admitted by Kueue"; sleep 30'],
                            "resources": container_resources("500m", "256Mi"),
                            "securityContext": RESTRICTED_CONTAINER_SECURITY,
                        }
                    ],
                }
            },
        },
    }
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "sample-pair", "namespace": namespace, "labels": {"kueue.x-k8s.io/queue-name": LOCAL_QUEUE}},
        "spec": {"components": [{"template": job, "podSets": [{"replicas": 2, "path": "template.spec.template"}]}]},
    }


@dataclass(frozen=True)
class BatchArgs:
    ctx: DeployContext
    config: BatchConfig
    pools: Sequence[NodePool]
    charts: ChartDeployer
    depends_on: Sequence[pulumi.Resource] = ()


TEAM_NAMESPACES: dict[str, Any] = {"matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]}
"""The namespaces Kueue manages jobs in: the team namespaces (labelled with their ClusterQueue), the
only ones whose workloads a ClusterQueue admits (`cluster_queue_spec` namespaceSelector)."""


def kueue_manager_config() -> dict[str, Any]:
    """The kueue chart 0.19.2's default manager Configuration (values.yaml
    `managerConfig.controllerManagerConfigYaml`), with `managedJobsNamespaceSelector` set to the team
    namespaces. Without it the chart registers Kueue's job webhooks (Pods, Jobs, Deployments,
    StatefulSets, AppWrappers, ...; failurePolicy Fail) for every namespace but kube-system and
    kueue-system (templates/webhook/manifests.yaml), so no pod of any namespace could be created,
    and `pulumi up` could not create or update a Deployment, StatefulSet or Job anywhere, while the
    single Kueue controller is not serving (starting, restarting, upgraded)."""
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        "managedJobsNamespaceSelector": TEAM_NAMESPACES,
        "integrations": {
            "frameworks": [
                "batch/job",
                "kubeflow.org/mpijob",
                "ray.io/rayjob",
                "ray.io/rayservice",
                "ray.io/raycluster",
                "jobset.x-k8s.io/jobset",
                "workload.codeflare.dev/appwrapper",
                "trainer.kubeflow.org/trainjob",
                "pod",
                "deployment",
                "statefulset",
                "leaderworkerset.x-k8s.io/leaderworkerset",
            ]
        },
    }


KUEUE_VISIBILITY_PORT = 8082
"""Where the kueue controller serves the visibility API (the kueue-visibility-server Service's targetPort)."""


class Batch(pulumi.ComponentResource):
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: BatchArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:batch:Batch", name, None, opts)
        ctx, cfg = args.ctx, args.config
        pools = {pool.name: pool for pool in args.pools}
        namespace = Namespace(
            ctx,
            NAMESPACE,
            component="batch",
            parent=self,
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-webhook", Port(9443)),
                ingress_from_anywhere("allow-ingress-metrics", Port(8443)),
                # The visibility APIServices (v1beta1/v1beta2.visibility.kueue.x-k8s.io) route through the
                # kueue-visibility-server Service to targetPort 8082 (kueue 0.19.2 chart, rendered): the
                # API server calls it from the host network.
                ingress_from_anywhere("allow-ingress-visibility", Port(KUEUE_VISIBILITY_PORT)),
            ],
            depends_on=args.depends_on,
        )
        kueue = args.charts.deploy(
            "kueue",
            Charts.KUEUE,
            NAMESPACE,
            {
                "controllerManager": {
                    "manager": {
                        # The chart's default image is a moving staging tag; pin the release.
                        "image": {"repository": Images.KUEUE.repository, "tag": Images.KUEUE.tag, "pullPolicy": "IfNotPresent"},
                        "resources": container_resources("500m", "512Mi", "1Gi"),
                    },
                },
                "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(kueue_manager_config(), sort_keys=False)},
            },
            parent=self,
            depends_on=namespace.ready,
        )
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
            allows=[egress_to_apiserver(), ingress_from_anywhere("allow-ingress-webhook", Port(9443))],
        )

        def cr(
            kind: str,
            name: str,
            body: dict[str, Any],
            namespace_name: str | None,
            depends: Sequence[pulumi.Resource],
            immutable: Sequence[str] = (),
        ) -> KubernetesObject:
            manifest = {
                "apiVersion": KUEUE_API,
                "kind": kind,
                "metadata": ctx.meta(name, "batch", namespace_name, app="kueue"),
                **body,
            }
            # Fields the API server refuses to change in place are replaced instead, deleting the
            # old object first: the new one has the same name.
            options = ctx.opts(
                self,
                depends_on=list(depends),
                replace_on_changes=list(immutable) or None,
                delete_before_replace=True if immutable else None,
            )
            return KubernetesObject(f"{namespace_name or '_cluster'}/{kind.lower()}-{name}", manifest, opts=options)

        flavors = [
            cr("ResourceFlavor", f.name, {"spec": resource_flavor_spec(pools[f.pool])}, None, [kueue]) for f in cfg.flavors
        ]
        cohort = cr("Cohort", cfg.cohort, {"spec": {}}, None, [kueue])
        queues = [
            cr("ClusterQueue", q.name, {"spec": cluster_queue_spec(q, cfg.cohort)}, None, [*flavors, cohort])
            for q in cfg.cluster_queues
        ]
        classes = [
            cr("WorkloadPriorityClass", p.name, {"value": p.value, "description": p.description}, None, [kueue])
            for p in cfg.priority_classes
        ]
        objects: list[pulumi.Resource] = [kueue, appwrapper, *appwrapper_ns.ready, *flavors, cohort, *queues, *classes]
        # What each team namespace needs before workloads go into it: the namespace (and its
        # policies) and its LocalQueue, by namespace name.
        team_ready: dict[str, list[pulumi.Resource]] = {}
        for team in cfg.teams:
            team_ns = Namespace(
                ctx,
                team.namespace,
                component="batch-team",
                parent=self,
                extra_labels={QUEUE_LABEL: team.cluster_queue},
                depends_on=args.depends_on,
            )
            # kueue 0.19.2 LocalQueue CRD: `spec.clusterQueue` is immutable (CEL `self == oldSelf`), so a
            # team moved to another ClusterQueue gets a new LocalQueue of the same name; when it is
            # created Kueue queues the namespace's pending workloads in it again
            # (pkg/cache/queue/manager.go addLocalQueueLocked), admitted ones keep their admission.
            local = cr(
                "LocalQueue",
                LOCAL_QUEUE,
                {"spec": {"clusterQueue": team.cluster_queue}},
                team.namespace,
                [*team_ns.ready, *queues],
                immutable=LOCAL_QUEUE_IMMUTABLE,
            )
            team_ready[team.namespace] = [*team_ns.ready, local]
            objects += team_ready[team.namespace]
        if cfg.samples and cfg.sample_namespace:
            sample = sample_appwrapper(cfg.sample_namespace)
            objects.append(
                k8s.apiextensions.CustomResource(
                    f"{cfg.sample_namespace}/appwrapper-sample-pair",
                    api_version=sample["apiVersion"],
                    kind=sample["kind"],
                    metadata=ctx.meta(
                        "sample-pair",
                        "batch-sample",
                        cfg.sample_namespace,
                        app="appwrapper",
                        extra_labels=sample["metadata"]["labels"],
                    ),
                    spec=sample["spec"],
                    opts=ctx.opts(self, depends_on=[appwrapper, *team_ready[cfg.sample_namespace]]),
                )
            )
        self.ready = objects
        self.register_outputs(
            {
                "clusterQueues": [q.name for q in cfg.cluster_queues],
                "teams": [t.namespace for t in cfg.teams],
                "cohort": cfg.cohort,
            }
        )
