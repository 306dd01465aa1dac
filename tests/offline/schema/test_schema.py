"""Tier 3: every rendered object against the schema that will judge it.

Built-in kinds against the strict Kubernetes OpenAPI schema (kubernetes-validate), custom resources
against their upstream CRDs under ../shared/crds, and every Helm values key against the chart's own
values.yaml / values.schema.json under ../shared/charts. The negative tests prove each check bites.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from components.versions import ChartPin, Charts, Manifests
from offline.program.documents import CHART_API_VERSION, CHART_KIND, MANIFEST_KIND, render_documents
from offline.program.engine import RecordedStack
from offline.schema import crd as crd_schema
from offline.schema import kube as kube_schema
from offline.schema import validate as schema
from offline.schema import values as chart_values
from tests.helpers import config_values, require_shared

pytestmark = pytest.mark.schema


# --- fixtures and helpers --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared() -> Path:
    require_shared("crds")
    return require_shared("charts").parent


@pytest.fixture(scope="module")
def crd_index(shared: Path) -> crd_schema.CrdIndex:
    return crd_schema.load_crd_index(shared)


def kubernetes_version(stack: str) -> str:
    return str(config_values(stack)["hpcforge:kubernetes"]["version"])


def documents(recorded: RecordedStack) -> dict[str, dict[str, Any]]:
    return dict(render_documents(recorded))


def first_of_kind(docs: Mapping[str, dict[str, Any]], kind: str) -> tuple[str, dict[str, Any]]:
    for path, document in sorted(docs.items()):
        if document.get("kind") == kind:
            return path, copy.deepcopy(document)
    raise AssertionError(f"no {kind} rendered")


def chart_document(docs: Mapping[str, dict[str, Any]], chart: str) -> tuple[str, dict[str, Any]]:
    for path, document in sorted(docs.items()):
        if any(release.chart == chart for release in chart_values.helm_releases(path, document)):
            return path, copy.deepcopy(document)
    raise AssertionError(f"no document installs the {chart} chart")


def helm_values(document: dict[str, Any]) -> dict[str, Any]:
    """The values object of a HelmChart pseudo-document or an Argo CD Application (mutable)."""
    if document["kind"] == CHART_KIND:
        values: dict[str, Any] = document["spec"]["values"]
    else:
        values = document["spec"]["source"]["helm"]["valuesObject"]
    return values


STACKS = ["dev", "prod"]


@pytest.fixture(params=STACKS)
def stack(request: pytest.FixtureRequest, dev_stack: RecordedStack, prod_stack: RecordedStack) -> tuple[str, RecordedStack]:
    return request.param, dev_stack if request.param == "dev" else prod_stack


# --- the stacks as they are ------------------------------------------------------------------------


def test_every_rendered_document_is_valid(stack: tuple[str, RecordedStack], shared: Path) -> None:
    name, recorded = stack
    rendered = render_documents(recorded)
    report = schema.check_documents(rendered, kubernetes_version(name), shared)
    assert report.errors == [], f"{name}: {len(report.errors)} schema errors:\n" + "\n".join(report.errors)
    assert report.builtin + report.custom + report.pseudo == len(rendered)
    assert report.builtin > 0 and report.custom > 0 and report.charts > 0


def test_every_chart_is_checked(stack: tuple[str, RecordedStack], shared: Path) -> None:
    """Each HelmChart (pulumi delivery) or chart Application (argocd delivery) yields a checked release."""
    name, recorded = stack
    rendered = render_documents(recorded)
    releases = [r for path, d in rendered for r in chart_values.helm_releases(path, d)]
    charts = [
        d
        for _, d in rendered
        if d["kind"] == CHART_KIND or (d["kind"] == "Application" and d["spec"].get("source", {}).get("chart"))
    ]
    assert len(releases) == len(charts) > 0
    for release in releases:
        assert chart_values.find_pin(release.chart, release.version) is not None, (
            f"{release.document}: {release.chart} {release.version}"
        )
    assert schema.check_documents(rendered, kubernetes_version(name), shared).charts == len(releases)


def test_custom_resources_use_shared_crds(stack: tuple[str, RecordedStack], shared: Path) -> None:
    """The program declares the NetworkAttachmentDefinition CRD itself; the upstream copy in shared/ wins."""
    name, recorded = stack
    report = schema.check_documents(render_documents(recorded), kubernetes_version(name), shared)
    assert report.crd_sources, "no custom resource was validated"
    assert all(source.startswith("crds/") for source in report.crd_sources.values()), report.crd_sources
    nad = report.crd_sources.get("k8s.cni.cncf.io/v1 NetworkAttachmentDefinition")
    assert nad in (None, "crds/multus-cni-4.3.0/NetworkAttachmentDefinition.yaml")


def test_builtin_verdicts_agree_with_kubernetes_validate(stack: tuple[str, RecordedStack]) -> None:
    """Our cached validator reads the same strict schemas as `kubernetes_validate.validate`; verdicts match,
    except that we forgive a "[secret]" placeholder where the real value is not a string."""
    name, recorded = stack
    version = kubernetes_version(name)
    checked = 0
    for path, document in render_documents(recorded):
        if not kube_schema.is_builtin(document, version):
            continue
        checked += 1
        ours = kube_schema.validate_builtin(document, version)
        try:
            kubernetes_validate.validate(document, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            assert ours or error.instance == kube_schema.SECRET, f"{path}: kubernetes-validate: {error.message}"
        else:
            assert ours == [], f"{path}: {ours}"
    assert checked > 0


# --- Kubernetes versions ---------------------------------------------------------------------------


def test_kubernetes_version_maps_to_a_shipped_schema_set() -> None:
    assert "1.33.0" in kube_schema.supported_kubernetes_versions()
    assert kube_schema.kubernetes_schema_version("1.33") == "1.33.0"
    assert kube_schema.kubernetes_schema_version("v1.33.4") == "1.33.0"
    for bad in ("1.99", "1.10", "latest"):
        with pytest.raises(ValueError):
            kube_schema.kubernetes_schema_version(bad)


def test_stack_kubernetes_versions_are_supported() -> None:
    for name in STACKS:
        kube_schema.kubernetes_schema_version(kubernetes_version(name))


def test_builtin_kinds_come_from_the_schema_set() -> None:
    kinds = kube_schema.builtin_kinds("1.33")
    assert kube_schema.GroupVersionKind("apps", "v1", "Deployment") in kinds
    assert kube_schema.GroupVersionKind("", "v1", "Secret") in kinds
    assert kube_schema.GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition") in kinds
    assert kube_schema.GroupVersionKind("apps", "v1beta1", "Deployment") not in kinds  # removed in 1.16
    assert kube_schema.GroupVersionKind("cert-manager.io", "v1", "Certificate") not in kinds


# --- built-in kinds --------------------------------------------------------------------------------


def test_unknown_field_in_a_deployment_fails(dev_stack: RecordedStack, shared: Path) -> None:
    path, deployment = first_of_kind(documents(dev_stack), "Deployment")
    deployment["spec"]["replica"] = 2
    assert "spec.replica: unknown field" in kube_schema.validate_builtin(deployment, "1.33")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, "1.33", strict=True)
    errors = schema.validate_documents([(path, deployment)], "1.33", shared)
    assert errors == [f"{path}: spec.replica: unknown field"]


def test_wrong_type_and_enum_in_a_pod_template_fail(dev_stack: RecordedStack) -> None:
    _, deployment = first_of_kind(documents(dev_stack), "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["ports"] = [{"containerPort": "http"}]
    container["imagePullPolicy"] = 3
    errors = kube_schema.validate_builtin(deployment, "1.33")
    assert any(e.startswith("spec.template.spec.containers[0].ports[0].containerPort:") for e in errors), errors
    assert any(e.startswith("spec.template.spec.containers[0].imagePullPolicy:") for e in errors), errors


def test_builtin_int_or_string_accepts_both() -> None:
    pdb: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "x", "namespace": "y"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
    }
    assert kube_schema.validate_builtin(pdb, "1.33") == []
    pdb["spec"]["minAvailable"] = "50%"
    assert kube_schema.validate_builtin(pdb, "1.33") == []
    pdb["spec"]["minAvailable"] = {"value": 1}
    assert kube_schema.validate_builtin(pdb, "1.33") != []


def test_secret_placeholder_is_not_an_error() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x", "namespace": "y"}, "data": {"a": "[secret]"}}
    assert kube_schema.validate_builtin(secret, "1.33") == []
    secret["stringdata"] = {"a": "b"}
    assert kube_schema.validate_builtin(secret, "1.33") == ["stringdata: unknown field"]


# --- custom resources ------------------------------------------------------------------------------


def test_crd_index_covers_every_shared_crd(shared: Path, crd_index: crd_schema.CrdIndex) -> None:
    files = sorted((shared / "crds").glob("*/*.yaml"))
    kinds = {(g.group, g.kind) for g in crd_index.entries}
    assert len(kinds) == len(files)
    assert kube_schema.GroupVersionKind("metallb.io", "v1beta1", "IPAddressPool") in crd_index.entries
    assert {v for g, k in [("kueue.x-k8s.io", "ClusterQueue")] for v in crd_index.versions_of(g, k)} == {"v1beta1", "v1beta2"}
    assert crd_index.entries[kube_schema.GroupVersionKind("cert-manager.io", "v1", "ClusterIssuer")].scope == "Cluster"


def test_cel_rules_are_counted_not_evaluated(crd_index: crd_schema.CrdIndex) -> None:
    nodeset = crd_index.get(kube_schema.GroupVersionKind("kueue.x-k8s.io", "v1beta2", "ClusterQueue"))
    assert nodeset is not None and nodeset.cel_rules > 0


def test_unknown_spec_field_in_a_custom_resource_fails(prod_stack: RecordedStack, crd_index: crd_schema.CrdIndex) -> None:
    _, pool = first_of_kind(documents(prod_stack), "IPAddressPool")
    pool["spec"]["adresses"] = ["10.0.0.1/32"]
    pool["spec"]["autoAssign"] = "no"
    errors = crd_schema.validate_custom_resource(pool, crd_index)
    assert "spec.adresses: unknown field" in errors
    assert "spec.autoAssign: 'no' is not of type 'boolean'" in errors


def test_wrong_enum_value_in_a_certificate_fails(dev_stack: RecordedStack, shared: Path) -> None:
    path, certificate = first_of_kind(documents(dev_stack), "Certificate")
    certificate["spec"]["privateKey"]["algorithm"] = "DSA"
    errors = schema.validate_documents([(path, certificate)], "1.33", shared)
    assert len(errors) == 1 and errors[0].startswith(f"{path}: cert-manager.io/v1 Certificate "), errors
    assert "spec.privateKey.algorithm: 'DSA' is not one of ['RSA', 'ECDSA', 'Ed25519']" in errors[0]


def test_missing_required_field_and_namespace_fail(dev_stack: RecordedStack, crd_index: crd_schema.CrdIndex) -> None:
    _, certificate = first_of_kind(documents(dev_stack), "Certificate")
    del certificate["spec"]["secretName"]
    del certificate["metadata"]["namespace"]
    errors = crd_schema.validate_custom_resource(certificate, crd_index)
    assert "spec: 'secretName' is a required property" in errors
    assert "metadata.namespace: required (Certificate is namespaced)" in errors
    _, issuer = first_of_kind(documents(dev_stack), "ClusterIssuer")
    issuer["metadata"]["namespace"] = "default"
    assert crd_schema.validate_custom_resource(issuer, crd_index) == [
        "metadata.namespace: must not be set (ClusterIssuer is cluster-scoped)"
    ]


def ingress_route(port: Any) -> dict[str, Any]:
    return {
        "apiVersion": "traefik.io/v1alpha1",
        "kind": "IngressRoute",
        "metadata": {"name": "portal", "namespace": "portal"},
        "spec": {
            "entryPoints": ["websecure"],
            "routes": [{"kind": "Rule", "match": "Host(`portal.example.org`)", "services": [{"name": "portal", "port": port}]}],
        },
    }


@pytest.mark.parametrize("port", [443, "https"])
def test_int_or_string_accepts_both(port: Any, crd_index: crd_schema.CrdIndex) -> None:
    assert crd_schema.validate_custom_resource(ingress_route(port), crd_index) == []


@pytest.mark.parametrize("port", [True, 1.5, None, {"number": 443}])
def test_int_or_string_rejects_others(port: Any, crd_index: crd_schema.CrdIndex) -> None:
    errors = crd_schema.validate_custom_resource(ingress_route(port), crd_index)
    assert len(errors) == 1 and errors[0].startswith("spec.routes[0].services[0].port:"), errors


def test_custom_resource_without_crd_is_reported(shared: Path) -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}, "spec": {}}
    errors = schema.validate_documents([("default/Widget-w.yaml", widget)], "1.33", shared)
    assert errors == [
        "default/Widget-w.yaml: example.com/v1 Widget w: example.com/v1 Widget: no CustomResourceDefinition for this kind"
        " under shared/crds (nor declared by the program)"
    ]


def test_unserved_version_is_reported(crd_index: crd_schema.CrdIndex) -> None:
    pool = {"apiVersion": "metallb.io/v1alpha1", "kind": "IPAddressPool", "metadata": {"name": "p", "namespace": "n"}}
    assert crd_schema.validate_custom_resource(pool, crd_index) == [
        "metallb.io/v1alpha1 IPAddressPool: the CRD does not serve v1alpha1 (served: v1beta1)"
    ]


def test_program_declared_crd_is_used_when_shared_has_none(shared: Path) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
                        }
                    },
                }
            ],
        },
    }
    good: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": {"size": 1},
    }
    bad = copy.deepcopy(good)
    bad["spec"]["colour"] = "red"
    docs = [("_cluster/crd.yaml", crd), ("n/good.yaml", good), ("n/bad.yaml", bad)]
    report = schema.check_documents(docs, "1.33", shared)
    assert report.errors == ["n/bad.yaml: example.com/v1 Widget w: spec.colour: unknown field"]
    assert report.crd_sources == {"example.com/v1 Widget": "program: _cluster/crd.yaml"}


def test_shared_crd_wins_over_the_programs_copy(shared: Path) -> None:
    loose = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "network-attachment-definitions.k8s.cni.cncf.io"},
        "spec": {
            "group": "k8s.cni.cncf.io",
            "names": {"kind": "NetworkAttachmentDefinition", "plural": "network-attachment-definitions"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    nad = {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {"name": "x", "namespace": "n"},
        "spec": {"config": "{}", "conifg": "{}"},
    }
    report = schema.check_documents([("a.yaml", loose), ("b.yaml", nad)], "1.33", shared)
    assert report.errors == ["b.yaml: k8s.cni.cncf.io/v1 NetworkAttachmentDefinition x: spec.conifg: unknown field"]
    assert (
        report.crd_sources["k8s.cni.cncf.io/v1 NetworkAttachmentDefinition"]
        == "crds/multus-cni-4.3.0/NetworkAttachmentDefinition.yaml"
    )


# --- the structural-schema translation -------------------------------------------------------------


def crd_version(openapi: dict[str, Any]) -> crd_schema.CrdVersion:
    return crd_schema.CrdVersion(kube_schema.GroupVersionKind("example.com", "v1", "Thing"), "Namespaced", "test", openapi)


def thing(spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": "n"}, "spec": spec}


def check(openapi_spec: dict[str, Any], spec: Any) -> list[str]:
    index = crd_schema.CrdIndex({})
    version = crd_version({"type": "object", "properties": {"spec": openapi_spec}})
    index.entries[version.gvk] = version
    return crd_schema.validate_custom_resource(thing(spec), index)


def test_preserve_unknown_fields_allows_anything_below() -> None:
    loose = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {"type": "string"}}}
    assert check(loose, {"a": "x", "b": {"c": [1, 2]}}) == []
    assert check(loose, {"a": 1}) == ["spec.a: 1 is not of type 'string'"]
    strict = {"type": "object", "properties": {"a": {"type": "object"}}}
    assert check(strict, {"a": {"b": 1}}) == ["spec.a.b: unknown field"]
    assert check({"type": "object", "additionalProperties": {"type": "integer"}}, {"x": 1, "y": "2"}) == [
        "spec.y: '2' is not of type 'integer'"
    ]


def test_required_field_with_a_default_is_defaulted_not_missing() -> None:
    spec = {
        "type": "object",
        "properties": {"enabled": {"type": "boolean", "default": False}, "name": {"type": "string"}},
        "required": ["enabled", "name"],
    }
    assert check(spec, {"name": "x"}) == []
    assert check(spec, {"enabled": True}) == ["spec: 'name' is a required property"]


def test_nullable_and_embedded_resource() -> None:
    spec = {
        "type": "object",
        "properties": {
            "n": {"type": "string", "nullable": True},
            "s": {"type": "string"},
            "e": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    assert check(spec, {"n": None, "e": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}}) == []
    assert check(spec, {"s": None}) == ["spec.s: null is not allowed here (expected string)"]
    assert check(spec, {"e": {"data": {}}}) == [
        "spec.e: 'apiVersion' is a required property",
        "spec.e: 'kind' is a required property",
    ]


def test_value_validations_do_not_close_objects() -> None:
    """anyOf/oneOf branches of a structural schema only add checks; they must not reject fields."""
    spec = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
    }
    assert check(spec, {"a": "x"}) == []
    assert check(spec, {"a": "x", "b": "y"}) != []


def test_numeric_bounds_formats_patterns_and_list_types() -> None:
    spec = {
        "type": "object",
        "properties": {
            "port": {"type": "integer", "format": "int32", "minimum": 0, "exclusiveMinimum": True, "maximum": 65535},
            "when": {"type": "string", "format": "date-time"},
            "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "ports": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            },
            "count": {"type": "integer", "format": "int32"},
            "interval": {"type": "string", "format": "duration"},
        },
        "x-kubernetes-validations": [{"rule": "self.port >= 1"}],
    }
    good = {
        "port": 1,
        "when": "2026-01-01T00:00:00Z",
        "name": "abc",
        "tags": ["a", "b"],
        "ports": [{"name": "a", "port": 1}, {"name": "b", "port": 1}],
        "interval": "1m30s",
    }
    assert check(spec, good) == []
    bad = {
        "port": 0,
        "when": "yesterday",
        "name": "ABCDEFG",
        "tags": ["a", "a"],
        "ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}],
        "count": 2**31,
        "interval": "90 sideways",
    }
    errors = check(spec, bad)
    for field in ("port", "when", "name", "tags[1]", "ports[1]", "count", "interval"):
        assert any(e.startswith(f"spec.{field}:") for e in errors), (field, errors)
    # The CEL rule is evaluated too (offline/schema/cel.py), without a message: k8s's "failed rule: <rule>".
    assert 'spec: Invalid value: "object": failed rule: self.port >= 1' in errors
    assert crd_version({"type": "object", "properties": {"spec": spec}}).cel_rules == 1


# --- Helm values -----------------------------------------------------------------------------------


def test_misspelled_key_in_the_dev_traefik_chart_is_reported(dev_stack: RecordedStack, shared: Path) -> None:
    path, document = chart_document(documents(dev_stack), "traefik")
    http = helm_values(document)["ports"]["web"]["http"]
    http["redirectons"] = http.pop("redirections")
    errors = schema.validate_documents([(path, document)], "1.33", shared)
    pin = Charts.TRAEFIK
    assert errors == [
        f"{path}: HelmChart spec.values: traefik {pin.version}: values key ports.web.http.redirectons"
        " does not exist in the chart's values.yaml or values.schema.json"
    ]


def test_misspelled_key_in_the_prod_traefik_application_is_reported(prod_stack: RecordedStack, shared: Path) -> None:
    path, application = chart_document(documents(prod_stack), "traefik")
    assert application["kind"] == "Application"
    values = helm_values(application)
    values["ports"]["web"]["redirectons"] = {"entryPoint": {"to": "websecure"}}
    values["deployment"]["replicas"] = "two"
    errors = schema.validate_documents([(path, application)], "1.33", shared)
    prefix = f"{path}: Application spec.source.helm.valuesObject: traefik {Charts.TRAEFIK.version}: values"
    assert errors == [
        f"{prefix} key ports.web.redirectons does not exist in the chart's values.yaml or values.schema.json",
        f"{prefix} deployment.replicas: 'two' is not of type 'integer', 'null' (values.schema.json)",
    ]


def test_misspelled_key_in_a_chart_without_schema_is_reported(dev_stack: RecordedStack, shared: Path) -> None:
    _, document = chart_document(documents(dev_stack), "argo-cd")
    values = helm_values(document)
    values["server"]["ingres"] = {"enabled": True}
    values["controller"]["resources"]["limits"]["anything"] = 1  # below a {} default: free-form
    values["server"]["ingress"]["annotations"]["example.org/any"] = "x"
    values["configs"]["cm"]["users.anonymous.enabled"] = "false"  # allow-listed free-form map
    values["configs"]["params"]["create"] = {"nested": True}  # known key below it: still checked
    errors = chart_values.validate_helm_values(Charts.ARGO_CD.chart, Charts.ARGO_CD.version, values, shared)
    assert sorted(errors) == [
        f"argo-cd {Charts.ARGO_CD.version}: values key configs.params.create.nested does not exist in the chart's values.yaml",
        f"argo-cd {Charts.ARGO_CD.version}: values key server.ingres does not exist in the chart's values.yaml",
    ]


def test_schema_declared_keys_and_violations(shared: Path) -> None:
    metallb = Charts.METALLB
    values = {
        "speaker": {"tolerateMaster": "yes", "frr": {"enabld": True}},
        "controller": {"image": {"pullPolicy": "Sometimes"}},
        "speakr": {},
    }
    errors = chart_values.validate_helm_values(metallb.chart, metallb.version, values, shared)
    label = f"metallb {metallb.version}"
    assert f"{label}: values key speakr does not exist in the chart's values.yaml or values.schema.json" in errors
    assert f"{label}: values key speaker.frr.enabld does not exist in the chart's values.yaml or values.schema.json" in errors
    assert f"{label}: values speaker.tolerateMaster: 'yes' is not of type 'boolean' (values.schema.json)" in errors
    assert any(e.startswith(f"{label}: values controller.image.pullPolicy:") for e in errors), errors
    assert len(errors) == 4, errors


def test_required_keys_are_not_enforced_on_partial_values(shared: Path) -> None:
    """Our values are an override merged over the defaults: the schema's `required` does not apply to them."""
    metallb = Charts.METALLB
    assert chart_values.validate_helm_values(metallb.chart, metallb.version, {"controller": {"strategy": {}}}, shared) == []


