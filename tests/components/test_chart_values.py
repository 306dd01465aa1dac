"""The chart values and hpcforge objects that fix what rendering the upstream charts found.

These run without the charts (program tier): they pin the values that the `charts` tier
(tests/offline/charts/test_charts_tier.py) proved effective on the rendered objects, so CI, which has no charts,
still fails when one is lost.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.chart_hooks import merge_values
from components.chart_security import SECURITY_VALUES, security_values, with_security
from components.layers.batch.objects import KUEUE_VISIBILITY_PORT
from components.versions import Charts
from offline.charts.cluster import builtin_api_versions, helm_kube_version, kubernetes_version
from offline.charts.render import chart_releases
from offline.program.engine import RecordedStack
from offline.program.stackfile import StackFile
from tests.helpers import REPO

pytestmark = pytest.mark.program


def release_values(stack: RecordedStack, chart: str) -> dict[str, Any]:
    [release] = [r for r in chart_releases(stack) if r.pin.chart == chart]
    return dict(release.values)


@pytest.mark.parametrize(
    ("chart", "paths"),
    [
        ("mariadb-operator", [(), ("webhook",), ("certController",)]),
        ("slurm-operator", [("operator",), ("webhook",)]),
    ],
)
def test_operator_charts_get_restricted_security_contexts(
    any_stack: RecordedStack, chart: str, paths: list[tuple[str, ...]]
) -> None:
    values = release_values(any_stack, chart)
    for path in paths:
        node = values
        for key in path:
            node = node[key]
        assert node["podSecurityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert node["podSecurityContext"]["runAsNonRoot"] is True
        container = node["securityContext"]
        assert container["allowPrivilegeEscalation"] is False
        assert container["capabilities"] == {"drop": ["ALL"]}


def test_argo_workflows_pods_get_a_seccomp_profile(any_stack: RecordedStack) -> None:
    values = release_values(any_stack, "argo-workflows")
    for part in ("controller", "server"):
        assert values[part]["podSecurityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


def test_argo_workflows_creates_nothing_in_the_lane_namespace(any_stack: RecordedStack) -> None:
    values = release_values(any_stack, "argo-workflows")
    assert "workflowNamespaces" not in values["controller"]
    assert values["workflow"]["serviceAccount"]["create"] is False and values["workflow"]["rbac"]["create"] is False
    lane = {
        (r.inputs["kind"], r.inputs["metadata"]["name"])
        for r in any_stack.kubernetes_objects()
        if r.inputs["metadata"].get("namespace") == "devops"
    }
    assert {("ServiceAccount", "argo-workflow"), ("Role", "argo-workflow"), ("RoleBinding", "argo-workflow")} <= lane
    [role] = [
        r
        for r in any_stack.kubernetes_objects()
        if r.type == "kubernetes:rbac.authorization.k8s.io/v1:Role" and r.name == "devops/argo-workflow"
    ]
    assert role.inputs["rules"] == [
        {"apiGroups": ["argoproj.io"], "resources": ["workflowtaskresults"], "verbs": ["create", "patch"]}
    ]


def test_kueue_namespace_admits_the_visibility_port(prod_stack: RecordedStack) -> None:
    ports = {
        port["port"]
        for r in prod_stack.kubernetes_objects()
        if r.inputs["kind"] == "NetworkPolicy" and r.inputs["metadata"]["namespace"] == "kueue-system"
        for rule in r.inputs["spec"].get("ingress") or []
        for port in rule.get("ports") or []
    }
    assert KUEUE_VISIBILITY_PORT == 8082 and 8082 in ports


def test_security_values_sit_under_the_layer_values() -> None:
    merged = with_security(Charts.SLURM_OPERATOR, {"operator": {"securityContext": {"readOnlyRootFilesystem": False}}})
    assert merged["operator"]["securityContext"]["readOnlyRootFilesystem"] is False
    assert merged["operator"]["securityContext"]["allowPrivilegeEscalation"] is False
    assert merged["webhook"] == security_values(Charts.SLURM_OPERATOR)["webhook"]
    assert security_values(Charts.TRAEFIK) == {}
    assert set(SECURITY_VALUES) == {"mariadb-operator", "slurm-operator", "argo-workflows"}


def test_merge_values_is_deep_and_leaves_its_inputs_alone() -> None:
    base = {"a": {"b": 1, "c": 2}}
    assert merge_values(base, {"a": {"c": 3}, "d": 4}) == {"a": {"b": 1, "c": 3}, "d": 4}
    assert base == {"a": {"b": 1, "c": 2}}


def test_kubernetes_version_comes_from_the_stack_config() -> None:
    stack = StackFile("x", REPO / "Pulumi.x.yaml", {"hpcforge:kubernetes": '{"version": "1.31"}'})
    assert kubernetes_version(stack) == "1.31"
    assert kubernetes_version(StackFile("x", REPO / "Pulumi.x.yaml", {})) == "1.33"  # KubernetesConfig's default
    assert helm_kube_version("1.33") == "v1.33.0"


def test_api_versions_are_those_the_target_release_serves() -> None:
    served = builtin_api_versions("1.33")
    assert {"v1", "v1/Pod", "apps/v1", "apps/v1/Deployment", "networking.k8s.io/v1/NetworkPolicy"} <= served
    assert "policy/v1beta1/PodSecurityPolicy" not in served  # removed in 1.25
    assert "extensions/v1beta1" not in served
    assert "resource.k8s.io/v1beta1" not in served  # beta, off by default (KEP-3136)
    assert "storagemigration.k8s.io/v1alpha1" not in served
