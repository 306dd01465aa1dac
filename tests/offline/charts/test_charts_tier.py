"""The `charts` tier: the upstream charts hpcforge deploys, rendered as helm.v4.Chart renders them.

Needs $HPCFORGE_CHARTS: a directory of the unpacked charts at their pinned versions
(`<chart>-<version>/`, see docs/charts.md for how to make one). Without it the tier skips with that
reason, the one skip `.ci/run` (HPCFORGE_STRICT=1) allows: no chart repository is reachable from CI.

For dev (delivered by Pulumi), prod (by Argo CD), prod delivered by Pulumi (`pulumi` delivery is where
helm.v4.Chart drops hooks) and dev delivered by Argo CD:
0 render errors, 0 unhandled hooks, every rendered object valid against the Kubernetes schema and
the CRDs, and the defects found by rendering stay fixed (restricted securityContexts, nothing in a
namespace the AppProject does not list, the Kueue visibility port admitted, every PodMonitor naming a
container port of the pods it selects, the GPU Operator's dcgm-exporter metric list, job mapping and
ServiceMonitor as the chart turns them into the ClusterPolicy, and its operands tolerating the GPU
pools' taints); and the NetworkPolicy evaluator agrees with NCA on prod with the charts' own pods and policies.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from offline.admission.verdicts import metallb_bgp_type, recorded_objects
from offline.charts.objects import chart_documents
from offline.charts.render import RenderReport, hook_errors, render_stack
from offline.charts.source import ChartSource
from offline.program.engine import RecordedStack
from offline.schema import validate as schema
from policies.admission.metallb import WEBHOOKS, controller_bgp_type
from policies.admission.webhooks import webhook_verdicts
from policies.rules.podtemplates import display
from tests.helpers import REPO, require_charts, require_shared, run_stack, run_stack_file, write_variant
from tests.nca import World, compare, require_nca, run_nca, sample_hosts
from tests.policies.rules.test_netpol_nca import BARE_METAL, COREDNS, OUTSIDER

pytestmark = pytest.mark.charts

KUBERNETES = "1.33"
STACKS = ("dev", "prod", "prod-pulumi", "dev-argocd")


@pytest.fixture(scope="module")
def charts_dir() -> Path:
    return require_charts()


def _stack(name: str, tmp_dir: Path) -> RecordedStack:
    """`dev`, `prod`, or one of them in the other delivery mode (`prod-pulumi`, `dev-argocd`)."""
    if "-" not in name:
        return run_stack(name)
    stack, delivery = name.split("-", 1)
    document = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text())
    document["config"]["hpcforge:delivery"] = delivery
    path = tmp_dir / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return run_stack_file(path, stack)


@pytest.fixture(scope="module", params=STACKS)
def rendered(
    request: pytest.FixtureRequest, charts_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, RecordedStack, RenderReport]]:
    stack = _stack(request.param, tmp_path_factory.mktemp("stack"))
    report = render_stack(stack, ChartSource(charts_from=charts_dir), KUBERNETES)
    hooks = sum(len(c.hooks) for c in report.charts)
    unhandled = sum(len(hook_errors(c)) for c in report.charts)
    print(f"\n[charts tier] {request.param}: {len(report.charts)} charts, {len(report.errors)} render errors")
    print(f"[charts tier] {request.param}: {hooks} hooks rendered, {unhandled} unhandled (dropped by helm.v4.Chart)")
    for release, objects, crds, chart_hooks in report.counts():
        print(f"[charts tier] {request.param}:   {release}: {objects} objects, {crds} CRDs, {chart_hooks} hooks")
    yield request.param, stack, report


def _objects(report: RenderReport, release: str) -> list[dict[str, Any]]:
    return next(c.objects for c in report.charts if c.release.release == release)


def _pod_spec(document: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = document["spec"]["template"]["spec"]
    return spec


def test_every_chart_renders_without_error_or_unhandled_hook(rendered: tuple[str, RecordedStack, RenderReport]) -> None:
    _, _, report = rendered
    assert report.charts
    assert report.errors == []
    assert [c.release.release for c in report.charts if hook_errors(c)] == []


def test_rendered_objects_validate_against_the_kubernetes_schema_and_crds(
    rendered: tuple[str, RecordedStack, RenderReport],
) -> None:
    shared = require_shared("crds").parent
    name, _, report = rendered
    result = schema.check_documents(chart_documents(report), KUBERNETES, shared)
    print(
        f"[charts tier] {name}: schema: {result.builtin} built-in objects, {result.custom} custom resources, "
        f"{len(result.errors)} errors"
    )
    assert result.errors == []


RESTRICTED_DEPLOYMENTS = {
    "mariadb-operator": ("mariadb-operator", "mariadb-operator-webhook", "mariadb-operator-cert-controller"),
    "slurm-operator": ("slurm-operator", "slurm-operator-webhook"),
    "argo-workflows": ("argo-workflows-workflow-controller",),
}


def _restricted_problems(pod: dict[str, Any]) -> list[str]:
    """The `restricted` checks these Deployments failed (Pod Security Standards, Kubernetes 1.33)."""
    problems = []
    pod_context = pod.get("securityContext") or {}
    for container in pod["containers"]:
        context = container.get("securityContext") or {}
        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{container['name']}: allowPrivilegeEscalation != false")
        if "ALL" not in ((context.get("capabilities") or {}).get("drop") or []):
            problems.append(f"{container['name']}: capabilities.drop lacks ALL")
        if not (context.get("runAsNonRoot") or pod_context.get("runAsNonRoot")):
            problems.append(f"{container['name']}: runAsNonRoot != true")
        profile = (context.get("seccompProfile") or pod_context.get("seccompProfile") or {}).get("type")
        if profile not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{container['name']}: seccompProfile.type {profile!r}")
    return problems


def test_operator_deployments_pass_restricted(rendered: tuple[str, RecordedStack, RenderReport]) -> None:
    _, _, report = rendered
    found = {}
    for release, names in RESTRICTED_DEPLOYMENTS.items():
        if not any(c.release.release == release for c in report.charts):
            continue
        deployments = {d["metadata"]["name"]: d for d in _objects(report, release) if d["kind"] == "Deployment"}
        for name in names:
            found[name] = _restricted_problems(_pod_spec(deployments[name]))
    # argo-server runs only where the UI is on (prod).
    for server in (d for c in report.charts for d in c.objects if d["kind"] == "Deployment"):
        if server["metadata"]["name"] == "argo-workflows-server":
            found["argo-workflows-server"] = _restricted_problems(_pod_spec(server))
    assert found and all(problems == [] for problems in found.values()), found


def test_argo_cd_permits_every_rendered_object_its_applications_sync(rendered: tuple[str, RecordedStack, RenderReport]) -> None:
    """Each chart-installing Application's AppProject (destinations, cluster/namespace resource white- and
    blacklists, as Argo CD 3.4 computes them) applied to every rendered object of its sync, as
    `offline check --render-charts` reports it: nothing refused (prod's argo-workflows Role in `devops`
    was)."""
    from offline.admission.verdicts import argocd_chart_verdicts

    name, stack, report = rendered
    verdicts = argocd_chart_verdicts(stack, report)
    judged = sum(v.synced for v in verdicts)
    print(f"[charts tier] {name}: Argo CD: {len(verdicts)} chart Applications, {judged} synced objects judged")
    assert {str(r) for v in verdicts for r in v.refusals} == set()
    delivered = [c for c in report.charts if c.release.delivery == "argocd"]
    assert len(verdicts) == len(delivered)
    assert judged >= sum(len(c.installed) for c in delivered)


def test_kueue_visibility_port_is_admitted(rendered: tuple[str, RecordedStack, RenderReport]) -> None:
    _, stack, report = rendered
    if not any(c.release.release == "kueue" for c in report.charts):
        assert not any(r.type == "hpcforge:batch:Batch" for r in stack.resources)  # no Kueue: nothing to admit
        return
    service = next(
        o for o in _objects(report, "kueue") if o["kind"] == "Service" and o["metadata"]["name"] == "kueue-visibility-server"
    )
    target = service["spec"]["ports"][0]["targetPort"]
    admitted = {
        port.get("port")
        for r in stack.kubernetes_objects()
        if r.inputs["kind"] == "NetworkPolicy" and r.inputs["metadata"].get("namespace") == "kueue-system"
        for rule in r.inputs["spec"].get("ingress") or []
        for port in rule.get("ports") or []
    }
    assert target in admitted


def test_each_known_hook_renders_when_its_values_are_not_set(charts_dir: Path) -> None:
    """components/chart_hooks.py is load-bearing: without its values each chart renders its hook, which
    the renderer then names as an error."""
    import dataclasses

    from components.chart_hooks import HOOKS, hook_values
    from offline.charts.render import chart_releases, render_release

    def without(values: Any, switch: Any) -> Any:
        if not isinstance(values, dict) or not isinstance(switch, dict):
            return values
        return {k: without(v, switch.get(k)) for k, v in values.items() if k not in switch or isinstance(switch[k], dict)}

    releases = {r.pin.chart: r for r in chart_releases(run_stack("prod"))}
    for chart in sorted({h.chart for h in HOOKS}):
        release = releases[chart]
        bare = dataclasses.replace(release, values=without(dict(release.values), hook_values(release.pin)), delivery="pulumi")
        source = ChartSource(charts_from=charts_dir).locate(release.pin)
        rendered = render_release(bare, source, kubernetes_version=KUBERNETES, api_versions=[])
        errors = hook_errors(rendered)
        print(f"[charts tier] {chart} without hpcforge's hook values: {len(rendered.hooks)} hooks, e.g. {errors[0][:160]}")
        assert errors and all(f"chart {chart} {release.pin.version}" in e for e in errors)


def test_no_generated_secret_reaches_the_rendered_objects(rendered: tuple[str, RecordedStack, RenderReport]) -> None:
    """Secret values (RandomPassword results in the values) render as `[secret]`; the mock engine's
    stand-ins (`MOCKSECRET...`) must appear in no rendered file."""
    from offline.program.engine import REDACTED

    _, _, report = rendered
    dumped = yaml.safe_dump([document for _, document in chart_documents(report)])
    assert "MOCKSECRET" not in dumped
    argocd_values = next(c.release.values for c in report.charts if c.release.release == "argocd")
    assert argocd_values["configs"]["secret"]["argocdServerAdminPassword"] == REDACTED


@pytest.mark.policy_protocol
def test_latest_through_upstream_chart_values_fails_the_check_only_when_rendered(charts_dir: Path) -> None:
    """The issue's example: `redis.image.tag: latest` in argo-cd's values passes a check of the Chart's
    declared values and fails `images-pinned` (mandatory in prod) on the rendered Deployment."""
    import dataclasses

    from offline.charts.objects import engine_view
    from offline.policy.check import check_recorded_stack
    from offline.policy.packs import PackSpec

    stack = run_stack("dev")
    override = {"redis": {"image": {"tag": "latest"}}}

    def with_latest(resource: Any) -> Any:
        if not (resource.is_chart and resource.name == "argocd"):
            return resource
        return dataclasses.replace(
            resource,
            inputs={**resource.inputs, "values": {**resource.inputs["values"], **override}},
            raw_inputs={**resource.raw_inputs, "values": {**resource.raw_inputs["values"], **override}},
        )

    resources = [with_latest(r) for r in stack.resources]
    stack = dataclasses.replace(stack, resources=resources)
    packs = [PackSpec(REPO / "policies" / "gitops-drift", REPO / "policies" / "config" / "prod.json")]
    assert check_recorded_stack(stack, packs).select(policy="images-pinned") == []
    report = render_stack(stack, ChartSource(charts_from=charts_dir), KUBERNETES)
    findings = check_recorded_stack(engine_view(stack, report), packs).select(policy="images-pinned")
    assert [(f.level, f.urn.rsplit("::", 1)[-1]) for f in findings] == [("mandatory", "argocd:argocd/argocd-redis")]
    assert ":latest" in findings[0].message


def test_the_sriov_operator_memory_limit_exemption_is_needed_and_no_value_removes_it(
    rendered: tuple[str, RecordedStack, RenderReport], charts_dir: Path
) -> None:
    """prod.json exempts one Deployment from container-resources (docs/policies.md): the vendored
    sriov-network-operator subchart writes the operator container's resources literally, no value in
    them, and the rendered Deployment has no memory limit. When upstream makes them a value, this fails:
    set the limit through it and drop the exemption."""
    import json

    name, _, report = rendered
    if not any(c.release.release == "network-operator" for c in report.charts):
        return  # no RDMA layer in this stack (dev)
    [deployment] = [
        d
        for d in _objects(report, "network-operator")
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "network-operator-sriov-network-operator"
    ]
    [container] = _pod_spec(deployment)["containers"]
    assert container["resources"] == {"requests": {"cpu": "100m", "memory": "100Mi"}}
    template = (
        charts_dir / "network-operator-26.4.1" / "charts" / "sriov-network-operator" / "templates" / "operator.yaml"
    ).read_text()
    block = template.split("          resources:\n", 1)[1].split("          env:\n", 1)[0]
    assert "{{" not in block, block
    exempt = json.loads((REPO / "policies" / "config" / "prod.json").read_text())["container-resources"]["exempt"]
    assert {"namespace": "nvidia-network-operator", "kind": "Deployment", "name": deployment["metadata"]["name"]} in exempt
    print(f"[charts tier] {name}: sriov-network-operator resources {container['resources']} (literal in the subchart)")


def test_gpu_operator_chart_gives_dcgm_exporter_hpcforges_metric_list(rendered: tuple[str, RecordedStack, RenderReport]) -> None:
    """The chart's own templates turn `dcgmExporter.config` into the ConfigMap and the ClusterPolicy's reference to it
    (what makes the operator mount it and set DCGM_EXPORTER_COLLECTORS; components/layers/gpu/dcgm_metrics.py)."""
    from components.layers.gpu.dcgm_metrics import METRICS_CONFIG_MAP, dcgm_metrics_csv

    _, stack, report = rendered
    if not any(c.release.release == "gpu-operator" for c in report.charts):
        assert not any(r.type == "hpcforge:gpu:GpuOperator" for r in stack.resources)  # no GPUs: nothing to configure
        return
    objects = _objects(report, "gpu-operator")
    config_map = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == METRICS_CONFIG_MAP)
    assert config_map["data"]["dcgm-metrics.csv"].strip() == dcgm_metrics_csv().strip()
    policy = next(o for o in objects if o["kind"] == "ClusterPolicy")
    assert policy["spec"]["dcgmExporter"]["config"] == {"name": METRICS_CONFIG_MAP}
    # Scraped once: by the site's PodMonitor where the observability layer runs, else by the operator's ServiceMonitor.
    site_prometheus = any(r.type == "hpcforge:observability:Observability" for r in stack.resources)
    assert policy["spec"]["dcgmExporter"]["serviceMonitor"]["enabled"] is not site_prometheus
    # HPC job mapping: the operator mounts this host directory into dcgm-exporter (components/layers/gpu/config.py `job_mapping_dir`).
    assert policy["spec"]["dcgmExporter"]["hpcJobMapping"] == {"enabled": True, "directory": "/var/lib/dcgm-exporter/job-mapping"}


def test_every_pod_monitor_names_a_container_port_of_the_pods_the_chart_renders(
    rendered: tuple[str, RecordedStack, RenderReport],
) -> None:
    """A PodMonitor selects container ports by name (prometheus-operator keeps targets whose
    `__meta_kubernetes_pod_container_port_name` equals `port`): a name the pods do not have scrapes nothing, silently.
    Checked for the targets whose pods the charts render; dcgm-exporter's pods are the GPU Operator's (its port name is
    cited in components/layers/observability/objects.py)."""
    from components.layers.observability.objects import SITE_TARGETS

    _, stack, report = rendered
    monitors = {
        r.inputs["metadata"]["name"]: r.inputs["spec"] for r in stack.kubernetes_objects() if r.inputs["kind"] == "PodMonitor"
    }
    if not monitors:
        assert not any(r.type == "hpcforge:observability:Observability" for r in stack.resources)
        return
    checked = 0
    for target in SITE_TARGETS:
        if target.name not in monitors:
            continue
        ports = {
            port.get("name")
            for chart in report.charts
            for o in chart.objects
            if isinstance(o.get("spec"), dict)
            and isinstance(o["spec"].get("template"), dict)
            and (o["metadata"].get("namespace") or chart.release.namespace) == target.namespace
            and all(o["spec"]["template"].get("metadata", {}).get("labels", {}).get(k) == v for k, v in target.labels)
            for container in o["spec"]["template"]["spec"].get("containers", [])
            for port in container.get("ports", [])
        }
        assert monitors[target.name]["podMetricsEndpoints"][0]["port"] in ports, (target.name, sorted(ports))
        checked += 1
    assert checked == len(SITE_TARGETS)


def test_gpu_operands_and_feature_discovery_tolerate_the_gpu_pools_taints(
    rendered: tuple[str, RecordedStack, RenderReport],
) -> None:
    """What runs the device plugin on the GPU nodes, as the chart renders it: the ClusterPolicy's operand tolerations
    (the operator copies them into every operand DaemonSet) and Node Feature Discovery's worker DaemonSet."""
    from components.site.checks.gpu import gpu_pool_taints
    from components.site.loader import load_config
    from tests.helpers import config_values, raw_config, tolerates

    name, stack, report = rendered
    if not any(c.release.release == "gpu-operator" for c in report.charts):
        assert not any(r.type == "hpcforge:gpu:GpuOperator" for r in stack.resources)
        return
    taints = gpu_pool_taints(load_config(raw_config(config_values(name.split("-")[0]))))
    assert taints
    objects = _objects(report, "gpu-operator")
    policy = next(o for o in objects if o["kind"] == "ClusterPolicy")
    worker = next(
        o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"].endswith("node-feature-discovery-worker")
    )
    for key in taints:
        assert tolerates(policy["spec"]["daemonsets"]["tolerations"], key), key
        assert tolerates(_pod_spec(worker).get("tolerations", []), key), key


