"""Kueue 0.19.2's admission (policies/admission/kueue/): each rule against the cases upstream's
own tests list, then every Kueue object and job of dev and prod.

The cases are kubernetes-sigs/kueue v0.19.2's tests, transcribed from Go builders into dicts (same
names, values and expected field paths and error types; upstream ignores the error details):
- pkg/webhooks/clusterqueue_webhook_test.go `TestValidateClusterQueue`, `TestValidateTotalFlavors`,
  `TestValidateTotalCoveredResources`, `TestValidateFlavorResourceCombinations`,
  `TestValidateClusterQueueUpdate` (the cases that do not need the alpha ConcurrentAdmission gate or
  admission checks);
- pkg/webhooks/cohort_webhook_test.go `TestValidateCohort`;
- pkg/webhooks/resourceflavor_webhook_test.go `TestValidateResourceFlavor`;
- pkg/webhooks/workload_webhook_test.go `TestValidateWorkload` (the pod set cases);
- pkg/controller/jobframework/validation_test.go `TestValidateJobOnCreate`, `TestValidateJobOnUpdate`
  (with the gates as 0.19 ships them: WorkloadIdentifierAnnotations and ElasticJobsViaWorkloadSlices on);
- test/integration/singlecluster/webhook/core/{clusterqueue,resourceflavor,localqueue}_test.go: which
  refusal comes from the CRD (BeInvalidError: the schema and CEL rules run before the validating
  webhooks) and which from the webhook (BeForbiddenError).

Upstream's `ResourceGroup(...)` builder takes the covered resources from the first flavor; Go's
corev1.Taint serialises an empty effect (no omitempty), so the dicts carry `effect: ""` where
upstream leaves it unset.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.layers.batch.objects import TEAM_NAMESPACES, cluster_queue_spec, kueue_manager_config, resource_flavor_spec
from components.site.loader import load_config
from components.site.root import PlatformConfig
from offline.admission.verdicts import recorded_objects
from offline.charts.render import builtin_api_versions, chart_releases, render_release
from offline.program.engine import ProgramConfigError, RecordedResource, RecordedStack
from offline.schema.crd import load_crd_index, validate_custom_resource
from policies.admission import kueue
from policies.rules.netpol import selector_matches
from policies.rules.podtemplates import kind_of, name_of, namespace_of, pod_templates
from tests.helpers import (
    CHARTS_ENV,
    config_values,
    raw_config,
    require_charts,
    require_shared,
    run_stack_file,
    skip_or_fail,
    write_variant,
)

# --- builders (pkg/util/testing/v1beta2/wrappers.go, as dicts) ---------------------------------------


def resource(name: str, nominal: str = "0", borrowing: str = "", lending: str = "") -> dict[str, Any]:
    """`FlavorQuotasWrapper.Resource(name, nominal, borrowing, lending)`."""
    quota: dict[str, Any] = {"name": name, "nominalQuota": nominal}
    if borrowing:
        quota["borrowingLimit"] = borrowing
    if lending:
        quota["lendingLimit"] = lending
    return quota


def flavor(name: str, *resources: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "resources": list(resources)}


def group(*flavors: dict[str, Any], covered: list[str] | None = None) -> dict[str, Any]:
    """`ResourceGroup(flavors...)`: covered resources from the first flavor unless given."""
    if covered is None:
        covered = [r["name"] for r in flavors[0]["resources"]] if flavors else []
    return {"coveredResources": covered, "flavors": list(flavors)}


def cq(*groups: dict[str, Any], cohort: str = "", **spec: Any) -> dict[str, Any]:
    """`MakeClusterQueue("cluster-queue")` with its defaults, resource groups and cohort."""
    body: dict[str, Any] = {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO", **spec}
    if groups:
        body["resourceGroups"] = list(groups)
    if cohort:
        body["cohortName"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"}, "spec": body}


def webhook(refusals: list[kueue.Refusal], by: str) -> list[tuple[str, str]]:
    return [(r.field, r.type) for r in refusals if r.by == by]


RG = "spec.resourceGroups"

# --- ClusterQueue: TestValidateClusterQueue ----------------------------------------------------------

CLUSTER_QUEUE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("built-in resources with qualified names", cq(group(flavor("default", resource("cpu")))), []),
    (
        "invalid resource name",
        cq(group(flavor("default", resource("@cpu")))),
        [(f"{RG}[0].coveredResources[0]", "Invalid")],
    ),
    ("in cohort", cq(cohort="prod"), []),
    ("extended resources with qualified names", cq(group(flavor("default", resource("example.com/gpu")))), []),
    ("flavor with qualified names", cq(group(flavor("x86"))), []),
    (
        "flavor quota with negative value",
        cq(group(flavor("x86", resource("cpu", "-1")))),
        [(f"{RG}[0].flavors[0].resources[0].nominalQuota", "Invalid")],
    ),
    ("flavor quota with zero value", cq(group(flavor("x86", resource("cpu", "0")))), []),
    ("flavor quota with borrowingLimit 0", cq(group(flavor("x86", resource("cpu", "1", "0"))), cohort="cohort"), []),
    (
        "flavor quota with negative borrowingLimit",
        cq(group(flavor("x86", resource("cpu", "1", "-1"))), cohort="cohort"),
        [(f"{RG}[0].flavors[0].resources[0].borrowingLimit", "Invalid")],
    ),
    ("flavor quota with lendingLimit 0", cq(group(flavor("x86", resource("cpu", "1", "", "0"))), cohort="cohort"), []),
    (
        "flavor quota with negative lendingLimit",
        cq(group(flavor("x86", resource("cpu", "1", "", "-1"))), cohort="cohort"),
        [(f"{RG}[0].flavors[0].resources[0].lendingLimit", "Invalid")],
    ),
    (
        "flavor quota with lendingLimit and empty cohort",
        cq(group(flavor("x86", resource("cpu", "1", "", "1")))),
        [(f"{RG}[0].flavors[0].resources[0].lendingLimit", "Invalid")],
    ),
    (
        "flavor quota with lendingLimit greater than nominalQuota",
        cq(group(flavor("x86", resource("cpu", "1", "", "2"))), cohort="cohort"),
        [(f"{RG}[0].flavors[0].resources[0].lendingLimit", "Invalid")],
    ),
    ("empty queueing strategy is supported", cq(queueingStrategy=""), []),
    (
        "namespaceSelector with invalid labels",
        cq(namespaceSelector={"matchLabels": {"nospecialchars^=@": "bar"}}),
        [("spec.namespaceSelector.matchLabels", "Invalid")],
    ),
    (
        "namespaceSelector with invalid expressions",
        cq(namespaceSelector={"matchExpressions": [{"key": "key", "operator": "In"}]}),
        [("spec.namespaceSelector.matchExpressions[0].values", "Required")],
    ),
    (
        "multiple resource groups",
        cq(
            group(
                flavor("alpha", resource("cpu", "0"), resource("memory", "0")),
                flavor("beta", resource("cpu", "0"), resource("memory", "0")),
            ),
            group(flavor("gamma", resource("example.com/gpu", "0")), flavor("omega", resource("example.com/gpu", "0"))),
        ),
        [],
    ),
    (
        "resources in a flavor in different order",
        cq(
            group(
                flavor("alpha", resource("cpu", "0"), resource("memory", "0")),
                flavor("beta", resource("memory", "0"), resource("cpu", "0")),
                covered=["cpu", "memory"],
            )
        ),
        [(f"{RG}[0].flavors[1].resources[0].name", "Invalid"), (f"{RG}[0].flavors[1].resources[1].name", "Invalid")],
    ),
    (
        "resource in more than one resource group",
        cq(group(flavor("alpha", resource("cpu", "0"), resource("memory", "0"))), group(flavor("beta", resource("memory", "0")))),
        [(f"{RG}[1].coveredResources[0]", "Duplicate")],
    ),
    (
        "flavor in more than one resource group",
        cq(group(flavor("alpha", resource("cpu")), flavor("beta", resource("cpu"))), group(flavor("beta", resource("memory")))),
        [(f"{RG}[1].flavors[0].name", "Duplicate")],
    ),
    (
        "valid preemption with borrowWithinCohort",
        cq(
            preemption={
                "reclaimWithinCohort": "LowerPriority",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 10},
            }
        ),
        [],
    ),
    (
        "existing cluster queue created with older Kueue version that has a nil borrowWithinCohort field",
        cq(preemption={"reclaimWithinCohort": "Never"}),
        [],
    ),
]


@pytest.mark.parametrize("name, queue, expected", CLUSTER_QUEUE_CASES, ids=[c[0] for c in CLUSTER_QUEUE_CASES])
def test_cluster_queue_webhook_cases(name: str, queue: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert webhook(kueue.cluster_queue_refusals(queue), kueue.VCLUSTERQUEUE) == expected


def _flavors(n: int, resources: int = 1) -> dict[str, Any]:
    """`makeFlavors(n)` / `makeFlavorResourceCombinations(n, resources)`: one group, `n` flavors."""
    names = ["cpu"] if resources == 1 else [f"res{j:03d}" for j in range(resources)]
    return group(*(flavor(f"f{i:03d}", *(resource(r, "1") for r in names)) for i in range(n)))


@pytest.mark.parametrize(
    "flavors, resources, refused",
    [(10, 1, False), (256, 1, False), (257, 1, True), (1, 10, False), (8, 64, False), (9, 64, True)],
)
def test_cluster_queue_totals(flavors: int, resources: int, refused: bool) -> None:
    """TestValidateTotalFlavors and TestValidateFlavorResourceCombinations."""
    assert bool(webhook(kueue.cluster_queue_refusals(cq(_flavors(flavors, resources))), kueue.VCLUSTERQUEUE)) is refused


@pytest.mark.parametrize("covered, refused", [(10, False), (256, False), (257, True)])
def test_cluster_queue_total_covered_resources(covered: int, refused: bool) -> None:
    """TestValidateTotalCoveredResources (`makeCoveredResources`)."""
    names = [f"res{i:03d}" for i in range(covered)]
    queue = cq(group(flavor("default", *(resource(n, "1") for n in names))))
    assert bool(webhook(kueue.cluster_queue_refusals(queue), kueue.VCLUSTERQUEUE)) is refused


# Integration: which of the API server's answers a ClusterQueue gets (clusterqueue_test.go, "Validate
# ClusterQueue on creation"): Invalid (422: the CRD's CEL rules), Forbidden (403: the webhook), or
# admitted. Entries whose refusal is the OpenAPI schema's (minItems, maxItems, patterns, enums) belong
# to the schema tier and are left out.
INTEGRATION_CLUSTER_QUEUES: list[tuple[str, dict[str, Any], str | None]] = [
    (
        "Should have non-negative borrowing limit",
        cq(group(flavor("x86", resource("cpu", "2", "-1"))), cohort="cohort"),
        "Forbidden",
    ),
    ("Should have non-negative quota value", cq(group(flavor("x86", resource("cpu", "-1")))), "Forbidden"),
    ("Should have qualified resource name", cq(group(flavor("x86", resource("@cpu", "5")))), "Forbidden"),
    (
        "Should forbid clusterQueue creation with unqualified labelSelector",
        cq(namespaceSelector={"matchLabels": {"nospecialchars^=@": "bar"}}),
        "Forbidden",
    ),
    ("Should allow to create clusterQueue with valid cohort", cq(cohort="prod"), None),
    (
        "Should forbid to create clusterQueue with flavor quota with borrowingLimit and empty cohort",
        cq(group(flavor("x86", resource("cpu", "1", "1")))),
        "Invalid",
    ),
    (
        "Should forbid to create clusterQueue missing resources in a flavor",
        cq(group(flavor("alpha", resource("cpu", "0")), covered=["cpu", "memory"])),
        "Invalid",
    ),
    (
        "Should forbid to create clusterQueue missing resources in a flavor (more)",
        cq(group(flavor("alpha", resource("cpu", "0"), resource("memory", "0")), covered=["cpu"])),
        "Invalid",
    ),
    (
        "Should forbid to create clusterQueue missing resources in a flavor and mismatch",
        cq(group(flavor("alpha", resource("cpu", "0"), resource("memory", "0")), covered=["blah"])),
        "Invalid",
    ),
    (
        "Should forbid to create clusterQueue with resource in more than one resource group",
        cq(group(flavor("alpha", resource("cpu", "0"), resource("memory", "0"))), group(flavor("beta", resource("memory", "0")))),
        "Forbidden",
    ),
    (
        "Should forbid to create clusterQueue with flavor in more than one resource group",
        cq(group(flavor("alpha", resource("cpu")), flavor("beta", resource("cpu"))), group(flavor("beta", resource("memory")))),
        "Forbidden",
    ),
    (
        "Should forbid ... reclaimWithinCohort=Never, while borrowWithinCohort!=nil",
        cq(preemption={"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "LowerPriority"}}),
        "Invalid",
    ),
]


@pytest.mark.parametrize("name, queue, answer", INTEGRATION_CLUSTER_QUEUES, ids=[c[0] for c in INTEGRATION_CLUSTER_QUEUES])
def test_cluster_queue_integration_answers(name: str, queue: dict[str, Any], answer: str | None) -> None:
    assert kueue.answer(kueue.cluster_queue_refusals(queue)) == answer


def test_borrowing_limit_without_cohort_is_refused_by_both() -> None:
    """The rule hpcforge's config can reach: the CRD rule answers first, the webhook would say the same."""
    refusals = kueue.cluster_queue_refusals(cq(group(flavor("x86", resource("cpu", "1", "1")))))
    assert [(r.field, r.detail, r.by) for r in refusals] == [
        ("spec", "borrowingLimit must be nil when cohort is empty", kueue.CRD_RULE),
        (f"{RG}[0].flavors[0].resources[0].borrowingLimit", "must be nil when cohort is empty", kueue.VCLUSTERQUEUE),
    ]


