"""Program tier: admission of what the dev and prod stacks declare, in both delivery modes, and the
fixes for what admission found in the charts hpcforge deploys (issue 15), each with a negative case
proving the check bites.

Chart objects are not rendered here (that is the charts tier's job, with the upstream charts). Where a
test needs a chart's objects, it uses either
- a few objects rendered from the upstream chart at its pinned tag with hpcforge's prod values by
  Helm v4 (helm-python-sdk 0.2.2, `Chart.render`, release and namespace as deployed) on 2026-11-23,
  trimmed to the fields admission reads (said so at each fixture), or
- the chart's template wiring, cited by file, applied to the values hpcforge passes.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.charts import IN_CLUSTER
from offline.admission.verdicts import chart_values as offline_chart_values
from offline.admission.verdicts import metallb_bgp_type, recorded_objects
from offline.program.engine import RecordedStack
from policies.admission.argocd import appproject_verdicts
from policies.admission.pss import pod_security_verdicts
from policies.admission.reachability import judge_api_server_calls
from policies.admission.report import admission_report
from policies.admission.webhooks import webhook_verdicts
from policies.rules.netpol import API_SERVER, Host
from policies.rules.podtemplates import display, kind_of, name_of, namespace_of
from tests.helpers import REPO, require_shared, run_stack_file, write_variant


def flipped(stack: str, tmp_path: Path) -> RecordedStack:
    """The stack in the other delivery mode (dev is `pulumi`, prod `argocd`)."""
    other = {"dev": "argocd", "prod": "pulumi"}[stack]

    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:delivery"] = other

    return run_stack_file(write_variant(tmp_path, stack, edit), stack)


def assert_all_admitted(stack: RecordedStack) -> None:
    found = recorded_objects(stack)
    report = admission_report(found.objects, found.synced, chart_values=lambda chart: offline_chart_values(stack, chart))
    for family in ("pss", "webhooks", "slinky", "mariadb"):
        assert report.verdicts(family), f"no object of family {family} found: the walk is broken"
    assert {s.family.name: [v.reasons for v in s.refused] for s in report.sections} == {
        s.family.name: [] for s in report.sections
    }
    assert report.gaps == []


def test_dev_and_prod_own_objects_pass_admission(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    assert_all_admitted(dev_stack)
    assert_all_admitted(prod_stack)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_other_delivery_mode_passes_admission(stack: str, tmp_path: Path) -> None:
    assert_all_admitted(flipped(stack, tmp_path))


def test_operator_custom_resources_are_judged(prod_stack: RecordedStack) -> None:
    objects = recorded_objects(prod_stack).objects
    kinds = {kind_of(v.template.owner) for v in pod_security_verdicts(objects)}
    assert {"NodeSet", "LoginSet", "Controller", "Accounting", "RestApi", "MariaDB", "AppWrapper"} <= kinds


def test_privileged_nodeset_in_a_restricted_namespace_is_rejected(prod_stack: RecordedStack) -> None:
    objects = recorded_objects(prod_stack).objects
    objects = copy.deepcopy(objects)
    for obj in objects:
        if kind_of(obj) == "Namespace" and name_of(obj) == "slurm":
            obj["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = "restricted"
    rejected = [v for v in pod_security_verdicts(objects) if not v.admitted]
    assert any(kind_of(v.template.owner) == "NodeSet" for v in rejected)


# --- Kueue's visibility APIServices (port 8082) ------------------------------------------------------

# Rendered from kubernetes-sigs/kueue v0.19.2 charts/kueue (templates/visibility/apiservice_v1beta1.yaml,
# visibility/service.yaml, manager/manager.yaml) with hpcforge's prod values, release `kueue` in
# `kueue-system`, by helm-python-sdk 0.2.2; trimmed to what reachability reads.
KUEUE_LABELS = {"app.kubernetes.io/instance": "kueue", "app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}
KUEUE_CHART_OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta1.visibility.kueue.x-k8s.io"},
        "spec": {"service": {"name": "kueue-visibility-server", "namespace": "kueue-system"}},
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kueue-visibility-server", "namespace": "kueue-system"},
        "spec": {"ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8082}], "selector": KUEUE_LABELS},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
        "spec": {
            "template": {
                "metadata": {"labels": KUEUE_LABELS},
                "spec": {
                    "containers": [
                        {
                            "name": "manager",
                            "ports": [
                                {"containerPort": 8082, "name": "visibility", "protocol": "TCP"},
                                {"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"},
                                {"containerPort": 8443, "name": "metrics", "protocol": "TCP"},
                            ],
                        }
                    ]
                },
            }
        },
    },
]


def test_kueue_visibility_apiservice_reachable_through_hpcforges_policies(prod_stack: RecordedStack) -> None:
    # The API server calls from a control-plane address (prod's policy config, which the pack judges with); prod's
    # NetworkPolicies name exactly those addresses (hpcforge:kubernetes.apiServerAddresses), so an unknown source
    # would not be admitted.
    address = json.loads((REPO / "policies/config/prod.json").read_text())["apiserver-reachability"]["apiServerAddress"]
    source = Host(API_SERVER.name, address)
    objects = recorded_objects(prod_stack).objects
    [verdict] = judge_api_server_calls([*objects, *KUEUE_CHART_OBJECTS], source)
    assert verdict.admitted is True, verdict.reasons
    without = [o for o in objects if not (kind_of(o) == "NetworkPolicy" and name_of(o) == "allow-ingress-visibility")]
    [refused] = judge_api_server_calls([*without, *KUEUE_CHART_OBJECTS], source)
    assert refused.admitted is False and "8082" in refused.reasons[0]


# --- argo-workflows writes into the lane namespace ---------------------------------------------------

# Rendered from argoproj/argo-helm argo-workflows-1.0.18 charts/argo-workflows with hpcforge's prod
# values (controller.workflowNamespaces [devops], workflow.serviceAccount/rbac), release
# `argo-workflows` in `argo`, by helm-python-sdk 0.2.2: the three objects it puts in `devops`.
LANE_OBJECTS = [
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "argo-workflow", "namespace": "devops"}},
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "argo-workflows-workflow", "namespace": "devops"},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "argo-workflows-workflow", "namespace": "devops"},
    },
]


def _application(objects: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    return next(o for o in objects if kind_of(o) == "Application" and name_of(o) == name)


def chart_writes_lane(stack: RecordedStack) -> bool:
    """Whether the values make the chart write into the lane namespace (`controller.workflowNamespaces`)."""
    values = chart_values(stack, "argo-workflows")
    return "devops" in ((values.get("controller") or {}).get("workflowNamespaces") or [])


def test_argo_workflows_sync_is_permitted(prod_stack: RecordedStack) -> None:
    objects = recorded_objects(prod_stack).objects
    lane = LANE_OBJECTS if chart_writes_lane(prod_stack) else []
    verdicts = appproject_verdicts(objects, {"argocd/argo-workflows": lane})
    assert all(v.admitted for v in verdicts), [v.refusals for v in verdicts if not v.admitted]
    if lane:
        project = next(o for o in objects if kind_of(o) == "AppProject" and name_of(o) == "hpcforge-platform")
        assert {"server": IN_CLUSTER, "namespace": "devops"} in project["spec"]["destinations"]


def test_chart_objects_outside_the_projects_destinations_refuse_the_sync(prod_stack: RecordedStack) -> None:
    objects = recorded_objects(prod_stack).objects
    app = _application(objects, "argo-workflows")
    project = next(o for o in objects if kind_of(o) == "AppProject" and name_of(o) == "hpcforge-platform")
    narrowed = copy.deepcopy(project)
    narrowed["spec"]["destinations"] = [d for d in narrowed["spec"]["destinations"] if d["namespace"] != "devops"]
    others = [o for o in objects if o is not project]
    verdicts = appproject_verdicts([*others, narrowed], {"argocd/argo-workflows": LANE_OBJECTS})
    [refused] = [v for v in verdicts if not v.admitted]
    assert refused.application is app
    assert "namespace devops is not permitted in project 'hpcforge-platform'" in str(refused.refusals[0])


# --- chart securityContext values -----------------------------------------------------------------


def chart_values(stack: RecordedStack, chart: str) -> dict[str, Any]:
    """The values hpcforge passes to `chart` (a helm.v4.Chart's or an Application's)."""
    for resource in stack.resources:
        if resource.is_chart and str(resource.inputs.get("chart", "")).rstrip("/").rsplit("/", 1)[-1] == chart:
            return dict(resource.inputs.get("values") or {})
        source = (resource.inputs.get("spec") or {}).get("source") or {}
        if resource.is_kubernetes_object and resource.inputs.get("kind") == "Application" and source.get("chart") == chart:
            return dict((source.get("helm") or {}).get("valuesObject") or {})
    raise AssertionError(f"{chart} is not deployed")


def merge(base: Any, override: Any) -> Any:
    """Helm's coalescing of user values over chart defaults (maps merged, everything else replaced)."""
    if isinstance(base, dict) and isinstance(override, dict):
        return {**base, **{k: merge(base.get(k), v) for k, v in override.items()}}
    return override if override is not None else base