def test_secret_placeholder_passes_schema_types(shared: Path) -> None:
    cert_manager = Charts.CERT_MANAGER
    values = {"replicaCount": "[secret]", "crds": {"enabled": "[secret]"}}
    assert chart_values.validate_helm_values(cert_manager.chart, cert_manager.version, values, shared) == []


def test_unpinned_chart_and_chart_without_values(shared: Path) -> None:
    assert chart_values.validate_helm_values("traefik", "1.0.0", {}, shared) == [
        "traefik 1.0.0: not pinned in components/versions.py (Charts.all())"
    ]
    crds = next(pin for pin in Charts.all() if pin.values_dir is None)
    assert chart_values.validate_helm_values(crds.chart, crds.version, {}, shared) == []
    assert chart_values.validate_helm_values(crds.chart, crds.version, {"foo": 1}, shared) == [
        f"{crds.chart} {crds.version}: values key foo does not exist (the chart has no values)"
    ]


def test_application_values_string_and_parameters_are_checked(shared: Path) -> None:
    pin = Charts.SEALED_SECRETS
    application = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "s", "namespace": "argocd"},
        "spec": {
            "source": {
                "chart": pin.chart,
                "repoURL": pin.argocd_repo_url,
                "targetRevision": pin.version,
                "helm": {
                    "values": "fullnameOverride: x\nfulnameOverride: y\n",
                    "parameters": [{"name": "resources.limits.cpu", "value": "1"}, {"name": "comonLabels.a", "value": "b"}],
                },
            }
        },
    }
    releases = chart_values.helm_releases("a.yaml", application)
    assert [r.origin for r in releases] == ["Application spec.source.helm.values", "Application spec.source.helm.parameters"]
    errors = [e for r in releases for e in chart_values.validate_helm_release(r, shared)]
    assert errors == [
        f"Application spec.source.helm.values: sealed-secrets {pin.version}: values key fulnameOverride does not exist in the chart's values.yaml",
        f"Application spec.source.helm.parameters: sealed-secrets {pin.version}: values key comonLabels does not exist in the chart's values.yaml",
    ]