# --- ClusterQueue updates: TestValidateClusterQueueUpdate ---------------------------------------------


def test_cluster_queue_updates() -> None:
    strict = cq(queueingStrategy="StrictFIFO")
    assert kueue.update_refusals(strict, cq(queueingStrategy="BestEffortFIFO")) == []  # queueingStrategy can be updated
    assert kueue.update_refusals(cq(queueingStrategy="BestEffortFIFO"), cq(queueingStrategy="BestEffortFIFO")) == []
    alpha = group(flavor("alpha", resource("cpu", "1")))
    policy = {"migration": {"mode": "TryPreferredFlavors"}}
    added = kueue.update_refusals(cq(alpha), cq(alpha, concurrentAdmissionPolicy=policy))
    assert [(r.field, r.type, r.detail) for r in added] == [("spec.concurrentAdmissionPolicy", "Invalid", "field is immutable")]
    removed = kueue.update_refusals(cq(alpha, concurrentAdmissionPolicy=policy), cq(alpha))
    assert [(r.field, r.type) for r in removed] == [("spec.concurrentAdmissionPolicy", "Invalid")]


# --- Cohort: TestValidateCohort ----------------------------------------------------------------------


def test_cohort_lending_limit_without_parent() -> None:
    cohort: dict[str, Any] = {"kind": "Cohort", "apiVersion": "kueue.x-k8s.io/v1beta2", "metadata": {"name": "cohort"}}
    cohort["spec"] = {"resourceGroups": [group(flavor("x86", resource("cpu", "1", "", "1")))]}
    [refusal] = kueue.cohort_refusals(cohort)
    assert (refusal.field, refusal.type, refusal.detail) == (
        f"{RG}[0].flavors[0].resources[0].lendingLimit",
        "Invalid",
        "must be nil when parent is empty",
    )
    cohort["spec"]["parentName"] = "root"
    assert kueue.cohort_refusals(cohort) == []
    # A Cohort does not compare lendingLimit with nominalQuota (enforceNominalGreaterThanLending false).
    cohort["spec"]["resourceGroups"] = [group(flavor("x86", resource("cpu", "1", "", "2")))]
    assert kueue.cohort_refusals(cohort) == []


