"""Slinky slurm-operator 1.2.1's admission rules (policies/admission/slinky/) against what hpcforge sends.

- Every Slinky custom resource of dev and prod, in both delivery modes, passes the webhook and the CRDs' CEL rules as
  created, without a warning; the webhook runs in hpcforge's deployment (the chart's values).
- Day two: hpcforge's config keys whose change the webhook refuses (`slurm.clusterName` only), and changes it admits.
- Create-time bounds: what the config accepts, the webhook accepts (clusterName, maxUnavailable).
- The rules themselves: the refused and admitted cases of upstream's own webhook tests, SlinkyProject/slurm-operator
  v1.2.1 internal/webhook/*_webhook_test.go (objects built as internal/utils/testutils/helpers.go builds them:
  namespace `default`, the same names and references), transcribed from Go into dicts; the rules those tests do not
  cover, with cases built from the webhook code they cite; and the Go helpers (`time.ParseDuration`, shared in
  policies/rules/gotime.py and tested on its own in tests/policies/rules/test_gotime.py, and the DNS subdomain regexp) against Go
  itself and apimachinery v0.36.2's own tables.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.layers.slurm.config import NodeSetConfig
from components.layers.slurm.objects import nodeset_spec
from components.site.loader import ConfigError, load_config
from offline.admission import verdicts as offline_admission
from offline.admission.verdicts import recorded_objects
from offline.program.engine import ProgramConfigError, RecordedStack
from policies.admission import slinky
from policies.rules import apimachinery, gotime
from policies.rules.podtemplates import kind_of, name_of
from tests.helpers import REPO, config_values, go_program, raw_config, require_shared, run_stack_file, write_variant
from tests.offline.admission.test_admission_program import chart_values, flipped

Obj = dict[str, Any]


def slinky_objects(stack: RecordedStack) -> list[Mapping[str, Any]]:
    objects = recorded_objects(stack).objects
    return objects


# --- hpcforge's own custom resources -------------------------------------------------------------------------------


def assert_admitted(objects: Sequence[Mapping[str, Any]], kinds: set[str]) -> None:
    verdicts = slinky.create_verdicts(objects)
    assert {kind_of(v.obj) for v in verdicts} == kinds, "the walk missed a kind"
    assert [v.message for v in verdicts if not v.admitted] == []
    assert [(name_of(v.obj), v.warnings) for v in verdicts if v.warnings] == []
    # The webhook was called for every one (none left out by the chart's scope).
    assert all(v.judged and v.operation == slinky.CREATE for v in verdicts)


def test_dev_and_prod_custom_resources_are_admitted(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    assert_admitted(slinky_objects(dev_stack), {"Accounting", "Controller", "LoginSet", "NodeSet"})
    assert_admitted(slinky_objects(prod_stack), {"Accounting", "Controller", "LoginSet", "NodeSet", "RestApi", "Token"})


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_other_delivery_mode_custom_resources_are_admitted(stack: str, tmp_path: Path) -> None:
    objects = slinky_objects(flipped(stack, tmp_path))
    assert_admitted(objects, {kind_of(o) for o in objects if slinky.is_slinky(o)})


def test_the_config_files_are_ones_slurm_knows(prod_stack: RecordedStack) -> None:
    """The Controller's configFileRefs ConfigMap holds only files the webhook knows (prod: cgroup.conf, gres.conf,
    topology.yaml, plugstack.conf), so neither a refusal nor a warning; a reserved file is refused."""
    objects = [copy.deepcopy(dict(o)) for o in slinky_objects(prod_stack)]
    extra = next(o for o in objects if kind_of(o) == "ConfigMap" and name_of(o) == "slurm-config-extra")
    assert set(extra["data"]) <= set(slinky.KNOWN_CONFIG_FILES) and "gres.conf" in extra["data"]
    extra["data"]["slurm.conf"] = "ClusterName=x\n"
    extra["data"]["site.conf"] = ""
    [controller] = [v for v in slinky.create_verdicts(objects) if kind_of(v.obj) == "Controller"]
    assert controller.errors == ("the configFile is reserved for slurm-operator use: slurm.conf",)
    assert controller.warnings == (
        "the configFile is unknown to Slurm, make sure to include it in another config file otherwise it is ignored: site.conf",
    )
    assert controller.message == (
        'admission webhook "controller-v1beta1.kb.io" denied the request: the configFile is reserved for '
        "slurm-operator use: slurm.conf"
    )


def test_a_controller_whose_config_map_is_missing_is_refused(dev_stack: RecordedStack) -> None:
    objects = [o for o in slinky_objects(dev_stack) if not (kind_of(o) == "ConfigMap" and name_of(o) == "slurm-config-extra")]
    [controller] = [v for v in slinky.create_verdicts(objects) if kind_of(v.obj) == "Controller"]
    assert controller.errors == ('configmaps "slurm-config-extra" not found',)


def test_the_webhook_runs_in_hpcforges_deployment(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    """hpcforge leaves `webhook.enabled`, `webhook.namespaces` and the failure policy at the chart's defaults: the
    webhook judges the Slurm namespace in both stacks (a helm.v4.Chart in dev, an Argo CD Application in prod)."""
    for stack in (dev_stack, prod_stack):
        scope = slinky.webhook_scope(chart_values(stack, "slurm-operator"))
        # offline admission's reading: the family's scope from the values the recorded stack gives the chart
        offline_scope = slinky.scope_of(offline_admission.chart_values(stack, slinky.CHART))
        assert scope == slinky.WebhookScope(True, (), "Fail") == offline_scope
        assert scope.judges("slurm") and not scope.judges("kube-system")
    assert not slinky.webhook_scope({"webhook": {"enabled": False}}).judges("slurm")
    only = slinky.webhook_scope({"webhook": {"namespaces": "hpc, lab"}})
    assert only.namespaces == ("hpc", "lab") and only.judges("lab") and not only.judges("slurm")
    # A CR the webhook does not judge is still held to the CRD's rules.
    unjudged = slinky.validate_create(nodeset("x", None), scope=slinky.WebhookScope(enabled=False))
    assert unjudged.admitted and not unjudged.judged and "the webhook does not run here" in unjudged.message
    assert not slinky.validate_create(nodeset("x", None)).admitted


def test_chart_webhook_defaults_are_the_charts() -> None:
    values = yaml.safe_load(require_shared("charts", "slurm-operator-1.2.1", "values.yaml").read_text())
    webhook = values["webhook"]
    assert webhook["enabled"] == slinky.CHART_WEBHOOK_DEFAULTS["enabled"]
    assert webhook["namespaces"] == slinky.CHART_WEBHOOK_DEFAULTS["namespaces"]
    assert webhook["validating"] == slinky.CHART_WEBHOOK_DEFAULTS["validating"]
    assert webhook["mutating"]["failurePolicy"] == "Ignore"  # pods/binding only: no CR is mutated


def test_the_crds_cel_rules_are_the_ones_reproduced() -> None:
    """Every `x-kubernetes-validations` message of the Slinky CRDs is one crd_rule_errors can give."""
    source = Path(slinky.__file__).with_name("crd.py").read_text()  # the module of crd_rule_errors
    found = set()
    for path in require_shared("crds", "slurm-operator-1.2.1").glob("*.yaml"):
        text = path.read_text()
        for line in text.splitlines():
            if line.strip().startswith("- message:"):
                found.add(line.split("message:", 1)[1].strip())
    assert found, "no CEL rule found: the CRDs moved"
    for message in found:
        assert message.split(" when ")[0] in source, message


def test_offline_admission_reports_a_refused_custom_resource(tmp_path: Path) -> None:
    bad = with_spec(nodeset("bad", "slurm"), "updateStrategy.rollingUpdate.maxUnavailable", 0)
    bad["metadata"]["namespace"] = "slurm"
    (tmp_path / "nodeset.yaml").write_text(yaml.safe_dump(bad))
    result = subprocess.run(
        [sys.executable, "-m", "offline", "admission", "--stack", "dev", "--objects", str(tmp_path)],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr
    assert (
        'DENY CREATE NodeSet slurm/bad: admission webhook "nodeset-v1beta1.kb.io" denied the request: maxUnavailable '
        "must be > 0, got 0" in result.stdout
    )
    assert "ok   CREATE Controller slurm/slurm: admitted" in result.stdout
    assert "1 of 6 Slinky custom resources refused" in result.stdout.splitlines()[-1]


# --- day two: the config keys behind fields that may not change ---------------------------------------------------

# Each field ValidateUpdate refuses to change, read from a custom resource as the webhook reads it.
IMMUTABLE: dict[str, dict[str, Callable[[Mapping[str, Any]], Any]]] = {
    "Controller": {
        "ClusterName()": slinky.cluster_name,
        "spec.slurmKeyRef.name": lambda o: slinky.ref_name((o.get("spec") or {}).get("slurmKeyRef")),
        "AuthJwtRef()": slinky.auth_jwt_ref,
        "spec.persistence.enabled": slinky.persistence_enabled,
    },
    "Accounting": {"AuthJwtRef()": slinky.auth_jwt_ref},
    "NodeSet": {
        "spec.controllerRef": lambda o: slinky.ref_name((o.get("spec") or {}).get("controllerRef")),
        "spec.volumeClaimTemplates": lambda o: (o.get("spec") or {}).get("volumeClaimTemplates"),
    },
    "LoginSet": {"spec.controllerRef": lambda o: slinky.ref_name((o.get("spec") or {}).get("controllerRef"))},
}


def immutable_values(objects: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Any]:
    """(kind, field) -> the set of values that field has across the stack's objects of that kind."""
    found: dict[tuple[str, str], Any] = {}
    for obj in objects:
        for field, read in IMMUTABLE.get(kind_of(obj), {}).items():
            found.setdefault((kind_of(obj), field), set()).add(repr(read(obj)))
    return found