def deployment(namespace: str, name: str, pod_sc: Any, container_sc: Any) -> dict[str, Any]:
    """A Deployment the way these charts template it: `with .podSecurityContext` on the pod,
    `with .securityContext` on the container (each omitted when empty)."""
    container: dict[str, Any] = {"name": name}
    if container_sc:
        container["securityContext"] = container_sc
    spec: dict[str, Any] = {"containers": [container]}
    if pod_sc:
        spec["securityContext"] = pod_sc
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


# Where each chart puts the values (template files at the pinned tags):
# - slurm-operator v1.2.1 helm/slurm-operator/templates/{operator,webhook}/deployment.yaml:
#   `.Values.<operator|webhook>.podSecurityContext` / `.securityContext`;
# - mariadb-operator v26.6.0 deploy/charts/mariadb-operator/templates/operator/deployment.yaml
#   (`.Values.podSecurityContext` / `.securityContext`), webhook/deployment.yaml (`.Values.webhook.*`),
#   cert-controller/deployment.yaml (`.Values.certController.*`);
# - argo-workflows 1.0.18 charts/argo-workflows/templates/controller/workflow-controller-deployment.yaml
#   and server/server-deployment.yaml: `.Values.<controller|server>.podSecurityContext` / `.securityContext`.
CHART_WORKLOADS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "slurm-operator": [("slurm-operator", ("operator",)), ("slurm-operator-webhook", ("webhook",))],
    "mariadb-operator": [
        ("mariadb-operator", ()),
        ("mariadb-operator-webhook", ("webhook",)),
        ("cert-controller", ("certController",)),
    ],
    "argo-workflows": [("workflow-controller", ("controller",)), ("argo-server", ("server",))],
}
CHART_NAMESPACE = {"slurm-operator": "slinky", "mariadb-operator": "mariadb-system", "argo-workflows": "argo"}
CHART_DIRS = {
    "slurm-operator": "slurm-operator-1.2.1",
    "mariadb-operator": "mariadb-operator-26.6.0",
    "argo-workflows": "argo-workflows-1.0.18",
}