def test_nca_and_the_evaluator_agree_on_prod_with_its_charts(charts_dir: Path, tmp_path: Path) -> None:
    """tests/policies/rules/test_netpol_nca.py with the charts' own pods and NetworkPolicies (Argo CD's, for one): the evaluator that
    the policy packs use and NCA agree on every sampled connection (about a million; 0 disagreements)."""
    nca = require_nca()
    stack = run_stack("prod")
    report = render_stack(stack, ChartSource(charts_from=charts_dir), KUBERNETES)
    objects = [r.inputs for r in stack.kubernetes_objects()] + [o for c in report.charts for o in c.objects]
    world = World.of(objects, extra_pods=[COREDNS])
    result = compare(world, run_nca(nca, world, tmp_path), sample_hosts(world, [BARE_METAL, OUTSIDER]))
    print(f"\n[charts tier] NCA: {len(world.pods)} pods, {len(world.policies)} policies, {result.compared} connections")
    assert len(world.pods) > 50 and 0 < result.allowed < result.compared
    assert result.disagreements == []


# --- cert-manager's and MetalLB's validating webhooks ---------------------------------------------------------


def _webhook_configuration(report: RenderReport, release: str, name: str) -> dict[str, Any]:
    [found] = [
        o for o in _objects(report, release) if o["kind"] == "ValidatingWebhookConfiguration" and o["metadata"]["name"] == name
    ]
    return found