def test_only_the_cluster_name_comes_from_config(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    """Between dev and prod (different sites, clusters, nodesets, accounting, restapi), every field the webhook holds
    fixed is the same constant, except the Controller's ClusterName, which is `hpcforge:slurm.clusterName`."""
    dev, prod = immutable_values(slinky_objects(dev_stack)), immutable_values(slinky_objects(prod_stack))
    differing = {key for key in dev.keys() | prod.keys() if dev.get(key) != prod.get(key)}
    assert differing == {("Controller", "ClusterName()")}
    assert dev[("Controller", "ClusterName()")] == {repr(config_values("dev")["hpcforge:slurm"]["clusterName"])}
    assert prod[("Controller", "ClusterName()")] == {repr(config_values("prod")["hpcforge:slurm"]["clusterName"])}
    assert prod[("NodeSet", "spec.volumeClaimTemplates")] == {"None"}  # hpcforge never sets them
    assert prod[("Controller", "spec.persistence.enabled")] == {"True"}


def variant(tmp_path: Path, stack: str, edit: Callable[[dict[str, Any]], None], name: str) -> list[Mapping[str, Any]]:
    directory = tmp_path / name
    directory.mkdir()
    return slinky_objects(run_stack_file(write_variant(directory, stack, edit), stack))


def test_changing_the_cluster_name_is_refused_on_the_second_day(dev_stack: RecordedStack, tmp_path: Path) -> None:
    def rename(values: dict[str, Any]) -> None:
        values["hpcforge:slurm"]["clusterName"] = "devlab2"

    verdicts = slinky.update_verdicts(slinky_objects(dev_stack), variant(tmp_path, "dev", rename, "renamed"))
    refused = [v for v in verdicts if not v.admitted]
    assert [(kind_of(v.obj), v.message) for v in refused] == [
        (
            "Controller",
            'admission webhook "controller-v1beta1.kb.io" denied the request: cannot change ClusterName after deployment',
        )
    ]
    assert len(verdicts) == 5  # every other custom resource was updated and admitted
    # The config reference says so.
    doc = (REPO / "docs" / "configuration.md").read_text()
    row = next(line for line in doc.splitlines() if line.startswith("| `hpcforge:slurm.clusterName`"))
    assert "cannot change ClusterName after deployment" in row


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(values: dict[str, Any]) -> None:
        target: Any = values
        *steps, last = path.split("/")
        for step in steps:
            target = target[int(step)] if isinstance(target, list) else target[step]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return edit


def _accounting_off(values: dict[str, Any]) -> None:
    values["hpcforge:slurm"]["accounting"]["enabled"] = False
    values["hpcforge:slurm"].pop("accounts")  # accounting as code needs slurmdbd


DAY_TWO_CHANGES: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("nodeset replicas", _set("hpcforge:slurm/nodesets/0/replicas", 0)),
    ("nodeset maxUnavailable", _set("hpcforge:slurm/nodesets/0/maxUnavailable", "50%")),
    ("nodeset resources", _set("hpcforge:slurm/nodesets/0/cpu", "1")),
    ("login resources", _set("hpcforge:slurm/login/memoryLimit", "2Gi")),
    ("controller resources", _set("hpcforge:slurm/controller/memory", "1Gi")),
    ("controller storage", _set("hpcforge:slurm/controller/storage/size", "8Gi")),
    ("scheduler parameters", _set("hpcforge:slurm/controller/scheduler", {"parameters": ["bf_continue"]})),
    ("accounting off", _accounting_off),
    ("restapi on", _set("hpcforge:slurm/restapi", {"enabled": True, "replicas": 2})),
]


