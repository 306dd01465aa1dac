"""Admission of a rendered chart: the test chart of tests/charts (written for these tests, one defect
per template) rendered like helm.v4.Chart, then judged: each defect is reported, by name."""

from __future__ import annotations

from typing import Any

from offline.charts import RenderReport
from policies.rules.admission import appproject_verdicts, pod_security_verdicts, reachability_verdicts

from .test_charts import default_render, default_stack  # noqa: F401  (module fixtures)

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
    [verdict] = reachability_verdicts(installed(default_render))
    assert verdict.reachable is False
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
