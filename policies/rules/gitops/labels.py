"""Every object hpcforge authors says who manages it and what it is part of (kubernetes-labels)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..knobs import STRING_LIST, RuleConfig, knob
from ..rule import ResourceRule
from ..view import ResourceView
from ..wire import is_unknown

REQUIRED_LABELS: dict[str, tuple[str, ...]] = {
    "app.kubernetes.io/managed-by": ("pulumi",),
    "app.kubernetes.io/part-of": ("hpcforge",),
}


@dataclass(frozen=True)
class LabelsConfig(RuleConfig):
    required_labels: Mapping[str, tuple[str, ...]] = knob(
        "requiredLabels",
        REQUIRED_LABELS,
        {"type": "object", "additionalProperties": STRING_LIST},
        "Labels every authored object must carry, each with its allowed values (empty list: any value).",
    )
    include_rendered: bool = knob(
        "includeRendered",
        False,
        {"type": "boolean"},
        "Also check objects rendered by a helm.v4.Chart (upstream charts label their own objects).",
    )


def check_kubernetes_labels(resource: ResourceView, config: LabelsConfig) -> list[str]:
    if not resource.is_object or resource.is_patch or (resource.rendered_by_component and not config.include_rendered):
        return []
    labels = resource.labels
    if is_unknown(resource.props.get("metadata")) or is_unknown(labels):
        return []
    problems: list[str] = []
    for label, allowed in sorted(config.required_labels.items()):
        value = labels.get(label)
        if is_unknown(value):
            continue
        if not isinstance(value, str) or not value:
            problems.append(f"{resource.display} has no label {label}.")
        elif allowed and value not in allowed:
            problems.append(f"{resource.display} has {label}={value!r}, expected one of {', '.join(allowed)}.")
    return problems


KUBERNETES_LABELS = ResourceRule(
    "kubernetes-labels",
    "Every Kubernetes object hpcforge authors is labelled with app.kubernetes.io/managed-by and part-of.",
    LabelsConfig,
    check_kubernetes_labels,
    "Build metadata with ctx.meta() (components/ground/meta.py), which adds the recommended labels.",
)
