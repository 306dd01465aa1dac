"""The batch layer's objects as plain data (pure: tested directly, no Pulumi): the kueue chart's values and manager
Configuration, the ResourceFlavor, ClusterQueue, LocalQueue and WorkloadPriorityClass bodies, the namespaces'
traffic rules and the sample AppWrapper. layer.py registers them."""

from __future__ import annotations

from typing import Any

import yaml

from ...chart_security import RESTRICTED_CONTAINER_SECURITY
from ...ground.pools import NodePool
from ...k8s.resources import (
    Allow,
    Port,
    container_resources,
    egress_to_apiserver,
    ingress_from_anywhere,
)
from ...versions import Images
from .config import ClusterQueue, PriorityClass, Quota, Team

NAMESPACE = "kueue-system"
APPWRAPPER_NAMESPACE = "appwrapper-system"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
LOCAL_QUEUE = "default"
QUEUE_LABEL = "hpcforge.io/cluster-queue"
GPU = "nvidia.com/gpu"
LOCAL_QUEUE_IMMUTABLE = ("spec.clusterQueue",)
"""LocalQueue fields Kueue's CRD refuses to change in place (localqueue_types.go, v0.19.2)."""
KUEUE_VISIBILITY_PORT = 8082
"""Where the kueue controller serves the visibility API (the kueue-visibility-server Service's targetPort)."""
TEAM_NAMESPACES: dict[str, Any] = {"matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]}
"""The namespaces Kueue manages jobs in: the team namespaces (labelled with their ClusterQueue), the
only ones whose workloads a ClusterQueue admits (`cluster_queue_spec` namespaceSelector)."""


def kueue_namespace_allows() -> list[Allow]:
    """The traffic rules of Kueue's namespace: the API server, the webhook, metrics and the visibility API."""
    return [
        egress_to_apiserver(),
        ingress_from_anywhere("allow-ingress-webhook", Port(9443)),
        ingress_from_anywhere("allow-ingress-metrics", Port(8443)),
        # The visibility APIServices (v1beta1/v1beta2.visibility.kueue.x-k8s.io) route through the
        # kueue-visibility-server Service to targetPort 8082 (kueue 0.19.2 chart, rendered): the
        # API server calls it from the host network.
        ingress_from_anywhere("allow-ingress-visibility", Port(KUEUE_VISIBILITY_PORT)),
    ]


def appwrapper_namespace_allows() -> list[Allow]:
    """The traffic rules of the AppWrapper controller's namespace: the API server and its webhook."""
    return [egress_to_apiserver(), ingress_from_anywhere("allow-ingress-webhook", Port(9443))]


def kueue_values() -> dict[str, Any]:
    """The kueue chart's values: the pinned release image and the manager Configuration (`kueue_manager_config`)."""
    return {
        "controllerManager": {
            "manager": {
                # The chart's default image is a moving staging tag; pin the release.
                "image": {"repository": Images.KUEUE.repository, "tag": Images.KUEUE.tag, "pullPolicy": "IfNotPresent"},
                "resources": container_resources("500m", "512Mi", "1Gi"),
            },
        },
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(kueue_manager_config(), sort_keys=False)},
    }


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


def resource_flavor_spec(pool: NodePool) -> dict[str, Any]:
    """A ResourceFlavor on one node pool: its labels, and tolerations of its taints."""
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


def priority_class_body(priority: PriorityClass) -> dict[str, Any]:
    """A WorkloadPriorityClass's fields (it has no spec)."""
    return {"value": priority.value, "description": priority.description}


def local_queue_spec(team: Team) -> dict[str, Any]:
    """The LocalQueue of a team's namespace, feeding the team's ClusterQueue."""
    return {"clusterQueue": team.cluster_queue}


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
