"""ClusterQueue and Cohort: pkg/webhooks/clusterqueue_webhook.go `ValidateClusterQueue`,
`ValidateClusterQueueUpdate`, cohort_webhook.go `validateCohort`, and their CRDs' CEL rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get, items, mapping, text
from .fields import (
    CRD_RULE,
    IMMUTABLE,
    NEGATIVE,
    Refusal,
    is_greater,
    is_negative,
    qualified_name_errors,
    validate_label_selector,
)

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
                if is_negative(nominal):
                    found.append(Refusal(f"{where}.nominalQuota", "Invalid", NEGATIVE, by, nominal))
                borrowing = get(quota, "borrowingLimit")
                if borrowing is not None:
                    if not has_parent:
                        found.append(Refusal(f"{where}.borrowingLimit", "Invalid", missing_parent, by, borrowing))
                    if is_negative(borrowing):
                        found.append(Refusal(f"{where}.borrowingLimit", "Invalid", NEGATIVE, by, borrowing))
                lending = get(quota, "lendingLimit")
                if lending is not None:
                    if is_negative(lending):
                        found.append(Refusal(f"{where}.lendingLimit", "Invalid", NEGATIVE, by, lending))
                    if not has_parent:
                        found.append(Refusal(f"{where}.lendingLimit", "Invalid", missing_parent, by, lending))
                    if not cohort and is_greater(lending, nominal):
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
    found += validate_label_selector(spec.get("namespaceSelector"), "spec.namespaceSelector", VCLUSTERQUEUE)
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


def cluster_queue_update_refusals(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """`ValidateClusterQueueUpdate`: the new object's create rules and the immutable
    `spec.concurrentAdmissionPolicy` (onFlavors re-validation is not modelled: hpcforge sets no
    admission checks)."""
    found = cluster_queue_refusals(new)
    before, after = get(old, "spec", "concurrentAdmissionPolicy"), get(new, "spec", "concurrentAdmissionPolicy")
    if before != after:
        found.append(Refusal("spec.concurrentAdmissionPolicy", "Invalid", IMMUTABLE, VCLUSTERQUEUE, after))
    return found
