"""The create rules of Database, User, Grant and Backup: their cleanupPolicy, user_webhook.go's password and
TLS requirements, backup_webhook.go `validateBackup`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get, mapping
from ...rules.gotime import GoError
from .cron import cron_parse
from .kinds import Refusal, spec_of


def validate_cleanup_policy(obj: Mapping[str, Any]) -> list[Refusal]:
    """database_webhook.go `validateDatabaseCleanupPolicy`, user_webhook.go `validateUserCleanupPolicy`,
    grant_webhook.go `validateGrantCleanupPolicy`: base_types.go `CleanupPolicy.Validate`."""
    spec = spec_of(obj)
    if "cleanupPolicy" not in spec or spec["cleanupPolicy"] is None:
        return []
    policy = spec["cleanupPolicy"]
    if policy in ("Skip", "Delete"):
        return []
    kind = str(obj.get("kind"))
    source = f"{kind.lower()}_webhook.go validate{kind}CleanupPolicy (base_types.go CleanupPolicy.Validate)"
    return [Refusal(kind, "spec.cleanupPolicy", f"invalid cleanupPolicy: {policy}", source)]


def validate_password(obj: Mapping[str, Any]) -> list[Refusal]:
    """user_webhook.go `validatePassword` (with `validatePasswordPlugin`)."""
    spec = spec_of(obj)
    plugin = mapping(spec.get("passwordPlugin"))
    if plugin.get("pluginArgSecretKeyRef") is not None and plugin.get("pluginNameSecretKeyRef") is None:
        detail = (
            "'spec.passwordPlugin.pluginArgSecretKeyRef' can only be set when 'spec.passwordPlugin.pluginNameSecretKeyRef' is set"
        )
        return [Refusal("User", "spec.passwordPlugin.pluginArgSecretKeyRef", detail, "user_webhook.go validatePasswordPlugin")]
    methods = [spec.get("passwordSecretKeyRef"), spec.get("passwordHashSecretKeyRef"), plugin.get("pluginNameSecretKeyRef")]
    if sum(m is not None for m in methods) > 1:
        detail = (
            "Only one of 'spec.passwordSecretKeyRef', 'spec.passwordHashSecretKeyRef', or "
            "'spec.passwordPlugin.pluginNameSecretKeyRef' can be defined"
        )
        return [Refusal("User", "spec.passwordSecretKeyRef", detail, "user_webhook.go validatePassword")]
    return []


def validate_require(obj: Mapping[str, Any]) -> list[Refusal]:
    """user_webhook.go `validateRequire`: user_types.go `TLSRequirements.Validate`."""
    require = spec_of(obj).get("require")
    if require is None:
        return []
    require = mapping(require)
    count = (require.get("ssl") is True) + (require.get("x509") is True)
    count += bool(require.get("issuer") or require.get("subject"))
    if count == 1:
        return []
    detail = (
        "only one of [SSL, X509, (Issuer, Subject)] can be set at a time"
        if count > 1
        else "at least one field [SSL, X509, (Issuer, Subject)] must be set"
    )
    return [Refusal("User", "spec.require", detail, "user_webhook.go validateRequire (TLSRequirements.Validate)")]


COMPRESSIONS = ("none", "bzip2", "gzip")
"""base_types.go `CompressAlgorithm.Validate`: the algorithms a Backup may name besides "" (CompressNone, CompressBzip2,
CompressGzip, in the order its message lists them; the Backup CRD's `spec.compression` enum)."""


def validate_backup(obj: Mapping[str, Any]) -> list[Refusal]:
    """backup_webhook.go `validateBackup`: backup_types.go `Backup.Validate` ("invalid Backup: ...")."""
    spec, source = spec_of(obj), "backup_types.go Backup.Validate (backup_webhook.go validateBackup)"

    def refuse(detail: str, where: str = source) -> list[Refusal]:
        return [Refusal("Backup", "spec", f"invalid Backup: {detail}", where)]

    schedule = spec.get("schedule")
    if schedule is not None:
        try:
            cron_parse(str(get(schedule, "cron") or ""))
        except GoError as error:
            return refuse(f"invalid Schedule: {error}", "base_types.go Schedule.Validate (robfig/cron v3.0.1 Parser.Parse)")
    storage = mapping(spec.get("storage"))
    if sum(storage.get(key) is not None for key in ("s3", "persistentVolumeClaim", "volume")) != 1:
        return refuse("invalid Storage: exactly one storage type should be provided", "base_types.go BackupStorage.Validate")
    compression = spec.get("compression") or ""
    if compression not in ("", *COMPRESSIONS):
        detail = f"invalid Compression: invalid compression: {compression}, supported algorithms: [{'|'.join(COMPRESSIONS)}]"
        return refuse(detail, "base_types.go CompressAlgorithm.Validate")
    if storage.get("s3") is None and spec.get("stagingStorage") is not None:
        return refuse("'spec.stagingStorage' may only be specified when 'spec.storage.s3' is set")
    return []
