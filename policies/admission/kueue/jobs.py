"""What Kueue's job webhooks refuse: pkg/controller/jobframework/validation.go `ValidateJobOnCreate` and
`ValidateJobOnUpdate`, the Job, Deployment, StatefulSet and AppWrapper webhooks, and which namespaces the
chart's job webhooks see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from ...rules.access import get, mapping, text
from ...rules.apimachinery import is_dns1123_subdomain
from ...rules.netpol import selector_matches
from ...rules.podtemplates import group_of, kind_of, name_of, namespace_of
from .fields import (
    ADMISSION_GATED_BY_ANNOTATION,
    ELASTIC_JOB_ANNOTATION,
    ELASTIC_KINDS,
    IMMUTABLE,
    JOB_KINDS,
    KUEUE_NAMESPACE,
    MANAGED_LABEL,
    MAX_EXEC_TIME_LABEL,
    MIN_PARALLELISM_ANNOTATION,
    PREBUILT_KINDS,
    PREBUILT_WORKLOAD_ANNOTATION,
    PREBUILT_WORKLOAD_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_LABEL,
    SYNC_COMPLETIONS_ANNOTATION,
    Refusal,
)


def _webhook_name(obj: Mapping[str, Any]) -> str:
    return f"webhook v{kind_of(obj).lower()}.kb.io"


def default_namespace_selector(kueue_namespace: str = KUEUE_NAMESPACE) -> dict[str, Any]:
    """The job webhooks' namespaceSelector when the manager config sets no managedJobsNamespaceSelector
    (charts/kueue/templates/webhook/manifests.yaml; the same default in apis/config/v1beta2/defaults.go)."""
    return {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", kueue_namespace]}
        ]
    }


def deployed_namespace_selector(objects: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The `managedJobsNamespaceSelector` of the kueue chart's manager config, when an Argo CD
    Application among `objects` installs the chart with it (`helm.valuesObject`); None when not
    known (no such Application, e.g. the chart delivered by helm.v4.Chart, or no selector set)."""
    for obj in objects:
        if kind_of(obj) != "Application" or get(obj, "spec", "source", "chart") != "kueue":
            continue
        config = text(get(obj, "spec", "source", "helm", "valuesObject", "managerConfig", "controllerManagerConfigYaml"))
        if config:
            selector = mapping(yaml.safe_load(config)).get("managedJobsNamespaceSelector")
            return mapping(selector) if selector is not None else None
    return None


