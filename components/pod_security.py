"""Security contexts that pass the `restricted` Pod Security Standard (checked by
policies/rules/admission_pss.py), for hpcforge's workloads and for the charts it deploys."""

from __future__ import annotations

from typing import Any

from .k8s import RESTRICTED_CONTAINER_SECURITY

RESTRICTED_POD_SECURITY = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
"""Pod-level securityContext that, with RESTRICTED_CONTAINER_SECURITY on every container, passes the
`restricted` Pod Security Standard (policies/rules/admission_pss.py)."""


def restricted_chart_security() -> dict[str, Any]:
    """Values for charts whose workloads take `podSecurityContext` and `securityContext` keys
    (mariadb-operator, slurm-operator): without them those charts render no securityContext at all,
    and a namespace enforcing `restricted` refuses their pods."""
    return {"podSecurityContext": dict(RESTRICTED_POD_SECURITY), "securityContext": dict(RESTRICTED_CONTAINER_SECURITY)}
