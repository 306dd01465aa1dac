"""What the webhooks refuse on UPDATE: pkg/webhook/inmutable_webhook.go over the fields tagged
`webhook:"inmutable"` or `webhook:"inmutableinit"` in api/v1alpha1/*_types.go, and MariaDB's storage.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...rules.access import mapping
from ...rules.gotime import GoError, parse_duration
from .create import CREATE_RULES, decode_errors, is_ours
from .kinds import Refusal, go_zero, less, pruned, spec_of
from .server import storage_size


@dataclass(frozen=True)
class Tagged:
    """A spec field tagged `webhook:"inmutable"` (mode `inmutable`) or `webhook:"inmutableinit"` (`inmutableinit`).
    `path`: JSON names below `spec`, a trailing `*` marking a Go pointer."""

    path: str
    mode: str
    source: str
    duration: bool = False
    """A `metav1.Duration`: compared by its value."""
    inline: tuple[str, ...] = ()
    """The JSON keys of the struct embedded inline in the spec that holds the field (its other fields are the spec's
    too): the walk enters that struct only where it is not all zero in both objects. Every one of those fields is a
    pointer, slice or map, so the struct is non-zero as soon as one key holds a non-null value."""

    @property
    def steps(self) -> list[tuple[str, bool]]:
        return [(step.rstrip("*"), step.endswith("*")) for step in self.path.split(".")]

    @property
    def json_path(self) -> str:
        return "spec." + ".".join(name for name, _ in self.steps)


def _t(path: str, source: str, init: bool = False, duration: bool = False, inline: tuple[str, ...] = ()) -> Tagged:
    return Tagged(path, "inmutableinit" if init else "inmutable", source, duration, inline)


# mariadb_types.go MariaDBPodTemplate and base_types.go JobPodTemplate, embedded `json:",inline"` in the specs.
_MARIADB_POD_TEMPLATE = (
    "podMetadata",
    "imagePullSecrets",
    "initContainers",
    "sidecarContainers",
    "podSecurityContext",
    "serviceAccountName",
    "affinity",
    "nodeSelector",
    "tolerations",
    "volumes",
    "priorityClassName",
    "topologySpreadConstraints",
    "enableServiceLinks",
    "terminationGracePeriodSeconds",
)
_JOB_POD_TEMPLATE = (
    "podMetadata",
    "imagePullSecrets",
    "podSecurityContext",
    "serviceAccountName",
    "affinity",
    "nodeSelector",
    "tolerations",
    "priorityClassName",
)


IMMUTABLE: dict[str, tuple[Tagged, ...]] = {
    "MariaDB": (
        _t("rootPasswordSecretKeyRef", "mariadb_types.go MariaDBSpec.RootPasswordSecretKeyRef", init=True),
        _t("rootEmptyPassword*", "mariadb_types.go MariaDBSpec.RootEmptyPassword", init=True),
        _t("database*", "mariadb_types.go MariaDBSpec.Database"),
        _t("username*", "mariadb_types.go MariaDBSpec.Username"),
        _t("timeZone*", "mariadb_types.go MariaDBSpec.TimeZone"),
        _t("connection*", "mariadb_types.go MariaDBSpec.Connection"),
        _t("primaryConnection*", "mariadb_types.go MariaDBSpec.PrimaryConnection"),
        _t("secondaryConnection*", "mariadb_types.go MariaDBSpec.SecondaryConnection"),
        _t("storage.ephemeral*", "mariadb_types.go Storage.Ephemeral", init=True),
        _t("storage.storageClassName", "mariadb_types.go Storage.StorageClassName"),
        _t("metrics*.username", "mariadb_types.go MariadbMetrics.Username", init=True),
        _t("metrics*.exporter.priorityClassName*", "base_types.go Exporter.PriorityClassName"),
        _t("metrics*.exporter.affinity*.antiAffinityEnabled*", "base_types.go AffinityConfig.AntiAffinityEnabled"),
        _t(
            "serviceAccountName*",
            "mariadb_types.go MariaDBPodTemplate.ServiceAccountName",
            init=True,
            inline=_MARIADB_POD_TEMPLATE,
        ),
        _t("affinity*.antiAffinityEnabled*", "base_types.go AffinityConfig.AntiAffinityEnabled", inline=_MARIADB_POD_TEMPLATE),
    ),
    "Database": (
        _t("mariaDbRef", "database_types.go DatabaseSpec.MariaDBRef"),
        _t("characterSet", "database_types.go DatabaseSpec.CharacterSet"),
        _t("collate", "database_types.go DatabaseSpec.Collate"),
        _t("name", "database_types.go DatabaseSpec.Name"),
    ),
    "User": (
        _t("mariaDbRef", "user_types.go UserSpec.MariaDBRef"),
        _t("name", "user_types.go UserSpec.Name"),
        _t("host", "user_types.go UserSpec.Host"),
    ),
    "Grant": (
        _t("mariaDbRef", "grant_types.go GrantSpec.MariaDBRef"),
        _t("database", "grant_types.go GrantSpec.Database"),
        _t("table", "grant_types.go GrantSpec.Table"),
        _t("username", "grant_types.go GrantSpec.Username"),
        _t("host*", "grant_types.go GrantSpec.Host"),
        _t("grantOption", "grant_types.go GrantSpec.GrantOption"),
    ),
    "Backup": (
        _t("mariaDbRef", "backup_types.go BackupSpec.MariaDBRef"),
        _t("stagingStorage*", "backup_types.go BackupSpec.StagingStorage"),
        _t("storage", "backup_types.go BackupSpec.Storage"),
        _t("maxRetention", "backup_types.go BackupSpec.MaxRetention", init=True, duration=True),
        _t("restartPolicy", "backup_types.go BackupSpec.RestartPolicy"),
        _t("serviceAccountName*", "base_types.go JobPodTemplate.ServiceAccountName", init=True, inline=_JOB_POD_TEMPLATE),
        _t("priorityClassName*", "base_types.go JobPodTemplate.PriorityClassName", inline=_JOB_POD_TEMPLATE),
        _t("affinity*.antiAffinityEnabled*", "base_types.go AffinityConfig.AntiAffinityEnabled", inline=_JOB_POD_TEMPLATE),
    ),
}
"""Every tagged field of the five kinds' specs, outside the keys in UNMODELLED_SPEC_KEYS."""
MAX_RETENTION = next(t for t in IMMUTABLE["Backup"] if t.path == "maxRetention")