def test_repository_must_be_the_pinned_one(shared: Path) -> None:
    pin = Charts.TRAEFIK
    release = chart_values.HelmRelease(
        "a.yaml", pin.chart, pin.version, "https://example.org/charts", {}, "HelmChart spec.values"
    )
    assert chart_values.validate_helm_release(release, shared) == [
        f"traefik {pin.version}: repository https://example.org/charts is not the pinned {pin.repository}"
    ]


def test_free_form_allow_list_is_minimal_and_documented(shared: Path) -> None:
    """Each entry names a pinned chart, a reason, and a map whose default is NOT already free-form."""
    pins = {pin.chart: pin for pin in Charts.all()}
    assert len({(e.chart, e.path) for e in chart_values.FREE_FORM_VALUES}) == len(chart_values.FREE_FORM_VALUES)
    for entry in chart_values.FREE_FORM_VALUES:
        assert len(entry.reason) > 40, entry
        pin = pins[entry.chart]
        assert pin.values_dir is not None
        default: Any = chart_values.load_chart_values(shared, pin.values_dir).defaults
        for key in entry.path:
            default = default[key]
        assert isinstance(default, dict) and default, f"{entry.chart} {entry.path}: default is free-form already"


# --- schemaless fields that hold a Kubernetes type -------------------------------------------------


