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
from offline.admission import stack_objects
from offline.engine import RecordedStack
from policies.rules.admission import admission_report, appproject_verdicts, pod_security_verdicts, reachability_verdicts
from policies.rules.podtemplates import kind_of, name_of, namespace_of

from .helpers import REPO, require_shared, run_stack_file, write_variant


def flipped(stack: str, tmp_path: Path) -> RecordedStack:
    """The stack in the other delivery mode (dev is `pulumi`, prod `argocd`)."""
    other = {"dev": "argocd", "prod": "pulumi"}[stack]

    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:delivery"] = other

    return run_stack_file(write_variant(tmp_path, stack, edit), stack)


def assert_all_admitted(stack: RecordedStack) -> None:
    objects, synced = stack_objects(stack)
    report = admission_report(objects, synced)
    assert report.pods, "no pod template found: the walk is broken"
    assert [v.message for v in report.rejected_pods] == []
    assert [[str(r) for r in v.refusals] for v in report.refused_applications] == []
    assert [v.reasons for v in report.unreachable] == []
    assert report.slinky, "no Slinky custom resource found: the walk is broken"
    assert [v.message for v in report.refused_slinky] == []
    assert [v.message for v in report.refused_by_kueue] == []
    assert report.webhooks, "no mariadb-operator object found"
    assert [[str(r) for r in v.refusals] for v in report.refused_objects] == []


def test_dev_and_prod_own_objects_pass_admission(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    assert_all_admitted(dev_stack)
    assert_all_admitted(prod_stack)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_other_delivery_mode_passes_admission(stack: str, tmp_path: Path) -> None:
    assert_all_admitted(flipped(stack, tmp_path))


def test_operator_custom_resources_are_judged(prod_stack: RecordedStack) -> None:
    objects, _ = stack_objects(prod_stack)
    kinds = {kind_of(v.template.owner) for v in pod_security_verdicts(objects)}
    assert {"NodeSet", "LoginSet", "Controller", "Accounting", "RestApi", "MariaDB", "AppWrapper"} <= kinds


def test_privileged_nodeset_in_a_restricted_namespace_is_rejected(prod_stack: RecordedStack) -> None:
    objects, _ = stack_objects(prod_stack)
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
    objects, _ = stack_objects(prod_stack)
    [verdict] = reachability_verdicts([*objects, *KUEUE_CHART_OBJECTS])
    assert verdict.reachable is True, verdict.reasons
    without = [o for o in objects if not (kind_of(o) == "NetworkPolicy" and name_of(o) == "allow-ingress-visibility")]
    [refused] = reachability_verdicts([*without, *KUEUE_CHART_OBJECTS])
    assert refused.reachable is False and "8082" in refused.reasons[0]


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
    objects, _ = stack_objects(prod_stack)
    lane = LANE_OBJECTS if chart_writes_lane(prod_stack) else []
    verdicts = appproject_verdicts(objects, {"argocd/argo-workflows": lane})
    assert all(v.permitted for v in verdicts), [v.refusals for v in verdicts if not v.permitted]
    if lane:
        project = next(o for o in objects if kind_of(o) == "AppProject" and name_of(o) == "hpcforge-platform")
        assert {"server": IN_CLUSTER, "namespace": "devops"} in project["spec"]["destinations"]


def test_chart_objects_outside_the_projects_destinations_refuse_the_sync(prod_stack: RecordedStack) -> None:
    objects, _ = stack_objects(prod_stack)
    app = _application(objects, "argo-workflows")
    project = next(o for o in objects if kind_of(o) == "AppProject" and name_of(o) == "hpcforge-platform")
    narrowed = copy.deepcopy(project)
    narrowed["spec"]["destinations"] = [d for d in narrowed["spec"]["destinations"] if d["namespace"] != "devops"]
    others = [o for o in objects if o is not project]
    verdicts = appproject_verdicts([*others, narrowed], {"argocd/argo-workflows": LANE_OBJECTS})
    [refused] = [v for v in verdicts if not v.permitted]
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
    objects, _ = stack_objects(prod_stack)
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


def test_rendered_files_are_attributed_to_their_application(tmp_path: Path) -> None:
    from offline.admission import attribute, read_objects

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
    from offline.admission import rendered_objects

    in_process = rendered_objects([("charts/argo-workflows/devops/Role-r.yaml", LANE_OBJECTS[1]), ("other/x.yaml", other)])
    assert [(f.release, f.hook, kind_of(f.document)) for f in in_process] == [("argo-workflows", False, "Role")]
    # A hook of a chart that no Application delivers is not applied (helm.v4.Chart drops hooks).
    synced, applied = attribute([], read_objects(rendered))
    assert synced == {} and [kind_of(o) for o in applied] == ["Role"]


def test_slurm_accounting_reaches_mariadb_through_hpcforges_policies(prod_stack: RecordedStack) -> None:
    from policies.rules.netpol import Cluster, Pod, connection_allowed, workload_pod

    objects, _ = stack_objects(prod_stack)
    cluster = Cluster.of(objects)
    slurmdbd = workload_pod(objects, "Accounting", "slurm", "slurm")
    mariadb = workload_pod(objects, "MariaDB", "database", "mariadb")
    assert ("mariadb", 3306, "TCP") in mariadb.ports
    assert connection_allowed(cluster, slurmdbd, mariadb, 3306)
    assert not connection_allowed(cluster, slurmdbd, mariadb, 3307)
    assert not connection_allowed(cluster, Pod("registry", {}), mariadb, 3306)