# --- ResourceFlavor: TestValidateResourceFlavor and resourceflavor_test.go ---------------------------


def rf(
    labels: dict[str, str] | None = None, taints: list[Any] | None = None, tolerations: list[Any] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if labels is not None:
        spec["nodeLabels"] = labels
    if taints is not None:
        spec["nodeTaints"] = taints
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "resource-flavor"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    "flavor_, expected",
    [
        (rf(), []),
        (rf({"foo": "bar"}, [{"key": "spot", "value": "true", "effect": "NoSchedule"}]), []),
        (rf({"@abc": "foo"}), [("spec.nodeLabels", "Invalid")]),
        (rf({"foo": "@abc"}), [("spec.nodeLabels", "Invalid")]),
    ],
    ids=["empty", "valid", "invalid label name", "invalid label value"],
)
def test_resource_flavor_webhook_cases(flavor_: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert webhook(kueue.resource_flavor_refusals(flavor_), kueue.VRESOURCEFLAVOR) == expected


def test_resource_flavor_integration_answers() -> None:
    invalid_taints = rf(taints=[{"key": "skdajf", "effect": ""}, {"key": "@foo", "value": "bar", "effect": "NoSchedule"}])
    assert kueue.answer(kueue.resource_flavor_refusals(invalid_taints)) == "Invalid"
    assert kueue.answer(kueue.resource_flavor_refusals(rf({"@abc": "foo"}))) == "Forbidden"
    invalid_tolerations = rf(
        tolerations=[
            {"key": "@abc", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
            {"key": "abc", "operator": "Exists", "value": "v", "effect": "NoSchedule"},
            {"key": "abc", "operator": "Equal", "value": "v", "effect": "not-valid"},
            {"key": "abc", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
        ]
    )
    refusals = kueue.resource_flavor_refusals(invalid_tolerations)
    assert kueue.answer(refusals) == "Invalid"
    assert {r.detail for r in refusals if r.by == kueue.CRD_RULE} == {
        "a value must be empty when 'operator' is 'Exists'",
        "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",
    }
    assert webhook(refusals, kueue.VRESOURCEFLAVOR) == [("spec.tolerations[0].key", "Invalid")]
    # "Should fail to update" with an invalid taint effect.
    old = rf({"foo": "bar"})
    new = rf({"foo": "bar"}, [{"key": "foo", "value": "bar", "effect": "Invalid"}])
    assert kueue.answer(kueue.update_refusals(old, new)) == "Invalid"


def test_resource_flavor_topology_transition_rules() -> None:
    old = rf({"pool": "a"})
    old["spec"]["topologyName"] = "default"
    moved = rf({"pool": "b"})
    moved["spec"]["topologyName"] = "default"
    assert [r.detail for r in kueue.update_refusals(old, moved)] == ["nodeLabels are immutable when topologyName is set"]
    assert kueue.update_refusals(rf({"pool": "a"}), rf({"pool": "b"})) == []  # without a topology: free


# --- LocalQueue: localqueue_test.go "Should reject the change of spec.clusterQueue" --------------------


def lq(cluster_queue: str) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "queue-test", "namespace": "core"},
        "spec": {"clusterQueue": cluster_queue},
    }


def test_local_queue_cluster_queue_is_immutable() -> None:
    [refusal] = kueue.update_refusals(lq("foo"), lq("bar"))
    assert (refusal.field, refusal.detail, refusal.by) == ("spec.clusterQueue", "field is immutable", kueue.CRD_RULE)
    assert kueue.answer([refusal]) == "Invalid"
    assert kueue.update_refusals(lq("foo"), lq("foo")) == []


# --- the Workload Kueue builds: TestValidateWorkload (pod sets) --------------------------------------


def job(
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    pod_resources: dict[str, Any] | None = None,
    pod_labels: dict[str, str] | None = None,
    pod_annotations: dict[str, str] | None = None,
    suspend: bool | None = None,
    namespace: str = "ns1",
    **spec: Any,
) -> dict[str, Any]:
    """`utiltestingjob.MakeJob("test-job", "ns1")` as a dict."""
    pod: dict[str, Any] = {"containers": containers or [{"name": "c"}]}
    if init:
        pod["initContainers"] = init
    if pod_resources:
        pod["resources"] = pod_resources
    template: dict[str, Any] = {"spec": pod, "metadata": {}}
    if pod_labels:
        template["metadata"]["labels"] = pod_labels
    if pod_annotations:
        template["metadata"]["annotations"] = pod_annotations
    metadata: dict[str, Any] = {"name": "test-job", "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    body: dict[str, Any] = {"template": template, **spec}
    if suspend is not None:
        body["suspend"] = suspend
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": body}


def requests(**values: str) -> dict[str, Any]:
    return {"name": "c", "resources": {"requests": dict(values)}}


def limits(**values: str) -> dict[str, Any]:
    return {"name": "c", "resources": {"limits": dict(values)}}


SPEC = "spec.podSets[0].template.spec"
PODSET_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    (
        "should not request num-pods resource",
        job(init=[requests(pods="1")], containers=[requests(pods="1")]),
        [
            (f"{SPEC}.initContainers[0].resources.requests[pods]", "Invalid"),
            (f"{SPEC}.containers[0].resources.requests[pods]", "Invalid"),
        ],
    ),
    (
        "should reject reserved pods resource key in limits",
        job(init=[limits(pods="1")], containers=[limits(pods="1")]),
        [
            (f"{SPEC}.initContainers[0].resources.limits[pods]", "Invalid"),
            (f"{SPEC}.containers[0].resources.limits[pods]", "Invalid"),
        ],
    ),
    (
        "should reject negative container resource request",
        job(containers=[requests(cpu="-1")]),
        [(f"{SPEC}.containers[0].resources.requests[cpu]", "Invalid")],
    ),
    (
        "should reject negative initContainer resource request",
        job(init=[requests(cpu="-1")]),
        [(f"{SPEC}.initContainers[0].resources.requests[cpu]", "Invalid")],
    ),
    (
        "should reject invalid podSet template label value",
        job(pod_labels={"valid": "invalid value with spaces"}),
        [("spec.podSets[0].template.metadata.labels", "Invalid")],
    ),
    (
        "should reject invalid podSet template annotation key",
        job(pod_annotations={"invalid/annotation/key/too/long/invalid": "val"}),
        [("spec.podSets[0].template.metadata.annotations", "Invalid")],
    ),
    (
        "should reject negative container resource limit",
        job(containers=[limits(cpu="-1")]),
        [(f"{SPEC}.containers[0].resources.limits[cpu]", "Invalid")],
    ),
    (
        "should reject negative resource among multiple valid requests and limits",
        job(
            containers=[
                {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "-1Gi"}, "limits": {"cpu": "2", "memory": "-2Gi"}}}
            ]
        ),
        [
            (f"{SPEC}.containers[0].resources.requests[memory]", "Invalid"),
            (f"{SPEC}.containers[0].resources.limits[memory]", "Invalid"),
        ],
    ),
    (
        "should reject negative pod-level resource request",
        job(pod_resources={"requests": {"cpu": "-1"}}),
        [(f"{SPEC}.resources.requests[cpu]", "Invalid")],
    ),
    (
        "should reject negative pod-level resource limit",
        job(pod_resources={"limits": {"memory": "-1Gi"}}),
        [(f"{SPEC}.resources.limits[memory]", "Invalid")],
    ),
    ("valid", job(containers=[requests(cpu="1", memory="1Gi")]), []),
]


