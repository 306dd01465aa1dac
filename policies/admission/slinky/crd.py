"""The CRDs' CEL rules the API server applies before the webhook is called."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import mapping
from ...rules.podtemplates import kind_of


def _has(value: Mapping[str, Any], key: str) -> bool:
    return key in value and value[key] is not None


def crd_rule_errors(obj: Mapping[str, Any]) -> list[str]:
    """The `x-kubernetes-validations` of the Slinky CRDs 1.2.1 on the fields hpcforge sets:
    ControllerSpec and AccountingSpec (controller_types.go, accounting_types.go: the keys unless
    external, externalConfig when external), NodeSetUpdateStrategy (nodeset_types.go:
    ScheduledUpdate needs startTime and duration) and TokenSpec (token_types.go: a JWT key).
    `external` defaults to false (CRD default) and `scheduledUpdate.duration` to 30m."""
    kind = kind_of(obj)
    spec = mapping(obj.get("spec"))
    errors: list[str] = []

    def fail(path: str, message: str) -> None:
        errors.append(f'{path}: Invalid value: "object": {message}')

    if kind in ("Controller", "Accounting"):
        external = spec.get("external") is True
        if not external and not _has(spec, "slurmKeyRef"):
            fail("spec", "slurmKeyRef must be set when external is false")
        if not external and not (_has(spec, "jwtKeyRef") or _has(spec, "jwtHs256KeyRef")):
            fail("spec", "jwtKeyRef or jwtHs256KeyRef must be set when external is false")
        if external and not _has(spec, "externalConfig"):
            fail("spec", "externalConfig must be set when external is true")
    if kind == "NodeSet":
        strategy = mapping(spec.get("updateStrategy"))
        scheduled = mapping(strategy.get("scheduledUpdate"))
        # has(self.scheduledUpdate.duration): the CRD defaults it (30m) once scheduledUpdate is given.
        if strategy.get("type") == "ScheduledUpdate" and not _has(scheduled, "startTime"):
            fail(
                "spec.updateStrategy",
                "scheduledUpdate.startTime and scheduledUpdate.duration are required when type is ScheduledUpdate",
            )
    if kind == "Token" and not (_has(spec, "jwtKeyRef") or _has(spec, "jwtHs256KeyRef")):
        fail("spec", "jwtKeyRef or jwtHs256KeyRef must be set")
    return errors