def test_operator_webhooks_are_enabled_and_admit_every_object(rendered: tuple[str, RecordedStack, RenderReport]) -> None:
    """With hpcforge's values both charts render their validating webhooks (failurePolicy Fail, so a refusal
    stops `pulumi up` or the sync), and every cert-manager and MetalLB object, hpcforge's and the charts', passes
    them (policies/admission/certmanager/, policies/admission/metallb/)."""
    name, stack, report = rendered
    cert_manager = _webhook_configuration(report, "cert-manager", "cert-manager-webhook")
    [hook] = cert_manager["webhooks"]
    assert hook["name"] == "webhook.cert-manager.io" and hook["failurePolicy"] == "Fail"
    assert hook["rules"][0]["apiGroups"] == ["cert-manager.io", "acme.cert-manager.io"] and hook["rules"][0]["resources"] == [
        "*/*"
    ]
    assert set(hook["rules"][0]["operations"]) == {"CREATE", "UPDATE"}
    assert hook["namespaceSelector"]["matchExpressions"][0]["key"] == "cert-manager.io/disable-validation"
    metallb = _webhook_configuration(report, "metallb", "metallb-webhook-configuration")
    hooks = {h["name"]: h for h in metallb["webhooks"]}
    assert set(WEBHOOKS.values()) <= set(hooks)
    assert {h["failurePolicy"] for h in hooks.values()} == {"Fail"}
    assert {h["clientConfig"]["service"]["namespace"] for h in hooks.values()} == {"metallb-system"}
    [controller] = [o for o in _objects(report, "metallb") if o["kind"] == "Deployment"]
    assert "--webhook-mode=enabled" in controller["spec"]["template"]["spec"]["containers"][0]["args"]

    objects = recorded_objects(stack).objects
    rendered_objects = [o for c in report.charts for o in c.installed]
    assert controller_bgp_type(rendered_objects) == metallb_bgp_type(stack)  # the chart's env, as reproduced from values
    verdicts = webhook_verdicts([*objects, *rendered_objects])
    kinds = {v.obj["kind"] for v in verdicts}
    from_charts = [v for v in verdicts if any(v.obj is o for o in rendered_objects)]
    print(
        f"[charts tier] {name}: webhooks: {len(verdicts)} objects judged ({len(from_charts)} from charts), kinds {sorted(kinds)}"
    )
    assert {display(v.obj): v.refusal for v in verdicts if v.refusal} == {}
    assert {"Certificate", "ClusterIssuer", "IPAddressPool", "L2Advertisement"} <= kinds
    # slurm-operator's webhook certificate chain (Issuers and Certificates) is judged too.
    assert any(v.obj["kind"] == "Issuer" for v in from_charts)