def _valid_struct(value: Any, pointer: bool) -> bool:
    """inmutable_webhook.go `isValidStruct`: a non-nil pointer to a struct, or a non-zero struct."""
    if not isinstance(value, Mapping):
        return False
    return pointer or not go_zero(value)


def _comparable(value: Any, tagged: Tagged) -> Any:
    if tagged.duration and isinstance(value, str):
        try:
            return parse_duration(value)
        except GoError:
            return value
    if isinstance(value, Mapping | list):
        return pruned(value)
    return value


def is_nil_or_zero(value: Any, pointer: bool, tagged: Tagged) -> bool:
    """inmutable_webhook.go `isNilOrZero`: a nil pointer, or a value field's zero value."""
    if pointer:
        return value is None
    return go_zero(value) or (tagged.duration and _comparable(value, tagged) == 0)


def immutable_refusals(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """inmutable_webhook.go `ValidateUpdate`: the tagged fields of `kind` that `new` changes. A nested field is
    compared only where its parents are valid structs in both objects (`validateInmutable` recurses only there)."""
    refusals: list[Refusal] = []
    for tagged in IMMUTABLE.get(kind, ()):
        steps = tagged.steps
        parent_old, parent_new = spec_of(old), spec_of(new)
        if tagged.inline and not all(any(p.get(k) is not None for k in tagged.inline) for p in (parent_old, parent_new)):
            continue  # the embedded struct is zero on one side: the walk does not enter it
        reachable = True
        for name, pointer in steps[:-1]:
            child_old, child_new = parent_old.get(name), parent_new.get(name)
            if not (_valid_struct(child_new, pointer) and _valid_struct(child_old, pointer)):
                reachable = False
                break
            parent_old, parent_new = mapping(child_old), mapping(child_new)
        if not reachable:
            continue
        name, pointer = steps[-1]
        before, after = parent_old.get(name), parent_new.get(name)
        if pointer:
            same = (before is None) == (after is None) and _comparable(before, tagged) == _comparable(after, tagged)
        else:
            same = (go_zero(before) and go_zero(after)) or _comparable(before, tagged) == _comparable(after, tagged)
        if same:
            continue
        if tagged.mode == "inmutableinit" and is_nil_or_zero(before, pointer, tagged):
            continue
        refusals.append(
            Refusal(kind, tagged.json_path, f"'{tagged.json_path}' field is immutable", f"inmutable_webhook.go, {tagged.source}")
        )
    return refusals


def validate_update_storage(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """mariadb_webhook.go `validateUpdateStorage` (its `validateStorage` runs with the create rules)."""
    current, before = storage_size(mapping(spec_of(new).get("storage"))), storage_size(mapping(spec_of(old).get("storage")))
    if current is not None and before is not None and less(current, before):
        return [
            Refusal("MariaDB", "spec.storage", "Storage size cannot be decreased", "mariadb_webhook.go validateUpdateStorage")
        ]
    return []


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """Every reason the webhook refuses changing the stored `old` into `new` (both as stored: with the CRD's
    defaults, see `schema_defaulted`, and what the operator wrote, see `reconciled`)."""
    if not is_ours(new):
        return []
    decoded = decode_errors(new) + decode_errors(old)
    if decoded:
        return decoded
    kind = str(new["kind"])
    refusals = immutable_refusals(kind, old, new)
    refusals += [r for rule in CREATE_RULES[kind] for r in rule(new)]
    if kind == "MariaDB":
        refusals += validate_update_storage(old, new)
    return refusals