@pytest.mark.parametrize(("case", "edit"), DAY_TWO_CHANGES, ids=[c[0] for c in DAY_TWO_CHANGES])
def test_other_config_changes_are_admitted_as_updates(
    dev_stack: RecordedStack, tmp_path: Path, case: str, edit: Callable[[dict[str, Any]], None]
) -> None:
    new = variant(tmp_path, "dev", edit, "changed")
    old = slinky_objects(dev_stack)
    verdicts = slinky.update_verdicts(old, new)
    assert verdicts and [v.message for v in verdicts if not v.admitted] == [], case
    assert all(v.admitted for v in slinky.create_verdicts(new)), case
    before = {slinky.object_key(o): o for o in old if slinky.is_slinky(o)}
    after = {slinky.object_key(o): o for o in new if slinky.is_slinky(o)}
    assert before != after, f"{case}: the edit changed no custom resource"


# --- create-time bounds: what the config accepts, the webhook accepts ----------------------------------------------


def test_cluster_name_bound_is_the_webhooks(tmp_path: Path) -> None:
    values = config_values("dev")
    values["hpcforge:slurm"]["clusterName"] = "c" * 40
    load_config(raw_config(values))  # 40 characters: accepted here ...
    controller = {"apiVersion": "slinky.slurm.net/v1beta1", "kind": "Controller", "metadata": {"name": "slurm"}}
    controller["spec"] = {**keys(), "clusterName": "c" * 40}
    assert slinky.validate_create(controller).admitted  # ... and by the webhook
    controller["spec"]["clusterName"] = "c" * 41
    assert slinky.validate_create(controller).errors == ("ClusterName exceeds 40 characters (41): " + "c" * 41,)

    def too_long(values: dict[str, Any]) -> None:
        values["hpcforge:slurm"]["clusterName"] = "c" * 41

    with pytest.raises(ProgramConfigError) as raised:
        run_stack_file(write_variant(tmp_path, "dev", too_long), "dev")
    assert raised.value.registered == 0
    assert any(
        m.startswith("hpcforge:slurm.clusterName: '" + "c" * 41 + "' is not a Slurm ClusterName") and "webhook" in m
        for m in raised.value.messages
    ), raised.value.messages