@pytest.mark.parametrize("name, obj, expected", PODSET_CASES, ids=[c[0] for c in PODSET_CASES])
def test_workload_podset_cases(name: str, obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    [template] = pod_templates(obj)
    assert [(r.field, r.type) for r in kueue.podset_refusals(template, 0)] == expected


# --- jobs: TestValidateJobOnCreate, TestValidateJobOnUpdate --------------------------------------------

QUEUE = f"metadata.labels[{kueue.QUEUE_LABEL}]"
ELASTIC = {kueue.ELASTIC_JOB_ANNOTATION: "true"}


def test_validate_job_on_create() -> None:
    assert kueue.validate_job_on_create(job(annotations=ELASTIC)) == []  # on batch/v1 Job: allowed
    jobset = {**job(annotations=ELASTIC), "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet"}
    [refused] = kueue.validate_job_on_create(jobset)
    assert (refused.field, refused.type) == (f"metadata.annotations[{kueue.ELASTIC_JOB_ANNOTATION}]", "Forbidden")
    # The queue name is a CRD name (ValidateQueueName; job_webhook_test.go "invalid queue name").
    [bad] = kueue.validate_job_on_create(job(labels={kueue.QUEUE_LABEL: "queue_name"}))
    assert (bad.field, bad.type) == (QUEUE, "Invalid")
    assert kueue.validate_job_on_create(job(labels={kueue.QUEUE_LABEL: "default"})) == []


PREBUILT_LABEL = {kueue.PREBUILT_WORKLOAD_LABEL: "workload-name"}
PREBUILT_ANNOTATION = {kueue.PREBUILT_WORKLOAD_ANNOTATION: "workload-name"}
PREBUILT_LABEL_PATH = f"metadata.labels[{kueue.PREBUILT_WORKLOAD_LABEL}]"
PREBUILT_ANNOTATION_PATH = f"metadata.annotations[{kueue.PREBUILT_WORKLOAD_ANNOTATION}]"

JOB_UPDATE_CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool, list[tuple[str, str]]]] = [
    (
        "local queue cannot be changed if job is not suspended",
        job(labels={kueue.QUEUE_LABEL: "lq1"}, suspend=False),
        job(labels={kueue.QUEUE_LABEL: "lq2"}, suspend=False),
        False,
        [(QUEUE, "Invalid")],
    ),
    (
        "local queue can be changed",
        job(labels={kueue.QUEUE_LABEL: "lq1"}, suspend=True),
        job(labels={kueue.QUEUE_LABEL: "lq2"}, suspend=True),
        True,
        [],
    ),
    (
        "local queue can be changed from default",
        job(labels={kueue.QUEUE_LABEL: "default"}, suspend=True),
        job(labels={kueue.QUEUE_LABEL: "lq2"}, suspend=True),
        True,
        [],
    ),
    (
        "local queue cannot be removed if default queue exists and feature is enabled",
        job(labels={kueue.QUEUE_LABEL: "lq1"}, suspend=True),
        job(labels={kueue.QUEUE_LABEL: ""}, suspend=True),
        True,
        [(QUEUE, "Invalid")],
    ),
    (
        "local queue can be removed if default queue does not exists and feature is enabled",
        job(labels={kueue.QUEUE_LABEL: "lq1"}, suspend=True),
        job(labels={kueue.QUEUE_LABEL: ""}, suspend=True),
        False,
        [],
    ),
    (
        "elastic job enabled annotation cannot be removed on update",
        job(annotations=ELASTIC),
        job(),
        False,
        [(f"metadata.annotations[{kueue.ELASTIC_JOB_ANNOTATION}]", "Invalid")],
    ),
    (
        "elastic job enabled annotation cannot be added on update",
        job(),
        job(annotations=ELASTIC),
        False,
        [(f"metadata.annotations[{kueue.ELASTIC_JOB_ANNOTATION}]", "Invalid")],
    ),
    (
        "prebuilt workload label fallback valid on update",
        job(labels=PREBUILT_LABEL, suspend=True),
        job(labels=PREBUILT_LABEL, suspend=True),
        False,
        [],
    ),
    (
        "prebuilt workload annotation valid on update",
        job(annotations=PREBUILT_ANNOTATION, suspend=True),
        job(annotations=PREBUILT_ANNOTATION, suspend=True),
        False,
        [],
    ),
    (
        "prebuilt workload same label and annotation on update",
        job(labels=PREBUILT_LABEL, annotations=PREBUILT_ANNOTATION, suspend=True),
        job(labels=PREBUILT_LABEL, annotations=PREBUILT_ANNOTATION, suspend=True),
        False,
        [],
    ),
    (
        "prebuilt workload invalid label format with fallback on update",
        job(labels={kueue.PREBUILT_WORKLOAD_LABEL: "workload name"}, suspend=True),
        job(labels={kueue.PREBUILT_WORKLOAD_LABEL: "workload name"}, suspend=True),
        False,
        [(PREBUILT_LABEL_PATH, "Invalid")],
    ),
    (
        "prebuilt workload invalid annotation format",
        job(annotations={kueue.PREBUILT_WORKLOAD_ANNOTATION: "workload name"}, suspend=True),
        job(annotations={kueue.PREBUILT_WORKLOAD_ANNOTATION: "workload name"}, suspend=True),
        False,
        [(PREBUILT_ANNOTATION_PATH, "Invalid")],
    ),
    (
        "prebuilt workload annotation update",
        job(annotations=PREBUILT_ANNOTATION, suspend=True),
        job(annotations={kueue.PREBUILT_WORKLOAD_ANNOTATION: "workload-name-new"}, suspend=True),
        False,
        [],
    ),
    (
        "prebuilt workload annotation update not suspended",
        job(annotations=PREBUILT_ANNOTATION, suspend=False),
        job(annotations={kueue.PREBUILT_WORKLOAD_ANNOTATION: "workload-name-new"}, suspend=False),
        False,
        [(PREBUILT_ANNOTATION_PATH, "Invalid")],
    ),
    (
        "prebuilt workload label to annotation update",
        job(labels=PREBUILT_LABEL, suspend=True),
        job(annotations={kueue.PREBUILT_WORKLOAD_ANNOTATION: "workload-name-new"}, suspend=True),
        False,
        [],
    ),
]


