"""mariadb-operator's validating webhooks, as mariadb-operator 26.6.0 decides them, for the `k8s.mariadb.com`
objects hpcforge creates: MariaDB, Database, User, Grant and Backup.

Read in mariadb-operator/mariadb-operator at tag v26.6.0 (b2f76016; the `26.6.0` tag, 58a3f520, differs only in
chart metadata). The chart (deploy/charts/mariadb-operator, `webhook.enabled: true`, `currentNamespaceOnly: false`,
which hpcforge keeps) installs one ValidatingWebhookConfiguration with `failurePolicy: Fail` for CREATE and UPDATE of
every kind (templates/webhook/config.yaml), served by cmd/controller/webhook.go `Setup<Kind>WebhookWithManager`.

What is reproduced, each function citing its source:

- internal/webhook/v1alpha1/mariadb_webhook.go: `ValidateCreate`/`ValidateUpdate`, `validateHA`, `validateStorage`
  (api/v1alpha1/mariadb_types.go `Storage.Validate`), `validateUpdateStorage` (`Storage.GetSize`),
  `validateRootPassword` (`IsRootPasswordEmpty`, `IsRootPasswordDefined`), `validateTLS` (webhook.go
  `validateTLSCert`);
- database_webhook.go, grant_webhook.go, user_webhook.go: the cleanupPolicy checks (api/v1alpha1/base_types.go
  `CleanupPolicy.Validate`), user_webhook.go `validatePassword`, `validatePasswordPlugin`, `validateRequire`
  (user_types.go `TLSRequirements.Validate`);
- backup_webhook.go `validateBackup` (backup_types.go `Backup.Validate`: base_types.go `Schedule.Validate` with
  `CronParser = cron.NewParser(Minute | Hour | Dom | Month | Dow)`, robfig/cron v3.0.1 parser.go; `BackupStorage.Validate`,
  `CompressAlgorithm.Validate`, the staging storage rule);
- pkg/webhook/inmutable_webhook.go `ValidateUpdate` (every `ValidateUpdate` calls it first): a field tagged
  `webhook:"inmutable"` may not change; one tagged `webhook:"inmutableinit"` may not change once it is not nil/zero.
  The tags are in api/v1alpha1/*_types.go; `IMMUTABLE` lists those of the five kinds' specs;
- decoding: the webhook decodes the object into the Go types first (controller-runtime's admission decoder); a
  `metav1.Duration` (Backup `maxRetention`) that Go's `time.ParseDuration` (gotime.py) refuses makes the request
  fail.

Not reproduced (hpcforge sets none of these; `unmodelled` names them when an object does): MariaDB `galera`,
`replication`, `bootstrapFrom`, `podDisruptionBudget`, `multiCluster`, `maxScale`, `maxScaleRef`; the other kinds
(Connection, SqlJob, Restore, PhysicalBackup, PointInTimeRecovery, MaxScale, ExternalMariaDB).

Comparisons follow Go's `reflect.DeepEqual` of the decoded values: a missing key and a Go zero value ("", 0, false)
are equal for value fields and differ for pointer fields (marked `*` in `IMMUTABLE`). Inside a struct compared as a
whole, zero scalars are dropped before comparing and `{}` is kept: exact for the structs listed here, whose nested
scalars are value fields and whose nested structs are pointers.

What the API server and the operator add to a stored object also counts on an update: `schema_defaulted` applies a
CRD's structural defaults, `reconciled` the defaults the operator's controller patches into the spec, and
`reapplied` what a later apply of hpcforge's object leaves in the stored one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..rules.access import get, items, mapping
from ..rules.apimachinery import compare, quantity
from ..rules.gotime import HOUR, GoError, format_duration, go_quote, parse_duration
from .pins import Pin

REPRODUCES = Pin(
    "mariadb-operator",
    "26.6.0",
    ("Charts.MARIADB_OPERATOR", "Charts.MARIADB_OPERATOR_CRDS"),
    "mariadb-operator/mariadb-operator v26.6.0",
)
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""


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


# --- Go values ----------------------------------------------------------------------------------------------------


def _zero(value: Any) -> bool:
    """Go's zero value of a value (non-pointer) field: absent, "", 0, false, or a struct of zeros."""
    if (
        value is None
        or value is False
        or value == ""
        or (isinstance(value, int | float) and not isinstance(value, bool) and value == 0)
    ):
        return True
    if isinstance(value, Mapping):
        return all(_zero(v) for v in value.values())
    return False


