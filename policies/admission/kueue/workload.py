"""The Workload Kueue builds for a managed job: pkg/webhooks/workload_webhook.go `validatePodSet` on each
pod set made of one of the job's pod templates.
"""

from __future__ import annotations

from ...rules.access import get, mapping
from ...rules.podtemplates import PodTemplate
from .fields import NEGATIVE, Refusal, is_negative, validate_annotations, validate_labels

VWORKLOAD = "webhook vworkload.kb.io"


def podset_refusals(template: PodTemplate, index: int) -> list[Refusal]:
    """workload_webhook.go `validatePodSet` on the pod set Kueue makes of one pod template."""
    path = f"spec.podSets[{index}].template"
    found = validate_labels(template.labels, f"{path}.metadata.labels", VWORKLOAD)
    found += validate_annotations(template.annotations, f"{path}.metadata.annotations", VWORKLOAD)
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
                if is_negative(amount):
                    found.append(Refusal(f"{where}[{resource}]", "Invalid", NEGATIVE, VWORKLOAD, amount))
    for part in ("requests", "limits"):
        for resource, amount in mapping(get(template.spec, "resources", part)).items():
            where = f"{path}.spec.resources.{part}[{resource}]"
            if resource == "pods":
                found.append(Refusal(where, "Invalid", "the key is reserved for internal kueue use", VWORKLOAD, "pods"))
            if is_negative(amount):
                found.append(Refusal(where, "Invalid", NEGATIVE, VWORKLOAD, amount))
    return found
