"""The MariaDB kind's create rules: internal/webhook/v1alpha1/mariadb_webhook.go `validateHA`, `validateStorage`,
`validateRootPassword`, `validateTLS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get, mapping
from ...rules.apimachinery import quantity
from .kinds import Refusal, go_zero, less, spec_of


def _enabled(spec: Mapping[str, Any], key: str) -> bool:
    return get(spec, key, "enabled") is True


def _ha(spec: Mapping[str, Any]) -> bool:
    """mariadb_types.go `IsHAEnabled`: replication or Galera."""
    return _enabled(spec, "replication") or _enabled(spec, "galera")


def validate_ha(obj: Mapping[str, Any]) -> list[Refusal]:
    """mariadb_webhook.go `validateHA`."""
    spec, source = spec_of(obj), "mariadb_webhook.go validateHA"
    found = spec.get("replicas")
    replicas = found if isinstance(found, int) else 0
    if _enabled(spec, "replication") and _enabled(spec, "galera"):
        return [
            Refusal(
                "MariaDB",
                "spec",
                "you may only enable one HA method at a time, either 'spec.replication' or 'spec.galera'",
                source,
            )
        ]
    if not _ha(spec) and replicas > 1:
        detail = "Multiple replicas can only be specified when 'spec.replication' or 'spec.galera' are configured"
        return [Refusal("MariaDB", "spec.replicas", detail, source)]
    if _ha(spec) and replicas <= 1:
        detail = "Multiple replicas must be specified when 'spec.replication' or 'spec.galera' are configured"
        return [Refusal("MariaDB", "spec.replicas", detail, source)]
    return []


def storage_size(storage: Mapping[str, Any]) -> tuple[int, int] | None:
    """mariadb_types.go `Storage.GetSize`: the volume claim template's request, else `size`."""
    requested = get(storage, "volumeClaimTemplate", "resources", "requests", "storage")
    if requested is not None:
        return quantity(requested)
    return quantity(storage.get("size")) if storage.get("size") is not None else None


def validate_storage(obj: Mapping[str, Any]) -> list[Refusal]:  # noqa: PLR0911 (one return per refusal of the upstream validation, in its order)
    """mariadb_webhook.go `validateStorage`: mariadb_types.go `Storage.Validate`."""
    spec, source = spec_of(obj), "mariadb_types.go Storage.Validate (mariadb_webhook.go validateStorage)"
    storage = mapping(spec.get("storage"))
    ephemeral, size, template = storage.get("ephemeral"), storage.get("size"), storage.get("volumeClaimTemplate")

    def refuse(detail: str) -> list[Refusal]:
        return [Refusal("MariaDB", "spec.storage", detail, source)]

    if ephemeral is not None:
        if ephemeral is True and _ha(spec):
            return refuse("ephemeral storage is only compatible with non HA MariaDBs")
        if ephemeral is True and (size is not None or template is not None):
            return refuse("either ephemeral or regular storage must be provided")
        if ephemeral is True:
            return []
    amount = quantity(size) if size is not None else None
    if amount is not None and amount[0] == 0:
        return refuse("greater than zero storage size must be provided")
    if size is None and template is None:
        return refuse("either storage size or volumeClaimTemplate must be provided")
    requested = get(template, "resources", "requests", "storage")
    if amount is not None and requested is not None:
        floor = quantity(requested)
        if floor is not None and less(amount, floor):
            return refuse("storage size cannot be decreased")
    return []


def validate_root_password(obj: Mapping[str, Any]) -> list[Refusal]:
    """mariadb_webhook.go `validateRootPassword` (`IsRootPasswordEmpty` and `IsRootPasswordDefined`)."""
    spec = spec_of(obj)
    if spec.get("rootEmptyPassword") is True and not go_zero(spec.get("rootPasswordSecretKeyRef")):
        detail = "'spec.rootEmptyPassword' must be disabled when 'spec.rootPasswordSecretKeyRef' is specified"
        return [Refusal("MariaDB", "spec.rootEmptyPassword", detail, "mariadb_webhook.go validateRootPassword")]
    return []


def validate_tls(obj: Mapping[str, Any]) -> list[Refusal]:
    """mariadb_webhook.go `validateTLS` with webhook.go `validateTLSCert`, for the server and the client certificate."""
    tls = mapping(spec_of(obj).get("tls"))
    if tls.get("enabled") is not True:
        return []
    source = "mariadb_webhook.go validateTLS, webhook.go validateTLSCert"
    for side in ("server", "client"):
        ca, cert, issuer = f"{side}CASecretRef", f"{side}CertSecretRef", f"{side}CertIssuerRef"
        if tls.get(cert) is not None and tls.get(issuer) is not None:
            detail = f"'spec.tls.{cert}' and 'spec.tls.{issuer}' are mutually exclusive. Only one of them must be set at a time."
            return [Refusal("MariaDB", "spec.tls", detail, source)]
        if tls.get(ca) is None and tls.get(cert) is not None:
            return [Refusal("MariaDB", "spec.tls", f"'spec.tls.{ca}' must be set when 'spec.tls.{cert}' is set", source)]
    return []
