"""Kueue 0.19.2's admission of objects: its validating webhooks, as the kueue chart 0.19.2 registers
them, and the CEL rules of its CRDs (which the schema tier does not evaluate, offline/schema/validate.py), for
the fields hpcforge sets or could set from user config.

Reproduced from kubernetes-sigs/kueue v0.19.2 (file: function):

- pkg/webhooks/clusterqueue_webhook.go: `ValidateClusterQueue` → `validateClusterQueueSpec`
  (`validateResourceGroups`, `validateFlavorQuotas`, `validateResourceQuantity`, `validateLimit`,
  `validateLendingLimit`, `validatePreemption`, `validateTotalFlavors`,
  `validateTotalCoveredResources`, `validateFlavorResourceCombinations`, and
  metav1 `ValidateLabelSelector` on `spec.namespaceSelector`); `ValidateClusterQueueUpdate` (the
  immutable `spec.concurrentAdmissionPolicy`).
- pkg/webhooks/common.go: `validateResourceName` (a covered resource is a label key).
- pkg/webhooks/cohort_webhook.go: `validateCohort` (resource groups with "parent" for "cohort", no
  lendingLimit-over-nominal check).
- pkg/webhooks/resourceflavor_webhook.go: `ValidateResourceFlavor` (`ValidateLabels` on
  `spec.nodeLabels`, `validateNodeTaints`, and `validateTolerations` from workload_webhook.go).
- pkg/webhooks/workload_webhook.go: `validatePodSet` / `validateContainer` / `validateResourceList`
  on the Workload Kueue builds from a job's pod templates (the reserved `pods` resource, negative
  quantities with WorkloadValidateResourcesAreNonNegative, pod template labels and annotations with
  WorkloadValidationForPodSetMetadata; both gates beta and on in 0.19).
- pkg/webhooks/webhooks.go `setupWebhookForLocalQueue`: LocalQueue has no validator (and the chart
  registers none, nor one for WorkloadPriorityClass).
- pkg/controller/jobframework/validation.go: `ValidateJobOnCreate` (`ValidateQueueName` /
  `ValidateLabelAsCRDName`, `validateCreateForPrebuiltWorkload`, `validateCreateForMaxExecTime`,
  `ValidateElasticJobAnnotation`) and `ValidateJobOnUpdate` (`validateUpdateForQueueName`,
  `validateUpdateForPrebuiltWorkload`, `validateUpdateForMaxExecTime`,
  `ValidateUpdateForWorkloadPriorityClassName`, `validatedUpdateForEnabledWorkloadSlice`);
  pkg/util/webhook/validation_admissiongatedby.go (AdmissionGatedBy, beta and on in 0.19).
- pkg/controller/jobs/job/job_webhook.go: `validatePartialAdmissionCreate`,
  `validateSyncCompletionCreate`; deployment/deployment_webhook.go and
  statefulset/statefulset_webhook.go `ValidateCreate`/`ValidateUpdate` (queue name, elastic-job
  annotation, gates); appwrapper/appwrapper_controller.go (`jobframework.BaseWebhook`).
- pkg/controller/jobframework/defaults.go `ApplyDefaultLocalQueueWithManagedJobsNamespaceSelector`:
  a job without a queue name in a namespace that has a LocalQueue `default` gets `default`.
- CRD CEL rules (config/components/crd/bases at v0.19.2; markers in apis/kueue/v1beta2/*_types.go):
  ClusterQueue `spec` "borrowingLimit must be nil when cohort is empty", `resourceGroups[]` "flavors
  must have the same number of resources as the coveredResources", `preemption`; Cohort
  `resourceGroups[]`; LocalQueue `spec.clusterQueue` "field is immutable" (a transition rule);
  ResourceFlavor `tolerations` and `nodeTaints` rules and the topologyName transition rules.
- charts/kueue/templates/webhook/manifests.yaml: which objects each webhook sees: the job webhooks
  the namespaces the manager config's `managedJobsNamespaceSelector` selects (without one, every
  namespace but `kube-system` and the release namespace), the core ones (ClusterQueue, Cohort,
  ResourceFlavor, Workload) all.

Not reproduced (hpcforge neither sets nor derives these fields): fairSharing weights,
flavorFungibility, admissionChecksStrategy, concurrentAdmissionPolicy's create rules (ConcurrentAdmission
is alpha and off), topology-aware scheduling annotations, pod-group annotations of plain Pods, the
pod template and replicas a StatefulSet Kueue manages keeps, the webhooks of the other frameworks
(JobSet, MPIJob, Ray, TrainJob, LeaderWorkerSet), and the Workload webhook's status rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..rules.access import get, items, mapping, text
from ..rules.apimachinery import compare, is_dns1123_subdomain, quantity
from ..rules.netpol import selector_matches
from ..rules.podtemplates import PodTemplate, display, group_of, kind_of, name_of, namespace_of, pod_templates
from .pins import Pin

REPRODUCES = Pin("kueue", "0.19.2", ("Charts.KUEUE", "Images.KUEUE"), "kubernetes-sigs/kueue v0.19.2")
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""


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


# --- apimachinery validation (k8s.io/apimachinery v0.35 pkg/util/validation/validation.go; IsDNS1123Subdomain
# and quantities: apimachinery.py) ---------------------------------------------------------------------

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


def _labels(labels: Any, path: str, by: str) -> list[Refusal]:
    """metav1validation `ValidateLabels`: keys qualified names, values label values."""
    found: list[Refusal] = []
    for key, value in mapping(labels).items():
        for message in qualified_name_errors(str(key)):
            found.append(Refusal(path, "Invalid", message, by, key))
        if isinstance(value, str):
            for message in label_value_errors(value):
                found.append(Refusal(path, "Invalid", message, by, value))
    return found


def _annotations(annotations: Any, path: str, by: str) -> list[Refusal]:
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


def _label_selector(selector: Any, path: str, by: str) -> list[Refusal]:
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
    found += _labels(get(selector, "matchLabels"), f"{path}.matchLabels", by)
    return found


def _negative(value: Any) -> bool:
    parsed = quantity(value)
    return parsed is not None and parsed[0] < 0


def _greater(a: Any, b: Any) -> bool:
    left, right = quantity(a), quantity(b)
    return left is not None and right is not None and compare(left, right) > 0


NEGATIVE = "must be greater than or equal to 0"
"""apimachineryvalidation.IsNegativeErrorMsg."""


# --- ClusterQueue and Cohort ------------------------------------------------------------------------

VCLUSTERQUEUE = "webhook vclusterqueue.kb.io"
VCOHORT = "webhook vcohort.kb.io"


def resource_groups_refusals(  # noqa: PLR0912 (one branch per check of the upstream webhook, in its order)
    groups: Any, has_parent: bool, *, cohort: bool, by: str, path: str = "spec.resourceGroups"
) -> list[Refusal]:
    """clusterqueue_webhook.go `validateResourceGroups` with `validateFlavorQuotas`: covered resources
    are label keys and unique across groups, flavors unique across groups, each flavor's resources
    name the covered resources in order, quotas and limits non-negative, limits only with a parent
    (a cohort for a ClusterQueue, a parent for a Cohort), lendingLimit at most nominalQuota (not for
    a Cohort: `enforceNominalGreaterThanLending` false)."""
    found: list[Refusal] = []
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    missing_parent = f"must be nil when {'parent' if cohort else 'cohort'} is empty"
    for gi, group in enumerate(items(groups)):
        group_path = f"{path}[{gi}]"
        covered = [text(r) or "" for r in items(get(group, "coveredResources"))]
        for ri, name in enumerate(covered):
            where = f"{group_path}.coveredResources[{ri}]"
            found += [Refusal(where, "Invalid", message, by, name) for message in qualified_name_errors(name)]
            if name in seen_resources:
                found.append(Refusal(where, "Duplicate", "", by, name))
            else:
                seen_resources.add(name)
        for fi, flavor in enumerate(items(get(group, "flavors"))):
            flavor_path = f"{group_path}.flavors[{fi}]"
            for qi, quota in enumerate(items(get(flavor, "resources"))):
                if qi >= len(covered):
                    break
                where = f"{flavor_path}.resources[{qi}]"
                if get(quota, "name") != covered[qi]:
                    found.append(
                        Refusal(f"{where}.name", "Invalid", "must match the name in coveredResources", by, get(quota, "name"))
                    )
                nominal = get(quota, "nominalQuota")
                if _negative(nominal):
                    found.append(Refusal(f"{where}.nominalQuota", "Invalid", NEGATIVE, by, nominal))
                borrowing = get(quota, "borrowingLimit")
                if borrowing is not None:
                    if not has_parent:
                        found.append(Refusal(f"{where}.borrowingLimit", "Invalid", missing_parent, by, borrowing))
                    if _negative(borrowing):
                        found.append(Refusal(f"{where}.borrowingLimit", "Invalid", NEGATIVE, by, borrowing))
                lending = get(quota, "lendingLimit")
                if lending is not None:
                    if _negative(lending):
                        found.append(Refusal(f"{where}.lendingLimit", "Invalid", NEGATIVE, by, lending))
                    if not has_parent:
                        found.append(Refusal(f"{where}.lendingLimit", "Invalid", missing_parent, by, lending))
                    if not cohort and _greater(lending, nominal):
                        found.append(
                            Refusal(
                                f"{where}.lendingLimit", "Invalid", "must be less than or equal to the nominalQuota", by, lending
                            )
                        )
            name = get(flavor, "name")
            if name in seen_flavors:
                found.append(Refusal(f"{flavor_path}.name", "Duplicate", "", by, name))
            elif isinstance(name, str):
                seen_flavors.add(name)
    return found


def resource_groups_cel_refusals(groups: Any, path: str = "spec.resourceGroups") -> list[Refusal]:
    """CRD rule on `resourceGroups[]` (ClusterQueue and Cohort): every flavor lists as many
    resources as the group covers."""
    found: list[Refusal] = []
    for gi, group in enumerate(items(groups)):
        covered = len(items(get(group, "coveredResources")))
        if not all(len(items(get(f, "resources"))) == covered for f in items(get(group, "flavors"))):
            found.append(
                Refusal(
                    f"{path}[{gi}]",
                    "Invalid",
                    "flavors must have the same number of resources as the coveredResources",
                    CRD_RULE,
                    "object",
                )
            )
    return found


def _totals(groups: Any, path: str) -> list[Refusal]:
    """`validateTotalFlavors`, `validateTotalCoveredResources`, `validateFlavorResourceCombinations`."""
    found: list[Refusal] = []
    flavors = sum(len(items(get(g, "flavors"))) for g in items(groups))
    if flavors > 256:
        found.append(
            Refusal(
                path,
                "Invalid",
                f"total number of flavors across all resourceGroups must be ≤ 256, got {flavors}",
                VCLUSTERQUEUE,
                flavors,
            )
        )
    covered = sum(len(items(get(g, "coveredResources"))) for g in items(groups))
    if covered > 256:
        found.append(
            Refusal(
                path,
                "Invalid",
                f"total number of covered resources across all resourceGroups must be ≤ 256, got {covered}",
                VCLUSTERQUEUE,
                covered,
            )
        )
    for gi, group in enumerate(items(groups)):
        combinations = sum(len(items(get(f, "resources"))) for f in items(get(group, "flavors")))
        if combinations > 512:
            found.append(
                Refusal(
                    f"{path}[{gi}]",
                    "Invalid",
                    f"number of flavor-resource combinations in a resourceGroup must be ≤ 512, got {combinations}",
                    VCLUSTERQUEUE,
                    combinations,
                )
            )
    return found


def _preemption(preemption: Any, path: str, by: str) -> list[Refusal]:
    """`validatePreemption` (and the same CRD rule); `borrowWithinCohort.policy` defaults to Never."""
    borrow = get(preemption, "borrowWithinCohort")
    if get(preemption, "reclaimWithinCohort") == "Never" and borrow is not None and (get(borrow, "policy") or "Never") != "Never":
        return [Refusal(path, "Invalid", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never", by, "object")]
    return []


def cluster_queue_refusals(cq: Mapping[str, Any]) -> list[Refusal]:
    """What the API server refuses in a ClusterQueue: its CRD's CEL rules, then the webhook."""
    spec = mapping(cq.get("spec"))
    groups = spec.get("resourceGroups")
    has_cohort = bool(text(spec.get("cohortName")))
    found: list[Refusal] = []
    # CRD rules (x-kubernetes-validations on spec, preemption and resourceGroups[]).
    if not has_cohort and any(
        get(r, "borrowingLimit") is not None
        for g in items(groups)
        for f in items(get(g, "flavors"))
        for r in items(get(f, "resources"))
    ):
        found.append(Refusal("spec", "Invalid", "borrowingLimit must be nil when cohort is empty", CRD_RULE, "object"))
    if spec.get("preemption") is not None:
        found += _preemption(spec.get("preemption"), "spec.preemption", CRD_RULE)
    found += resource_groups_cel_refusals(groups)
    # The webhook (validateClusterQueueSpec).
    found += resource_groups_refusals(groups, has_cohort, cohort=False, by=VCLUSTERQUEUE)
    found += _label_selector(spec.get("namespaceSelector"), "spec.namespaceSelector", VCLUSTERQUEUE)
    if spec.get("preemption") is not None:
        found += _preemption(spec.get("preemption"), "spec.preemption", VCLUSTERQUEUE)
    found += _totals(groups, "spec.resourceGroups")
    return found


