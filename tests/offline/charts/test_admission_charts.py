"""Admission of a rendered chart: the test chart of tests/offline/charts/charts (written for these tests, one defect
per template) rendered like helm.v4.Chart, then judged: each defect is reported, by name."""

from __future__ import annotations

from typing import Any

from offline.charts.render import RenderReport
from policies.admission.argocd import appproject_verdicts
from policies.admission.pss import pod_security_verdicts
from policies.admission.reachability import judge_api_server_calls
from tests.offline.charts.test_charts import default_render, default_stack  # noqa: F401  (module fixtures)

RESTRICTED = {"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.33"}


def installed(report: RenderReport) -> list[dict[str, Any]]:
    return [o for chart in report.charts for o in chart.installed]


def namespace(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def test_deployment_without_security_context_is_rejected_in_a_restricted_namespace(default_render: RenderReport) -> None:  # noqa: F811
    verdicts = pod_security_verdicts([namespace("demo", RESTRICTED), *installed(default_render)])
    [deployment] = [v for v in verdicts if v.template.owner["kind"] == "Deployment"]
    assert [f.check for f in deployment.failures] == [
        "allowPrivilegeEscalation",
        "runAsNonRoot",
        "seccompProfile_restricted",
        "capabilities_restricted",
    ]
    assert all(v.admitted for v in pod_security_verdicts([namespace("demo", {}), *installed(default_render)]))


def test_webhook_behind_a_network_policy_for_another_port_is_unreachable(default_render: RenderReport) -> None:  # noqa: F811
    [verdict] = judge_api_server_calls(installed(default_render))
    assert verdict.admitted is False
    assert "9443" in verdict.reasons[0]


def test_role_in_a_namespace_the_project_does_not_list_refuses_the_sync(default_render: RenderReport) -> None:  # noqa: F811
    project = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": {"name": "p", "namespace": "argocd"},
        "spec": {
            "sourceRepos": ["https://charts.example.org"],
            "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "demo"}],
            "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        },
    }
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "hpcforge-test", "namespace": "argocd"},
        "spec": {
            "project": "p",
            "source": {"repoURL": "https://charts.example.org", "chart": "hpcforge-test", "targetRevision": "0.1.0"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "demo"},
        },
    }
    [verdict] = appproject_verdicts([project, app], {"argocd/hpcforge-test": installed(default_render)})
    assert [r.message for r in verdict.refusals] == ["namespace forbidden is not permitted in project 'p'"]


# --- `argocd` delivery: the AppProject judges every rendered object the Application would sync -------


def _argocd_render(**config: Any) -> tuple[Any, RenderReport]:
    import json

    from offline.program.engine import run_program
    from offline.program.stackfile import StackFile
    from tests.offline.charts.test_charts import PROGRAM, render

    settings = {"test:values": json.dumps({"hook": {"enabled": False}}), "test:delivery": "argocd"}
    settings.update({f"test:{key}": json.dumps(value) for key, value in config.items()})
    stack = run_program(StackFile(name="dev", path=PROGRAM / "Pulumi.dev.yaml", config=settings), PROGRAM)
    report = render(stack)
    assert [c.release.delivery for c in report.charts] == ["argocd"]
    return stack, report


def test_argocd_delivery_refuses_the_chart_object_outside_the_project_destinations_by_name() -> None:
    import io

    from offline.admission.verdicts import print_argocd_admission

    stack, report = _argocd_render()
    out = io.StringIO()
    assert print_argocd_admission(stack, report, out) == 1
    lines = out.getvalue().splitlines()
    assert "  DENY Application argocd/demo in project demo, 8 rendered objects" in lines
    assert "         Role forbidden/demo-reader: namespace forbidden is not permitted in project 'demo'" in lines
    assert lines[-1] == "Argo CD summary: 1 of 1 Application refused"


def test_argocd_delivery_applies_the_project_cluster_resource_whitelist_to_chart_objects() -> None:
    from offline.admission.verdicts import argocd_chart_verdicts

    crds_only = [{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition"}]
    stack, report = _argocd_render(clusterResources=crds_only)
    [verdict] = argocd_chart_verdicts(stack, report)
    assert [str(r) for r in verdict.refusals] == [
        "Role forbidden/demo-reader: namespace forbidden is not permitted in project 'demo'",
        "ValidatingWebhookConfiguration demo-widgets: resource admissionregistration.k8s.io:ValidatingWebhookConfiguration "
        "is not permitted in project demo",
    ]


def test_argocd_delivery_permits_the_chart_once_its_objects_stay_in_the_destination() -> None:
    from offline.admission.verdicts import argocd_chart_verdicts

    stack, report = _argocd_render(values={"hook": {"enabled": False}, "extraNamespace": "demo"})
    [verdict] = argocd_chart_verdicts(stack, report)
    assert verdict.admitted and verdict.synced == 8
