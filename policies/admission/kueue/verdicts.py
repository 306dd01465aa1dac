"""Kueue's admission over a whole set of objects: each Kueue object and each job its webhooks see, on create
(`kueue_verdicts`) and on update (`update_refusals`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.access import text
from ...rules.podtemplates import display, group_of, kind_of, name_of, namespace_of, pod_templates
from ..family import mark
from .clusterqueue import cluster_queue_refusals, cluster_queue_update_refusals, cohort_refusals
from .fields import DEFAULT_LOCAL_QUEUE, KUEUE_GROUP, QUEUE_LABEL, Refusal
from .jobs import (
    cronjob_job,
    deployed_namespace_selector,
    job_meta,
    job_refusals,
    job_update_refusals,
    job_webhook_sees,
    namespace_labels,
)
from .localqueue import local_queue_update_refusals
from .resourceflavor import resource_flavor_refusals, resource_flavor_update_refusals
from .workload import podset_refusals


@dataclass(frozen=True)
class Verdict:
    """One object as Kueue's admission (webhooks and CRD rules) sees it."""

    obj: Mapping[str, Any]
    refusals: tuple[Refusal, ...]
    queue: str | None = None
    """For a job: the LocalQueue it is submitted to (its label, or `default` put there by Kueue's
    defaulting in a namespace that has one); None: Kueue does not manage it."""
    where: str = ""
    """What was judged when not the object itself (e.g. the Job a CronJob makes)."""

    @property
    def admitted(self) -> bool:
        return not self.refusals

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(str(r) for r in self.refusals)

    def lines(self) -> list[str]:
        return [f"  {mark(self.admitted)} {self.message}"]

    @property
    def message(self) -> str:
        what = display(self.obj) + (f" ({self.where})" if self.where else "")
        if self.admitted:
            return f"{what}: admitted" + (f", queue {self.queue}" if self.queue else "")
        return f"{what}: " + "; ".join(str(r) for r in self.refusals)


CORE_CHECKS = {
    "ClusterQueue": cluster_queue_refusals,
    "Cohort": cohort_refusals,
    "ResourceFlavor": resource_flavor_refusals,
}
"""Kueue kinds with create rules (a webhook or CRD rules); LocalQueue and WorkloadPriorityClass
have neither at create beyond their OpenAPI schema."""


def default_queue_namespaces(objects: Iterable[Mapping[str, Any]]) -> set[str]:
    """Namespaces with a LocalQueue named `default` among `objects`."""
    return {
        namespace_of(o)
        for o in objects
        if group_of(o) == KUEUE_GROUP and kind_of(o) == "LocalQueue" and name_of(o) == DEFAULT_LOCAL_QUEUE
    }


def kueue_verdicts(objects: Sequence[Mapping[str, Any]], namespace_selector: Mapping[str, Any] | None = None) -> list[Verdict]:
    """Every Kueue object and every job Kueue's job webhooks see, judged as Kueue 0.19.2 admits it on
    create; for a job Kueue manages (a queue name, or the default LocalQueue of its namespace), also
    the Workload it will build from the job's pod templates. `namespace_selector`: the manager
    config's managedJobsNamespaceSelector (default: the one the kueue chart deployed among `objects`
    says, else the chart's default), which scopes the job webhooks and what Kueue manages."""
    if namespace_selector is None:
        namespace_selector = deployed_namespace_selector(objects)
    labels = namespace_labels(objects)
    defaulted = default_queue_namespaces(objects)
    verdicts: list[Verdict] = []
    for obj in objects:
        if group_of(obj) == KUEUE_GROUP and kind_of(obj) in CORE_CHECKS:
            verdicts.append(Verdict(obj, tuple(CORE_CHECKS[kind_of(obj)](obj))))
            continue
        judged, where = obj, ""
        if group_of(obj) == "batch" and kind_of(obj) == "CronJob":
            judged, where = cronjob_job(obj), "the Job of spec.jobTemplate"
        if not job_webhook_sees(judged, labels, namespace_selector):
            continue
        queue = text(job_meta(judged, "labels").get(QUEUE_LABEL)) or (
            DEFAULT_LOCAL_QUEUE if namespace_of(judged) in defaulted else None
        )
        refusals = job_refusals(judged)
        if queue is not None:
            for index, template in enumerate(pod_templates(judged)):
                refusals += podset_refusals(template, index)
        verdicts.append(Verdict(obj, tuple(refusals), queue, where))
    return verdicts


def update_refusals(
    old: Mapping[str, Any], new: Mapping[str, Any], *, suspended: bool = False, default_queue: bool = False
) -> list[Refusal]:
    """What Kueue's admission refuses when `old` is updated to `new` (a `pulumi up` that changes an
    object in place); a job is taken as running (not `suspended`) unless told otherwise."""
    if group_of(new) == KUEUE_GROUP:
        kind = kind_of(new)
        if kind == "LocalQueue":
            return local_queue_update_refusals(old, new)
        if kind == "ClusterQueue":
            return cluster_queue_update_refusals(old, new)
        if kind == "ResourceFlavor":
            return resource_flavor_update_refusals(old, new)
        if kind == "Cohort":
            return cohort_refusals(new)
        return []
    return job_update_refusals(old, new, suspended=suspended, default_queue=default_queue)