def chart_workloads(stack: RecordedStack, chart: str, *, ours: bool = True) -> list[dict[str, Any]]:
    defaults = yaml.safe_load((require_shared("charts", CHART_DIRS[chart]) / "values.yaml").read_text())
    values = merge(defaults, chart_values(stack, chart)) if ours else defaults
    found = []
    for name, path in CHART_WORKLOADS[chart]:
        section: Any = values
        for key in path:
            section = section.get(key) or {}
        found.append(deployment(CHART_NAMESPACE[chart], name, section.get("podSecurityContext"), section.get("securityContext")))
    return found


@pytest.mark.parametrize("chart", sorted(CHART_WORKLOADS))
def test_chart_workloads_pass_restricted_with_hpcforges_values(prod_stack: RecordedStack, chart: str) -> None:
    objects = recorded_objects(prod_stack).objects
    namespace = CHART_NAMESPACE[chart]
    assert any(kind_of(o) == "Namespace" and name_of(o) == namespace for o in objects)
    verdicts = [
        v for v in pod_security_verdicts([*objects, *chart_workloads(prod_stack, chart)]) if v.template.namespace == namespace
    ]
    assert verdicts and all(v.policy.level == "restricted" for v in verdicts)
    assert [v.message for v in verdicts if not v.admitted] == []
    # With the chart's defaults alone (what hpcforge passed before), `restricted` refuses them.
    bare = [v for v in pod_security_verdicts([*objects, *chart_workloads(prod_stack, chart, ours=False)]) if not v.admitted]
    assert {namespace_of(v.template.owner) for v in bare} == {namespace}


