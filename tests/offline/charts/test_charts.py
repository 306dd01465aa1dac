"""The chart renderer (offline/charts/render.py) on the test chart under tests/offline/charts/charts.

The test chart holds one defect per template (tests/offline/charts/charts/README.md); each is reported by name
here, as far as the renderer's side goes: hooks, CRDs kept apart, every object a resource of its
own type under the Chart, `:latest` set through values caught by the policy packs on the rendered
Deployment. The upstream charts hpcforge deploys are rendered by the `charts` tier
(tests/offline/charts/test_charts_tier.py).
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from components.chart_hooks import HOOKS
from components.versions import ChartPin
from offline.charts.objects import chart_documents, engine_view
from offline.charts.render import RenderReport, chart_releases, hook_errors, render_stack
from offline.charts.source import ChartSource, ChartSourceError
from offline.policy.check import check_recorded_stack
from offline.policy.packs import PackSpec
from offline.program.engine import RecordedStack, run_program
from offline.program.stackfile import StackFile
from tests.helpers import REPO

CHARTS = REPO / "tests" / "offline" / "charts" / "charts"
PROGRAM = CHARTS / "program"
TEST_PIN = ChartPin("hpcforge-test", "0.1.0", "https://charts.example.org")
KUBERNETES = "1.33"


def run_test_program(values: dict[str, Any] | None = None) -> RecordedStack:
    config = {"test:values": json.dumps(values or {})}
    return run_program(StackFile(name="dev", path=PROGRAM / "Pulumi.dev.yaml", config=config), PROGRAM)


def render(stack: RecordedStack, source: ChartSource | None = None) -> RenderReport:
    return render_stack(stack, source or ChartSource(charts_from=CHARTS), KUBERNETES, pins=[TEST_PIN])


@pytest.fixture(scope="module")
def default_stack() -> RecordedStack:
    return run_test_program({"hook": {"enabled": False}})


@pytest.fixture(scope="module")
def default_render(default_stack: RecordedStack) -> RenderReport:
    return render(default_stack)


def objects_by_kind(report: RenderReport) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for document in report.charts[0].objects:
        found.setdefault(document["kind"], []).append(document)
    return found


# --- rendering ---------------------------------------------------------------------------------------


def test_release_is_read_from_the_chart_resource(default_stack: RecordedStack) -> None:
    [release] = chart_releases(default_stack, [TEST_PIN])
    assert (release.release, release.namespace, release.delivery) == ("demo", "demo", "pulumi")
    assert release.values == {"hook": {"enabled": False}}


def test_an_unpinned_chart_is_refused(default_stack: RecordedStack) -> None:
    with pytest.raises(Exception, match=r"hpcforge-test 0\.1\.0 is not pinned"):
        chart_releases(default_stack, [])


def test_crds_are_separate_from_the_templates(default_render: RenderReport) -> None:
    chart = default_render.charts[0]
    assert [c["metadata"]["name"] for c in chart.crds] == ["widgets.example.org"]
    assert all(o["kind"] != "CustomResourceDefinition" for o in chart.objects)
    assert chart.installed[0]["kind"] == "CustomResourceDefinition"


def test_capabilities_are_the_target_kubernetes_and_installed_apis(default_render: RenderReport) -> None:
    [config_map] = objects_by_kind(default_render)["ConfigMap"]
    assert config_map["data"] == {
        "kubeVersion": "v1.33.0",
        "hasWidgets": "true",  # the chart's own CRD is installed, so its API is listed
        "hasMonitoring": "false",  # nothing installs prometheus-operator's CRDs
        "lookupEmpty": "true",  # a first install: lookup finds nothing
        "isInstall": "true",
    }


def test_namespaced_objects_get_the_release_namespace(default_render: RenderReport) -> None:
    kinds = objects_by_kind(default_render)
    assert kinds["Deployment"][0]["metadata"]["namespace"] == "demo"
    assert kinds["Role"][0]["metadata"]["namespace"] == "forbidden"  # set by the template: kept
    assert "namespace" not in kinds["ValidatingWebhookConfiguration"][0]["metadata"]  # cluster-scoped


def test_defect_objects_are_rendered_for_the_admission_checks(default_render: RenderReport) -> None:
    kinds = objects_by_kind(default_render)
    [deployment] = kinds["Deployment"]
    assert "securityContext" not in deployment["spec"]["template"]["spec"]
    [policy] = kinds["NetworkPolicy"]
    assert policy["spec"]["ingress"] == [{"ports": [{"port": 8080, "protocol": "TCP"}]}]
    [service] = kinds["Service"]
    assert service["spec"]["ports"][0]["targetPort"] == 9443
    webhook = kinds["ValidatingWebhookConfiguration"][0]["webhooks"][0]
    assert webhook["clientConfig"]["service"] == {"name": "demo-webhook", "namespace": "demo", "path": "/validate"}


# --- hooks -------------------------------------------------------------------------------------------


def test_a_hook_that_helm_v4_chart_drops_is_an_error_naming_chart_and_hook() -> None:
    report = render(run_test_program())
    chart = report.charts[0]
    assert sorted(h.kind for h in chart.hooks) == ["Job", "Pod"]
    assert all(o["metadata"]["name"] != "demo-migrate" for o in chart.objects)
    [error] = report.errors
    assert "chart hpcforge-test 0.1.0 (release 'demo'" in error
    assert "hook Job demo-migrate (pre-install,pre-upgrade; hpcforge-test/templates/hook-job.yaml)" in error
    assert "dropped by helm.v4.Chart" in error


def test_test_hooks_are_counted_never_errors(default_render: RenderReport) -> None:
    chart = default_render.charts[0]
    assert [(h.kind, h.events) for h in chart.hooks] == [("Pod", ("test",))]
    assert default_render.errors == []


def test_hooks_are_not_errors_when_argo_cd_delivers(default_stack: RecordedStack) -> None:
    import dataclasses

    report = render(run_test_program())
    argocd = dataclasses.replace(report.charts[0], release=dataclasses.replace(report.charts[0].release, delivery="argocd"))
    assert hook_errors(argocd) == []


def test_every_known_hook_names_values_that_switch_it_off_or_the_templates_left_to_drop() -> None:
    assert {h.chart for h in HOOKS} == {
        "argo-cd",
        "cert-manager",
        "argo-workflows",
        "gpu-operator",
        "network-operator",
        "kube-prometheus-stack",
    }
    assert all((h.values or h.templates) and h.replaced_by for h in HOOKS)


def test_deployed_values_switch_off_every_known_hook(prod_stack: RecordedStack) -> None:
    def contains(values: Any, wanted: Any) -> bool:
        if isinstance(wanted, dict):
            return isinstance(values, dict) and all(contains(values.get(k), v) for k, v in wanted.items())
        return bool(values == wanted)

    releases = {r.pin.chart: r for r in chart_releases(prod_stack)}
    for hook in HOOKS:
        assert contains(releases[hook.chart].values, hook.values), hook.hook


# --- as the engine registers them ---------------------------------------------------------------------


def test_engine_view_registers_each_object_under_a_chart_without_inputs(
    default_stack: RecordedStack, default_render: RenderReport
) -> None:
    view = engine_view(default_stack, default_render)
    [chart] = [r for r in view.resources if r.is_chart]
    assert chart.inputs == {} and chart.raw_inputs == {}
    children = [r for r in view.resources if r.parent == chart.urn]
    types = {r.type for r in children}
    assert {
        "kubernetes:apps/v1:Deployment",
        "kubernetes:core/v1:Service",
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
    } <= types
    deployment = next(r for r in children if r.type == "kubernetes:apps/v1:Deployment")
    assert deployment.name == "demo:demo/demo-app"
    assert deployment.urn.endswith("kubernetes:helm.sh/v4:Chart$kubernetes:apps/v1:Deployment::demo:demo/demo-app")
    crd = next(r for r in children if r.type.endswith(":CustomResourceDefinition"))
    assert crd.name == "demo:widgets.example.org"
    assert all(r.custom and not r.remote for r in children)
    assert len(children) == len(default_render.charts[0].installed)


def test_chart_objects_are_named_by_the_charts_resource_prefix_when_it_has_one() -> None:
    # pulumi-kubernetes provider/pkg/provider/helm/v4/chart.go: `resourcePrefix`, else the Chart's name.
    config = {"test:values": json.dumps({"hook": {"enabled": False}}), "test:resourcePrefix": "web"}
    stack = run_program(StackFile(name="dev", path=PROGRAM / "Pulumi.dev.yaml", config=config), PROGRAM)
    view = engine_view(stack, render(stack))
    names = {
        r.name
        for r in view.resources
        if r.type in ("kubernetes:apps/v1:Deployment", "kubernetes:rbac.authorization.k8s.io/v1:Role")
    }
    assert names == {"web:demo/demo-app", "web:forbidden/demo-reader"}


def test_a_chart_with_unknown_inputs_in_a_preview_registers_no_objects() -> None:
    # chart.go: while an input is unknown the provider renders nothing ("Preview is incomplete"); a generated
    # password in the values is unknown in a preview of a new stack.
    config = {"test:values": json.dumps({"hook": {"enabled": False}}), "test:secretPassword": "true"}
    known = run_program(StackFile(name="dev", path=PROGRAM / "Pulumi.dev.yaml", config=config), PROGRAM)
    preview = run_program(StackFile(name="dev", path=PROGRAM / "Pulumi.dev.yaml", config=config), PROGRAM, preview=True)
    for stack, children in ((known, len(render(known).charts[0].installed)), (preview, 0)):
        view = engine_view(stack, render(stack))
        [chart] = [r for r in view.resources if r.is_chart]
        assert chart.inputs == {}
        assert len([r for r in view.resources if r.parent == chart.urn]) == children


def test_render_documents_put_crds_hooks_and_objects_apart() -> None:
    report = render(run_test_program())
    paths = dict(chart_documents(report))
    assert "charts/demo/crds/CustomResourceDefinition-widgets.example.org.yaml" in paths
    assert "charts/demo/hooks/Job-demo-migrate.yaml" in paths
    assert "charts/demo/demo/Deployment-demo-app.yaml" in paths
    assert "charts/demo/forbidden/Role-demo-reader.yaml" in paths


@pytest.mark.policy_protocol
def test_latest_set_through_chart_values_is_caught_on_the_rendered_deployment() -> None:
    # Only the tag is overridden: the declared values carry no image reference, so a check of the
    # Chart's values cannot see it; the rendered Deployment's image is `...:latest`.
    stack = run_test_program({"hook": {"enabled": False}, "image": {"tag": "latest"}})
    packs = [PackSpec(REPO / "policies" / "gitops-drift", REPO / "policies" / "config" / "prod.json")]
    declared = check_recorded_stack(stack, packs)
    assert declared.select(policy="images-pinned") == []
    rendered = check_recorded_stack(engine_view(stack, render(stack)), packs)
    [finding] = rendered.select(policy="images-pinned")
    assert finding.level == "mandatory"
    assert finding.urn.endswith("$kubernetes:apps/v1:Deployment::demo:demo/demo-app")
    assert "registry.example.org/demo/app:latest" in finding.message


# --- sources -----------------------------------------------------------------------------------------


def test_a_missing_chart_names_where_it_was_looked_for(tmp_path: Path, default_stack: RecordedStack) -> None:
    report = render(default_stack, ChartSource(charts_from=tmp_path))
    [error] = report.errors
    assert f"{tmp_path}/hpcforge-test-0.1.0" in error and "--pull-charts" in error


def test_a_chart_of_another_version_is_refused(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(CHARTS / "hpcforge-test-0.1.0", tmp_path / "hpcforge-test-0.1.0")
    chart_yaml = tmp_path / "hpcforge-test-0.1.0" / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("version: 0.1.0", "version: 0.0.0"))
    with pytest.raises(ChartSourceError, match=r"says chart 'hpcforge-test' version '0\.0\.0', expected"):
        ChartSource(charts_from=tmp_path).locate(TEST_PIN)


@pytest.fixture
def chart_repository(tmp_path: Path) -> Iterator[str]:
    """A classic Helm repository on 127.0.0.1: the packaged test chart and its index.yaml."""
    import helm_python as helm

    served = tmp_path / "repo"
    served.mkdir()
    helm.package(CHARTS / "hpcforge-test-0.1.0", destination=served)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.RequestHandlerClass.log_message = lambda *args: None  # type: ignore[assignment]
    url = f"http://127.0.0.1:{server.server_address[1]}"
    helm.repo_index_generate(served, base_url=url)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def test_pull_downloads_from_the_repository_into_the_cache(
    tmp_path: Path, chart_repository: str, default_stack: RecordedStack
) -> None:
    pin = ChartPin("hpcforge-test", "0.1.0", chart_repository)
    cache = tmp_path / "cache"
    source = ChartSource(charts_from=tmp_path / "empty", cache_dir=cache, pull=True)
    located = source.locate(pin)
    assert located == cache / "hpcforge-test-0.1.0"
    assert (located / "crds" / "widgets.yaml").is_file()
    # The cache is used from then on, offline.
    assert ChartSource(cache_dir=cache).locate(pin) == located
    report = render_stack(default_stack, ChartSource(cache_dir=cache), KUBERNETES, pins=[TEST_PIN])
    assert report.errors == []
    assert {o["kind"] for o in report.charts[0].objects} >= {"Deployment", "Role", "NetworkPolicy"}


def test_pull_of_a_version_the_repository_lacks_is_an_error(tmp_path: Path, chart_repository: str) -> None:
    pin = ChartPin("hpcforge-test", "9.9.9", chart_repository)
    with pytest.raises(ChartSourceError, match=r"pulling chart hpcforge-test 9\.9\.9 from http://127\.0\.0\.1"):
        ChartSource(cache_dir=tmp_path / "cache", pull=True).locate(pin)


def test_cli_without_charts_exits_with_the_missing_chart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from offline.cli import main

    monkeypatch.setenv("HPCFORGE_CHARTS_CACHE", str(tmp_path / "cache"))
    code = main(["render", "--stack", "dev", "--out", str(tmp_path / "out"), "--render-charts", "--charts-from", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "charts could not be rendered" in err and "chart argo-cd 10.1.1" in err and "not found" in err


@pytest.fixture
def oci_registry(tmp_path: Path) -> Iterator[str]:
    """A read-only OCI registry on 127.0.0.1 holding the test chart as `charts/hpcforge-test:0.1.0`.

    Just the two pull endpoints of the OCI distribution spec (GET/HEAD `/v2/<name>/manifests/<ref>`
    and `/v2/<name>/blobs/<digest>`), serving the manifest Helm pushes: a config of media type
    `application/vnd.cncf.helm.config.v1+json` and one layer `application/vnd.cncf.helm.chart.content.v1.tar+gzip`
    holding the packaged chart (helm.sh/docs/topics/registries)."""
    import hashlib

    import helm_python as helm

    def digest(blob: bytes) -> str:
        return "sha256:" + hashlib.sha256(blob).hexdigest()

    layer = Path(helm.package(CHARTS / "hpcforge-test-0.1.0", destination=tmp_path)).read_bytes()
    config = json.dumps({"apiVersion": "v2", "name": "hpcforge-test", "version": "0.1.0"}).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": digest(config), "size": len(config)},
            "layers": [
                {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": digest(layer), "size": len(layer)}
            ],
        }
    ).encode()
    blobs = {digest(config): config, digest(layer): layer}
    prefix = "/v2/charts/hpcforge-test/"

    class Registry(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, head: bool) -> None:
            path = self.path.split("?", 1)[0]
            body, media, name = None, "application/octet-stream", path.rsplit("/", 1)[-1]
            if path.startswith(prefix + "manifests/") and name in ("0.1.0", digest(manifest)):
                body, media, name = manifest, "application/vnd.oci.image.manifest.v1+json", digest(manifest)
            elif path.startswith(prefix + "blobs/") and name in blobs:
                body = blobs[name]
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Docker-Content-Digest", name)
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer(head=False)

        def do_HEAD(self) -> None:
            self._answer(head=True)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"oci://127.0.0.1:{server.server_address[1]}/charts"
    finally:
        server.shutdown()
        server.server_close()


def test_pull_downloads_an_oci_chart_into_the_cache(tmp_path: Path, oci_registry: str) -> None:
    pin = ChartPin("hpcforge-test", "0.1.0", oci_registry)
    cache = tmp_path / "cache"
    located = ChartSource(cache_dir=cache, pull=True, plain_http=True).locate(pin)
    assert located == cache / "hpcforge-test-0.1.0"
    assert (located / "templates" / "deployment.yaml").is_file()
    with pytest.raises(ChartSourceError, match=r"pulling chart hpcforge-test 0\.2\.0 from oci://127\.0\.0\.1"):
        ChartSource(cache_dir=cache, pull=True, plain_http=True).locate(ChartPin("hpcforge-test", "0.2.0", oci_registry))


def test_extra_api_versions_of_the_cluster_reach_the_capabilities(default_stack: RecordedStack) -> None:
    report = render_stack(
        default_stack,
        ChartSource(charts_from=CHARTS),
        KUBERNETES,
        pins=[TEST_PIN],
        extra_api_versions=["monitoring.coreos.com/v1"],
    )
    [config_map] = [o for o in report.charts[0].objects if o["kind"] == "ConfigMap"]
    assert config_map["data"]["hasMonitoring"] == "true"


def test_extra_api_versions_are_read_from_the_stack_config() -> None:
    from offline.charts.cluster import extra_api_versions

    stack = StackFile(
        "x", PROGRAM / "Pulumi.x.yaml", {"hpcforge:kubernetes": '{"extraApiVersions": ["monitoring.coreos.com/v1"]}'}
    )
    assert extra_api_versions(stack) == ["monitoring.coreos.com/v1"]


@pytest.mark.parametrize(
    "entry", ["monitoring.coreos.com", "Monitoring.coreos.com/v1", "monitoring.coreos.com/v1/servicemonitor"]
)
def test_extra_api_versions_must_be_api_versions(entry: str) -> None:
    from pydantic import ValidationError

    from components.ground.platform_core import KubernetesConfig

    with pytest.raises(ValidationError, match="is not an API version"):
        KubernetesConfig.model_validate({"extraApiVersions": [entry]})
    good = KubernetesConfig.model_validate({"extraApiVersions": ["v1", "monitoring.coreos.com/v1/ServiceMonitor"]})
    assert good.extra_api_versions == ("v1", "monitoring.coreos.com/v1/ServiceMonitor")


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        (">= 1.19.0-0", True),
        (">=1.34.0-0", False),
        ("< 1.34", True),
        (">= 1.26, < 1.33", False),
        (">= 1.26 < 1.34", True),
        ("~1.33.0", True),
        ("~1.32", False),
        ("^1.20", True),
        ("1.33.x", True),
        ("1.32.x || 1.33.x", True),
        ("!=1.33", False),
        (">1.x", False),
    ],
)
def test_kube_version_constraints_as_helm_reads_them(constraint: str, expected: bool) -> None:
    from offline.charts.kube_version import satisfies

    assert satisfies(constraint, "1.33") is expected


def test_a_chart_the_target_kubernetes_does_not_satisfy_is_refused(tmp_path: Path, default_stack: RecordedStack) -> None:
    import shutil

    shutil.copytree(CHARTS / "hpcforge-test-0.1.0", tmp_path / "hpcforge-test-0.1.0")
    with (tmp_path / "hpcforge-test-0.1.0" / "Chart.yaml").open("a") as chart_yaml:
        chart_yaml.write('kubeVersion: ">= 1.34.0-0"\n')
    report = render(default_stack, ChartSource(charts_from=tmp_path))
    assert report.errors == [
        "chart hpcforge-test 0.1.0 (release 'demo' in namespace 'demo'): chart requires kubeVersion: >= 1.34.0-0 "
        "which is incompatible with Kubernetes v1.33.0"
    ]


def test_a_hook_no_value_switches_off_is_fine_once_listed_as_replaced() -> None:
    from components.chart_hooks import HookReplacement

    report = render(run_test_program())
    replaced = HookReplacement(
        "hpcforge-test",
        "migrate: a pre-install Job",
        {},
        "a test's stand-in",
        templates=("hpcforge-test/templates/hook-job.yaml",),
    )
    assert hook_errors(report.charts[0], known=[replaced]) == []
    assert len(hook_errors(report.charts[0], known=[])) == 1


def test_strict_mode_allows_exactly_the_charts_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.helpers import ALLOWED_STRICT_SKIPS, CHARTS_ENV, require_charts, skip_or_fail

    assert {CHARTS_ENV} == ALLOWED_STRICT_SKIPS
    monkeypatch.setenv("HPCFORGE_STRICT", "1")
    monkeypatch.delenv(CHARTS_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="HPCFORGE_CHARTS is not set"):
        require_charts()
    with pytest.raises(pytest.fail.Exception, match="HPCFORGE_STRICT=1 and a prerequisite is missing"):
        skip_or_fail("slurmctld is not installed")


def test_secret_values_render_as_placeholders_and_secret_data_is_marked() -> None:
    from offline.program.engine import REDACTED, SECRET_SIG, SIG_KEY

    stack = run_program(
        StackFile(name="dev", path=PROGRAM / "Pulumi.dev.yaml", config={"test:values": "{}", "test:secretPassword": "true"}),
        PROGRAM,
    )
    report = render(stack)
    [secret] = [o for o in report.charts[0].objects if o["kind"] == "Secret"]
    assert base64.b64decode(secret["data"]["password"]).decode() == REDACTED
    assert "MOCKSECRET" not in json.dumps([o for c in report.charts for o in c.installed])
    [resource] = [r for r in engine_view(stack, report).resources if r.type == "kubernetes:core/v1:Secret"]
    assert resource.raw_inputs["data"][SIG_KEY] == SECRET_SIG
    assert resource.secret_paths == ["data"]


def test_a_custom_resource_found_cluster_scoped_in_the_second_pass_keeps_no_namespace(tmp_path: Path) -> None:
    # render_stack renders twice with one parse cache: the first pass before other charts' CRDs are known
    # (so a custom kind counts as namespaced), the second with them. The second pass must not see the
    # namespace the first one gave (network-operator's NodeFeatureRule, whose CRD comes from gpu-operator).
    from offline.charts.render import ChartRelease, render_release

    chart = tmp_path / "rules-0.1.0"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: rules\nversion: 0.1.0\n")
    (chart / "templates" / "rule.yaml").write_text(
        "apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata:\n  name: nics\nspec: {}\n"
    )
    release = ChartRelease("rules", ChartPin("rules", "0.1.0", "https://charts.example.org"), "nfd", {}, "pulumi", "urn")
    cache: dict[str, list[dict[str, Any]]] = {}
    options: dict[str, Any] = {"kubernetes_version": KUBERNETES, "api_versions": [], "parse_cache": cache}
    first = render_release(release, chart, scopes={}, **options)
    second = render_release(release, chart, scopes={("nfd.k8s-sigs.io", "NodeFeatureRule"): "Cluster"}, **options)
    assert first.objects[0]["metadata"]["namespace"] == "nfd"
    assert "namespace" not in second.objects[0]["metadata"]


def test_a_subcharts_own_values_schema_refuses_the_render(tmp_path: Path) -> None:
    # Helm validates the values under each subchart's name against that subchart's values.schema.json
    # (helm v4 pkg/chart/common/util/jsonschema.go ValidateAgainstSchema); the renderer goes through it.
    from offline.charts.render import ChartRelease, ChartRenderError, render_release

    chart = tmp_path / "parent-0.1.0"
    child = chart / "charts" / "child"
    (child / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n- name: child\n  version: 0.1.0\n"
    )
    (child / "Chart.yaml").write_text("apiVersion: v2\nname: child\nversion: 0.1.0\n")
    (child / "values.yaml").write_text("flag: true\n")
    (child / "values.schema.json").write_text('{"type": "object", "properties": {"flag": {"type": "boolean"}}}')
    (child / "templates" / "cm.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: child\ndata:\n  flag: "{{ .Values.flag }}"\n'
    )
    pin = ChartPin("parent", "0.1.0", "https://charts.example.org")

    def release(values: dict[str, Any]) -> ChartRelease:
        return ChartRelease("parent", pin, "demo", values, "pulumi", "urn")

    rendered = render_release(release({"child": {"flag": False}}), chart, kubernetes_version=KUBERNETES, api_versions=[])
    assert [o["data"] for o in rendered.objects] == [{"flag": "false"}]
    with pytest.raises(ChartRenderError, match=r"(?s)child:.*/flag.*want boolean"):
        render_release(release({"child": {"flag": "no"}}), chart, kubernetes_version=KUBERNETES, api_versions=[])
