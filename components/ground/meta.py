"""Labels and metadata that every object hpcforge authors carries."""

from __future__ import annotations

from typing import Any

PART_OF = "hpcforge"
MANAGED_BY = "pulumi"
ENVIRONMENT_LABEL = "hpcforge.io/environment"
PROTECTION_ANNOTATION = "hpcforge.io/protection"


def labels(name: str, component: str, environment: str, **extra: str) -> dict[str, str]:
    """The `app.kubernetes.io/*` recommended labels plus the environment."""
    result = {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/instance": f"{name}-{environment}",
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        ENVIRONMENT_LABEL: environment,
    }
    result.update(extra)
    return result


def object_meta(
    name: str,
    component: str,
    environment: str,
    namespace: str | None = None,
    *,
    app: str | None = None,
    annotations: dict[str, Any] | None = None,
    extra_labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "labels": labels(app or name, component, environment, **(extra_labels or {})),
    }
    if namespace is not None:
        meta["namespace"] = namespace
    if annotations:
        meta["annotations"] = annotations
    return meta