# --- policy config and the report ----------------------------------------------------------------


def test_prod_allow_list_covers_every_dev_entry() -> None:
    def entries(stack: str) -> list[Any]:
        document = json.loads((REPO / "policies" / "config" / f"{stack}.json").read_text())
        return list(document["privileged-allow-list"]["allowList"])

    prod = entries("prod")
    assert [e for e in entries("dev") if e not in prod] == []


def test_offline_admission_report(tmp_path: Path) -> None:
    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "offline", "admission", "--stack", "dev", *extra],
            check=False,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )

    ok = run()
    assert ok.returncode == 0, ok.stderr
    assert "ok   NodeSet slurm/" in ok.stdout and "0 of " in ok.stdout.splitlines()[-1]
    bad = deployment("mariadb-system", "mariadb-operator", None, None)
    (tmp_path / "chart.yaml").write_text(yaml.safe_dump(bad))
    refused = run("--objects", str(tmp_path))
    assert refused.returncode == 1
    assert (
        'DENY Deployment mariadb-system/mariadb-operator spec.template.spec [mariadb-system]: violates PodSecurity "restricted:v1.33"'
        in refused.stdout
    )


REFUSED_BY_FAMILY = {
    "slinky": {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "NodeSet",
        "metadata": {"name": "gpu", "namespace": "slurm"},
        "spec": {"controllerRef": {"name": "slurm"}, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}},
    },
    "kueue": {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "q"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "cpu", "resources": [{"name": "cpu", "nominalQuota": "8", "borrowingLimit": "4"}]}],
                }
            ]
        },
    },
    "webhooks": {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"commonName": "c", "secretName": "Not_A_Name", "issuerRef": {"name": "ca", "kind": "ClusterIssuer"}},
    },
    "mariadb": {
        "apiVersion": "k8s.mariadb.com/v1alpha1",
        "kind": "Backup",
        "metadata": {"name": "b", "namespace": "database"},
        "spec": {"mariaDbRef": {"name": "mariadb"}, "schedule": {"cron": "15 24 * * *"}, "storage": {"s3": {"bucket": "b"}}},
    },
}


@pytest.mark.parametrize("family", sorted(REFUSED_BY_FAMILY))
def test_a_refusal_in_any_operator_family_refuses_the_report(family: str) -> None:
    """Report.refused (what `offline admission` exits 1 on) counts the Slinky, Kueue, cert-manager/MetalLB and
    mariadb-operator verdicts alike: one refused object of one family is enough, and only that family reports it."""
    report = admission_report([REFUSED_BY_FAMILY[family]])
    assert report.refused
    assert {name: len(report.refused_in(name)) for name in REFUSED_BY_FAMILY} == {
        name: int(name == family) for name in REFUSED_BY_FAMILY
    }
    clause = {
        "slinky": "1 of 1 Slinky custom resources refused",
        "kueue": "1 of 1 Kueue objects and jobs refused",
        "webhooks": "1 of 1 cert-manager and MetalLB objects refused by their webhooks",
        "mariadb": "1 of 1 mariadb-operator objects refused",
    }[family]
    assert clause in report.lines()[-1]
    assert not admission_report([]).refused


