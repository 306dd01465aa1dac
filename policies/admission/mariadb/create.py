"""What the webhooks refuse on CREATE: the object decoded into the Go types first, then each kind's rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...rules.gotime import GoError, parse_duration
from .kinds import GROUP, KINDS, UNMODELLED_SPEC_KEYS, Refusal, spec_of
from .resources import validate_backup, validate_cleanup_policy, validate_password, validate_require
from .server import validate_ha, validate_root_password, validate_storage, validate_tls


def decode_errors(obj: Mapping[str, Any]) -> list[Refusal]:
    """What the webhook cannot decode into the Go types (the request fails before any rule): Backup `maxRetention`,
    a `metav1.Duration` (apimachinery meta/v1 duration.go `UnmarshalJSON`: `time.ParseDuration`)."""
    spec = spec_of(obj)
    if obj.get("kind") != "Backup" or spec.get("maxRetention") is None:
        return []
    value = spec["maxRetention"]
    if not isinstance(value, str):
        return [
            Refusal(
                "Backup", "spec.maxRetention", f"cannot decode {value!r} as a duration string", "metav1.Duration UnmarshalJSON"
            )
        ]
    try:
        parse_duration(value)
    except GoError as error:
        return [Refusal("Backup", "spec.maxRetention", str(error), "metav1.Duration UnmarshalJSON (time.ParseDuration)")]
    return []


CREATE_RULES: dict[str, tuple[Callable[[Mapping[str, Any]], list[Refusal]], ...]] = {
    # mariadb_webhook.go ValidateCreate also runs validateGalera, validateReplication, validateBootstrapFrom,
    # validatePodDisruptionBudget, validateMaxScale (no check) and validateMultiCluster: not reproduced (UNMODELLED).
    "MariaDB": (validate_ha, validate_storage, validate_root_password, validate_tls),
    "Database": (validate_cleanup_policy,),
    "User": (validate_password, validate_cleanup_policy, validate_require),
    "Grant": (validate_cleanup_policy,),
    "Backup": (validate_backup,),
}


def is_ours(obj: Mapping[str, Any]) -> bool:
    return str(obj.get("apiVersion", "")).split("/", 1)[0] == GROUP and obj.get("kind") in KINDS


def validate_create(obj: Mapping[str, Any]) -> list[Refusal]:
    """Every reason the webhook refuses `obj` on CREATE (empty: admitted, or not a reproduced kind)."""
    if not is_ours(obj):
        return []
    refusals = decode_errors(obj)
    if refusals:
        return refusals
    return [r for rule in CREATE_RULES[str(obj["kind"])] for r in rule(obj)]


def unmodelled(obj: Mapping[str, Any]) -> list[str]:
    """What of `obj` the reproduction does not judge: a kind of the group not reproduced, or spec keys whose rules
    are not reproduced."""
    if str(obj.get("apiVersion", "")).split("/", 1)[0] != GROUP:
        return []
    kind = str(obj.get("kind"))
    if kind not in KINDS:
        return [f"kind {kind}"]
    return [f"spec.{key}" for key in UNMODELLED_SPEC_KEYS.get(kind, ()) if spec_of(obj).get(key) is not None]