def test_known_type_fields_exist_in_the_crds_and_are_schemaless(crd_index: crd_schema.CrdIndex) -> None:
    """Each KNOWN_TYPE_FIELDS entry points at a field its upstream CRD leaves to preserve-unknown-fields."""
    for known in crd_schema.KNOWN_TYPE_FIELDS:
        for kind in known.kinds:
            versions = crd_index.versions_of(known.group, kind)
            assert versions, (known.group, kind)
            for version in versions:
                crd = crd_index.get(kube_schema.GroupVersionKind(known.group, version, kind))
                assert crd is not None
                node: Any = crd.openapi_schema
                for part in known.path:
                    if part == "[]" and "items" not in node:
                        break  # a schemaless list: its items are schemaless too
                    node = node["items"] if part == "[]" else node["properties"][part]
                assert node.get("x-kubernetes-preserve-unknown-fields") is True, (kind, known.path)
                assert "properties" not in node and "items" not in node, (kind, known.path)
        assert known.definition in kube_schema.builtin_definitions("1.33"), known.definition


def test_typo_in_a_nodeset_pod_template_or_container_is_reported(
    prod_stack: RecordedStack, crd_index: crd_schema.CrdIndex
) -> None:
    _, nodeset = first_of_kind(documents(prod_stack), "NodeSet")
    nodeset["spec"].setdefault("template", {}).setdefault("spec", {})["nodeSelectr"] = {"a": "b"}
    nodeset["spec"]["slurmd"]["imagee"] = "x"
    nodeset["spec"]["slurmd"]["env"] = [{"value": "x"}]
    # The CRD itself accepts all of it (schemaless) ...
    assert crd_schema.validate_custom_resource(nodeset, crd_index) == []
    # ... the pod spec and container types do not; the container's own `name` is the operator's business.
    assert crd_schema.validate_custom_resource(nodeset, crd_index, "1.33") == [
        "spec.slurmd.env[0]: 'name' is a required property (checked as core/v1 Container)",
        "spec.slurmd.imagee: unknown field (checked as core/v1 Container)",
        "spec.template.spec.nodeSelectr: unknown field (checked as core/v1 PodSpec)",
    ]