def namespace_labels(objects: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Labels of the Namespaces among `objects`, with `kubernetes.io/metadata.name`, which the API
    server sets on every namespace."""
    found: dict[str, dict[str, Any]] = {}
    for obj in objects:
        if group_of(obj) == "" and kind_of(obj) == "Namespace":
            found.setdefault(name_of(obj), {"kubernetes.io/metadata.name": name_of(obj)}).update(job_meta(obj, "labels"))
    return found


def job_webhook_sees(
    obj: Mapping[str, Any], labels: Mapping[str, Mapping[str, Any]] | None = None, selector: Mapping[str, Any] | None = None
) -> bool:
    """Whether one of Kueue's job webhooks is called for `obj`: its kind, and its namespace's labels
    (`labels`, per namespace) against the webhooks' namespaceSelector (`selector`; by default the
    chart's: not kube-system, not kueue-system). A CronJob's Jobs are created by the CronJob
    controller: see `cronjob_job`."""
    if (group_of(obj), kind_of(obj)) not in JOB_KINDS:
        return False
    namespace = namespace_of(obj)
    found = dict((labels or {}).get(namespace) or {"kubernetes.io/metadata.name": namespace})
    return selector_matches(default_namespace_selector() if selector is None else selector, found)


def cronjob_job(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The Job a CronJob makes (its jobTemplate), which Kueue's Job webhook judges when it is created."""
    template = mapping(get(obj, "spec", "jobTemplate"))
    metadata = {**mapping(template.get("metadata")), "namespace": namespace_of(obj), "name": name_of(obj)}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": dict(mapping(template.get("spec")))}


def job_meta(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return mapping(get(obj, "metadata", key))


def _suspended(obj: Mapping[str, Any]) -> bool:
    return get(obj, "spec", "suspend") is True


def _as_crd_name(value: Any, path: str, by: str) -> list[Refusal]:
    """`ValidateLabelAsCRDName` / `ValidateAnnotationAsCRDName`."""
    errors = is_dns1123_subdomain(text(value) or "")
    return [Refusal(path, "Invalid", ",".join(errors), by, value)] if errors else []


def _prebuilt(obj: Mapping[str, Any]) -> tuple[str, str]:
    """`PrebuiltWorkloadNameFor` and `GetPrebuiltWorkloadPath` with WorkloadIdentifierAnnotations
    (beta, on): the annotation when set, else the label."""
    annotation = text(job_meta(obj, "annotations").get(PREBUILT_WORKLOAD_ANNOTATION)) or ""
    if annotation:
        return annotation, f"metadata.annotations[{PREBUILT_WORKLOAD_ANNOTATION}]"
    return text(job_meta(obj, "labels").get(PREBUILT_WORKLOAD_LABEL)) or "", f"metadata.labels[{PREBUILT_WORKLOAD_LABEL}]"


def _prebuilt_create(obj: Mapping[str, Any], by: str) -> list[Refusal]:
    """`validateCreateForPrebuiltWorkload`: the name a DNS subdomain, on a kind that supports it."""
    name, path = _prebuilt(obj)
    present = (
        PREBUILT_WORKLOAD_ANNOTATION in job_meta(obj, "annotations")
        if "annotations" in path
        else PREBUILT_WORKLOAD_LABEL in job_meta(obj, "labels")
    )
    found = _as_crd_name(name, path, by) if present else []
    if name and (group_of(obj), kind_of(obj)) not in PREBUILT_KINDS:
        found.append(Refusal(path, "Forbidden", f"Is not supported for {kind_of(obj)}", by))
    return found


def _gates(value: str, path: str, by: str) -> list[Refusal]:
    """validation_admissiongatedby.go `validateAdmissionGatedByAnnotationFormat` (csv.Parse, each
    gate a domain-prefixed path of at most 63 characters, no duplicates)."""
    found: list[Refusal] = []
    seen: set[str] = set()
    for gate in (g.strip() for g in value.split(",")) if value.strip() else ():
        if not gate:
            found.append(Refusal(path, "Invalid", "cannot contain empty gate names", by, value))
            continue
        if gate in seen:
            found.append(Refusal(path, "Invalid", f"duplicate gate name: {gate}", by, value))
            continue
        seen.add(gate)
        domain, slash, rest = gate.partition("/")
        if not slash or not rest or is_dns1123_subdomain(domain) or not re.fullmatch(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+", rest):
            found.append(Refusal(path, "Invalid", 'must be a domain-prefixed path (such as "acme.io/foo")', by, gate))
        if len(gate) > 63:
            found.append(Refusal(path, "TooLong", "may not be more than 63 bytes", by, gate))
    return found


def _elastic(obj: Mapping[str, Any]) -> bool:
    """`workloadslicing.Enabled` (ElasticJobsViaWorkloadSlices is beta and on)."""
    return job_meta(obj, "annotations").get(ELASTIC_JOB_ANNOTATION) == "true"


def _common_create(obj: Mapping[str, Any], by: str) -> list[Refusal]:
    """What every job webhook checks on create and update: `ValidateQueueName`,
    `ValidateElasticJobAnnotation`, and the admission-gated-by format."""
    labels, annotations = job_meta(obj, "labels"), job_meta(obj, "annotations")
    found: list[Refusal] = []
    if QUEUE_LABEL in labels:
        found += _as_crd_name(labels[QUEUE_LABEL], f"metadata.labels[{QUEUE_LABEL}]", by)
    if _elastic(obj) and (group_of(obj), kind_of(obj)) not in ELASTIC_KINDS:
        found.append(
            Refusal(
                f"metadata.annotations[{ELASTIC_JOB_ANNOTATION}]",
                "Forbidden",
                f"elastic job is not supported for {kind_of(obj)}",
                by,
            )
        )
    gates = annotations.get(ADMISSION_GATED_BY_ANNOTATION)
    if isinstance(gates, str):
        found += _gates(gates, f"metadata.annotations[{ADMISSION_GATED_BY_ANNOTATION}]", by)
    return found


def validate_job_on_create(obj: Mapping[str, Any], by: str = "") -> list[Refusal]:
    """jobframework `ValidateJobOnCreate`: queue name, prebuilt workload, max execution time, elastic
    job annotation, admission gates (in upstream's order)."""
    by = by or _webhook_name(obj)
    labels = job_meta(obj, "labels")
    common = _common_create(obj, by)
    queue = [r for r in common if r.field.endswith(f"[{QUEUE_LABEL}]")]
    found = [*queue, *_prebuilt_create(obj, by)]
    if MAX_EXEC_TIME_LABEL in labels:  # validateCreateForMaxExecTime
        raw = labels[MAX_EXEC_TIME_LABEL]
        where = f"metadata.labels[{MAX_EXEC_TIME_LABEL}]"
        if not (isinstance(raw, str) and re.fullmatch(r"[+-]?[0-9]+", raw)):
            found.append(Refusal(where, "Invalid", "not an integer", by, raw))
        elif int(raw) <= 0:
            found.append(Refusal(where, "Invalid", "should be greater than 0", by, int(raw)))
    return found + [r for r in common if r not in queue]


def _class_update(old: Mapping[str, Any], new: Mapping[str, Any], suspended: bool, by: str) -> list[Refusal]:
    """`ValidateUpdateForWorkloadPriorityClassName`."""
    old_class = job_meta(old, "labels").get(PRIORITY_CLASS_LABEL, "")
    new_class = job_meta(new, "labels").get(PRIORITY_CLASS_LABEL, "")
    path = f"metadata.labels[{PRIORITY_CLASS_LABEL}]"
    if not suspended and not old_class and new_class:
        return [Refusal(path, "Invalid", "WorkloadPriorityClass cannot be added to a non-suspended workload", by, new_class)]
    if old_class and not new_class:
        return [Refusal(path, "Invalid", "WorkloadPriorityClass cannot be removed from a workload", by, "")]
    return []


def _gates_update(old: Mapping[str, Any], new: Mapping[str, Any], by: str) -> list[Refusal]:
    """`ValidateAdmissionGatedByAnnotationOnUpdate`."""
    old_gates = text(job_meta(old, "annotations").get(ADMISSION_GATED_BY_ANNOTATION)) or ""
    new_gates = text(job_meta(new, "annotations").get(ADMISSION_GATED_BY_ANNOTATION)) or ""
    path = f"metadata.annotations[{ADMISSION_GATED_BY_ANNOTATION}]"
    found: list[Refusal] = []
    if not old_gates and new_gates:
        found.append(Refusal(path, "Forbidden", "cannot add admission gate after creation", by))
    if old_gates and new_gates:
        before = [g.strip() for g in old_gates.split(",")]
        if any(g.strip() not in before for g in new_gates.split(",")):
            found.append(Refusal(path, "Forbidden", "can only remove gates, not add new ones", by))
    return found + _gates(new_gates, path, by)


def validate_job_on_update(
    old: Mapping[str, Any], new: Mapping[str, Any], *, suspended: bool, default_queue: bool, by: str = ""
) -> list[Refusal]:
    """jobframework `ValidateJobOnUpdate` for a job that is (`suspended`) or is not suspended (one
    Kueue admitted runs), in a namespace with (`default_queue`) or without a LocalQueue `default`."""
    by = by or _webhook_name(new)
    old_labels, new_labels = job_meta(old, "labels"), job_meta(new, "labels")
    queue_path = f"metadata.labels[{QUEUE_LABEL}]"
    old_queue, new_queue = old_labels.get(QUEUE_LABEL, ""), new_labels.get(QUEUE_LABEL, "")
    found: list[Refusal] = []
    # validateUpdateForQueueName
    if not suspended and old_queue != new_queue:
        found.append(Refusal(queue_path, "Invalid", IMMUTABLE, by, new_queue))
    if not new_queue and old_queue and default_queue:
        found.append(Refusal(queue_path, "Invalid", "queue-name must not be empty in namespace with default queue", by, ""))
    # validateUpdateForPrebuiltWorkload
    if suspended or _elastic(old):
        found += _prebuilt_create(new, by)
    else:
        (old_name, _), (new_name, new_path) = _prebuilt(old), _prebuilt(new)
        if old_name != new_name:
            found.append(Refusal(new_path, "Invalid", IMMUTABLE, by, new_name))
    # validateUpdateForMaxExecTime
    if not suspended and old_labels.get(MAX_EXEC_TIME_LABEL, "") != new_labels.get(MAX_EXEC_TIME_LABEL, ""):
        found.append(
            Refusal(f"metadata.labels[{MAX_EXEC_TIME_LABEL}]", "Invalid", IMMUTABLE, by, new_labels.get(MAX_EXEC_TIME_LABEL, ""))
        )
    found += _class_update(old, new, suspended, by)
    # validatedUpdateForEnabledWorkloadSlice
    if _elastic(old) != _elastic(new):
        found.append(Refusal(f"metadata.annotations[{ELASTIC_JOB_ANNOTATION}]", "Invalid", IMMUTABLE, by, _elastic(new)))
    found += _gates_update(old, new, by)
    return found


def _job_annotations(job: Mapping[str, Any], by: str) -> list[Refusal]:
    """job_webhook.go `validatePartialAdmissionCreate` and `validateSyncCompletionCreate`."""
    annotations = job_meta(job, "annotations")
    spec = mapping(job.get("spec"))
    parallelism = spec.get("parallelism", 1)
    completions = spec.get("completions", 1)
    found: list[Refusal] = []
    if MIN_PARALLELISM_ANNOTATION in annotations:
        raw = annotations[MIN_PARALLELISM_ANNOTATION]
        where = f"metadata.annotations[{MIN_PARALLELISM_ANNOTATION}]"
        # podsCount(): parallelism, or completions when fewer
        pods = parallelism if isinstance(parallelism, int) else 1
        if isinstance(spec.get("completions"), int) and spec["completions"] < pods:
            pods = spec["completions"]
        if not (isinstance(raw, str) and re.fullmatch(r"[+-]?[0-9]+", raw)):
            found.append(Refusal(where, "Invalid", "not an integer", by, raw))
        elif not 0 < int(raw) < pods:
            found.append(Refusal(where, "Invalid", f"should be between 0 and {pods - 1}", by, int(raw)))
        if _elastic(job):
            found.append(Refusal(where, "Invalid", "partial admission and elastic job cannot be used together", by, raw))
    if SYNC_COMPLETIONS_ANNOTATION in annotations:
        raw = str(annotations[SYNC_COMPLETIONS_ANNOTATION])
        where = f"metadata.annotations[{SYNC_COMPLETIONS_ANNOTATION}]"
        enabled = raw in ("1", "t", "T", "TRUE", "true", "True")
        if not enabled and raw not in ("0", "f", "F", "FALSE", "false", "False"):
            found.append(Refusal(where, "Invalid", "invalid syntax", by, raw))  # strconv.ParseBool
        if enabled:
            if spec.get("completionMode", "NonIndexed") == "NonIndexed":
                found.append(Refusal(where, "Invalid", "should not be enabled for NonIndexed jobs", by, raw))
            if parallelism != completions:
                found.append(
                    Refusal(
                        "spec.completions",
                        "Invalid",
                        f"should be equal to parallelism when {SYNC_COMPLETIONS_ANNOTATION} annotation is true",
                        by,
                        completions,
                    )
                )
    return found


def _managed_label(pod: Mapping[str, Any], by: str) -> list[Refusal]:
    """pod_webhook.go `validateManagedLabel`."""
    if job_meta(pod, "labels").get(MANAGED_LABEL, "true") != "true":
        return [Refusal(f"metadata.labels[{MANAGED_LABEL}]", "Forbidden", "managed label value can only be 'true'", by)]
    return []


def job_refusals(obj: Mapping[str, Any]) -> list[Refusal]:
    """What Kueue's webhook for `obj`'s kind refuses when `obj` is created: `ValidateJobOnCreate` for
    Jobs (job_webhook.go, with its annotations), Pods (pod_webhook.go, with the managed label) and
    AppWrappers (BaseWebhook); queue name, elastic and gate checks for Deployments and StatefulSets."""
    key = (group_of(obj), kind_of(obj))
    if key not in JOB_KINDS:
        return []
    by = _webhook_name(obj)
    if key in (("apps", "Deployment"), ("apps", "StatefulSet")):
        return _common_create(obj, by)
    found = validate_job_on_create(obj, by)
    if key == ("batch", "Job"):
        found += _job_annotations(obj, by)
    if key == ("", "Pod"):
        found += _managed_label(obj, by)
    return found


def job_update_refusals(old: Mapping[str, Any], new: Mapping[str, Any], *, suspended: bool, default_queue: bool) -> list[Refusal]:
    """What Kueue's webhook for the kind refuses when `old` is updated to `new` (`suspended`: the
    live job is suspended; for a Deployment or StatefulSet: none of its pods is ready)."""
    key = (group_of(new), kind_of(new))
    if key not in JOB_KINDS:
        return []
    by = _webhook_name(new)
    if key in (("apps", "Deployment"), ("apps", "StatefulSet")):
        # deployment_webhook.go / statefulset_webhook.go ValidateUpdate (a StatefulSet Kueue manages
        # also keeps its pod template and replicas: not modelled).
        found = _common_create(new, by)
        old_queue = job_meta(old, "labels").get(QUEUE_LABEL, "")
        new_queue = job_meta(new, "labels").get(QUEUE_LABEL, "")
        if (not suspended or not new_queue) and old_queue != new_queue:
            found.append(Refusal(f"metadata.labels[{QUEUE_LABEL}]", "Invalid", IMMUTABLE, by, new_queue))
        return found + _class_update(old, new, suspended, by) + _gates_update(old, new, by)
    found = validate_job_on_update(old, new, suspended=suspended, default_queue=default_queue, by=by)
    if key == ("batch", "Job"):
        # job_webhook.go validateUpdate: the create rules again, then the update ones.
        found = [*validate_job_on_create(new, by), *_job_annotations(new, by), *found]
    if key == ("", "Pod"):
        found += _managed_label(new, by)
    return found
