"""Where Argo CD and NodeSets meet, Argo CD knows that a NodeSet's spec.template.spec is a PodSpec
(argocd-nodeset-customization).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..access import get, items, mapping
from ..knobs import STRING_LIST, RuleConfig, knob
from ..rule import StackRule
from ..sources import chart_basename, helm_sources
from ..view import ResourceView, StackView, Violation
from ..wire import is_unknown
from ..workloads import SLINKY_GROUP

NODESET_KEY = "resource.customizations.knownTypeFields.slinky.slurm.net_NodeSet"


@dataclass(frozen=True)
class CustomizationConfig(RuleConfig):
    key: str = knob("key", NODESET_KEY, {"type": "string"}, "The argocd-cm key of the NodeSet customization.")
    field_path: str = knob("field", "spec.template.spec", {"type": "string"}, "The field Argo CD must know.")
    field_type: str = knob("fieldType", "core/v1/PodSpec", {"type": "string"}, "Its type.")
    argocd_charts: tuple[str, ...] = knob("argocdCharts", ("argo-cd",), STRING_LIST, "Chart names that install Argo CD.")
    nodeset_charts: tuple[str, ...] = knob(
        "nodesetCharts", ("slurm",), STRING_LIST, "Chart names whose releases contain NodeSets (Slinky's `slurm`)."
    )


@dataclass(frozen=True)
class _ArgoInstall:
    resource: ResourceView
    data: Mapping[str, Any] | None
    """argocd-cm data from the chart values (None if the chart sets no configs.cm)."""


def _argocd_installs(stack: StackView, config: CustomizationConfig) -> list[_ArgoInstall]:
    found: list[_ArgoInstall] = []
    for resource in stack.resources:
        for source in helm_sources(resource):
            if chart_basename(source.chart) in config.argocd_charts:
                cm = get(source.values, "configs", "cm")
                found.append(_ArgoInstall(resource, mapping(cm) if isinstance(cm, Mapping) else None))
        if resource.is_kind("", "ConfigMap") and resource.object_name == "argocd-cm":
            found.append(_ArgoInstall(resource, mapping(resource.props.get("data"))))
    return found


def _has_nodesets(stack: StackView, config: CustomizationConfig) -> bool:
    if stack.objects(SLINKY_GROUP, "NodeSet"):
        return True
    return any(
        chart_basename(source.chart) in config.nodeset_charts for resource in stack.resources for source in helm_sources(resource)
    )


def _customization_problem(value: Any, config: CustomizationConfig) -> str | None:
    if is_unknown(value):
        return None
    if not isinstance(value, str):
        return f"{config.key} is not set"
    import yaml

    try:
        entries = yaml.safe_load(value)
    except yaml.YAMLError:
        return f"{config.key} is not YAML"
    for entry in items(entries):
        if get(entry, "field") == config.field_path and get(entry, "type") == config.field_type:
            return None
    return f"{config.key} does not map {config.field_path} to {config.field_type}"


def check_argocd_nodeset_customization(stack: StackView, config: CustomizationConfig) -> list[Violation]:
    installs = _argocd_installs(stack, config)
    if not installs or not _has_nodesets(stack, config):
        return []
    problems = [(i, _customization_problem(mapping(i.data).get(config.key), config)) for i in installs]
    if any(problem is None for _, problem in problems):
        return []
    return [
        Violation(
            f"{install.resource.display}: {problem}: Argo CD diffs a NodeSet's pod template as an opaque object, so "
            "defaulted fields show as permanent drift and syncs fight the operator. Add the customization to the "
            "argo-cd values (configs.cm).",
            install.resource.urn,
        )
        for install, problem in problems
    ]


ARGOCD_NODESET_CUSTOMIZATION = StackRule(
    "argocd-nodeset-customization",
    "When Argo CD and Slinky NodeSets share a cluster, Argo CD knows that NodeSet spec.template.spec is a PodSpec.",
    CustomizationConfig,
    check_argocd_nodeset_customization,
    "Keep NODESET_KNOWN_TYPE_FIELDS in the argo-cd values (components/layers/gitops/objects.py).",
)