def test_rendered_files_are_attributed_to_their_application(tmp_path: Path) -> None:
    from offline.admission.verdicts import attribute, read_objects

    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "wf", "namespace": "argocd"},
        "spec": {"source": {"helm": {"releaseName": "argo-workflows"}}, "destination": {"namespace": "argo"}},
    }
    labelled = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"release": "argo-workflows"}}}
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o", "namespace": "x"}}
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "labelled.yaml").write_text(yaml.safe_dump(labelled))
    (loose / "other.yaml").write_text(yaml.safe_dump(other))
    synced, applied = attribute([app], read_objects(loose))
    assert [(kind_of(o), namespace_of(o)) for o in synced["argocd/wf"]] == [("ConfigMap", "argo")]
    assert ("ConfigMap", "x") in [(kind_of(o), namespace_of(o)) for o in applied]

    # An `offline render --render-charts` output: charts/<release>/ is the release's; the stack's own
    # objects beside it are not read again.
    rendered = tmp_path / "rendered"
    layout = rendered / "charts" / "argo-workflows"
    (layout / "devops").mkdir(parents=True)
    (layout / "hooks").mkdir()
    (layout / "devops" / "Role-r.yaml").write_text(yaml.safe_dump(LANE_OBJECTS[1]))
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "annotations": {"helm.sh/hook": "pre-install"}}}
    (layout / "hooks" / "Job-j.yaml").write_text(yaml.safe_dump(job))
    # Argo CD ignores Helm test hooks (argo-cd docs/user-guide/helm.md): never applied.
    test_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t", "annotations": {"helm.sh/hook": "test"}}}
    (layout / "hooks" / "Pod-t.yaml").write_text(yaml.safe_dump(test_pod))
    (rendered / "own.yaml").write_text(yaml.safe_dump(other))
    synced, applied = attribute([app], read_objects(rendered))
    assert sorted((kind_of(o), namespace_of(o)) for o in synced["argocd/wf"]) == [("Job", "argo"), ("Role", "devops")]
    assert "ConfigMap" not in [kind_of(o) for o in applied]
    # The same layout handed over in process.
    from offline.admission.verdicts import rendered_objects

    in_process = rendered_objects([("charts/argo-workflows/devops/Role-r.yaml", LANE_OBJECTS[1]), ("other/x.yaml", other)])
    assert [(f.release, f.hook, kind_of(f.document)) for f in in_process] == [("argo-workflows", False, "Role")]
    # A hook of a chart that no Application delivers is not applied (helm.v4.Chart drops hooks).
    synced, applied = attribute([], read_objects(rendered))
    assert synced == {} and [kind_of(o) for o in applied] == ["Role"]


def test_slurm_accounting_reaches_mariadb_through_hpcforges_policies(prod_stack: RecordedStack) -> None:
    from policies.rules.netpol import Cluster, Pod, connection_allowed, workload_pod

    objects = recorded_objects(prod_stack).objects
    cluster = Cluster.of(objects)
    slurmdbd = workload_pod(objects, "Accounting", "slurm", "slurm")
    mariadb = workload_pod(objects, "MariaDB", "database", "mariadb")
    assert ("mariadb", 3306, "TCP") in mariadb.ports
    assert connection_allowed(cluster, slurmdbd, mariadb, 3306)
    assert not connection_allowed(cluster, slurmdbd, mariadb, 3307)
    assert not connection_allowed(cluster, Pod("registry", {}), mariadb, 3306)


# --- cert-manager's and MetalLB's validating webhooks -------------------------------------------------------
#
# The charts enable them with hpcforge's values (tests/offline/charts/test_charts_tier.py renders their
# ValidatingWebhookConfigurations); here every cert-manager and MetalLB object of dev and prod is held against
# the webhooks' rules (policies/admission/certmanager/, policies/admission/metallb/), and each config or
# renderer fix that keeps user config from producing a refused object is shown biting.


def webhook_report(stack: RecordedStack) -> dict[str, str | None]:
    """`Kind namespace/name` -> the webhook's refusal (None: admitted), for every judged object."""
    objects = recorded_objects(stack).objects
    return {display(v.obj): v.refusal for v in webhook_verdicts(objects, metallb_bgp_type=metallb_bgp_type(stack))}


def judged_kinds(report: dict[str, str | None]) -> set[str]:
    return {key.split(" ", 1)[0] for key in report}


