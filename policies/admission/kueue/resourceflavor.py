"""ResourceFlavor: pkg/webhooks/resourceflavor_webhook.go `ValidateResourceFlavor` and the CRD's CEL
rules, on create and (the topologyName transition rules) on update.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import items, mapping, text
from .fields import CRD_RULE, Refusal, label_value_errors, qualified_name_errors, validate_labels

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
    found += validate_labels(spec.get("nodeLabels"), "spec.nodeLabels", VRESOURCEFLAVOR)
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
