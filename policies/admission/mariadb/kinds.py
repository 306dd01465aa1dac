"""The kinds whose webhooks are reproduced, their webhook names, a refusal, and Go's zero values and copies of
the decoded objects the rules compare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...rules.access import mapping
from ...rules.apimachinery import compare
from ..family import Pin

GROUP = "k8s.mariadb.com"
KINDS = ("MariaDB", "Database", "User", "Grant", "Backup")
"""The kinds whose webhooks are reproduced."""

WEBHOOKS = {
    "MariaDB": "vmariadb-v1alpha1.kb.io",
    "Database": "vdatabase-v1alpha1.kb.io",
    "User": "vuser-v1alpha1.kb.io",
    "Grant": "vgrant-v1alpha1.kb.io",
    "Backup": "vbackup-v1alpha1.kb.io",
}
"""The webhook names of deploy/charts/mariadb-operator/templates/webhook/config.yaml."""

UNMODELLED_SPEC_KEYS: dict[str, tuple[str, ...]] = {
    "MariaDB": ("galera", "replication", "bootstrapFrom", "podDisruptionBudget", "multiCluster", "maxScale", "maxScaleRef"),
}
"""Spec keys whose webhook rules (and immutable fields beneath) are not reproduced."""


@dataclass(frozen=True)
class Refusal:
    """One reason the webhook refuses an object (the webhook itself reports only its first)."""

    kind: str
    path: str
    detail: str
    source: str
    """Where the rule is, at v26.6.0."""

    @property
    def webhook(self) -> str:
        return WEBHOOKS.get(self.kind, "")

    def __str__(self) -> str:
        return f'admission webhook "{self.webhook}" denies: {self.path}: {self.detail} ({self.source})'


def go_zero(value: Any) -> bool:
    """Go's zero value of a value (non-pointer) field: absent, "", 0, false, or a struct of zeros."""
    if (
        value is None
        or value is False
        or value == ""
        or (isinstance(value, int | float) and not isinstance(value, bool) and value == 0)
    ):
        return True
    if isinstance(value, Mapping):
        return all(go_zero(v) for v in value.values())
    return False


def pruned(value: Any) -> Any:
    """A decoded struct for comparison: zero scalars dropped (value fields), `{}` and lists kept."""
    if isinstance(value, Mapping):
        return {
            k: pruned(v)
            for k, v in value.items()
            if not (v is None or v is False or v == "" or (type(v) in (int, float) and v == 0))
        }
    if isinstance(value, list):
        return [pruned(v) for v in value]
    return value


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON-like value (mappings become dicts)."""
    if isinstance(value, Mapping):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_copy(v) for v in value]
    return value


def less(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return compare(a, b) < 0


def spec_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(obj.get("spec"))


REPRODUCES = Pin(
    "mariadb-operator",
    "26.6.0",
    ("Charts.MARIADB_OPERATOR", "Charts.MARIADB_OPERATOR_CRDS"),
    "mariadb-operator/mariadb-operator v26.6.0",
)
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""
