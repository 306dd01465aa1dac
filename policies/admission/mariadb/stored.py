"""What the stored object holds when an update arrives: the CRD's structural defaults, the defaults the
operator's controller patches in, and what a later apply of hpcforge's object leaves; `update_refusals` judges
an update against that object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get, items, mapping
from ...rules.apimachinery import quantity
from ...rules.gotime import HOUR, format_duration
from .immutable import MAX_RETENTION, is_nil_or_zero, validate_update
from .kinds import Refusal, go_zero, json_copy, less


def schema_defaulted(value: Any, schema: Mapping[str, Any]) -> Any:
    """`value` with the structural defaults of `schema` (an openAPIV3Schema), as the API server applies them
    (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting/algorithm.go `Default`): a missing property (or a
    null one that is not nullable) gets its default, then defaulting goes on into every property present."""
    value = json_copy(value)
    _default_into(value, schema)
    return value


def _default_into(value: Any, schema: Mapping[str, Any]) -> None:
    if isinstance(value, dict):
        properties = mapping(schema.get("properties"))
        for key, found in properties.items():
            prop = mapping(found)
            if "default" in prop and (key not in value or (value[key] is None and not prop.get("nullable"))):
                value[key] = json_copy(prop["default"])
        additional = schema.get("additionalProperties")
        for key, child in value.items():
            if key in properties:
                _default_into(child, mapping(properties[key]))
            elif isinstance(additional, Mapping):
                _default_into(child, additional)
    elif isinstance(value, list):
        for child in value:
            _default_into(child, mapping(schema.get("items")))


def reconciled(obj: Mapping[str, Any], galera: bool = False) -> dict[str, Any]:
    """`obj` once the operator's controller has patched its spec defaults in (the fields the rules above read):
    - MariaDB: mariadb_controller.go `setSpecDefaults` -> mariadb_types.go `MariaDB.SetDefaults` (rootEmptyPassword,
      rootPasswordSecretKeyRef, port, tls) with `Storage.SetDefaults` (ephemeral, resize flags, the volume claim
      template) and `MariaDBPodTemplate.SetDefaults` (serviceAccountName);
    - Backup: backup_controller.go `setDefaults` -> backup_types.go `Backup.SetDefaults` (compression, maxRetention
      written as Go prints it, backoffLimit, ignoreGlobalPriv from the MariaDB's `galera`) with
      `JobPodTemplate.SetDefaults` (serviceAccountName)."""
    out = json_copy(dict(obj))
    spec: dict[str, Any] = out.setdefault("spec", {})
    name = str(get(obj, "metadata", "name") or "")
    kind = obj.get("kind")
    if kind == "MariaDB":
        spec.setdefault("rootEmptyPassword", False)
        if go_zero(spec.get("rootPasswordSecretKeyRef")) and spec.get("rootEmptyPassword") is not True:
            spec["rootPasswordSecretKeyRef"] = {"name": f"{name}-root", "key": "password", "generate": True}
        if not spec.get("port"):
            spec["port"] = 3306
        if spec.get("tls") is None:
            spec["tls"] = {"enabled": True}
        storage = spec.setdefault("storage", {})
        if storage.get("ephemeral") is None:
            storage["ephemeral"] = False
        if storage.get("ephemeral") is not True:
            storage.setdefault("resizeInUseVolumes", True)
            storage.setdefault("waitForVolumeResize", True)
        if _update_template(storage):
            template: dict[str, Any] = {"resources": {"requests": {"storage": storage["size"]}}, "accessModes": ["ReadWriteOnce"]}
            if storage.get("storageClassName"):
                template["storageClassName"] = storage["storageClassName"]
            storage["volumeClaimTemplate"] = template
        spec.setdefault("serviceAccountName", name)
    elif kind == "Backup":
        if not spec.get("compression"):
            spec["compression"] = "none"
        if is_nil_or_zero(spec.get("maxRetention"), False, MAX_RETENTION):
            spec["maxRetention"] = format_duration(30 * 24 * HOUR)
        if not spec.get("backoffLimit"):
            spec["backoffLimit"] = 5
        spec.setdefault("ignoreGlobalPriv", galera)
        spec.setdefault("serviceAccountName", name)
    return out


def _update_template(storage: Mapping[str, Any]) -> bool:
    """mariadb_types.go `Storage.shouldUpdateVolumeClaimTemplate`."""
    size = quantity(storage.get("size")) if storage.get("size") is not None else None
    if size is None:
        return False
    template = storage.get("volumeClaimTemplate")
    if template is None:
        return True
    requested = get(template, "resources", "requests", "storage")
    if requested is None or quantity(requested) is None:
        return True
    floor = quantity(requested)
    if floor is not None and (less(size, floor) or less(floor, size)):
        return True
    wanted = storage.get("storageClassName") or ""
    return bool(wanted) and wanted != (get(template, "storageClassName") or "")


def reapplied(last_applied: Any, live: Any, applied: Any) -> Any:
    """The object after applying `applied` over the stored `live`, when `last_applied` was applied before: what the
    applier set before and no longer sets is removed, what it sets replaces the stored value, and what others wrote
    (the operator's defaults) stays. Server-side apply (pulumi-kubernetes) and `kubectl apply`'s three-way merge
    (Argo CD) both come to this for fields only the applier and the operator write; lists are replaced whole."""
    if isinstance(applied, Mapping) and isinstance(live, Mapping):
        before = last_applied if isinstance(last_applied, Mapping) else {}
        out = {k: json_copy(v) for k, v in live.items() if not (k in before and k not in applied)}
        for key, value in applied.items():
            out[key] = reapplied(before.get(key), live.get(key), value)
        return out
    return json_copy(applied)


def update_refusals(
    before: Mapping[str, Any], after: Mapping[str, Any], schema: Mapping[str, Any] | None = None, galera: bool = False
) -> list[Refusal]:
    """The webhook's verdict when `after` (what hpcforge now applies) replaces `before` (what it applied last): the
    stored object is `before` with the CRD's defaults and the operator's, the updated one that with `after` applied."""

    def defaulted(value: Mapping[str, Any]) -> Any:
        return schema_defaulted(value, schema) if schema is not None else json_copy(value)

    stored = defaulted(reconciled(defaulted(before), galera))
    updated = defaulted(reapplied(before, stored, after))
    return validate_update(stored, updated)


def crd_schema(crd: Mapping[str, Any], version: str = "v1alpha1") -> Mapping[str, Any]:
    """The openAPIV3Schema of `version` in a CustomResourceDefinition."""
    for entry in items(get(crd, "spec", "versions")):
        if get(entry, "name") == version:
            return mapping(get(entry, "schema", "openAPIV3Schema"))
    return {}
