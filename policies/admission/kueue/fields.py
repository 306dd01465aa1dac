"""What Kueue's webhooks and CRD rules share: the group's labels and annotations, the kinds it judges, a
refusal as Kubernetes' field.Error prints it, and the apimachinery validation of names, labels, annotations
and selectors (k8s.io/apimachinery v0.35 pkg/util/validation/validation.go; IsDNS1123Subdomain and
quantities: rules/apimachinery.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.access import get, items, mapping, text
from ...rules.apimachinery import compare, is_dns1123_subdomain, quantity
from ..family import Pin

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_NAMESPACE = "kueue-system"
"""The release namespace of hpcforge's kueue chart: the chart's default job webhook namespaceSelector
leaves it and kube-system out."""
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
PREBUILT_WORKLOAD_LABEL = "kueue.x-k8s.io/prebuilt-workload-name"
PREBUILT_WORKLOAD_ANNOTATION = "kueue.x-k8s.io/prebuilt-workload-name"
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
ADMISSION_GATED_BY_ANNOTATION = "kueue.x-k8s.io/admission-gated-by"
MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
SYNC_COMPLETIONS_ANNOTATION = "kueue.x-k8s.io/job-completions-equal-parallelism"
MANAGED_LABEL = "kueue.x-k8s.io/managed"
DEFAULT_LOCAL_QUEUE = "default"
"""pkg/controller/constants/constants.go `DefaultLocalQueueName`."""

# (group, kind) of the job webhooks reproduced: the kinds hpcforge makes (Jobs, CronJobs' Jobs, Pods,
# Deployments, StatefulSets, the sample AppWrapper) and the one its docs give users (AppWrapper). The
# chart's other default frameworks (JobSet, MPIJob, Ray, TrainJob, LeaderWorkerSet) are not modelled.
JOB_KINDS: frozenset[tuple[str, str]] = frozenset(
    {
        ("batch", "Job"),
        ("", "Pod"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("workload.codeflare.dev", "AppWrapper"),
    }
)
# jobframework/validation.go `supportedElasticJobGVKs` and `supportedPrebuiltWlJobGVKs` (by group and kind).
ELASTIC_KINDS = frozenset({("batch", "Job"), ("ray.io", "RayCluster"), ("ray.io", "RayJob"), ("ray.io", "RayService")})
PREBUILT_KINDS = frozenset(
    {
        ("batch", "Job"),
        ("jobset.x-k8s.io", "JobSet"),
        ("kubeflow.org", "TFJob"),
        ("kubeflow.org", "PaddleJob"),
        ("kubeflow.org", "PyTorchJob"),
        ("kubeflow.org", "XGBoostJob"),
        ("trainer.kubeflow.org", "TrainJob"),
        ("kubeflow.org", "MPIJob"),
        ("ray.io", "RayJob"),
        ("", "Pod"),
        ("ray.io", "RayCluster"),
        ("ray.io", "RayService"),
        ("workload.codeflare.dev", "AppWrapper"),
    }
)
CRD_RULE = "CRD rule"
"""Who refuses when a CRD's CEL rule (x-kubernetes-validations) does."""


@dataclass(frozen=True)
class Refusal:
    """One field error, as Kubernetes' field.Error prints it, and who raises it."""

    field: str
    type: str
    """`Invalid`, `Duplicate`, `Required`, `Forbidden`, `NotSupported`, `TooLong`."""
    detail: str
    by: str
    """`webhook <name>` (the webhook's name in the chart) or `CRD rule`."""
    value: Any = None

    def __str__(self) -> str:
        shown = {
            "Invalid": f"Invalid value: {_show(self.value)}",
            "Duplicate": f"Duplicate value: {_show(self.value)}",
            "Required": "Required value",
            "Forbidden": "Forbidden",
            "NotSupported": f"Unsupported value: {_show(self.value)}",
            "TooLong": "Too long",
        }[self.type]
        return f"{self.field}: {shown}" + (f": {self.detail}" if self.detail else "") + f" ({self.by})"