def test_dev_and_prod_operator_objects_pass_their_webhooks(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    dev, prod = webhook_report(dev_stack), webhook_report(prod_stack)
    assert {k: v for k, v in {**dev, **prod}.items() if v} == {}
    common = {"Certificate", "ClusterIssuer", "IPAddressPool", "L2Advertisement"}
    assert judged_kinds(dev) == judged_kinds(prod) == common
    # prod: the bootstrap, CA and ACME ClusterIssuers, the CA and four service Certificates, two pools, one advertisement.
    assert len(prod) == 11 and "ClusterIssuer acme" in prod and "IPAddressPool metallb-system/login" in prod
    # Both stacks run MetalLB in L2 mode: the chart's controller gets no METALLB_BGP_TYPE (native).
    assert metallb_bgp_type(dev_stack) == metallb_bgp_type(prod_stack) == "native"


def bgp_mode(peers: list[dict[str, Any]]) -> Any:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:network"]["advertisement"] = {"mode": "bgp", "peers": peers}

    return edit


ROUTERS = [
    {"name": "router-a", "address": "10.10.0.1", "peerAsn": 65000, "myAsn": 64512},
    {"name": "router-b", "address": "10.10.0.2", "peerAsn": 65000, "myAsn": 64512, "holdTime": "3s"},
]


def test_prod_in_bgp_mode_passes_the_frr_k8s_webhooks(tmp_path: Path) -> None:
    stack = run_stack_file(write_variant(tmp_path, "prod", bgp_mode(ROUTERS)), "prod")
    assert metallb_bgp_type(stack) == "frr-k8s"  # mode: bgp switches the chart's frrk8s backend on
    report = webhook_report(stack)
    assert {"BGPPeer", "BGPAdvertisement"} <= judged_kinds(report)
    assert {k: v for k, v in report.items() if v} == {}


def test_the_webhooks_bite_on_prods_own_objects(prod_stack: RecordedStack) -> None:
    objects = recorded_objects(prod_stack).objects
    objects = copy.deepcopy(objects)
    for obj in objects:
        if kind_of(obj) == "IPAddressPool" and name_of(obj) == "login":
            obj["spec"]["addresses"] = ["10.10.0.149-10.10.0.153"]  # the last address of `services`
        if kind_of(obj) == "Certificate" and name_of(obj) == "registry-tls":
            obj["spec"]["renewBefore"] = obj["spec"]["duration"]
    refused = {display(v.obj): v.refusal for v in webhook_verdicts(objects) if v.refusal}
    assert 'CIDR "10.10.0.149/32" in pool "login" overlaps with already defined CIDR "10.10.0.148/31"' in str(
        refused["IPAddressPool metallb-system/login"]
    )
    assert "L2Advertisement metallb-system/site-l2" in refused  # its webhook parses the pools too
    assert "must be greater than renewBefore 2160h0m0s" in str(refused["Certificate registry/registry-tls"])
    assert len(refused) == 4  # both pools, the advertisement, the certificate


LONG_NAMESPACE = "hpc-slurm-" + "x" * 50  # a valid namespace name; sssd.<ns>.svc is 69 bytes


@pytest.mark.parametrize(
    ("case", "edit", "certificate", "key"),
    [
        (
            "Slurm namespace",
            lambda v: v["hpcforge:slurm"].update(namespace=LONG_NAMESPACE),
            f"Certificate {LONG_NAMESPACE}/slurm-ldap-ca",
            f"sssd.{LONG_NAMESPACE}.svc",
        ),
        (
            "Grendel host name",
            lambda v: v["hpcforge:provisioning"]["api"].update(hostname="grendel." + "p" * 50 + ".hpc.example.org"),
            "Certificate provisioning/grendel-tls",
            "grendel." + "p" * 50 + ".hpc.example.org",
        ),
    ],
)
def test_a_first_dns_name_over_64_bytes_is_not_the_common_name(
    tmp_path: Path, case: str, edit: Any, certificate: str, key: str
) -> None:
    """Before the fix the first DNS name was always the commonName, and cert-manager refused a longer one
    ("spec.commonName: Too long: may not be more than 64 bytes"); it is now left to the dnsNames."""
    stack = run_stack_file(write_variant(tmp_path, "prod", edit), "prod")
    report = webhook_report(stack)
    assert certificate in report and report[certificate] is None, report.get(certificate)
    objects = recorded_objects(stack).objects
    [spec] = [o["spec"] for o in objects if display(o) == certificate]
    assert "commonName" not in spec and spec["dnsNames"][0] == key and len(key.encode()) > 64


def test_a_single_pool_address_reaches_metallb_as_a_cidr(tmp_path: Path) -> None:
    """The config allows single addresses in a pool; MetalLB parses an entry without `-` as a CIDR and refused
    `10.10.0.160` ("invalid CIDR") before the renderer wrote it as `10.10.0.160/32`."""
    edit = lambda v: v["hpcforge:network"]["pools"][1].update(addresses=["10.10.0.150-10.10.0.153", "10.10.0.160"])  # noqa: E731
    stack = run_stack_file(write_variant(tmp_path, "prod", edit), "prod")
    report = webhook_report(stack)
    assert {k: v for k, v in report.items() if v} == {}
    objects = recorded_objects(stack).objects
    [login] = [o for o in objects if kind_of(o) == "IPAddressPool" and name_of(o) == "login"]
    assert login["spec"]["addresses"] == ["10.10.0.150-10.10.0.153", "10.10.0.160/32"]


def test_offline_check_reports_a_refused_object_of_a_chart_argo_cd_delivers(prod_stack: RecordedStack) -> None:
    """In `argocd` delivery the packs never see the charts' objects: `offline check --render-charts` judges them
    itself (offline/admission/verdicts.py print_argocd_webhooks). A chart Certificate whose renewBefore is not below its
    duration (slurm-operator's chain, as its chart renders it, with the renewBefore raised) is reported and fails
    the check; as rendered it passes."""
    import io

    from components.versions import Charts
    from offline.admission.verdicts import print_argocd_webhooks
    from offline.charts.render import ChartRelease, RenderedChart, RenderReport

    [application] = [
        r
        for r in prod_stack.resources
        if r.is_kubernetes_object and r.inputs.get("kind") == "Application" and r.inputs["metadata"]["name"] == "slurm-operator"
    ]
    # Rendered from the slurm-operator 1.2.1 chart (templates/cert-manager/pki.yaml) with hpcforge's prod values,
    # release `slurm-operator` in `slinky`, by `offline render --render-charts` (helm-python-sdk) on 2026-11-26;
    # labels left out.
    certificate = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "slurm-operator-webhook-ca", "namespace": "slinky"},
        "spec": {
            "commonName": "slurm-operator-webhook-self-ca",
            "dnsNames": ["slurm-operator-webhook", "slurm-operator-webhook.slinky.svc"],
            "duration": "43800h0m0s",
            "issuerRef": {"name": "slurm-operator-webhook-root-issuer"},
            "renewBefore": "8760h0m0s",
            "secretName": "slurm-operator-webhook-ca",
        },
    }
    release = ChartRelease("slurm-operator", Charts.SLURM_OPERATOR, "slinky", {}, "argocd", application.urn)

    def check(obj: dict[str, Any]) -> tuple[int, str]:
        out = io.StringIO()
        return print_argocd_webhooks(prod_stack, RenderReport([RenderedChart(release, objects=[obj])], []), out), out.getvalue()

    assert check(certificate) == (
        0,
        "\nOperator webhooks, objects of charts delivered by Argo CD (cert-manager v1.21.1, MetalLB v0.16.1):\n"
        "  ok   Certificate slinky/slurm-operator-webhook-ca (webhook.cert-manager.io)\n"
        "Operator webhook summary: 0 of 1 object refused\n",
    )
    refused, text = check({**certificate, "spec": {**certificate["spec"], "renewBefore": "43800h"}})
    assert refused == 1
    assert "  DENY Certificate slinky/slurm-operator-webhook-ca (webhook.cert-manager.io)" in text
    assert "certificate duration 43800h0m0s must be greater than renewBefore 43800h0m0s" in text