@pytest.mark.parametrize("name, old, new, default_queue, expected", JOB_UPDATE_CASES, ids=[c[0] for c in JOB_UPDATE_CASES])
def test_validate_job_on_update(
    name: str, old: dict[str, Any], new: dict[str, Any], default_queue: bool, expected: list[tuple[str, str]]
) -> None:
    suspended = new["spec"].get("suspend") is True
    found = kueue.validate_job_on_update(old, new, suspended=suspended, default_queue=default_queue)
    assert [(r.field, r.type) for r in found] == expected


def test_job_annotations() -> None:
    """job_webhook_test.go: partial admission and sync completions."""
    min_parallelism = {kueue.MIN_PARALLELISM_ANNOTATION: "2"}
    assert kueue.job_refusals(job(annotations=min_parallelism, parallelism=4)) == []
    [too_many] = kueue.job_refusals(job(annotations=min_parallelism, parallelism=2))
    assert too_many.detail == "should be between 0 and 1"
    sync = {kueue.SYNC_COMPLETIONS_ANNOTATION: "true"}
    assert kueue.job_refusals(job(annotations=sync, completionMode="Indexed", parallelism=3, completions=3)) == []
    [non_indexed] = kueue.job_refusals(job(annotations=sync, parallelism=3, completions=3))
    assert non_indexed.detail == "should not be enabled for NonIndexed jobs"
    [unequal] = kueue.job_refusals(job(annotations=sync, completionMode="Indexed", parallelism=3, completions=4))
    assert unequal.field == "spec.completions"