def test_manifest_files_must_be_pinned(shared: Path) -> None:
    def manifest(url: str) -> dict[str, Any]:
        return {"apiVersion": CHART_API_VERSION, "kind": MANIFEST_KIND, "metadata": {"name": "m"}, "spec": {"file": url}}

    for pin in Manifests.all():
        assert schema.validate_documents([("m.yaml", manifest(pin.url))], "1.33", shared) == []
    assert schema.validate_documents([("m.yaml", manifest("https://example.org/install.yaml"))], "1.33", shared) == [
        "m.yaml: ManifestFile file 'https://example.org/install.yaml' is not pinned in components/versions.py (Manifests.all())"
    ]


def test_embedded_objects_are_checked_as_what_they_are(crd_index: crd_schema.CrdIndex) -> None:
    """An AppWrapper component's template is a whole Job: the CRD checks only apiVersion/kind, we check the Job."""
    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pair"},
        "spec": {
            "parallelism": 2,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "alpine"}]}},
        },
    }
    appwrapper = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "pair", "namespace": "team"},
        "spec": {"components": [{"podSets": [{"path": "template.spec.template", "replicas": 2}], "template": job}]},
    }
    assert crd_schema.validate_custom_resource(appwrapper, crd_index, "1.33") == []
    job["spec"]["paralelism"] = 2
    del job["kind"]
    assert crd_schema.validate_custom_resource(appwrapper, crd_index) == [
        "spec.components[0].template: 'kind' is a required property"
    ]
    job["kind"] = "Job"
    assert crd_schema.validate_custom_resource(appwrapper, crd_index) == []
    assert crd_schema.validate_custom_resource(appwrapper, crd_index, "1.33") == [
        "spec.components[0].template.spec.paralelism: unknown field (embedded batch/v1 Job)"
    ]