MAX_UNAVAILABLE_INPUTS: list[Any] = [0, 1, 2, -1, "0", "1", "0%", "00%", "1%", "25%", "100%", "101%", "x", 1.5, True]


@pytest.mark.parametrize("value", MAX_UNAVAILABLE_INPUTS, ids=[repr(v) for v in MAX_UNAVAILABLE_INPUTS])
def test_max_unavailable_the_config_accepts_is_admitted(value: Any) -> None:
    try:
        config = NodeSetConfig.model_validate(
            {"name": "cpu", "cpu": "1", "memory": "1Gi", "replicas": 4, "maxUnavailable": value}
        )
    except ValueError:
        assert repr(value) in ("0", "-1", "'0'", "'0%'", "'00%'", "'101%'", "'x'", "1.5", "True")
        return
    spec = nodeset_spec(config, node_selector={})
    obj = {"apiVersion": "slinky.slurm.net/v1beta1", "kind": "NodeSet", "metadata": {"name": "cpu"}, "spec": spec}
    assert slinky.validate_create(obj).admitted, spec["updateStrategy"]


def test_config_errors_name_the_key() -> None:
    values = config_values("dev")
    values["hpcforge:slurm"]["nodesets"][0]["maxUnavailable"] = "0%"
    with pytest.raises(ConfigError, match=r"hpcforge:slurm\.nodesets\[0\]\.maxUnavailable: '0%' must be between"):
        load_config(raw_config(values))


# --- upstream's webhook tests, replayed ----------------------------------------------------------------------------


def secret_key_ref(name: str, suffix: str, key: str) -> Obj:
    """testutils NewSlurmKeyRef / NewJwtKeyRef / NewSssdConfRef: `<name>-<suffix>`, key `<key>`."""
    return {"name": f"{name}-{suffix}", "key": key}


ZERO_REF: Obj = {"key": ""}
"""A zero corev1.SecretKeySelector as Go marshals it (`name` omitempty, `key` not)."""


def controller(name: str, slurm_key: Obj | None = None, jwt_key: Obj | None = None) -> Obj:
    """testutils.NewController(name, slurmKeyRef, jwtKeyRef, nil)."""
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "Controller",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "slurmKeyRef": slurm_key or ZERO_REF,
            "jwtKeyRef": jwt_key or ZERO_REF,
            "slurmctld": {"image": "slurmctld"},
            "reconfigure": {"image": "slurmctld"},
            "logfile": {"image": "alpine"},
            "persistence": {"enabled": False},
        },
    }


def nodeset(name: str, controller_name: str | None, replicas: int = 1) -> Obj:
    """testutils.NewNodeset(name, controller, replicas)."""
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "NodeSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "controllerRef": {"name": controller_name} if controller_name else {},
            "replicas": replicas,
            "slurmd": {"image": "slurmd"},
        },
    }


def loginset(name: str, controller_name: str | None, sssd: Obj) -> Obj:
    """testutils.NewLoginset(name, controller, sssdConfRef)."""
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "LoginSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "controllerRef": {"name": controller_name} if controller_name else {},
            "login": {"image": "login"},
            "initconf": {"image": "login"},
            "sssdConfRef": sssd,
        },
    }


def accounting(name: str, jwt_key: Obj) -> Obj:
    """testutils.NewAccounting(name, {}, jwtKeyRef, {})."""
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "Accounting",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "slurmKeyRef": ZERO_REF,
            "jwtKeyRef": jwt_key,
            "storageConfig": {"host": "mariadb", "passwordKeyRef": ZERO_REF},
            "slurmdbd": {"image": "slurmdbd"},
        },
    }


def restapi(name: str, controller_name: str) -> Obj:
    """testutils.NewRestapi(name, controller)."""
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "RestApi",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"controllerRef": {"name": controller_name}, "slurmrestd": {"image": "slurmrestd"}},
    }


def token(name: str, jwt_key: Obj) -> Obj:
    """testutils.NewToken(name, secret), then `Spec.JwtKeyRef = ...` as the tests set it."""
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "Token",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"username": "slurm", "jwtKeyRef": jwt_key},
    }


def keys() -> Obj:
    return {"slurmKeyRef": {"name": "k", "key": "slurm.key"}, "jwtKeyRef": {"name": "j", "key": "jwt.key"}}


def with_spec(obj: Obj, path: str, value: Any) -> Obj:
    out = copy.deepcopy(obj)
    target = out["spec"]
    *steps, last = path.split(".")
    for step in steps:
        target = target.setdefault(step, {})
    target[last] = value
    return out


def external_ips(obj: Obj) -> Obj:
    return with_spec(obj, "service.spec.externalIPs", ["169.254.169.254"])


LONG = "thisclusternameisverylongandthereforewillcausecontrollerfailure"