def answer(refusals: Sequence[Refusal]) -> str | None:
    """The API server's answer to a create or update with these refusals: `Invalid` (422) when a CRD
    rule refuses (the schema and its CEL rules run before the validating webhooks), `Forbidden`
    (403, "admission webhook ... denied the request") when only a webhook does, None when admitted."""
    if any(r.by == CRD_RULE for r in refusals):
        return "Invalid"
    return "Forbidden" if refusals else None


def _show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def qualified_name_errors(value: str) -> list[str]:
    """`IsQualifiedName` (label keys, taint and toleration keys, resource names)."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        prefix_errors = is_dns1123_subdomain(prefix)
        if prefix_errors:
            return [f"prefix part {e}" for e in prefix_errors]
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character, with an optional DNS subdomain prefix and '/'"
        ]
    if not name:
        return ["name part must be non-empty"]
    errors = []
    if len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.match(name):
        errors.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character"
        )
    return errors


def label_value_errors(value: str) -> list[str]:
    """`IsValidLabelValue`."""
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _LABEL_VALUE.match(value):
        errors.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character"
        )
    return errors


def validate_labels(labels: Any, path: str, by: str) -> list[Refusal]:
    """metav1validation `ValidateLabels`: keys qualified names, values label values."""
    found: list[Refusal] = []
    for key, value in mapping(labels).items():
        for message in qualified_name_errors(str(key)):
            found.append(Refusal(path, "Invalid", message, by, key))
        if isinstance(value, str):
            for message in label_value_errors(value):
                found.append(Refusal(path, "Invalid", message, by, value))
    return found


def validate_annotations(annotations: Any, path: str, by: str) -> list[Refusal]:
    """apivalidation `ValidateAnnotations`: keys are qualified names (lower-cased), total size 256 KiB."""
    found: list[Refusal] = []
    total = 0
    for key, value in mapping(annotations).items():
        for message in qualified_name_errors(str(key).lower()):
            found.append(Refusal(path, "Invalid", message, by, key))
        total += len(str(key)) + len(str(value))
    if total > 256 * 1024:
        found.append(Refusal(path, "Invalid", "must have at most 262144 bytes", by, total))  # TooLong in upstream
    return found


def validate_label_selector(selector: Any, path: str, by: str) -> list[Refusal]:
    """metav1validation `ValidateLabelSelector` with default options."""
    found: list[Refusal] = []
    for index, requirement in enumerate(items(get(selector, "matchExpressions"))):
        where = f"{path}.matchExpressions[{index}]"
        operator = text(get(requirement, "operator")) or ""
        values = items(get(requirement, "values"))
        if operator in ("In", "NotIn"):
            if not values:
                found.append(Refusal(f"{where}.values", "Required", "must be specified when `operator` is 'In' or 'NotIn'", by))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                found.append(
                    Refusal(
                        f"{where}.values", "Forbidden", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'", by
                    )
                )
        else:
            found.append(Refusal(f"{where}.operator", "Invalid", "not a valid selector operator", by, operator))
        for message in qualified_name_errors(text(get(requirement, "key")) or ""):
            found.append(Refusal(f"{where}.key", "Invalid", message, by, get(requirement, "key")))
    found += validate_labels(get(selector, "matchLabels"), f"{path}.matchLabels", by)
    return found


def is_negative(value: Any) -> bool:
    parsed = quantity(value)
    return parsed is not None and parsed[0] < 0


def is_greater(a: Any, b: Any) -> bool:
    left, right = quantity(a), quantity(b)
    return left is not None and right is not None and compare(left, right) > 0


NEGATIVE = "must be greater than or equal to 0"
"""apimachineryvalidation.IsNegativeErrorMsg."""


IMMUTABLE = "field is immutable"
"""apimachineryvalidation.FieldImmutableErrorMsg, and the LocalQueue CRD rule's message."""

REPRODUCES = Pin("kueue", "0.19.2", ("Charts.KUEUE", "Images.KUEUE"), "kubernetes-sigs/kueue v0.19.2")
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""