def test_priority_class_and_gates_on_update() -> None:
    labelled = job(labels={kueue.PRIORITY_CLASS_LABEL: "urgent"})
    [removed] = kueue.validate_job_on_update(labelled, job(), suspended=True, default_queue=False)
    assert removed.detail == "WorkloadPriorityClass cannot be removed from a workload"
    [added] = kueue.validate_job_on_update(job(), labelled, suspended=False, default_queue=False)
    assert added.detail == "WorkloadPriorityClass cannot be added to a non-suspended workload"
    assert kueue.validate_job_on_update(job(), labelled, suspended=True, default_queue=False) == []
    gated = job(annotations={kueue.ADMISSION_GATED_BY_ANNOTATION: "example.com/a,example.com/b"})
    fewer = job(annotations={kueue.ADMISSION_GATED_BY_ANNOTATION: "example.com/a"})
    assert kueue.validate_job_on_update(gated, fewer, suspended=True, default_queue=False) == []
    assert [r.detail for r in kueue.validate_job_on_update(fewer, gated, suspended=True, default_queue=False)] == [
        "can only remove gates, not add new ones"
    ]
    assert [r.detail for r in kueue.validate_job_on_update(job(), fewer, suspended=True, default_queue=False)] == [
        "cannot add admission gate after creation"
    ]
    assert [r.detail for r in kueue.job_refusals(job(annotations={kueue.ADMISSION_GATED_BY_ANNOTATION: "a,a"}))] == [
        'must be a domain-prefixed path (such as "acme.io/foo")',
        "duplicate gate name: a",
    ]


# --- dev and prod ------------------------------------------------------------------------------------


