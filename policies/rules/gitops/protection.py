"""Drift is never silently ignored and state never silently lost: `ignoreChanges` only from the config's
allow-list (ignore-changes-allow-listed), volumes, databases, the directory and Slurm state protected or
retained (stateful-resources-protected).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..access import glob, items, mapping
from ..knobs import STRING_LIST, RuleConfig, knob
from ..rule import ResourceRule
from ..sources import HELM_CHART_TYPES, helm_sources, is_application
from ..view import ResourceView
from ..wire import is_unknown


@dataclass(frozen=True)
class IgnoreChangesGrant:
    type: str = "*"
    name: str = "*"
    paths: tuple[str, ...] = ()
    reason: str = ""

    @classmethod
    def from_json(cls, value: Any) -> IgnoreChangesGrant:
        body = mapping(value)
        return cls(
            type=str(body.get("type", "*")),
            name=str(body.get("name", "*")),
            paths=tuple(str(p) for p in items(body.get("paths"))),
            reason=str(body.get("reason", "")),
        )

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "paths": list(self.paths), "reason": self.reason}


@dataclass(frozen=True)
class IgnoreChangesConfig(RuleConfig):
    allow_list: tuple[IgnoreChangesGrant, ...] = knob(
        "allowList",
        (),
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string"},
                    "name": {"type": "string"},
                    "paths": STRING_LIST,
                    "reason": {"type": "string"},
                },
                "required": ["paths"],
                "additionalProperties": False,
            },
        },
        "Entries {type, name, paths, reason}: resources (type token and Pulumi name, shell globs) that may "
        "ignore changes to these property paths (globs).",
        parse=lambda raw: tuple(IgnoreChangesGrant.from_json(v) for v in items(raw)),
    )


def check_ignore_changes_allow_listed(resource: ResourceView, config: IgnoreChangesConfig) -> list[str]:
    problems: list[str] = []
    for path in resource.ignore_changes:
        allowed = any(
            glob(grant.type, resource.type) and glob(grant.name, resource.name) and any(glob(p, path) for p in grant.paths)
            for grant in config.allow_list
        )
        if not allowed:
            problems.append(
                f"ignoreChanges {path!r} is not in the allow-list: Pulumi would never report or repair drift on it. "
                "Remove the option, or add {type, name, paths, reason} to allowList in the policy config."
            )
    return problems


IGNORE_CHANGES_ALLOW_LISTED = ResourceRule(
    "ignore-changes-allow-listed",
    "The ignoreChanges resource option is only used where the policy config allows it.",
    IgnoreChangesConfig,
    check_ignore_changes_allow_listed,
    "Drop ignore_changes, or add the resource and paths (with a reason) to allowList in policies/config/<stack>.json.",
)


PROTECTION_ANNOTATION = "hpcforge.io/protection"
STATEFUL_TYPES = (
    "kubernetes:core/v1:PersistentVolumeClaim",
    "kubernetes:k8s.mariadb.com/v1alpha1:MariaDB",
    "kubernetes:k8s.mariadb.com/v1alpha1:Database",
    "kubernetes:k8s.mariadb.com/v1alpha1:Backup",
    "kubernetes:slinky.slurm.net/v1beta1:Controller",
)


@dataclass(frozen=True)
class StatefulConfig(RuleConfig):
    stateful_types: tuple[str, ...] = knob(
        "statefulTypes",
        STATEFUL_TYPES,
        STRING_LIST,
        "Resource type tokens (shell globs) that hold state: volumes, databases, backup schedules, Slurm's controller state.",
    )
    volume_claim_templates: bool = knob(
        "volumeClaimTemplates",
        True,
        {"type": "boolean"},
        "Also treat any object with spec.volumeClaimTemplates (StatefulSets, e.g. 389ds; NodeSets), or with "
        "spec.storage.volumeClaimTemplate (Prometheus, Alertmanager), as stateful.",
    )
    protection_annotation: str = knob(
        "protectionAnnotation",
        PROTECTION_ANNOTATION,
        {"type": "string"},
        "Annotation recording protect|retain on the object (the Analyzer protocol does not carry retainOnDelete).",
    )
    accept_helm_keep: bool = knob(
        "acceptHelmKeep",
        True,
        {"type": "boolean"},
        "Accept `helm.sh/resource-policy: keep` (helm.v4.Chart retains such objects).",
    )


# kube-prometheus-stack values: (section, CR spec key, storage key) of each operator-made volume.
PROMETHEUS_STACK_STORAGE = (("prometheus", "prometheusSpec", "storageSpec"), ("alertmanager", "alertmanagerSpec", "storage"))


def _prometheus_stack_claims_not_retained(resource: ResourceView) -> list[str]:
    """kube-prometheus-stack deployed with storage but without Retain claim retention (Chart or Application values)."""
    problems = []
    for source in helm_sources(resource):
        if not (source.chart or "").rstrip("/").endswith("kube-prometheus-stack"):
            continue
        for section, spec_key, storage_key in PROMETHEUS_STACK_STORAGE:
            values = mapping(source.values.get(section))
            spec = mapping(values.get(spec_key))
            if values.get("enabled") is False or not mapping(mapping(spec.get(storage_key)).get("volumeClaimTemplate")):
                continue
            if mapping(spec.get("persistentVolumeClaimRetentionPolicy")).get("whenDeleted") != "Retain":
                problems.append(
                    f"{resource.display} gives {section} a volume ({source.values_path}.{section}.{spec_key}.{storage_key}) "
                    "that the operator's StatefulSet makes, out of Pulumi's reach, without retaining it: set "
                    f"{section}.{spec_key}.persistentVolumeClaimRetentionPolicy.whenDeleted to Retain."
                )
    return problems


def check_stateful_resources_protected(resource: ResourceView, config: StatefulConfig) -> list[str]:  # noqa: PLR0911 (one return per way a stateful resource is left unprotected)
    if resource.is_patch:
        return []
    if config.volume_claim_templates and (resource.type in HELM_CHART_TYPES or is_application(resource)):
        return _prometheus_stack_claims_not_retained(resource)
    reason = None
    if any(glob(pattern, resource.type) for pattern in config.stateful_types):
        reason = resource.type.rsplit(":", 1)[-1]
    elif config.volume_claim_templates and resource.is_object and items(resource.spec.get("volumeClaimTemplates")):
        reason = f"{resource.kind} with volumeClaimTemplates"
    elif config.volume_claim_templates and resource.is_object and _operator_claims(resource.spec):
        # Prometheus/Alertmanager (prometheus-operator): the operator's StatefulSet makes the claims, out of
        # Pulumi's reach; they outlive the CR when the StatefulSet's claim retention policy (copied from the
        # CR's spec.persistentVolumeClaimRetentionPolicy) is Retain on deletion.
        retention = resource.spec.get("persistentVolumeClaimRetentionPolicy")
        kept = resource.protect or resource.annotations.get(config.protection_annotation) == "retain"
        if kept or (isinstance(retention, Mapping) and retention.get("whenDeleted") == "Retain"):
            return []
        return [
            f"{resource.display} keeps its data in claims that its operator's StatefulSet makes "
            "(spec.storage.volumeClaimTemplate), out of Pulumi's reach, and does not retain them: set "
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted to Retain (kube-prometheus-stack values: "
            "prometheus.prometheusSpec and alertmanager.alertmanagerSpec)."
        ]
    if reason is None:
        return []
    annotation = resource.annotations.get(config.protection_annotation)
    if is_unknown(annotation):
        return []
    if resource.protect:
        return []
    if annotation == "protect":
        return [
            f"{resource.display} is annotated {config.protection_annotation}: protect, but the protect resource option "
            "is not set: the annotation and the options disagree. Set both from DeployContext.protection_options()."
        ]
    if annotation == "retain":
        return []
    if config.accept_helm_keep and resource.annotations.get("helm.sh/resource-policy") == "keep":
        return []
    return [
        f"{resource.display} holds state ({reason}) but is neither protected (resource option protect) nor retained "
        f"({config.protection_annotation}: retain with retainOnDelete): a config change could delete the data."
    ]


def _operator_claims(spec: Mapping[str, Any]) -> bool:
    storage = spec.get("storage")
    return isinstance(storage, Mapping) and isinstance(storage.get("volumeClaimTemplate"), Mapping)


STATEFUL_RESOURCES_PROTECTED = ResourceRule(
    "stateful-resources-protected",
    "Stateful resources (volumes, databases, directory, Slurm state) are protected or retained.",
    StatefulConfig,
    check_stateful_resources_protected,
    "Pass stateful=Stateful.<kind> to ctx.opts() and ctx.meta() so the object gets protect/retainOnDelete and the "
    "hpcforge.io/protection annotation.",
)
