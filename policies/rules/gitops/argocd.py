"""Argo CD reconciles what it deploys: automated sync with prune and selfHeal (argocd-automated-sync),
ignoreDifferences entries that name fields, never a whole kind (argocd-ignore-differences-scoped).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..access import get, items, mapping, text
from ..knobs import RuleConfig, knob
from ..rule import ResourceRule
from ..sources import helm_sources, is_application
from ..view import ResourceView
from ..wire import is_unknown


@dataclass(frozen=True)
class AutomatedSyncConfig(RuleConfig):
    require_prune: bool = knob("requirePrune", True, {"type": "boolean"}, "Require syncPolicy.automated.prune: true.")
    require_self_heal: bool = knob("requireSelfHeal", True, {"type": "boolean"}, "Require syncPolicy.automated.selfHeal: true.")


def check_argocd_automated_sync(resource: ResourceView, config: AutomatedSyncConfig) -> list[str]:
    if not is_application(resource):
        return []
    policy = resource.spec.get("syncPolicy")
    if is_unknown(policy):
        return []
    automated = get(policy, "automated")
    if is_unknown(automated):
        return []
    if not isinstance(automated, Mapping) or automated.get("enabled") is False:
        return [
            "spec.syncPolicy.automated is not set: Argo CD only reports drift and waits for a manual sync. "
            "Set automated: {prune: true, selfHeal: true}."
        ]
    problems: list[str] = []
    if config.require_prune and automated.get("prune") is not True:
        problems.append("spec.syncPolicy.automated.prune is not true: objects removed from Git stay in the cluster.")
    if config.require_self_heal and automated.get("selfHeal") is not True:
        problems.append("spec.syncPolicy.automated.selfHeal is not true: manual changes in the cluster are not reverted.")
    return problems


ARGOCD_AUTOMATED_SYNC = ResourceRule(
    "argocd-automated-sync",
    "Argo CD Applications sync automatically, with prune and selfHeal.",
    AutomatedSyncConfig,
    check_argocd_automated_sync,
    "Give the Application syncPolicy.automated {prune: true, selfHeal: true} (components/charts.py does).",
)


IGNORE_DIFFERENCES_CM_PREFIX = "resource.customizations.ignoreDifferences."


@dataclass(frozen=True)
class IgnoreDifferencesConfig(RuleConfig):
    allow_managed_fields_managers: bool = knob(
        "allowManagedFieldsManagers",
        False,
        {"type": "boolean"},
        "Accept entries scoped only by managedFieldsManagers (they ignore every field a manager owns).",
    )


def _entry_problem(entry: Mapping[str, Any], config: IgnoreDifferencesConfig) -> str | None:
    pointers = [p for p in items(entry.get("jsonPointers")) if isinstance(p, str)]
    expressions = [e for e in items(entry.get("jqPathExpressions")) if isinstance(e, str)]
    managers = items(entry.get("managedFieldsManagers"))
    if any(p.strip() in ("", "/") for p in pointers) or any(e.strip() in ("", ".") for e in expressions):
        return "ignores the whole object (pointer '/' or expression '.')"
    if pointers or expressions:
        return None
    if managers and config.allow_managed_fields_managers:
        return None
    return "names no field (no jsonPointers or jqPathExpressions), so it ignores every difference of the kind"


def _argocd_cm_sources(resource: ResourceView) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, argocd-cm data) from argo-cd chart values and from a rendered argocd-cm ConfigMap."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for source in helm_sources(resource):
        cm = get(source.values, "configs", "cm")
        if isinstance(cm, Mapping):
            found.append((f"{source.values_path}.configs.cm", cm))
    if resource.is_kind("", "ConfigMap") and resource.object_name == "argocd-cm":
        found.append(("data", mapping(resource.props.get("data"))))
    return found


def check_argocd_ignore_differences_scoped(resource: ResourceView, config: IgnoreDifferencesConfig) -> list[str]:
    problems: list[str] = []
    if is_application(resource):
        entries = items(resource.spec.get("ignoreDifferences"))
        for index, entry in enumerate(entries):
            body = mapping(entry)
            problem = _entry_problem(body, config)
            if problem:
                what = "/".join(x for x in (text(body.get("group")) or "", text(body.get("kind")) or "?") if x)
                problems.append(
                    f"spec.ignoreDifferences[{index}] ({what}) {problem}: drift there would never be repaired. "
                    "Scope it with jsonPointers or jqPathExpressions."
                )
        options = items(get(resource.spec, "syncPolicy", "syncOptions"))
        if entries and not is_unknown(options) and "RespectIgnoreDifferences=true" not in options:
            # Argo CD's sync options: ignoreDifferences only affect the diff; without RespectIgnoreDifferences=true a
            # sync (any later one) applies the ignored fields from the desired state again.
            problems.append(
                "spec.ignoreDifferences is set but spec.syncPolicy.syncOptions lacks RespectIgnoreDifferences=true: "
                "the next sync would apply the ignored fields again."
            )
    import yaml

    for path, data in _argocd_cm_sources(resource):
        for key, value in data.items():
            if not key.startswith(IGNORE_DIFFERENCES_CM_PREFIX) or not isinstance(value, str):
                continue
            try:
                parsed = yaml.safe_load(value)
            except yaml.YAMLError:
                problems.append(f"{path}[{key!r}] is not YAML.")
                continue
            problem = _entry_problem(mapping(parsed), config)
            if problem:
                problems.append(f"{path}[{key!r}] {problem}: scope it with jsonPointers or jqPathExpressions.")
    return problems


ARGOCD_IGNORE_DIFFERENCES_SCOPED = ResourceRule(
    "argocd-ignore-differences-scoped",
    "Argo CD ignoreDifferences are scoped to fields (jsonPointers / jqPathExpressions), never a whole kind.",
    IgnoreDifferencesConfig,
    check_argocd_ignore_differences_scoped,
    "Name the fields to ignore with jsonPointers or jqPathExpressions (e.g. /spec/replicas).",
)