def _prune(value: Any) -> Any:
    """A decoded struct for comparison: zero scalars dropped (value fields), `{}` and lists kept."""
    if isinstance(value, Mapping):
        return {
            k: _prune(v)
            for k, v in value.items()
            if not (v is None or v is False or v == "" or (type(v) in (int, float) and v == 0))
        }
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def _copy(value: Any) -> Any:
    """A deep copy of a JSON-like value (mappings become dicts)."""
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


# robfig/cron v3.0.1 spec.go bounds and parser.go `Parser.Parse`, `normalizeFields`, `getField`, `getRange`,
# `parseIntOrName`, `mustParseInt`, for mariadb-operator's parser (base_types.go `CronParser`:
# Minute | Hour | Dom | Month | Dow, no descriptors).
_MONTHS = {n: i for i, n in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_DOWS = {n: i for i, n in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_CRON_BOUNDS: tuple[tuple[int, int, Mapping[str, int]], ...] = (
    (0, 59, {}),  # second (not in the spec: "0")
    (0, 59, {}),  # minute
    (0, 23, {}),  # hour
    (1, 31, {}),  # day of month
    (1, 12, _MONTHS),
    (0, 6, _DOWS),
)
_GO_INT = re.compile(r"[+-]?[0-9]+")


def go_atoi(expr: str) -> int:
    """Go's `strconv.Atoi` (base 10, an optional sign, int64 range), or GoError with its message."""
    if not _GO_INT.fullmatch(expr):
        raise GoError(f"strconv.Atoi: parsing {go_quote(expr)}: invalid syntax")
    num = int(expr)
    if not -(1 << 63) <= num < (1 << 63):
        raise GoError(f"strconv.Atoi: parsing {go_quote(expr)}: value out of range")
    return num


def _must_parse_int(expr: str) -> int:
    try:
        num = go_atoi(expr)
    except GoError as error:
        raise GoError(f"failed to parse int from {expr}: {error}") from None
    if num < 0:
        raise GoError(f"negative number ({num}) not allowed: {expr}")
    return num


def _parse_int_or_name(expr: str, names: Mapping[str, int]) -> int:
    if expr.lower() in names:
        return names[expr.lower()]
    return _must_parse_int(expr)


def cron_range(expr: str, low: int, high: int, names: Mapping[str, int]) -> None:  # noqa: PLR0912 (one branch per form of a cron field)
    """robfig/cron v3.0.1 parser.go `getRange` (it returns the bits; here only whether it errs)."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _parse_int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _parse_int_or_name(low_and_high[1], names)
        else:
            raise GoError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:
            end = high
    else:
        raise GoError(f"too many slashes: {expr}")
    if start < low:
        raise GoError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise GoError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise GoError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise GoError(f"step of range should be a positive number: {expr}")


def cron_parse(spec: str) -> None:
    """mariadb-operator's `CronParser.Parse`: None, or GoError with robfig/cron's message. A `TZ=`/`CRON_TZ=` prefix
    is skipped without checking the location (Go loads it from its time zone database)."""
    if not spec:
        raise GoError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")) and " " in spec:
        spec = spec[spec.index(" ") :].strip()
    if spec.startswith("@"):
        raise GoError(f"parser does not accept descriptors: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise GoError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for field, (low, high, names) in zip(["0", *fields], _CRON_BOUNDS, strict=True):
        for expr in (part for part in field.split(",") if part):
            cron_range(expr, low, high, names)


def _less(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return compare(a, b) < 0


# --- create rules -------------------------------------------------------------------------------------------------


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(obj.get("spec"))


def _enabled(spec: Mapping[str, Any], key: str) -> bool:
    return get(spec, key, "enabled") is True


def _ha(spec: Mapping[str, Any]) -> bool:
    """mariadb_types.go `IsHAEnabled`: replication or Galera."""
    return _enabled(spec, "replication") or _enabled(spec, "galera")


def validate_ha(obj: Mapping[str, Any]) -> list[Refusal]:
    """mariadb_webhook.go `validateHA`."""
    spec, source = _spec(obj), "mariadb_webhook.go validateHA"
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


def _storage_size(storage: Mapping[str, Any]) -> tuple[int, int] | None:
    """mariadb_types.go `Storage.GetSize`: the volume claim template's request, else `size`."""
    requested = get(storage, "volumeClaimTemplate", "resources", "requests", "storage")
    if requested is not None:
        return quantity(requested)
    return quantity(storage.get("size")) if storage.get("size") is not None else None


def validate_storage(obj: Mapping[str, Any]) -> list[Refusal]:  # noqa: PLR0911 (one return per refusal of the upstream validation, in its order)
    """mariadb_webhook.go `validateStorage`: mariadb_types.go `Storage.Validate`."""
    spec, source = _spec(obj), "mariadb_types.go Storage.Validate (mariadb_webhook.go validateStorage)"
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
        if floor is not None and _less(amount, floor):
            return refuse("storage size cannot be decreased")
    return []


def validate_root_password(obj: Mapping[str, Any]) -> list[Refusal]:
    """mariadb_webhook.go `validateRootPassword` (`IsRootPasswordEmpty` and `IsRootPasswordDefined`)."""
    spec = _spec(obj)
    if spec.get("rootEmptyPassword") is True and not _zero(spec.get("rootPasswordSecretKeyRef")):
        detail = "'spec.rootEmptyPassword' must be disabled when 'spec.rootPasswordSecretKeyRef' is specified"
        return [Refusal("MariaDB", "spec.rootEmptyPassword", detail, "mariadb_webhook.go validateRootPassword")]
    return []


def validate_tls(obj: Mapping[str, Any]) -> list[Refusal]:
    """mariadb_webhook.go `validateTLS` with webhook.go `validateTLSCert`, for the server and the client certificate."""
    tls = mapping(_spec(obj).get("tls"))
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


def validate_cleanup_policy(obj: Mapping[str, Any]) -> list[Refusal]:
    """database_webhook.go `validateDatabaseCleanupPolicy`, user_webhook.go `validateUserCleanupPolicy`,
    grant_webhook.go `validateGrantCleanupPolicy`: base_types.go `CleanupPolicy.Validate`."""
    spec = _spec(obj)
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
    spec = _spec(obj)
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
    require = _spec(obj).get("require")
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
    spec, source = _spec(obj), "backup_types.go Backup.Validate (backup_webhook.go validateBackup)"

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


def decode_errors(obj: Mapping[str, Any]) -> list[Refusal]:
    """What the webhook cannot decode into the Go types (the request fails before any rule): Backup `maxRetention`,
    a `metav1.Duration` (apimachinery meta/v1 duration.go `UnmarshalJSON`: `time.ParseDuration`)."""
    spec = _spec(obj)
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


def _is_ours(obj: Mapping[str, Any]) -> bool:
    return str(obj.get("apiVersion", "")).split("/", 1)[0] == GROUP and obj.get("kind") in KINDS


def validate_create(obj: Mapping[str, Any]) -> list[Refusal]:
    """Every reason the webhook refuses `obj` on CREATE (empty: admitted, or not a reproduced kind)."""
    if not _is_ours(obj):
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
    return [f"spec.{key}" for key in UNMODELLED_SPEC_KEYS.get(kind, ()) if _spec(obj).get(key) is not None]


# --- update rules -------------------------------------------------------------------------------------------------


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
_MAX_RETENTION = next(t for t in IMMUTABLE["Backup"] if t.path == "maxRetention")


def _valid_struct(value: Any, pointer: bool) -> bool:
    """inmutable_webhook.go `isValidStruct`: a non-nil pointer to a struct, or a non-zero struct."""
    if not isinstance(value, Mapping):
        return False
    return pointer or not _zero(value)


def _comparable(value: Any, tagged: Tagged) -> Any:
    if tagged.duration and isinstance(value, str):
        try:
            return parse_duration(value)
        except GoError:
            return value
    if isinstance(value, Mapping | list):
        return _prune(value)
    return value


def _is_nil_or_zero(value: Any, pointer: bool, tagged: Tagged) -> bool:
    """inmutable_webhook.go `isNilOrZero`: a nil pointer, or a value field's zero value."""
    if pointer:
        return value is None
    return _zero(value) or (tagged.duration and _comparable(value, tagged) == 0)


def immutable_refusals(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """inmutable_webhook.go `ValidateUpdate`: the tagged fields of `kind` that `new` changes. A nested field is
    compared only where its parents are valid structs in both objects (`validateInmutable` recurses only there)."""
    refusals: list[Refusal] = []
    for tagged in IMMUTABLE.get(kind, ()):
        steps = tagged.steps
        parent_old, parent_new = _spec(old), _spec(new)
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
            same = (_zero(before) and _zero(after)) or _comparable(before, tagged) == _comparable(after, tagged)
        if same:
            continue
        if tagged.mode == "inmutableinit" and _is_nil_or_zero(before, pointer, tagged):
            continue
        refusals.append(
            Refusal(kind, tagged.json_path, f"'{tagged.json_path}' field is immutable", f"inmutable_webhook.go, {tagged.source}")
        )
    return refusals


def validate_update_storage(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """mariadb_webhook.go `validateUpdateStorage` (its `validateStorage` runs with the create rules)."""
    current, before = _storage_size(mapping(_spec(new).get("storage"))), _storage_size(mapping(_spec(old).get("storage")))
    if current is not None and before is not None and _less(current, before):
        return [
            Refusal("MariaDB", "spec.storage", "Storage size cannot be decreased", "mariadb_webhook.go validateUpdateStorage")
        ]
    return []


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """Every reason the webhook refuses changing the stored `old` into `new` (both as stored: with the CRD's
    defaults, see `schema_defaulted`, and what the operator wrote, see `reconciled`)."""
    if not _is_ours(new):
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


# --- what the stored object holds ---------------------------------------------------------------------------------


def schema_defaulted(value: Any, schema: Mapping[str, Any]) -> Any:
    """`value` with the structural defaults of `schema` (an openAPIV3Schema), as the API server applies them
    (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting/algorithm.go `Default`): a missing property (or a
    null one that is not nullable) gets its default, then defaulting goes on into every property present."""
    value = _copy(value)
    _default_into(value, schema)
    return value


def _default_into(value: Any, schema: Mapping[str, Any]) -> None:
    if isinstance(value, dict):
        properties = mapping(schema.get("properties"))
        for key, found in properties.items():
            prop = mapping(found)
            if "default" in prop and (key not in value or (value[key] is None and not prop.get("nullable"))):
                value[key] = _copy(prop["default"])
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
    out = _copy(dict(obj))
    spec: dict[str, Any] = out.setdefault("spec", {})
    name = str(get(obj, "metadata", "name") or "")
    kind = obj.get("kind")
    if kind == "MariaDB":
        spec.setdefault("rootEmptyPassword", False)
        if _zero(spec.get("rootPasswordSecretKeyRef")) and spec.get("rootEmptyPassword") is not True:
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
        if _is_nil_or_zero(spec.get("maxRetention"), False, _MAX_RETENTION):
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
    if floor is not None and (_less(size, floor) or _less(floor, size)):
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
        out = {k: _copy(v) for k, v in live.items() if not (k in before and k not in applied)}
        for key, value in applied.items():
            out[key] = reapplied(before.get(key), live.get(key), value)
        return out
    return _copy(applied)


def update_refusals(
    before: Mapping[str, Any], after: Mapping[str, Any], schema: Mapping[str, Any] | None = None, galera: bool = False
) -> list[Refusal]:
    """The webhook's verdict when `after` (what hpcforge now applies) replaces `before` (what it applied last): the
    stored object is `before` with the CRD's defaults and the operator's, the updated one that with `after` applied."""

    def defaulted(value: Mapping[str, Any]) -> Any:
        return schema_defaulted(value, schema) if schema is not None else _copy(value)

    stored = defaulted(reconciled(defaulted(before), galera))
    updated = defaulted(reapplied(before, stored, after))
    return validate_update(stored, updated)


def crd_schema(crd: Mapping[str, Any], version: str = "v1alpha1") -> Mapping[str, Any]:
    """The openAPIV3Schema of `version` in a CustomResourceDefinition."""
    for entry in items(get(crd, "spec", "versions")):
        if get(entry, "name") == version:
            return mapping(get(entry, "schema", "openAPIV3Schema"))
    return {}


__all__ = [
    "CREATE_RULES",
    "GROUP",
    "IMMUTABLE",
    "KINDS",
    "UNMODELLED_SPEC_KEYS",
    "WEBHOOKS",
    "GoError",
    "Refusal",
    "Tagged",
    "crd_schema",
    "cron_parse",
    "cron_range",
    "decode_errors",
    "go_atoi",
    "immutable_refusals",
    "quantity",
    "reapplied",
    "reconciled",
    "schema_defaulted",
    "unmodelled",
    "update_refusals",
    "validate_create",
    "validate_update",
]
