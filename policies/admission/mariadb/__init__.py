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

One module per job: kinds.py (the kinds, their webhooks, a refusal, Go values), cron.py (robfig/cron's parser),
server.py (the MariaDB kind's create rules), resources.py (Database, User, Grant, Backup), create.py (CREATE),
immutable.py (UPDATE: the tagged fields) and stored.py (what the stored object holds; `update_refusals`).
"""

from __future__ import annotations

from ...rules.apimachinery import quantity
from ...rules.gotime import GoError
from .create import CREATE_RULES, decode_errors, is_ours, unmodelled, validate_create
from .cron import cron_parse, cron_range, go_atoi
from .family import CONFIG_KEYS, FAMILY, MARIADB_OPERATOR_ADMISSION, MariadbAdmissionConfig, config_keys, judge_mariadb
from .immutable import (
    IMMUTABLE,
    MAX_RETENTION,
    Tagged,
    immutable_refusals,
    is_nil_or_zero,
    validate_update,
    validate_update_storage,
)
from .kinds import GROUP, KINDS, REPRODUCES, UNMODELLED_SPEC_KEYS, WEBHOOKS, Refusal, go_zero, json_copy, less, pruned, spec_of
from .resources import COMPRESSIONS, validate_backup, validate_cleanup_policy, validate_password, validate_require
from .server import storage_size, validate_ha, validate_root_password, validate_storage, validate_tls
from .stored import crd_schema, reapplied, reconciled, schema_defaulted, update_refusals
from .verdicts import MariadbVerdict, mariadb_verdicts, object_key, update_verdicts

__all__ = [
    "COMPRESSIONS",
    "CONFIG_KEYS",
    "CREATE_RULES",
    "FAMILY",
    "GROUP",
    "IMMUTABLE",
    "KINDS",
    "MARIADB_OPERATOR_ADMISSION",
    "MAX_RETENTION",
    "REPRODUCES",
    "UNMODELLED_SPEC_KEYS",
    "WEBHOOKS",
    "GoError",
    "MariadbAdmissionConfig",
    "MariadbVerdict",
    "Refusal",
    "Tagged",
    "config_keys",
    "crd_schema",
    "cron_parse",
    "cron_range",
    "decode_errors",
    "go_atoi",
    "go_zero",
    "immutable_refusals",
    "is_nil_or_zero",
    "is_ours",
    "json_copy",
    "judge_mariadb",
    "less",
    "mariadb_verdicts",
    "object_key",
    "pruned",
    "quantity",
    "reapplied",
    "reconciled",
    "schema_defaulted",
    "spec_of",
    "storage_size",
    "unmodelled",
    "update_refusals",
    "update_verdicts",
    "validate_backup",
    "validate_cleanup_policy",
    "validate_create",
    "validate_ha",
    "validate_password",
    "validate_require",
    "validate_root_password",
    "validate_storage",
    "validate_tls",
    "validate_update",
    "validate_update_storage",
]
