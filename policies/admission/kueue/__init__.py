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

One module per kind of object judged: fields.py (what they share: constants, the refusal, apimachinery validation),
clusterqueue.py (ClusterQueue, Cohort), resourceflavor.py, localqueue.py, jobs.py (the job webhooks), workload.py (the
Workload built from a job) and verdicts.py (over a whole set of objects, on create and on update).
"""

from __future__ import annotations

from .clusterqueue import (
    VCLUSTERQUEUE,
    VCOHORT,
    cluster_queue_refusals,
    cluster_queue_update_refusals,
    cohort_refusals,
    resource_groups_cel_refusals,
    resource_groups_refusals,
)
from .family import FAMILY, KUEUE_ADMISSION, KueueAdmissionConfig, judge_kueue
from .fields import (
    ADMISSION_GATED_BY_ANNOTATION,
    CRD_RULE,
    DEFAULT_LOCAL_QUEUE,
    ELASTIC_JOB_ANNOTATION,
    ELASTIC_KINDS,
    IMMUTABLE,
    JOB_KINDS,
    KUEUE_GROUP,
    KUEUE_NAMESPACE,
    MANAGED_LABEL,
    MAX_EXEC_TIME_LABEL,
    MIN_PARALLELISM_ANNOTATION,
    NEGATIVE,
    PREBUILT_KINDS,
    PREBUILT_WORKLOAD_ANNOTATION,
    PREBUILT_WORKLOAD_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_LABEL,
    REPRODUCES,
    SYNC_COMPLETIONS_ANNOTATION,
    Refusal,
    answer,
    is_greater,
    is_negative,
    label_value_errors,
    qualified_name_errors,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from .jobs import (
    cronjob_job,
    default_namespace_selector,
    deployed_namespace_selector,
    job_meta,
    job_refusals,
    job_update_refusals,
    job_webhook_sees,
    namespace_labels,
    validate_job_on_create,
    validate_job_on_update,
)
from .localqueue import local_queue_update_refusals
from .resourceflavor import VRESOURCEFLAVOR, resource_flavor_refusals, resource_flavor_update_refusals
from .verdicts import CORE_CHECKS, Verdict, default_queue_namespaces, kueue_verdicts, update_refusals
from .workload import VWORKLOAD, podset_refusals

__all__ = [
    "ADMISSION_GATED_BY_ANNOTATION",
    "CORE_CHECKS",
    "CRD_RULE",
    "DEFAULT_LOCAL_QUEUE",
    "ELASTIC_JOB_ANNOTATION",
    "ELASTIC_KINDS",
    "FAMILY",
    "IMMUTABLE",
    "JOB_KINDS",
    "KUEUE_ADMISSION",
    "KUEUE_GROUP",
    "KUEUE_NAMESPACE",
    "MANAGED_LABEL",
    "MAX_EXEC_TIME_LABEL",
    "MIN_PARALLELISM_ANNOTATION",
    "NEGATIVE",
    "PREBUILT_KINDS",
    "PREBUILT_WORKLOAD_ANNOTATION",
    "PREBUILT_WORKLOAD_LABEL",
    "PRIORITY_CLASS_LABEL",
    "QUEUE_LABEL",
    "REPRODUCES",
    "SYNC_COMPLETIONS_ANNOTATION",
    "VCLUSTERQUEUE",
    "VCOHORT",
    "VRESOURCEFLAVOR",
    "VWORKLOAD",
    "KueueAdmissionConfig",
    "Refusal",
    "Verdict",
    "answer",
    "cluster_queue_refusals",
    "cluster_queue_update_refusals",
    "cohort_refusals",
    "cronjob_job",
    "default_namespace_selector",
    "default_queue_namespaces",
    "deployed_namespace_selector",
    "is_greater",
    "is_negative",
    "job_meta",
    "job_refusals",
    "job_update_refusals",
    "job_webhook_sees",
    "judge_kueue",
    "kueue_verdicts",
    "label_value_errors",
    "local_queue_update_refusals",
    "namespace_labels",
    "podset_refusals",
    "qualified_name_errors",
    "resource_flavor_refusals",
    "resource_flavor_update_refusals",
    "resource_groups_cel_refusals",
    "resource_groups_refusals",
    "update_refusals",
    "validate_annotations",
    "validate_job_on_create",
    "validate_job_on_update",
    "validate_label_selector",
    "validate_labels",
]