def cohort_refusals(cohort: Mapping[str, Any]) -> list[Refusal]:
    """cohort_webhook.go `validateCohort` and the CRD rule on `resourceGroups[]`."""
    spec = mapping(cohort.get("spec"))
    groups = spec.get("resourceGroups")
    has_parent = bool(text(spec.get("parentName")))
    return [*resource_groups_cel_refusals(groups), *resource_groups_refusals(groups, has_parent, cohort=True, by=VCOHORT)]


# --- ResourceFlavor ---------------------------------------------------------------------------------

VRESOURCEFLAVOR = "webhook vresourceflavor.kb.io"
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def resource_flavor_refusals(rf: Mapping[str, Any]) -> list[Refusal]:
    """The CRD rules on `spec`, `spec.nodeTaints`, `spec.tolerations`, then `ValidateResourceFlavor`."""
    spec = mapping(rf.get("spec"))
    tolerations = [mapping(t) for t in items(spec.get("tolerations"))]
    taints = [mapping(t) for t in items(spec.get("nodeTaints"))]
    found: list[Refusal] = []

    def rule(path: str, message: str) -> None:
        found.append(Refusal(path, "Invalid", message, CRD_RULE, "array"))

    if spec.get("topologyName") is not None and len(mapping(spec.get("nodeLabels"))) < 1:
        found.append(Refusal("spec", "Invalid", "at least one nodeLabel is required when topology is set", CRD_RULE, "object"))
    if taints and not all(t.get("effect") in _EFFECTS for t in taints):
        rule("spec.nodeTaints", "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'")
    if not all("key" in t or t.get("operator") == "Exists" for t in tolerations):
        rule("spec.tolerations", "operator must be Exists when 'key' is empty, which means 'match all values and all keys'")
    if not all("tolerationSeconds" not in t or t.get("effect") == "NoExecute" for t in tolerations):
        rule("spec.tolerations", "effect must be 'NoExecute' when 'tolerationSeconds' is set")
    if not all("operator" not in t or t.get("operator") in ("Equal", "Exists") for t in tolerations):
        rule("spec.tolerations", "supported toleration values: 'Equal'(default), 'Exists'")
    if not all(t.get("operator") != "Exists" or "value" not in t for t in tolerations):
        rule("spec.tolerations", "a value must be empty when 'operator' is 'Exists'")
    if not all("effect" not in t or t.get("effect") in _EFFECTS for t in tolerations):
        rule("spec.tolerations", "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'")
    # The webhook.
    found += _labels(spec.get("nodeLabels"), "spec.nodeLabels", VRESOURCEFLAVOR)
    unique: dict[Any, set[str]] = {}
    for index, taint in enumerate(taints):
        where = f"spec.nodeTaints[{index}]"
        key = text(taint.get("key")) or ""
        found += [Refusal(f"{where}.key", "Invalid", m, VRESOURCEFLAVOR, key) for m in qualified_name_errors(key)]
        value = text(taint.get("value")) or ""
        errors = label_value_errors(value)
        if errors:
            found.append(Refusal(f"{where}.value", "Invalid", ";".join(errors), VRESOURCEFLAVOR, value))
        keys = unique.setdefault(taint.get("effect"), set())
        if key in keys:
            found.append(Refusal(where, "Duplicate", "taints must be unique by key and effect pair", VRESOURCEFLAVOR, key))
            continue
        keys.add(key)
    for index, toleration in enumerate(tolerations):
        key = text(toleration.get("key")) or ""
        if key:
            found += [
                Refusal(f"spec.tolerations[{index}].key", "Invalid", m, VRESOURCEFLAVOR, key) for m in qualified_name_errors(key)
            ]
    return found


