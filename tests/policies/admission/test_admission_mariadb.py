"""mariadb-operator 26.6.0's validating webhooks (policies/admission/mariadb/) against what hpcforge generates.

- every k8s.mariadb.com object of dev and prod passes the CREATE rules, and an unchanged second apply (with what the
  API server and the operator wrote into the stored object) passes the UPDATE rules;
- upstream's own tables, replayed: internal/webhook/v1alpha1/{mariadb,backup,database,grant,user}_webhook_test.go
  (the entries within the reproduced rules), pkg/webhook/inmutable_webhook_test.go, robfig/cron v3.0.1
  parser_test.go (`TestRange`, `TestStandardSpecSchedule`, `TestNoDescriptorParser`), plus Go's own `strconv.Atoi`
  run on the same inputs (`time.ParseDuration` is policies/rules/gotime.py's, held against Go in tests/policies/rules/test_gotime.py);
- the defects the rules found in hpcforge's config (refused now before any resource is registered), and which config
  keys map to immutable fields (docs/configuration.md says so for each).
"""

from __future__ import annotations

import copy
import functools
import random
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.site.loader import ConfigError, load_config
from offline.program.engine import RecordedStack
from policies.admission import mariadb as m
from policies.rules import gotime
from tests.helpers import (
    REPO,
    config_values,
    go_answers,
    go_program,
    raw_config,
    require_binaries,
    require_shared,
    run_stack_file,
    write_variant,
)
from tests.policies.rules.test_gotime import PARSE_DURATION_ERROR_TESTS, PARSE_DURATION_TESTS

API = "k8s.mariadb.com/v1alpha1"