def test_dev_and_prod_kueue_objects_and_jobs_are_admitted(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    for stack in (dev_stack, prod_stack):
        objects = recorded_objects(stack).objects
        # As deployed, and as the chart's default webhook scope would judge every job hpcforge makes.
        for selector in (None, kueue.default_namespace_selector()):
            assert [v.message for v in kueue.kueue_verdicts(objects, selector) if not v.admitted] == []
    objects = recorded_objects(prod_stack).objects
    everywhere = kueue.kueue_verdicts(objects, kueue.default_namespace_selector())
    kinds = {kind_of(v.obj) for v in everywhere}
    assert {"ClusterQueue", "Cohort", "ResourceFlavor", "AppWrapper", "Deployment", "StatefulSet", "Job", "CronJob"} <= kinds
    # Every Kueue object prod declares went through a rule (LocalQueue and WorkloadPriorityClass have none
    # on create; the LocalQueue's update rule is held below, on day two).
    kueue_objects = [o for o in objects if o["apiVersion"].startswith("kueue.x-k8s.io/")]
    judged = {(kind_of(v.obj), name_of(v.obj)) for v in everywhere}
    assert {(kind_of(o), name_of(o)) for o in kueue_objects if kind_of(o) in kueue.CORE_CHECKS} <= judged
    # The sample AppWrapper is the one job Kueue manages, in its team's queue; no other workload of
    # hpcforge sits in a namespace whose default LocalQueue would pull it into Kueue.
    teams = kueue.default_queue_namespaces(objects)
    assert teams == {"team-climate", "team-genomics", "team-llm"}
    managed = [(kind_of(v.obj), namespace_of(v.obj), name_of(v.obj), v.queue) for v in everywhere if v.queue]
    assert managed == [("AppWrapper", "team-llm", "sample-pair", "default")]


def test_kueues_job_webhooks_see_only_the_team_namespaces(prod_stack: RecordedStack) -> None:
    """Kueue's job webhooks (failurePolicy Fail) are called for the team namespaces only: the chart's
    default scope, every namespace but kube-system and kueue-system, put every pod of the cluster and
    every Deployment, StatefulSet and Job `pulumi up` creates or updates behind the one Kueue controller."""
    objects = recorded_objects(prod_stack).objects
    selector = kueue.deployed_namespace_selector(objects)
    assert selector == TEAM_NAMESPACES
    labels = kueue.namespace_labels(objects)
    seen = {ns for ns, found in labels.items() if selector_matches(selector, found)}
    assert seen == {"team-climate", "team-genomics", "team-llm"}
    # pkg/config/validation.go validateManagedJobsNamespaceSelector: Kueue refuses to start with a selector
    # that matches kube-system or its own namespace (by their name label alone).
    for name in ("kube-system", kueue.KUEUE_NAMESPACE):
        assert not selector_matches(selector, {"kubernetes.io/metadata.name": name})
    jobs = [v for v in kueue.kueue_verdicts(objects) if v.obj["apiVersion"].split("/")[0] != "kueue.x-k8s.io"]
    assert [(kind_of(v.obj), namespace_of(v.obj)) for v in jobs] == [("AppWrapper", "team-llm")]
    # With the chart's default scope (hpcforge's values before), Pulumi's own workloads were in it too.
    before = kueue.kueue_verdicts(objects, kueue.default_namespace_selector())
    assert {namespace_of(v.obj) for v in before if kind_of(v.obj) in ("Deployment", "StatefulSet", "Job")} >= {
        "site-dns",
        "directory",
        "registry",
        "provisioning",
        "slurm",
    }


@pytest.mark.charts
def test_the_rendered_chart_registers_the_webhooks_reproduced_scoped_to_the_team_namespaces(prod_stack: RecordedStack) -> None:
    """The kueue chart 0.19.2 rendered like helm.v4.Chart with prod's values (charts tier): the
    webhooks admission_kueue reproduces are the ones it registers, the job webhooks select the team
    namespaces, LocalQueue and WorkloadPriorityClass have none."""
    chart = require_charts() / "kueue-0.19.2"
    if not chart.is_dir():
        skip_or_fail(f"{chart} is not there (the kueue chart, unpacked)", allow_in_strict=CHARTS_ENV)
    [release] = [r for r in chart_releases(prod_stack) if r.release == "kueue"]
    rendered = render_release(release, chart, kubernetes_version="1.33", api_versions=builtin_api_versions("1.33"))
    webhooks = {
        w["name"]: w
        for o in rendered.objects
        if o["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
        for w in o["webhooks"]
    }
    core = {"vclusterqueue.kb.io", "vcohort.kb.io", "vresourceflavor.kb.io", "vworkload.kb.io"}
    jobs = {"vjob.kb.io", "vpod.kb.io", "vdeployment.kb.io", "vstatefulset.kb.io", "vappwrapper.kb.io"}
    assert core | jobs <= set(webhooks)
    assert not any("localqueue" in name or "workloadpriorityclass" in name for name in webhooks)
    assert all(webhooks[name].get("namespaceSelector") is None for name in core)
    scoped = [w for name, w in webhooks.items() if "namespaceSelector" in w]
    assert scoped and all(w["namespaceSelector"] == TEAM_NAMESPACES and w["failurePolicy"] == "Fail" for w in scoped)
    assert {w["name"] for w in scoped} >= jobs | {name.replace("v", "m", 1) for name in jobs}
    # The names the rules give as `by` are the webhooks' names.
    assert {kueue.VCLUSTERQUEUE, kueue.VCOHORT, kueue.VRESOURCEFLAVOR, kueue.VWORKLOAD} == {f"webhook {n}" for n in core}


def test_kueue_manager_config_is_the_charts_default_with_the_team_namespaces(prod_stack: RecordedStack) -> None:
    values = yaml.safe_load((require_shared("charts", "kueue-0.19.2") / "values.yaml").read_text())
    default = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    ours = kueue_manager_config()
    assert {k: v for k, v in ours.items() if k != "managedJobsNamespaceSelector"} == default
    assert ours["managedJobsNamespaceSelector"] == TEAM_NAMESPACES
    # What prod hands the chart (an Argo CD Application's values).
    app = next(r.inputs for r in prod_stack.resources if r.inputs.get("kind") == "Application" and r.name.endswith("kueue"))
    passed = app["spec"]["source"]["helm"]["valuesObject"]["managerConfig"]["controllerManagerConfigYaml"]
    assert yaml.safe_load(passed) == ours


def test_the_rules_bite_on_prods_objects(prod_stack: RecordedStack) -> None:
    """prod's own objects, each broken the way the config could break it, are refused."""
    import copy

    objects = recorded_objects(prod_stack).objects
    inference = copy.deepcopy(next(o for o in objects if kind_of(o) == "ClusterQueue" and name_of(o) == "inference"))
    del inference["spec"]["cohortName"]
    assert kueue.answer(kueue.cluster_queue_refusals(inference)) == "Invalid"
    l40s = copy.deepcopy(next(o for o in objects if kind_of(o) == "ResourceFlavor" and name_of(o) == "l40s"))
    l40s["spec"]["tolerations"][0]["value"] = "x"
    assert kueue.answer(kueue.resource_flavor_refusals(l40s)) == "Invalid"
    sample = copy.deepcopy(next(o for o in objects if kind_of(o) == "AppWrapper"))
    sample["metadata"]["labels"][kueue.QUEUE_LABEL] = "Default"
    [verdict] = [v for v in kueue.kueue_verdicts([sample]) if not v.admitted]
    assert "webhook vappwrapper.kb.io" in verdict.message


# --- defects: config that produced objects Kueue refuses (fixed by config validation) ---------------


def _prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def _refused(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> list[str]:
    path = write_variant(tmp_path, "prod", edit)
    with pytest.raises(ProgramConfigError) as raised:
        run_stack_file(path, "prod")
    assert raised.value.registered == 0
    return raised.value.messages


def test_a_borrowing_limit_outside_the_cohort_is_refused_naming_the_key(tmp_path: Path) -> None:
    # What the renderer makes of such a queue: the CRD rule refuses it (and the webhook would).
    batch = _prod().batch
    assert batch is not None
    inference = next(q for q in batch.cluster_queues if q.name == "inference").model_copy(update={"in_cohort": False})
    rendered = {"kind": "ClusterQueue", "metadata": {"name": "inference"}, "spec": cluster_queue_spec(inference, "site")}
    assert kueue.answer(kueue.cluster_queue_refusals(rendered)) == "Invalid"

    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:batch"]["clusterQueues"][1]["inCohort"] = False  # inference keeps borrowingLimitGpus: 4

    messages = _refused(tmp_path, edit)
    key = "hpcforge:batch.clusterQueues[1].quotas[1].borrowingLimitGpus: "
    assert any(m.startswith(key) and "inCohort" in m for m in messages), messages


def _crd_errors(document: dict[str, Any]) -> list[str]:
    """The schema tier's verdict on one Kueue object (its CRD at v0.19.2, ../shared/crds)."""
    return validate_custom_resource(document, load_crd_index(require_shared()))


def test_a_flavor_pool_with_more_labels_or_taints_than_a_resource_flavor_takes_is_refused(tmp_path: Path) -> None:
    # kueue 0.19.2 ResourceFlavor CRD: nodeLabels maxProperties 8, tolerations maxItems 8.
    pool = next(p for p in _prod().node_pools if p.name == "batch-l40s")
    wide = pool.model_copy(
        update={"labels": {f"example.com/l{i}": "x" for i in range(9)}, "taints": tuple(f"example.com/t{i}" for i in range(9))}
    )
    flavor_ = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "l40s"}}
    assert _crd_errors({**flavor_, "spec": resource_flavor_spec(pool)}) == []
    assert len(_crd_errors({**flavor_, "spec": resource_flavor_spec(wide)})) == 2

    def edit(values: dict[str, Any]) -> None:
        l40s = next(p for p in values["hpcforge:nodePools"] if p["name"] == "batch-l40s")
        l40s["labels"].update({f"example.com/l{i}": "x" for i in range(8)})
        l40s["taints"] = [f"example.com/t{i}" for i in range(9)]

    messages = _refused(tmp_path, edit)
    assert any(m.startswith("hpcforge:batch.flavors[1].pool: ") and "9 labels" in m for m in messages), messages
    assert any(m.startswith("hpcforge:batch.flavors[1].pool: ") and "9 taints" in m for m in messages), messages


def test_a_queue_with_more_flavors_than_a_resource_group_takes_is_refused(tmp_path: Path) -> None:
    # kueue 0.19.2 ClusterQueue CRD: resourceGroups[].flavors maxItems 64 (one group per queue here).
    flavors = [flavor(f"f{i}", resource("cpu", "1"), resource("memory", "1")) for i in range(65)]
    assert _crd_errors(cq(group(*flavors))) != []

    def edit(values: dict[str, Any]) -> None:
        quota = values["hpcforge:batch"]["clusterQueues"][0]["quotas"][0]
        values["hpcforge:batch"]["clusterQueues"][0]["quotas"] = [quota] * 65

    messages = _refused(tmp_path, edit)
    assert any(m.startswith("hpcforge:batch.clusterQueues[0].quotas: ") and "64" in m for m in messages), messages


def test_a_priority_class_description_longer_than_the_crd_takes_is_refused(tmp_path: Path) -> None:
    # kueue 0.19.2 WorkloadPriorityClass CRD: description maxLength 2048.
    wpc = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": "urgent"}, "value": 1}
    assert _crd_errors({**wpc, "description": "x" * 2048}) == []
    assert _crd_errors({**wpc, "description": "x" * 2049}) != []

    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:batch"]["priorityClasses"][0]["description"] = "x" * 2049

    messages = _refused(tmp_path, edit)
    assert any(m.startswith("hpcforge:batch.priorityClasses[0].description: ") and "2048" in m for m in messages), messages


# --- day two: what a second `pulumi up` sends Kueue ---------------------------------------------------


def _at(value: Any, path: str) -> Any:
    for step in path.split("."):
        value = value.get(step) if isinstance(value, dict) else None
    return value


def pulumi_step(old: RecordedResource, new: RecordedResource) -> str:
    """What `pulumi up` does with a Kueue object whose inputs changed: `replace` when a
    `replaceOnChanges` path changed (`delete-replace` with deleteBeforeReplace, which an object keeping
    its name needs), `update` in place otherwise, `same` when nothing changed. (The provider's own
    replacements, for built-in kinds and renames, are not modelled: Kueue objects keep their names.)"""
    if old.inputs == new.inputs:
        return "same"
    if any(_at(old.inputs, path) != _at(new.inputs, path) for path in new.replace_on_changes):
        return "delete-replace" if new.delete_before_replace else "replace"
    return "update"


def day_two(before: RecordedStack, after: RecordedStack) -> tuple[dict[str, str], list[str]]:
    """The step of every Kueue object and job both runs declare, and what Kueue refuses among the
    in-place updates (jobs taken as running: not suspended)."""
    old = {r.urn: r for r in before.resources if r.is_kubernetes_object}
    objects = recorded_objects(after).objects
    teams = kueue.default_queue_namespaces(objects)
    steps: dict[str, str] = {}
    refused: list[str] = []
    for new in after.resources:
        if new.urn not in old or not new.is_kubernetes_object:
            continue
        if not (new.inputs["apiVersion"].startswith("kueue.x-k8s.io/") or kueue.job_webhook_sees(new.inputs)):
            continue
        step = steps[new.name] = pulumi_step(old[new.urn], new)
        if step == "update":
            found = kueue.update_refusals(old[new.urn].inputs, new.inputs, default_queue=namespace_of(new.inputs) in teams)
            refused += [f"{new.name}: {r}" for r in found]
    return steps, refused


def test_moving_a_team_to_another_cluster_queue_replaces_its_local_queue(prod_stack: RecordedStack, tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        team = next(t for t in values["hpcforge:batch"]["teams"] if t["namespace"] == "team-llm")
        team["clusterQueue"] = "research"

    moved = run_stack_file(write_variant(tmp_path, "prod", edit), "prod")
    steps, refused = day_two(prod_stack, moved)
    assert refused == []
    assert steps["team-llm/localqueue-default"] == "delete-replace"
    assert {name for name, step in steps.items() if step != "same"} == {"team-llm/localqueue-default"}
    # Updated in place instead (as before the fix), the LocalQueue CRD's transition rule refuses it.
    old, new = (next(r.inputs for r in s.resources if r.name == "team-llm/localqueue-default") for s in (prod_stack, moved))
    assert [str(r) for r in kueue.update_refusals(old, new)] == [
        'spec.clusterQueue: Invalid value: "research": field is immutable (CRD rule)'
    ]


def test_day_two_config_changes_are_admitted_in_place(prod_stack: RecordedStack, tmp_path: Path) -> None:
    """The batch settings one changes on a running site: quotas, queueing, preemption, leaving the
    cohort, priorities, the cohort's name; Kueue admits every in-place update they make."""

    def edit(values: dict[str, Any]) -> None:
        batch = values["hpcforge:batch"]
        batch["cohort"] = "campus"
        research, inference = batch["clusterQueues"]
        research.update(inCohort=False, queueing="StrictFIFO", preemption="LowerOrNewerEqualPriority")
        research["quotas"][0]["cpu"] = "256"
        inference["quotas"][1]["borrowingLimitGpus"] = 0
        inference["quotas"][0]["memory"] = "1Ti"
        batch["priorityClasses"][0].update(value=2000, description="Deadlines")

    changed = run_stack_file(write_variant(tmp_path, "prod", edit), "prod")
    steps, refused = day_two(prod_stack, changed)
    assert refused == []
    updated = {name for name, step in steps.items() if step == "update"}
    assert {
        "_cluster/clusterqueue-research",
        "_cluster/clusterqueue-inference",
        "_cluster/workloadpriorityclass-urgent",
    } <= updated