def test_subchart_defaults_are_keys_the_parent_may_set(shared: Path) -> None:
    # kube-state-metrics' `resources` is only in its own values.yaml (charts/kube-state-metrics/), which Helm
    # coalesces with what the parent sets under `kube-state-metrics:`; a typo there is still refused.
    pin = Charts.KUBE_PROMETHEUS_STACK
    values = {"kube-state-metrics": {"resources": {"requests": {"cpu": "50m"}}, "resourcez": {}}}
    errors = chart_values.validate_helm_values(pin.chart, pin.version, values, shared)
    assert errors == [
        f"{pin.chart} {pin.version}: values key kube-state-metrics.resourcez does not exist in the chart's values.yaml"
    ]


def test_subchart_values_are_validated_against_the_subcharts_own_schema(shared: Path) -> None:
    # gpu-operator has no values.schema.json; its node-feature-discovery subchart has one, which Helm
    # applies to the values under `node-feature-discovery:` (pkg/chart/common/util/jsonschema.go).
    pin = Charts.GPU_OPERATOR
    label = f"{pin.chart} {pin.version}"
    assert (
        chart_values.validate_helm_values(
            pin.chart, pin.version, {"node-feature-discovery": {"postDeleteCleanup": False}}, shared
        )
        == []
    )
    values = {"node-feature-discovery": {"postDeleteCleanup": "no", "worker": {"tolerations": "all"}}}
    assert chart_values.validate_helm_values(pin.chart, pin.version, values, shared) == [
        f"{label}: values node-feature-discovery.postDeleteCleanup: 'no' is not of type 'boolean' "
        "(node-feature-discovery subchart's values.schema.json)",
        f"{label}: values node-feature-discovery.worker.tolerations: 'all' is not of type 'array' "
        "(node-feature-discovery subchart's values.schema.json)",
    ]
    assert chart_values.validate_helm_values(pin.chart, pin.version, {"node-feature-discovery": 3}, shared) == [
        f"{label}: values node-feature-discovery: invalid type for values: expected object (map)"
    ]


def test_keys_only_a_subcharts_schema_declares_are_known(tmp_path: Path) -> None:
    chart = tmp_path / "charts" / "parent-1.0.0"
    (chart / "charts" / "child").mkdir(parents=True)
    (chart / "values.yaml").write_text("replicas: 1\n")
    (chart / "charts" / "child" / "values.yaml").write_text("image: {tag: v1}\n")
    (chart / "charts" / "child" / "values.schema.json").write_text(
        '{"type": "object", "properties": {"extra": {"type": "integer"}}}'
    )
    pins = [ChartPin("parent", "1.0.0", "https://charts.example.org", "parent-1.0.0")]
    assert (
        chart_values.validate_helm_values("parent", "1.0.0", {"child": {"extra": 2, "image": {"tag": "v2"}}}, tmp_path, pins=pins)
        == []
    )
    assert chart_values.validate_helm_values("parent", "1.0.0", {"child": {"extra": "two", "extar": 1}}, tmp_path, pins=pins) == [
        "parent 1.0.0: values key child.extar does not exist in the chart's values.yaml",
        "parent 1.0.0: values child.extra: 'two' is not of type 'integer' (child subchart's values.schema.json)",
    ]