# (upstream test: file and It(...), object, expected error (None: admitted)).
CREATE_CASES: list[tuple[str, Obj, str | None]] = [
    (
        "controller: Should deny if ClusterName exceeds 40 characters",
        controller(LONG),
        f"ClusterName exceeds 40 characters (71): default_{LONG}",
    ),
    ("controller: Should admit if ... ClusterName is compliant", controller("clustername"), None),
    (
        "nodeset: Should deny if controllerRef.name is empty",
        nodeset("test-nodeset", None),
        "controllerRef.name must not be empty",
    ),
    (
        "nodeset: Should deny if maxUnavailable is 0",
        with_spec(nodeset("test-nodeset", "some-controller"), "updateStrategy.rollingUpdate.maxUnavailable", 0),
        "maxUnavailable must be > 0, got 0",
    ),
    (
        "nodeset: Should deny if maxUnavailable is 0%",
        with_spec(nodeset("test-nodeset", "some-controller"), "updateStrategy.rollingUpdate.maxUnavailable", "0%"),
        "maxUnavailable must not be 0%",
    ),
    (
        "nodeset: Should deny if SSH is enabled without sssdConfRef",
        with_spec(nodeset("test-nodeset", "some-controller"), "ssh.enabled", True),
        "ssh.sssdConfRef.name must not be empty when ssh is enabled",
    ),
    (
        "nodeset: Should admit if template hostname is a valid generateName-style prefix",
        with_spec(nodeset("test-nodeset", "valid-controller"), "template.spec.hostname", "foo-"),
        None,
    ),
    (
        "nodeset: Should deny if template hostname contains a newline",
        with_spec(nodeset("test-nodeset", "valid-controller"), "template.spec.hostname", "evil\nSchedulerParameters=malicious"),
        "template.spec.hostname: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    ("nodeset: Should admit if all required fields are provided", nodeset("test-nodeset", "valid-controller"), None),
    (
        "loginset: Should deny if controllerRef.name is empty",
        loginset("test-loginset", None, secret_key_ref("test", "sssdconf", "sssd.conf")),
        "controllerRef.name must not be empty",
    ),
    (
        "loginset: Should deny if sssdConfRef.name is empty",
        loginset("test-loginset", "some-controller", ZERO_REF),
        "sssdConfRef.name must not be empty",
    ),
    (
        "loginset: Should admit if all required fields are provided",
        loginset("test-loginset", "valid-controller", secret_key_ref("test", "sssdconf", "sssd.conf")),
        None,
    ),
    ("accounting: Should admit a Create for a CRD that passes Kube validation", accounting("test-accounting", ZERO_REF), None),
    ("restapi: Should admit a Create for a CRD that passes Kube validation", restapi("test", "cluster"), None),
    ("token: Should admit a Create for a CRD that passes Kube validation", token("test", {"key": "jwt.key"}), None),
]


@pytest.mark.parametrize(("case", "obj", "error"), CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_upstream_create_cases(case: str, obj: Obj, error: str | None) -> None:
    _, errors = slinky.validate_create_errors(obj)
    assert errors == ([error] if error else []), case


WARNING_CASES: list[tuple[Obj, str]] = [
    (external_ips(controller("clustername")), "ExternalIPs may not be set for controller service"),
    (
        external_ips(loginset("l", "c", secret_key_ref("test", "sssdconf", "sssd.conf"))),
        "ExternalIPs may not be set for loginset service",
    ),
    (external_ips(accounting("test-accounting", ZERO_REF)), "ExternalIPs may not be set for accounting service"),
    (external_ips(restapi("test", "cluster")), "ExternalIPs may not be set for restapi services"),
]


@pytest.mark.parametrize(("obj", "warning"), WARNING_CASES, ids=[kind_of(c[0]) for c in WARNING_CASES])
def test_upstream_external_ips_cases_warn_and_admit(obj: Obj, warning: str) -> None:
    """`Should warn if external IPs are set` (controller, loginset, accounting, restapi): a warning, admitted."""
    verdict = slinky.validate_create(obj)
    assert verdict.admitted and warning in verdict.warnings


JWT_TEST = {"name": "test-jwtkey", "key": "jwt.key"}
JWT_TEST2 = {"name": "test2-jwtkey", "key": "jwt.key"}

UPDATE_CASES: list[tuple[str, Obj, Obj, str | None]] = [
    (
        "controller: Should reject changes to ClusterName",
        controller("cluster2"),
        controller("cluster"),
        "cannot change ClusterName after deployment",
    ),
    (
        "controller: Should reject changes to SlurmKeyRef",
        controller("cluster", secret_key_ref("test", "slurmkey", "slurm.key")),
        controller("cluster", secret_key_ref("test2", "slurmkey", "slurm.key")),
        "cannot change SlurmKeyRef after deployment",
    ),
    (
        "controller: Should reject changes to JwtKeyRef",
        controller("cluster", jwt_key=JWT_TEST),
        controller("cluster", jwt_key=JWT_TEST2),
        slinky.JWT_IMMUTABLE,
    ),
    (
        "controller: Should reject changes to controller.persistence.enabled",
        controller("cluster"),
        with_spec(controller("cluster"), "persistence.enabled", True),
        "cannot change persistence.enabled after deployment",
    ),
    (
        "controller: Should admit if changes pass validation",
        controller("cluster"),
        with_spec(controller("cluster"), "extraConf", "SchedulerParameters=allow_zero_lic"),
        None,
    ),
    (
        "nodeset: Should reject changes to controllerRef",
        nodeset("test-nodeset", "old-controller"),
        nodeset("test-nodeset", "new-controller"),
        "cannot change controllerRef after deployment",
    ),
    (
        "nodeset: Should reject changes to volumeClaimTemplates",
        nodeset("test-nodeset", "some-controller"),
        with_spec(nodeset("test-nodeset", "some-controller"), "volumeClaimTemplates", [{"metadata": {"name": "data"}}]),
        "cannot change volumeClaimTemplates after deployment",
    ),
    (
        "nodeset: Should admit if no immutable fields change",
        nodeset("test-nodeset", "valid-controller"),
        nodeset("test-nodeset", "valid-controller", 2),
        None,
    ),
    (
        "loginset: Should reject changes to controllerRef",
        loginset("test-loginset", "old-controller", secret_key_ref("test", "sssdconf", "sssd.conf")),
        loginset("test-loginset", "new-controller", secret_key_ref("test", "sssdconf", "sssd.conf")),
        "cannot change controllerRef after deployment",
    ),
    (
        "loginset: Should admit if no immutable fields change",
        loginset("test-loginset", "valid-controller", secret_key_ref("test", "sssdconf", "sssd.conf")),
        with_spec(loginset("test-loginset", "valid-controller", secret_key_ref("test", "sssdconf", "sssd.conf")), "replicas", 2),
        None,
    ),
    (
        "accounting: Should deny an Update if JwtRef has changed",
        accounting("test-accounting", {"name": "test-secret-jwtkey", "key": "jwt.key"}),
        accounting("test-accounting", {"name": "test-secret-2-jwtkey", "key": "jwt.key"}),
        slinky.JWT_IMMUTABLE,
    ),
    (
        "accounting: Should admit an Update if JwtRef has not changed",
        accounting("test-accounting", {"name": "test-secret-2-jwtkey", "key": "jwt.key"}),
        accounting("test-accounting", {"name": "test-secret-2-jwtkey", "key": "jwt.key"}),
        None,
    ),
    (
        "restapi: Should admit an Update for a CRD that passes Kube validation",
        restapi("test", "cluster"),
        with_spec(restapi("test", "cluster"), "replicas", 2),
        None,
    ),
    (
        "token: Should deny if a required field is empty",
        token("token", JWT_TEST),
        token("token", JWT_TEST2),
        slinky.JWT_IMMUTABLE,
    ),
    ("token: Should admit if all required fields are provided", token("token", JWT_TEST), token("token", JWT_TEST), None),
]


@pytest.mark.parametrize(("case", "old", "new", "error"), UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
def test_upstream_update_cases(case: str, old: Obj, new: Obj, error: str | None) -> None:
    _, errors = slinky.validate_update_errors(old, new)
    assert errors == ([error] if error else []), case


# --- rules upstream's tests do not cover (built from the code they cite) -------------------------------------------


def test_scheduled_update_duration_at_least_a_minute() -> None:
    """nodeset_webhook.go validateNodeSet: a non-zero `scheduledUpdate.duration` under one minute is refused."""
    base = nodeset("n", "c")
    for duration, refused in (("59s", True), ("1m", False), ("30m", False), ("0s", False), ("-5m", True), ("0.5m", True)):
        obj = with_spec(base, "updateStrategy.scheduledUpdate.duration", duration)
        errors = slinky.validate_create_errors(obj)[1]
        assert (errors == ["UpdateStrategy.ScheduledUpdate.Duration must be at least 1 minute"]) is refused, duration
    # A duration metav1.Duration cannot decode: the webhook cannot read the object at all.
    assert slinky.validate_create_errors(with_spec(base, "updateStrategy.scheduledUpdate.duration", "1d"))[1] == [
        'time: unknown unit "d" in duration "1d"'
    ]


def test_a_json_string_max_unavailable_is_only_refused_as_0_percent() -> None:
    """intstr decodes a JSON string as a String: the webhook refuses "0%" but not "0" (only an Int is checked < 1)."""
    base = nodeset("n", "c")
    for value, refused in (("0", False), ("00%", False), ("0%", True), (-1, True), (1, False)):
        obj = with_spec(base, "updateStrategy.rollingUpdate.maxUnavailable", value)
        assert bool(slinky.validate_create_errors(obj)[1]) is refused, value


def test_cluster_name_defaults_to_namespace_and_name() -> None:
    obj = controller("slurm")
    obj["metadata"]["namespace"] = "hpc"
    assert slinky.cluster_name(obj) == "hpc_slurm"
    assert slinky.cluster_name(with_spec(obj, "clusterName", "site")) == "site"
    # UPDATE from an implicit to the same explicit name is no change; the length check is only on CREATE.
    assert slinky.validate_update_errors(obj, with_spec(obj, "clusterName", "hpc_slurm"))[1] == []
    long_old = with_spec(obj, "clusterName", "c" * 41)
    assert slinky.validate_update_errors(long_old, copy.deepcopy(long_old))[1] == []


def test_jwt_ref_reads_the_deprecated_field_too() -> None:
    """AuthJwtRef: jwtKeyRef, else jwtHs256KeyRef: moving the same key between them is no change."""
    old = controller("c")
    old["spec"].pop("jwtKeyRef")
    old["spec"]["jwtHs256KeyRef"] = JWT_TEST
    assert slinky.validate_update_errors(old, controller("c", jwt_key=JWT_TEST))[1] == []
    assert slinky.validate_update_errors(old, controller("c", jwt_key=JWT_TEST2))[1] == [slinky.JWT_IMMUTABLE]


def test_several_errors_are_aggregated_as_go_does() -> None:
    old = controller("a", secret_key_ref("x", "slurmkey", "slurm.key"))
    new = with_spec(controller("b", secret_key_ref("y", "slurmkey", "slurm.key")), "persistence.enabled", True)
    verdict = slinky.validate_update(old, new)
    assert verdict.message == (
        'admission webhook "controller-v1beta1.kb.io" denied the request: [cannot change ClusterName after deployment, '
        "cannot change SlurmKeyRef after deployment, cannot change persistence.enabled after deployment]"
    )
    assert apimachinery.aggregate_message(["a", "a"]) == "a"


def test_volume_claim_templates_compare_semantically() -> None:
    """Semantic.DeepEqual: nil and empty lists alike, quantities by value."""
    claim = {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    same = {"metadata": {"name": "data", "labels": {}}, "spec": {"resources": {"requests": {"storage": "1024Mi"}}}}
    base = nodeset("n", "c")
    assert slinky.validate_update_errors(with_spec(base, "volumeClaimTemplates", []), base)[1] == []
    assert (
        slinky.validate_update_errors(
            with_spec(base, "volumeClaimTemplates", [claim]), with_spec(base, "volumeClaimTemplates", [same])
        )[1]
        == []
    )
    bigger = copy.deepcopy(claim)
    bigger["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert slinky.validate_update_errors(
        with_spec(base, "volumeClaimTemplates", [claim]), with_spec(base, "volumeClaimTemplates", [bigger])
    )[1] == ["cannot change volumeClaimTemplates after deployment"]


CEL_CASES: list[tuple[Obj, str]] = [
    ({**controller("c"), "spec": {"clusterName": "c"}}, "slurmKeyRef must be set when external is false"),
    (
        {**controller("c"), "spec": {"slurmKeyRef": {"name": "k", "key": "k"}}},
        "jwtKeyRef or jwtHs256KeyRef must be set when external is false",
    ),
    ({**controller("c"), "spec": {"external": True}}, "externalConfig must be set when external is true"),
    ({**accounting("a", ZERO_REF), "spec": {"jwtKeyRef": JWT_TEST}}, "slurmKeyRef must be set when external is false"),
    (
        with_spec(nodeset("n", "c"), "updateStrategy.type", "ScheduledUpdate"),
        "scheduledUpdate.startTime and scheduledUpdate.duration are required when type is ScheduledUpdate",
    ),
    ({**token("t", JWT_TEST), "spec": {"username": "slurm"}}, "jwtKeyRef or jwtHs256KeyRef must be set"),
]


@pytest.mark.parametrize(("obj", "message"), CEL_CASES, ids=[f"{kind_of(c[0])}-{i}" for i, c in enumerate(CEL_CASES)])
def test_crd_cel_rules(obj: Obj, message: str) -> None:
    verdict = slinky.validate_create(obj)
    assert not verdict.admitted and any(error.endswith(message) for error in verdict.rule_errors), verdict.rule_errors
    assert verdict.errors == ()  # the API server stops before calling the webhook


def test_crd_cel_rules_admit_what_they_should() -> None:
    scheduled = with_spec(
        nodeset("n", "c"), "updateStrategy", {"type": "ScheduledUpdate", "scheduledUpdate": {"startTime": "2026-12-01T00:00:00Z"}}
    )
    assert slinky.crd_rule_errors(scheduled) == []
    assert slinky.crd_rule_errors({**controller("c"), "spec": {"external": True, "externalConfig": {"host": "h"}}}) == []
    assert slinky.crd_rule_errors(token("t", JWT_TEST)) == []


# --- the Go helpers ------------------------------------------------------------------------------------------------


# apimachinery v0.36.2 pkg/api/validation/generic_test.go TestMaskTrailingDash.
MASK_CASES = [("", ""), ("-", "-"), ("-foo", "-foo"), ("-foo-", "-foa"), ("b-", "a"), ("ab", "ab")]


@pytest.mark.parametrize(("before", "after"), MASK_CASES)
def test_mask_trailing_dash(before: str, after: str) -> None:
    assert slinky.mask_trailing_dash(before) == after


# apimachinery v0.36.2 pkg/util/validation/validation_test.go TestIsDNS1123Subdomain.
GOOD_SUBDOMAINS = [
    *["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2"],
    *["a.a", "ab.a", "abc.a", "a1.a", "a-1.a", "a--1--2--b.a", "a.1", "ab.1", "abc.1", "a1.1", "a-1.1", "a--1--2--b.1"],
    *["0.a", "01.a", "012.a", "1a.a", "1-a.a", "1--a--b--2", "0.1", "01.1", "012.1", "1a.1", "1-a.1", "1--a--b--2.1"],
    *["a.b.c.d.e", "aa.bb.cc.dd.ee", "1.2.3.4.5", "11.22.33.44.55"],
    "a" * 253,
]
BAD_SUBDOMAINS = [
    *["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1"],
    *["_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a..b", "1.", ".1", "1..2"],
    *[" ", "a ", " a", "a b", "1 ", " 1", "1 2", "A.a", "aB.a", "ab.A", "A1.a", "a1.A", "A.1", "aB.1", "A1.1", "1A.1"],
    *["0.A", "01.A", "012.A", "1A.a", "1a.A", "A.B.C.D.E", "AA.BB.CC.DD.EE", "a.B.c.d.e", "aa.bB.cc.dd.ee"],
    *["a@b", "a,b", "a_b", "a;b", "a:b", "a%b", "a?b", "a$b", "a" * 254],
]


def test_dns1123_subdomain_tables() -> None:
    assert [v for v in GOOD_SUBDOMAINS if apimachinery.is_dns1123_subdomain(v)] == []
    assert [v for v in BAD_SUBDOMAINS if not apimachinery.is_dns1123_subdomain(v)] == []
    assert apimachinery.is_dns1123_subdomain("a" * 254)[0] == "must be no more than 253 characters"


GO_HELPERS = """package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// What the webhook's helpers rest on, from Go's standard library: time.ParseDuration (metav1.Duration) and the
// DNS-1123 subdomain pattern of k8s.io/apimachinery (compiled by Go's regexp, anchored as apimachinery anchors it).
func main() {
	subdomain := regexp.MustCompile("^" + os.Args[1] + "$")
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		kind, value, _ := strings.Cut(scanner.Text(), "\\t")
		value = strings.ReplaceAll(value, "\\\\n", "\\n")
		switch kind {
		case "duration":
			d, err := time.ParseDuration(value)
			if err != nil {
				fmt.Println("error")
			} else {
				fmt.Println(int64(d))
			}
		case "subdomain":
			fmt.Println(subdomain.MatchString(value))
		}
	}
}
"""

DURATIONS = [
    *["0", "5s", "30s", "1478s", "-5s", "+5s", "-0", "+0", "5.0s", "5.6s", "5.s", ".5s", "1.0s", "1.00s", "1.004s"],
    *["1.0040s", "100.00100s", "10ns", "11us", "12µs", "12μs", "13ms", "14s", "15m", "16h", "3h30m", "10.5s4m"],
    *["-2m3.4s", "1h2m3s4ms5us6ns", "39h9m14.425s", "52763797000ns", "0.3333333333333333333h", "9007199254740993ns"],
    *["9223372036854775807ns", "9223372036854775.807us", "9223372036s854ms775us807ns", "-9223372036854775808ns"],
    *["0.100000000000000000000h", "0.830103483285477580700h", "59s", "1m", "0.5m", "1m0.000000001s"],
    *["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\x85\x85", "\xffff", "9223372036854775808ns"],
    *["9223372036854775810ns", "-9223372036854775809ns", "1.5", "1 s", "1s ", " 1s"],
]
SUBDOMAINS = [*GOOD_SUBDOMAINS, *BAD_SUBDOMAINS, "foo\n", "a\nb", "foo-", "evil\nSchedulerParameters=malicious"]


def test_go_helpers_agree_with_go(tmp_path: Path) -> None:
    """gotime.parse_duration (what the webhook's metav1.Duration decoding runs) against Go's time.ParseDuration (Go's own parseDurationTests and the failures of
    parseDurationErrorTests, plus overflow edges), and the DNS subdomain check against Go's regexp."""
    program = go_program(tmp_path, GO_HELPERS, "go-helpers")
    lines = [f"duration\t{d}" for d in DURATIONS] + [f"subdomain\t{s}".replace("\n", "\\n") for s in SUBDOMAINS]
    result = subprocess.run(
        [str(program), apimachinery.DNS1123_SUBDOMAIN],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answers = result.stdout.splitlines()
    assert len(answers) == len(lines)
    for value, answer in zip(DURATIONS, answers, strict=False):
        try:
            ours = str(gotime.parse_duration(value))
        except gotime.GoError:
            ours = "error"
        assert ours == answer, f"ParseDuration({value!r}): Go {answer}, here {ours}"
    for value, answer in zip(SUBDOMAINS, answers[len(DURATIONS) :], strict=True):
        ours = re_matches(value)
        assert ours == (answer == "true"), f"subdomain {value!r}: Go {answer}"


def re_matches(value: str) -> bool:
    """The regexp half of IsDNS1123Subdomain (the length check is separate)."""
    errors = apimachinery.is_dns1123_subdomain(value)
    return not [e for e in errors if e != "must be no more than 253 characters"]