def test_metallb_controller_backend_follows_the_advertisement_mode(charts_dir: Path, tmp_path: Path) -> None:
    """`mode: bgp` switches the chart's frr-k8s backend on: its controller (whose webhook judges the BGPPeers)
    then runs with METALLB_BGP_TYPE=frr-k8s, and the peers hpcforge renders pass its rules."""

    def bgp(values: dict[str, Any]) -> None:
        peers = [
            {"name": "router-a", "address": "10.10.0.1", "peerAsn": 65000, "myAsn": 64512},
            {"name": "router-b", "address": "10.10.0.2", "peerAsn": 65000, "myAsn": 64512},
        ]
        values["hpcforge:network"]["advertisement"] = {"mode": "bgp", "peers": peers}

    stack = run_stack_file(write_variant(tmp_path, "prod", bgp), "prod")
    report = render_stack(stack, ChartSource(charts_from=charts_dir), KUBERNETES)
    metallb = [o for c in report.charts if c.release.release == "metallb" for o in c.installed]
    assert controller_bgp_type(metallb) == "frr-k8s"
    objects = recorded_objects(stack).objects
    verdicts = [v for v in webhook_verdicts([*objects, *metallb]) if v.obj["kind"] in ("BGPPeer", "BGPAdvertisement")]
    assert len(verdicts) == 3 and all(v.admitted for v in verdicts)
