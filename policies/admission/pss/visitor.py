"""What every check shares: its result, the container visitor (policy/visitor.go `visitContainers`) and the
helpers that read security contexts and word the details (policy/helpers.go).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.access import get, items, mapping, text
from .versions import Spec


@dataclass(frozen=True)
class CheckResult:
    allowed: bool
    reason: str = ""
    detail: str = ""


ALLOWED = CheckResult(True)


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def join_quote(values: Sequence[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def visit_containers(spec: Spec) -> list[Mapping[str, Any]]:
    """policy/visitor.go visitContainers: initContainers, containers, ephemeralContainers."""
    return [mapping(c) for key in ("initContainers", "containers", "ephemeralContainers") for c in items(spec.get(key))]


def container_name(container: Mapping[str, Any]) -> str:
    return text(container.get("name")) or ""


def security_context(container: Mapping[str, Any]) -> Mapping[str, Any] | None:
    value = container.get("securityContext")
    return value if isinstance(value, Mapping) else None


def pod_security_context(spec: Spec) -> Mapping[str, Any] | None:
    value = spec.get("securityContext")
    return value if isinstance(value, Mapping) else None


def who_sets(pod_bad: bool, containers: Sequence[str]) -> list[str]:
    setters = ["pod"] if pod_bad else []
    if containers:
        setters.append(f"{pluralize('container', 'containers', len(containers))} {join_quote(containers)}")
    return setters


def is_windows(spec: Spec) -> bool:
    return get(spec, "os", "name") == "windows"


def relaxed_for_user_namespaces(spec: Spec, relax_user_namespaces: bool) -> bool:
    return relax_user_namespaces and spec.get("hostUsers") is False