# --- updates (what a second `pulumi up` sends) --------------------------------------------------------

IMMUTABLE = "field is immutable"
"""apimachineryvalidation.FieldImmutableErrorMsg, and the LocalQueue CRD rule's message."""


def local_queue_update_refusals(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """LocalQueue's only update rule: the CRD transition rule `self == oldSelf` on `spec.clusterQueue`
    (localqueue_types.go; there is no LocalQueue webhook)."""
    before, after = get(old, "spec", "clusterQueue"), get(new, "spec", "clusterQueue")
    if before is not None and after is not None and before != after:
        return [Refusal("spec.clusterQueue", "Invalid", IMMUTABLE, CRD_RULE, after)]
    return []


def cluster_queue_update_refusals(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """`ValidateClusterQueueUpdate`: the new object's create rules and the immutable
    `spec.concurrentAdmissionPolicy` (onFlavors re-validation is not modelled: hpcforge sets no
    admission checks)."""
    found = cluster_queue_refusals(new)
    before, after = get(old, "spec", "concurrentAdmissionPolicy"), get(new, "spec", "concurrentAdmissionPolicy")
    if before != after:
        found.append(Refusal("spec.concurrentAdmissionPolicy", "Invalid", IMMUTABLE, VCLUSTERQUEUE, after))
    return found


def resource_flavor_update_refusals(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """The CRD transition rules on ResourceFlavor `spec`: once `topologyName` is set, it, `nodeLabels`
    and `tolerations` stay as they are; then the create rules."""
    found = resource_flavor_refusals(new)
    before, after = mapping(old.get("spec")), mapping(new.get("spec"))
    if "topologyName" in before:
        for key, message in (
            ("nodeLabels", "nodeLabels are immutable when topologyName is set"),
            ("tolerations", "tolerations are immutable when topologyName is set"),
            ("topologyName", "topologyName is immutable when topologyName is set"),
        ):
            if before.get(key) != after.get(key):
                found.append(Refusal("spec", "Invalid", message, CRD_RULE, "object"))
    return found


# --- jobs: what Kueue's job webhooks refuse ------------------------------------------------------------


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
            found.setdefault(name_of(obj), {"kubernetes.io/metadata.name": name_of(obj)}).update(_meta(obj, "labels"))
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


def _meta(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
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
    annotation = text(_meta(obj, "annotations").get(PREBUILT_WORKLOAD_ANNOTATION)) or ""
    if annotation:
        return annotation, f"metadata.annotations[{PREBUILT_WORKLOAD_ANNOTATION}]"
    return text(_meta(obj, "labels").get(PREBUILT_WORKLOAD_LABEL)) or "", f"metadata.labels[{PREBUILT_WORKLOAD_LABEL}]"


def _prebuilt_create(obj: Mapping[str, Any], by: str) -> list[Refusal]:
    """`validateCreateForPrebuiltWorkload`: the name a DNS subdomain, on a kind that supports it."""
    name, path = _prebuilt(obj)
    present = (
        PREBUILT_WORKLOAD_ANNOTATION in _meta(obj, "annotations")
        if "annotations" in path
        else PREBUILT_WORKLOAD_LABEL in _meta(obj, "labels")
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
    return _meta(obj, "annotations").get(ELASTIC_JOB_ANNOTATION) == "true"


def _common_create(obj: Mapping[str, Any], by: str) -> list[Refusal]:
    """What every job webhook checks on create and update: `ValidateQueueName`,
    `ValidateElasticJobAnnotation`, and the admission-gated-by format."""
    labels, annotations = _meta(obj, "labels"), _meta(obj, "annotations")
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
    labels = _meta(obj, "labels")
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
    old_class = _meta(old, "labels").get(PRIORITY_CLASS_LABEL, "")
    new_class = _meta(new, "labels").get(PRIORITY_CLASS_LABEL, "")
    path = f"metadata.labels[{PRIORITY_CLASS_LABEL}]"
    if not suspended and not old_class and new_class:
        return [Refusal(path, "Invalid", "WorkloadPriorityClass cannot be added to a non-suspended workload", by, new_class)]
    if old_class and not new_class:
        return [Refusal(path, "Invalid", "WorkloadPriorityClass cannot be removed from a workload", by, "")]
    return []


def _gates_update(old: Mapping[str, Any], new: Mapping[str, Any], by: str) -> list[Refusal]:
    """`ValidateAdmissionGatedByAnnotationOnUpdate`."""
    old_gates = text(_meta(old, "annotations").get(ADMISSION_GATED_BY_ANNOTATION)) or ""
    new_gates = text(_meta(new, "annotations").get(ADMISSION_GATED_BY_ANNOTATION)) or ""
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
    old_labels, new_labels = _meta(old, "labels"), _meta(new, "labels")
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
    annotations = _meta(job, "annotations")
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
    if _meta(pod, "labels").get(MANAGED_LABEL, "true") != "true":
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
        old_queue = _meta(old, "labels").get(QUEUE_LABEL, "")
        new_queue = _meta(new, "labels").get(QUEUE_LABEL, "")
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


# --- the Workload Kueue builds for a managed job -------------------------------------------------------

VWORKLOAD = "webhook vworkload.kb.io"


def podset_refusals(template: PodTemplate, index: int) -> list[Refusal]:
    """workload_webhook.go `validatePodSet` on the pod set Kueue makes of one pod template."""
    path = f"spec.podSets[{index}].template"
    found = _labels(template.labels, f"{path}.metadata.labels", VWORKLOAD)
    found += _annotations(template.annotations, f"{path}.metadata.annotations", VWORKLOAD)
    for container in template.containers:
        if container.kind == "ephemeralContainers":
            continue
        position = [c for c in template.containers if c.kind == container.kind].index(container)
        for part in ("requests", "limits"):
            where = f"{path}.spec.{container.kind}[{position}].resources.{part}"
            for resource, amount in mapping(get(container.body, "resources", part)).items():
                if resource == "pods":
                    found.append(
                        Refusal(f"{where}[pods]", "Invalid", "the key is reserved for internal kueue use", VWORKLOAD, "pods")
                    )
                if _negative(amount):
                    found.append(Refusal(f"{where}[{resource}]", "Invalid", NEGATIVE, VWORKLOAD, amount))
    for part in ("requests", "limits"):
        for resource, amount in mapping(get(template.spec, "resources", part)).items():
            where = f"{path}.spec.resources.{part}[{resource}]"
            if resource == "pods":
                found.append(Refusal(where, "Invalid", "the key is reserved for internal kueue use", VWORKLOAD, "pods"))
            if _negative(amount):
                found.append(Refusal(where, "Invalid", NEGATIVE, VWORKLOAD, amount))
    return found


# --- over a whole set of objects ---------------------------------------------------------------------


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
        queue = text(_meta(judged, "labels").get(QUEUE_LABEL)) or (
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