@functools.cache
def schemas() -> dict[str, Mapping[str, Any]]:
    """The openAPIV3Schema of each kind in mariadb-operator-crds 26.6.0 (shared/crds), read once (read-only)."""
    found: dict[str, Mapping[str, Any]] = {}
    for path in sorted(require_shared("crds", "mariadb-operator-26.6.0").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
                found[document["spec"]["names"]["kind"]] = m.crd_schema(document)
    return found


def mariadb_objects(stack: RecordedStack) -> list[dict[str, Any]]:
    return [
        dict(r.inputs)
        for r in stack.resources
        if r.is_kubernetes_object and str(r.inputs.get("apiVersion", "")).startswith(m.GROUP + "/")
    ]


def key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind")), str(meta.get("namespace")), str(meta.get("name")))


def obj(kind: str, spec: dict[str, Any], name: str = "test") -> dict[str, Any]:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": spec}


# --- what dev and prod generate -------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack_name", ["dev", "prod"])
def test_every_mariadb_object_passes_the_webhooks(stack_name: str, dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    stack = dev_stack if stack_name == "dev" else prod_stack
    found = mariadb_objects(stack)
    kinds = {o["kind"] for o in found}
    assert {"MariaDB", "Database", "User", "Grant"} <= kinds
    assert kinds <= set(m.KINDS), "a kind whose webhook is not reproduced"
    by_kind = schemas()
    for o in found:
        assert m.unmodelled(o) == [], key(o)
        assert m.validate_create(o) == [], key(o)
        # The second `pulumi up` with the same config: the stored object has the CRD's defaults and what the
        # operator patched in (e.g. Backup maxRetention, MariaDB's volume claim template).
        assert m.update_refusals(o, o, by_kind[o["kind"]]) == [], key(o)
    if stack_name == "prod":
        assert "Backup" in kinds


@pytest.mark.parametrize("stack_name", ["dev", "prod"])
def test_other_delivery_mode_generates_the_same_mariadb_objects(
    stack_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    stack: RecordedStack = request.getfixturevalue(f"{stack_name}_stack")
    other = {"dev": "argocd", "prod": "pulumi"}[stack_name]

    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:delivery"] = other

    flipped = run_stack_file(write_variant(tmp_path, stack_name, edit), stack_name)
    assert sorted(map(key, mariadb_objects(flipped))) == sorted(map(key, mariadb_objects(stack)))
    assert all(m.validate_create(o) == [] for o in mariadb_objects(flipped))


def test_the_deployment_runs_the_webhooks(prod_stack: RecordedStack) -> None:
    """The chart's ValidatingWebhookConfiguration is rendered when `webhook.enabled` and not `currentNamespaceOnly`
    (v26.6.0 deploy/charts/mariadb-operator/templates/webhook/config.yaml); hpcforge's values keep both defaults."""
    from tests.offline.admission.test_admission_program import chart_values, merge

    defaults = yaml.safe_load((require_shared("charts", "mariadb-operator-26.6.0") / "values.yaml").read_text())
    values = merge(defaults, chart_values(prod_stack, "mariadb-operator"))
    assert values["webhook"]["enabled"] is True
    assert values["currentNamespaceOnly"] is False


# --- robfig/cron v3.0.1 parser_test.go ----------------------------------------------------------------------------

# TestRange: (expr, min, max, error substring or "" for accepted)
ROBFIG_TEST_RANGE = [
    ("5", 0, 7, ""),
    ("0", 0, 7, ""),
    ("7", 0, 7, ""),
    ("5-5", 0, 7, ""),
    ("5-6", 0, 7, ""),
    ("5-7", 0, 7, ""),
    ("5-6/2", 0, 7, ""),
    ("5-7/2", 0, 7, ""),
    ("5-7/1", 0, 7, ""),
    ("*", 1, 3, ""),
    ("*/2", 1, 3, ""),
    ("5--5", 0, 0, "too many hyphens"),
    ("jan-x", 0, 0, "failed to parse int from"),
    ("2-x", 1, 5, "failed to parse int from"),
    ("*/-12", 0, 0, "negative number"),
    ("*//2", 0, 0, "too many slashes"),
    ("1", 3, 5, "below minimum"),
    ("6", 3, 5, "above maximum"),
    ("5-3", 3, 5, "beyond end of range"),
    ("*/0", 0, 0, "should be a positive number"),
]


@pytest.mark.parametrize(("expr", "low", "high", "error"), ROBFIG_TEST_RANGE)
def test_robfig_range_table(expr: str, low: int, high: int, error: str) -> None:
    if error:
        with pytest.raises(m.GoError, match=error):
            m.cron_range(expr, low, high, {})
    else:
        m.cron_range(expr, low, high, {})


def test_robfig_standard_spec_and_no_descriptor_tables() -> None:
    # TestStandardSpecSchedule, its five-field entries (ParseStandard accepts descriptors; CronParser does not:
    # TestNoDescriptorParser).
    m.cron_parse("5 * * * *")
    with pytest.raises(m.GoError, match="failed to parse int from"):
        m.cron_parse("5 j * * *")
    with pytest.raises(m.GoError, match="expected exactly 5 fields"):
        m.cron_parse("* * * *")
    with pytest.raises(m.GoError, match="does not accept descriptors"):
        m.cron_parse("@every 1m")
    # TestParseSchedule's standardParser entry with a time zone prefix.
    m.cron_parse("CRON_TZ=UTC  5 * * * *")
    # the field bounds of spec.go: month and day-of-week names, day of month from 1, day of week to 6
    m.cron_parse("0 0 1 jan-dec sun-sat")
    for bad in ("60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 13 *", "* * * * 7"):
        with pytest.raises(m.GoError, match=r"above maximum|below minimum"):
            m.cron_parse(bad)


# --- Go itself: strconv.Atoi (time.ParseDuration, policies/rules/gotime.py, against Go in tests/policies/rules/test_gotime.py) ------

ATOI_ORACLE = """package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var s string
		json.Unmarshal(in.Bytes(), &s)
		n, err := strconv.Atoi(s)
		b, _ := json.Marshal(map[string]interface{}{"ok": err == nil, "n": n})
		fmt.Println(string(b))
	}
}
"""


def test_atoi_agrees_with_go(tmp_path: Path) -> None:
    """The same inputs through Go's own strconv.Atoi (Debian's golang-go) and through go_atoi (robfig/cron's
    mustParseInt): time_test.go's duration tables (tests/policies/rules/test_gotime.py), numbers around the int64 limit, and seeded
    random strings."""
    require_binaries("go")
    program = go_program(tmp_path, ATOI_ORACLE, "go-atoi")
    rng = random.Random(30)
    alphabet = "0123456789.+-hmsnuµ "
    inputs = [t for t, _ in PARSE_DURATION_TESTS] + PARSE_DURATION_ERROR_TESTS
    inputs += ["+5", "-5", "007", "99999999999999999999", "1_0", "9223372036854775807", "-9223372036854775808"]
    inputs += ["9223372036854775808", "-9223372036854775809", "0x10", "", " 1", "1 "]
    inputs += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(400)]
    for text, go in zip(inputs, go_answers(program, inputs), strict=True):
        try:
            number: int | None = m.go_atoi(text)
        except m.GoError:
            number = None
        assert (number is not None) == go["ok"], text
        if go["ok"]:
            assert number == go["n"], text


# --- mariadb_webhook_test.go -----------------------------------------------------------------------------------------

SIZE = {"size": "100Mi"}
ROOT = {"name": "secret", "key": "root-password"}
MARIADB_CREATE = [
    # (entry, spec, refused)
    ("No BootstrapFrom", {"storage": SIZE}, False),
    (
        "Valid Galera",
        {"galera": {"enabled": True, "sst": "mariabackup", "replicaThreads": 1}, "replicas": 3, "storage": SIZE},
        False,
    ),
    ("Valid replication", {"replication": {"enabled": True, "primary": {"podIndex": 0}}, "replicas": 3, "storage": SIZE}, False),
    (
        "Invalid HA",
        {
            "replication": {"enabled": True, "primary": {"podIndex": 0}},
            "galera": {"enabled": True, "sst": "mariabackup", "replicaThreads": 1},
            "replicas": 3,
            "storage": SIZE,
        },
        True,
    ),
    ("Fewer replicas required", {"replicas": 4, "storage": SIZE}, True),
    ("More replicas required", {"galera": {"enabled": True, "sst": "mariabackup"}, "replicas": 1, "storage": SIZE}, True),
    ("Invalid MaxScale", {"maxScaleRef": {"name": "maxscale"}}, True),
    ("Invalid storage", {"storage": {}}, True),
    (
        "Invalid rootPasswordSecretKeyRef and rootEmptyPassword",
        {"rootPasswordSecretKeyRef": ROOT, "rootEmptyPassword": True, "storage": SIZE},
        True,
    ),
    ("Valid rootPasswordSecretKeyRef", {"rootPasswordSecretKeyRef": ROOT, "rootEmptyPassword": False, "storage": SIZE}, False),
    ("Valid rootEmptyPassword", {"rootPasswordSecretKeyRef": {}, "rootEmptyPassword": True, "storage": SIZE}, False),
    (
        "Invalid TLS",
        {
            "rootPasswordSecretKeyRef": ROOT,
            "storage": SIZE,
            "tls": {"enabled": True, "serverCertSecretRef": {"name": "server-cert"}},
        },
        True,
    ),
    (
        "Valid TLS",
        {
            "rootPasswordSecretKeyRef": ROOT,
            "storage": SIZE,
            "tls": {"enabled": True, "serverCASecretRef": {"name": "server-ca"}, "serverCertSecretRef": {"name": "server-cert"}},
        },
        False,
    ),
]
# Not replayed (rules not reproduced; hpcforge sets none of these keys): the BootstrapFrom, Galera recovery/SST/agent/
# provider options, replication wait point/GTID/recovery/pod index, PodDisruptionBudget and multi-cluster entries.


@pytest.mark.parametrize(("entry", "spec", "refused"), MARIADB_CREATE, ids=[e[0] for e in MARIADB_CREATE])
def test_mariadb_create_table(entry: str, spec: dict[str, Any], refused: bool) -> None:
    assert bool(m.validate_create(obj("MariaDB", spec))) is refused


HA_METHODS = [
    ("replication", {"replication": {"enabled": True, "primary": {"podIndex": 0}}}),
    ("galera", {"galera": {"enabled": True, "sst": "mariabackup", "replicaThreads": 1}}),
]


@pytest.mark.parametrize(("method", "ha"), HA_METHODS, ids=[h[0] for h in HA_METHODS])
def test_ephemeral_storage_is_refused_for_an_ha_mariadb(method: str, ha: dict[str, Any]) -> None:
    """mariadb-operator v26.6.0 api/v1alpha1/mariadb_types.go `Storage.Validate`: `ephemeral: true` with HA
    (`IsHAEnabled`: replication or Galera) is refused first ("ephemeral storage is only compatible with non HA
    MariaDBs"), before the size rules; without HA it is admitted (upstream's table has no HA entry for it)."""
    refusals = m.validate_create(obj("MariaDB", {**ha, "replicas": 3, "storage": {"ephemeral": True}}))
    assert [(r.path, r.detail) for r in refusals] == [
        ("spec.storage", "ephemeral storage is only compatible with non HA MariaDBs")
    ]
    with_size = m.validate_create(obj("MariaDB", {**ha, "replicas": 3, "storage": {"ephemeral": True, **SIZE}}))
    assert [r.detail for r in with_size] == ["ephemeral storage is only compatible with non HA MariaDBs"]
    assert m.validate_create(obj("MariaDB", {**ha, "replicas": 3, "storage": {"ephemeral": False, **SIZE}})) == []
    assert m.validate_create(obj("MariaDB", {"storage": {"ephemeral": True}})) == []


def updated(kind: str, base: dict[str, Any], patch: Callable[[dict[str, Any]], None]) -> list[m.Refusal]:
    """Upstream's update tables: the object created (the API server's defaults applied, no controller running in
    envtest), then patched with a merge patch."""
    schema = schemas()[kind]
    stored = m.schema_defaulted(obj(kind, base), schema)
    new = copy.deepcopy(stored)
    patch(new["spec"])
    return m.validate_update(stored, m.schema_defaulted(new, schema))


MARIADB_BASE: dict[str, Any] = {
    "image": "mariadb:11.3.3",
    "imagePullPolicy": "IfNotPresent",
    "priorityClassName": "PriorityClassName",
    "resources": {"requests": {"cpu": "100m"}},
    "env": [{"name": "TZ", "value": "SYSTEM"}],
    "envFrom": [{"configMapRef": {"name": "mariadb"}}],
    "rootPasswordSecretKeyRef": ROOT,
    "database": "test",
    "username": "test",
    "passwordSecretKeyRef": {"name": "secret", "key": "password"},
    "myCnf": "foo",
    "bootstrapFrom": {"backupRef": {"name": "backup"}},
    "metrics": {
        "exporter": {"image": "prom/mysqld-exporter:v0.15.1", "imagePullPolicy": "IfNotPresent"},
        "serviceMonitor": {"prometheusRelease": "prometheus"},
    },
    "storage": SIZE,
}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def patch(spec: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = spec
        for step in parents:
            node = node.setdefault(step, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = copy.deepcopy(value)

    return patch


MARIADB_UPDATE = [
    ("Updating RootPasswordSecretKeyRef", _set("rootPasswordSecretKeyRef.key", "another-password"), True),
    ("Updating Database", _set("database", "another-database"), True),
    ("Updating Username", _set("username", "another-username"), True),
    ("Updating PasswordSecretKeyRef", _set("passwordSecretKeyRef.key", "another-password"), False),
    ("Updating Image", _set("image", "mariadb:11.2.2"), False),
    ("Updating Port", _set("port", 3307), False),
    ("Updating Storage size", _set("storage.size", "200Mi"), False),
    ("Decreasing Storage size", _set("storage.size", "50Mi"), True),
    ("Updating MyCnf", _set("myCnf", "bar"), False),
    ("Updating MyCnfConfigMapKeyRef", _set("myCnfConfigMapKeyRef", {"name": "my-cnf-configmap", "key": "config"}), False),
    ("Updating BootstrapFrom", _set("bootstrapFrom", None), False),
    ("Updating Metrics", _set("metrics.exporter.image", "prom/mysqld-exporter:v0.14.1"), False),
    ("Updating Resources", _set("resources", {"requests": {"cpu": "200m"}}), False),
    ("Updating Env", _set("env", [{"name": "FOO", "value": "foo"}]), False),
    ("Updating EnvFrom", _set("envFrom", [{"configMapRef": {"name": "mariadb"}}]), False),
    ("Updating to invalid TLS", _set("tls", {"enabled": True, "serverCertSecretRef": {"name": "server-cert"}}), True),
    (
        "Updating to valid TLS",
        _set(
            "tls", {"enabled": True, "serverCASecretRef": {"name": "server-ca"}, "serverCertSecretRef": {"name": "server-cert"}}
        ),
        False,
    ),
    ("Updating PriorityClassName", _set("priorityClassName", "new-PriorityClassName"), False),
]


@pytest.mark.parametrize(("entry", "patch", "refused"), MARIADB_UPDATE, ids=[e[0] for e in MARIADB_UPDATE])
def test_mariadb_update_table(entry: str, patch: Callable[[dict[str, Any]], None], refused: bool) -> None:
    assert bool(updated("MariaDB", MARIADB_BASE, patch)) is refused


# --- inmutable_webhook_test.go (the cases on the kinds hpcforge uses) --------------------------------------------------


def test_inmutable_webhook_tables() -> None:
    secret = {"name": "mariadb-root", "key": "password"}
    # TestInmutableInitWebhook "zero field" and "non zero field"
    assert (
        m.immutable_refusals(
            "MariaDB", obj("MariaDB", {}), obj("MariaDB", {"rootPasswordSecretKeyRef": {**secret, "generate": True}})
        )
        == []
    )
    [refusal] = m.immutable_refusals(
        "MariaDB",
        obj("MariaDB", {"rootPasswordSecretKeyRef": secret}),
        obj("MariaDB", {"rootPasswordSecretKeyRef": {**secret, "key": "another-password"}}),
    )
    assert (
        refusal.path == "spec.rootPasswordSecretKeyRef" and refusal.detail == "'spec.rootPasswordSecretKeyRef' field is immutable"
    )
    # TestInmutableWebhook "mutable nested pointer to struct" and "inmutable nested pointer to struct"
    assert (
        m.immutable_refusals(
            "MariaDB", obj("MariaDB", {"metrics": {"enabled": False}}), obj("MariaDB", {"metrics": {"enabled": True}})
        )
        == []
    )
    [nested] = m.immutable_refusals(
        "MariaDB", obj("MariaDB", {"metrics": {"username": "foo"}}), obj("MariaDB", {"metrics": {"username": "bar"}})
    )
    assert nested.path == "spec.metrics.username"
    # inmutableinit on a pointer: nil -> set is allowed, set -> other refused (TestInmutableInitWebhook "nil field",
    # "non nil field", on the Backup's serviceAccountName)
    assert m.immutable_refusals("Backup", obj("Backup", {}), obj("Backup", {"serviceAccountName": "bar"})) == []
    assert m.immutable_refusals(
        "Backup", obj("Backup", {"serviceAccountName": "bar"}), obj("Backup", {"serviceAccountName": "foo"})
    )
    # ...a field of a struct embedded inline (JobPodTemplate): when the whole struct is zero in the new object,
    # validateInmutable does not enter it, and dropping the field passes; with another of its fields set, it is refused.
    assert m.immutable_refusals("Backup", obj("Backup", {"serviceAccountName": "bar"}), obj("Backup", {})) == []
    kept = {"nodeSelector": {"a": "b"}}
    assert m.immutable_refusals("Backup", obj("Backup", {"serviceAccountName": "bar", **kept}), obj("Backup", kept))


# --- backup_webhook_test.go ----------------------------------------------------------------------------------------

REF = {"name": "mariadb-webhook", "waitForIt": True}
S3 = {"s3": {"bucket": "test", "endpoint": "test"}}
STAGING = {"persistentVolumeClaim": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "300Mi"}}}}
BACKUP_COMMON = {"resources": {"requests": {"cpu": "100m"}}, "mariaDbRef": REF, "backoffLimit": 10, "restartPolicy": "OnFailure"}
BACKUP_CREATE = [
    ("No storage", {"compression": "gzip", "storage": {}}, True),
    (
        "Multiple storages",
        {"compression": "gzip", "storage": {**S3, "volume": {"persistentVolumeClaim": {"claimName": "TEST"}}}},
        True,
    ),
    ("Single storage", {"compression": "gzip", "storage": S3}, False),
    ("Invalid compression", {"compression": "foo", "storage": S3}, True),
    ("Invalid schedule", {"schedule": {"cron": "foo"}, "compression": "gzip", "storage": S3}, True),
    (
        "Invalid staging storage",
        {
            "schedule": {"cron": "*/1 * * * *"},
            "compression": "gzip",
            "storage": {"volume": {"emptyDir": {}}},
            "stagingStorage": STAGING,
        },
        True,
    ),
    (
        "Valid",
        {
            "schedule": {"cron": "*/1 * * * *"},
            "compression": "gzip",
            "storage": S3,
            "stagingStorage": STAGING,
            "successfulJobsHistoryLimit": 5,
            "failedJobsHistoryLimit": 5,
        },
        False,
    ),
]
# Not replayed: "Invalid history limits" (-5), which the CRD's schema refuses (minimum 0), not the webhook.


@pytest.mark.parametrize(("entry", "spec", "refused"), BACKUP_CREATE, ids=[e[0] for e in BACKUP_CREATE])
def test_backup_create_table(entry: str, spec: dict[str, Any], refused: bool) -> None:
    assert bool(m.validate_create(obj("Backup", {**BACKUP_COMMON, **spec}))) is refused


OTHER_COMPRESSIONS = ["xz", "zstd", "lz4", "snappy", "deflate", "brotli", "lzma", "zip", "gz", "bz2", "Gzip", "NONE"]


def test_backup_compression_is_one_of_the_three_upstream_accepts() -> None:
    """mariadb-operator v26.6.0 api/v1alpha1/base_types.go `CompressAlgorithm.Validate`: "" (unset), none, bzip2 and
    gzip; anything else is refused with its message. The list is the pinned Backup CRD's `spec.compression` enum."""
    enum = schemas()["Backup"]["properties"]["spec"]["properties"]["compression"]["enum"]
    assert list(m.COMPRESSIONS) == enum == ["none", "bzip2", "gzip"]
    for algorithm in ["", *enum]:
        assert m.validate_create(obj("Backup", {**BACKUP_COMMON, "compression": algorithm, "storage": S3})) == [], algorithm
    for algorithm in OTHER_COMPRESSIONS:
        [refusal] = m.validate_create(obj("Backup", {**BACKUP_COMMON, "compression": algorithm, "storage": S3}))
        assert refusal.detail == (
            f"invalid Backup: invalid Compression: invalid compression: {algorithm}, supported algorithms: [none|bzip2|gzip]"
        )


BACKUP_BASE = {**BACKUP_COMMON, "maxRetention": "12h0m0s", "compression": "none", "storage": S3, "stagingStorage": STAGING}
BACKUP_UPDATE = [
    ("Updating BackoffLimit", _set("backoffLimit", 20), False),
    ("Updating Schedule", _set("schedule", {"cron": "*/1 * * * *"}), False),
    ("Updating SuccessfulJobsHistoryLimit", _set("successfulJobsHistoryLimit", 5), False),
    ("Updating FailedJobsHistoryLimit", _set("failedJobsHistoryLimit", 5), False),
    ("Updating MaxRetention", _set("maxRetention", "24h0m0s"), True),
    ("Updating Compression", _set("compression", "bzip2"), False),
    ("Updating Storage", _set("storage.s3.bucket", "another-bucket"), True),
    ("Updating StagingStorage", _set("stagingStorage", None), True),
    ("Updating MariaDBRef", _set("mariaDbRef.name", "another-mariadb"), True),
    ("Updating RestartPolicy", _set("restartPolicy", "Never"), True),
    ("Updating Resources", _set("resources", {"requests": {"cpu": "200m"}}), False),
]


@pytest.mark.parametrize(("entry", "patch", "refused"), BACKUP_UPDATE, ids=[e[0] for e in BACKUP_UPDATE])
def test_backup_update_table(entry: str, patch: Callable[[dict[str, Any]], None], refused: bool) -> None:
    assert bool(updated("Backup", BACKUP_BASE, patch)) is refused


# --- database, grant and user webhook tests ------------------------------------------------------------------------

SQL_CREATE = [
    (
        "Database",
        "Valid cleanupPolicy",
        {"cleanupPolicy": "Delete", "mariaDbRef": REF, "characterSet": "utf8", "collate": "utf8_general_ci"},
        False,
    ),
    (
        "Database",
        "Invalid cleanupPolicy",
        {"cleanupPolicy": "", "mariaDbRef": REF, "characterSet": "utf8", "collate": "utf8_general_ci"},
        True,
    ),
    (
        "Grant",
        "Valid cleanupPolicy",
        {
            "cleanupPolicy": "Delete",
            "mariaDbRef": REF,
            "privileges": ["SELECT"],
            "database": "foo",
            "table": "foo",
            "username": "foo",
        },
        False,
    ),
    (
        "Grant",
        "Invalid cleanupPolicy",
        {"cleanupPolicy": "", "mariaDbRef": REF, "privileges": ["SELECT"], "database": "foo", "table": "foo", "username": "foo"},
        True,
    ),
    (
        "User",
        "Valid cleanupPolicy",
        {
            "cleanupPolicy": "Delete",
            "mariaDbRef": REF,
            "passwordSecretKeyRef": {"name": "u", "key": "password"},
            "maxUserConnections": 10,
        },
        False,
    ),
    (
        "User",
        "Invalid cleanupPolicy",
        {
            "cleanupPolicy": "",
            "mariaDbRef": REF,
            "passwordSecretKeyRef": {"name": "u", "key": "password"},
            "maxUserConnections": 10,
        },
        True,
    ),
    (
        "User",
        "Valid require",
        {
            "mariaDbRef": REF,
            "passwordSecretKeyRef": {"name": "u", "key": "password"},
            "require": {"issuer": "/CN=mariadb-galera-ca", "subject": "/CN=mariadb-galera-ca"},
        },
        False,
    ),
    (
        "User",
        "Invalid require",
        {
            "mariaDbRef": REF,
            "passwordSecretKeyRef": {"name": "u", "key": "password"},
            "require": {"x509": True, "issuer": "/CN=mariadb-galera-ca", "subject": "/CN=mariadb-galera-ca"},
        },
        True,
    ),
]


@pytest.mark.parametrize(("kind", "entry", "spec", "refused"), SQL_CREATE, ids=[f"{e[0]}: {e[1]}" for e in SQL_CREATE])
def test_sql_objects_create_tables(kind: str, entry: str, spec: dict[str, Any], refused: bool) -> None:
    assert bool(m.validate_create(obj(kind, spec))) is refused


PLUGIN = {
    "pluginNameSecretKeyRef": {"name": "u", "key": "pluginName"},
    "pluginArgSecretKeyRef": {"name": "u", "key": "pluginArg"},
}


def _both(*patches: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def patch(spec: dict[str, Any]) -> None:
        for one in patches:
            one(spec)

    return patch


SQL_UPDATE = [
    ("Database", "Updating MariaDBRef", _set("mariaDbRef.name", "another-mariadb"), True),
    ("Database", "Updating CharacterSet", _set("characterSet", "utf16"), True),
    ("Database", "Updating Collate", _set("collate", "latin2_general_ci"), True),
    ("Database", "Updating to valid CleanupPolicy", _set("cleanupPolicy", "Skip"), False),
    ("Database", "Updating to invalid CleanupPolicy", _set("cleanupPolicy", ""), True),
    ("Grant", "Updating MariaDBRef", _set("mariaDbRef.name", "another-mariadb"), True),
    ("Grant", "Updating Privileges", _set("privileges", ["SELECT", "UPDATE"]), False),
    ("Grant", "Updating Database", _set("database", "bar"), True),
    ("Grant", "Updating Table", _set("table", "bar"), True),
    ("Grant", "Updating Username", _set("username", "bar"), True),
    ("Grant", "Updating GrantOption", _set("grantOption", True), True),
    ("Grant", "Updating to valid CleanupPolicy", _set("cleanupPolicy", "Skip"), False),
    ("Grant", "Updating to invalid CleanupPolicy", _set("cleanupPolicy", ""), True),
    ("User", "Updating MariaDBRef", _set("mariaDbRef.name", "another-mariadb"), True),
    ("User", "Updating PasswordSecretKeyRef", _set("passwordSecretKeyRef.name", "another-secret"), False),
    ("User", "Updating MaxUserConnections", _set("maxUserConnections", 20), False),
    ("User", "Duplicate authentication methods (hash)", _set("passwordHashSecretKeyRef", {"name": "u", "key": "password"}), True),
    ("User", "Duplicate authentication methods (plugin)", _set("passwordPlugin", PLUGIN), True),
    ("User", "Updating PasswordPlugin", _both(_set("passwordSecretKeyRef", None), _set("passwordPlugin", PLUGIN)), False),
    (
        "User",
        "Updating PasswordPlugin.PluginArgSecretKeyRef",
        _both(
            _set("passwordSecretKeyRef", None),
            _set("passwordPlugin", PLUGIN),
            _set("passwordPlugin.pluginArgSecretKeyRef.name", "another-secret"),
        ),
        False,
    ),
    ("User", "Updating CleanupPolicy", _set("cleanupPolicy", "Skip"), False),
    ("User", "Updating TLSRequirements", _set("require", {"x509": True}), False),
]
SQL_BASES: dict[str, dict[str, Any]] = {
    "Database": {"mariaDbRef": REF, "characterSet": "utf8", "collate": "utf8_general_ci"},
    "Grant": {
        "mariaDbRef": REF,
        "privileges": ["SELECT"],
        "database": "foo",
        "table": "foo",
        "username": "foo",
        "grantOption": False,
    },
    "User": {"mariaDbRef": REF, "passwordSecretKeyRef": {"name": "u", "key": "password"}, "maxUserConnections": 10},
}


@pytest.mark.parametrize(("kind", "entry", "patch", "refused"), SQL_UPDATE, ids=[f"{e[0]}: {e[1]}" for e in SQL_UPDATE])
def test_sql_objects_update_tables(kind: str, entry: str, patch: Callable[[dict[str, Any]], None], refused: bool) -> None:
    assert bool(updated(kind, SQL_BASES[kind], patch)) is refused


# --- the defects: config hpcforge accepted that the webhook refuses --------------------------------------------------


def _prod_with(edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    values = config_values("prod")
    edit(values)
    return values


def _backups(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:backups"].update(changes)

    return edit


def _refused_by_config(values: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    return raised.value.messages


@pytest.mark.parametrize(
    "schedule", ["15 24 * * *", "60 2 * * *", "0 0 0 * *", "0 0 * 13 *", "0 0 * * 7", "0 5-1 * * *", "*/0 * * * *"]
)
def test_a_schedule_the_webhook_refuses_is_refused_by_name(schedule: str) -> None:
    # The Backup hpcforge rendered from it before: the webhook refuses it at the first `pulumi up`.
    backup = obj("Backup", {"mariaDbRef": {"name": "mariadb"}, "schedule": {"cron": schedule}, "storage": S3})
    assert "invalid Schedule" in str(m.validate_create(backup)[0])
    messages = _refused_by_config(_prod_with(_backups(schedule=schedule)))
    assert any(msg.startswith("hpcforge:backups.schedule:") and "refuse the schedule" in msg for msg in messages), messages


def test_config_schedules_are_exactly_the_ones_the_webhook_takes() -> None:
    """Within the five-field language the config accepts, the config refuses a schedule iff robfig/cron does."""
    from components.layers.backups.config import BackupsConfig

    rng = random.Random(30)

    def item() -> str:
        number = lambda: str(rng.choice([0, 1, 5, 6, 7, 12, 13, 23, 24, 31, 32, 59, 60, rng.randint(0, 99)]))  # noqa: E731
        head = rng.choice(["*", number(), f"{number()}-{number()}"])
        return head + (f"/{number()}" if rng.random() < 0.3 else "")

    volume: dict[str, Any] = {"volume": {}}
    for _ in range(3000):
        schedule = " ".join(",".join(item() for _ in range(rng.randint(1, 2))) for _ in range(5))
        try:
            m.cron_parse(schedule)
            webhook = True
        except m.GoError:
            webhook = False
        try:
            BackupsConfig.model_validate({"schedule": schedule, **volume})
            config = True
        except ValueError:
            config = False
        assert config == webhook, schedule


def test_zero_retention_is_refused_by_name() -> None:
    """`0h` was accepted: the operator writes its default (720h0m0s) over a zero maxRetention, and the next apply of
    `0h` is then refused as a change of an `inmutableinit` field."""
    backup = obj("Backup", {"mariaDbRef": {"name": "mariadb"}, "maxRetention": "0h", "storage": S3})
    assert m.validate_create(backup) == []
    [refusal] = m.update_refusals(backup, backup)
    assert refusal.path == "spec.maxRetention"
    messages = _refused_by_config(_prod_with(_backups(maxRetention="0h")))
    assert any(msg.startswith("hpcforge:backups.maxRetention:") for msg in messages), messages


def test_a_retention_beyond_a_go_duration_is_refused_by_name() -> None:
    from components.layers.backups.config import MAX_RETENTION_HOURS

    assert gotime.parse_duration(f"{MAX_RETENTION_HOURS}h") > 0
    too_long = f"{MAX_RETENTION_HOURS + 1}h"
    backup = obj("Backup", {"mariaDbRef": {"name": "mariadb"}, "maxRetention": too_long, "storage": S3})
    assert m.validate_create(backup)[0].path == "spec.maxRetention"
    messages = _refused_by_config(_prod_with(_backups(maxRetention=too_long)))
    assert any(msg.startswith("hpcforge:backups.maxRetention:") and "Go duration" in msg for msg in messages), messages
    load_config(raw_config(_prod_with(_backups(maxRetention=f"{MAX_RETENTION_HOURS}h"))))


@pytest.mark.parametrize("size", ["0", "0Gi", "0.0"])
def test_a_database_volume_of_size_zero_is_refused_by_name(size: str) -> None:
    mariadb = obj("MariaDB", {"storage": {"size": size}, "rootPasswordSecretKeyRef": ROOT})
    assert m.validate_create(mariadb)[0].detail == "greater than zero storage size must be provided"

    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:database"]["storage"]["size"] = size

    messages = _refused_by_config(_prod_with(edit))
    assert any(msg.startswith("hpcforge:database.storage.size:") for msg in messages), messages


# --- config keys that map to immutable fields ----------------------------------------------------------------------

FIXED = "Fixed after the first deploy"
S3_TARGET = {"bucket": "hpc-backups", "endpoint": "s3.example.org", "accessKeyId": "AKIA", "secretAccessKey": "secret"}


def _s3(values: dict[str, Any]) -> None:
    values["hpcforge:backups"].pop("volume", None)
    values["hpcforge:backups"]["s3"] = dict(S3_TARGET)


def _volume(values: dict[str, Any]) -> None:
    values["hpcforge:backups"].pop("s3", None)
    values["hpcforge:backups"]["volume"] = {"size": "200Gi"}


def _edit_s3(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(values: dict[str, Any]) -> None:
        _s3(values)
        values["hpcforge:backups"]["s3"].update(changes)

    return edit


def _database(**changes: Any) -> Callable[[dict[str, Any]], None]:
    def edit(values: dict[str, Any]) -> None:
        for path, value in changes.items():
            node = values["hpcforge:database"]
            *parents, last = path.split("__")
            for step in parents:
                node = node.setdefault(step, {})
            node[last] = value

    return edit


def _kubernetes_storage_class(values: dict[str, Any]) -> None:
    values["hpcforge:kubernetes"]["storageClass"] = "other-class"


# (config key, base edit, changed edit, refused paths)
CHANGES: list[tuple[str, Callable[[dict[str, Any]], None] | None, Callable[[dict[str, Any]], None], set[tuple[str, str]]]] = [
    (
        "database.storage.storageClass",
        None,
        _database(storage__storageClass="other-class"),
        {("MariaDB", "spec.storage.storageClassName")},
    ),
    ("kubernetes.storageClass", None, _kubernetes_storage_class, {("MariaDB", "spec.storage.storageClassName")}),
    ("database.storage.size", None, _database(storage__size="50Gi"), {("MariaDB", "spec.storage")}),
    ("backups.maxRetention", None, _backups(maxRetention="360h"), {("Backup", "spec.maxRetention")}),
    ("backups.s3", None, _s3, {("Backup", "spec.storage")}),
    ("backups.volume", _s3, _volume, {("Backup", "spec.storage")}),
    ("backups.s3.bucket", _s3, _edit_s3(bucket="other-bucket"), {("Backup", "spec.storage")}),
    ("backups.s3.endpoint", _s3, _edit_s3(endpoint="minio.example.org:9000"), {("Backup", "spec.storage")}),
    ("backups.s3.region", _s3, _edit_s3(region="eu-west-1"), {("Backup", "spec.storage")}),
    ("backups.s3.prefix", _s3, _edit_s3(prefix="site"), {("Backup", "spec.storage")}),
    ("backups.s3.tls", _s3, _edit_s3(tls=False), {("Backup", "spec.storage")}),
    # may change
    ("database.storage.size (growing)", None, _database(storage__size="200Gi"), set()),
    ("database.cpu", None, _database(cpu="4"), set()),
    ("database.memory", None, _database(memory="12Gi", memoryLimit="16Gi"), set()),
    ("database.innodbBufferPoolSize", None, _database(innodbBufferPoolSize="2048M"), set()),
    ("database.innodbLogFileSize", None, _database(innodbLogFileSize="128M"), set()),
    ("database.maxAllowedPacket", None, _database(maxAllowedPacket="64M"), set()),
    ("backups.schedule", None, _backups(schedule="30 3 * * 0"), set()),
    ("backups.volume.size", None, _backups(volume={"size": "400Gi"}), set()),
    ("backups.s3.accessKeyId", _s3, _edit_s3(accessKeyId="AKIB", secretAccessKey="other"), set()),
]


def _render(
    tmp_path: Path, name: str, *edits: Callable[[dict[str, Any]], None] | None
) -> dict[tuple[str, str, str], dict[str, Any]]:
    def edit(values: dict[str, Any]) -> None:
        for one in edits:
            if one is not None:
                one(values)

    stack = run_stack_file(write_variant(tmp_path / name, "prod", edit), "prod")
    return {key(o): o for o in mariadb_objects(stack)}


@pytest.mark.parametrize(("config_key", "base", "change", "refused"), CHANGES, ids=[c[0] for c in CHANGES])
def test_which_config_changes_the_webhook_refuses(
    config_key: str,
    base: Callable[[dict[str, Any]], None] | None,
    change: Callable[[dict[str, Any]], None],
    refused: set[tuple[str, str]],
    tmp_path: Path,
) -> None:
    (tmp_path / "before").mkdir()
    (tmp_path / "after").mkdir()
    before = _render(tmp_path, "before", base)
    after = _render(tmp_path, "after", base, change)
    assert before.keys() == after.keys()
    by_kind = schemas()
    found = {(r.kind, r.path) for k, o in before.items() for r in m.update_refusals(o, after[k], by_kind[k[0]])}
    assert found == refused
    # docs/configuration.md says so, in the key's own row.
    row = next(line for line in DOCS.splitlines() if line.startswith(f"| `hpcforge:{config_key.split(' ', maxsplit=1)[0]}` |"))
    if refused and config_key != "database.storage.size":
        assert FIXED in row or "fixed after the first deploy" in row, row
    elif config_key == "database.storage.size":
        assert "never shrink" in row
    else:
        assert FIXED not in row, row


DOCS = (REPO / "docs" / "configuration.md").read_text()


def test_offline_admission_judges_a_change_against_the_deployed_stack_file(tmp_path: Path) -> None:
    """`offline admission --previous-config FILE`: the mariadb-operator objects both stack files declare are updates."""
    import sys

    def run(config: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "offline", "admission", "--stack", "prod", "--config", str(config)]
        command += ["--previous-config", str(REPO / "Pulumi.prod.yaml")]
        return subprocess.run(command, check=False, cwd=REPO, capture_output=True, text=True, timeout=600)

    same = run(REPO / "Pulumi.prod.yaml")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "ok   Backup database/slurm-acct-db-backup (update)" in same.stdout
    assert same.stdout.splitlines()[-1].endswith("0 of 5 mariadb-operator objects refused.")
    changed = run(write_variant(tmp_path, "prod", _backups(maxRetention="360h")))
    assert changed.returncode == 1
    assert "DENY Backup database/slurm-acct-db-backup (update)" in changed.stdout
    assert "'spec.maxRetention' field is immutable" in changed.stdout
    assert "Set by hpcforge:backups.maxRetention: fixed after the first deploy" in changed.stdout
