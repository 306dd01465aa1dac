"""Argo CD AppProject rules (policies/admission/argocd/appproject.py).

The tables are argo-cd v3.4.4's own tests, pkg/apis/application/v1alpha1/types_test.go
(TestAppProject_IsSourcePermitted, TestAppProject_IsNegatedSourcePermitted,
TestAppProject_IsDestinationPermitted, TestAppProject_IsNegatedDestinationPermitted,
TestAppProject_IsGroupKindPermitted), transcribed case by case."""

from __future__ import annotations

from typing import Any

import pytest

from policies.admission.argocd import (
    Destination,
    check_application,
    check_application_sync,
    is_destination_matched,
    is_group_kind_name_permitted,
    is_source_permitted,
    scopes_from,
)

SOURCES = [
    (["*"], "https://github.com/argoproj/test.git", True),
    (["https://github.com/argoproj/test.git"], "https://github.com/argoproj/test.git", True),
    (["ssh://git@GITHUB.com:argoproj/test"], "ssh://git@github.com:argoproj/test", True),
    (["https://github.com/argoproj/*"], "https://github.com/argoproj/argoproj.git", True),
    (["https://github.com/test1/test.git", "https://github.com/test2/test.git"], "https://github.com/test2/test.git", True),
    (["https://github.com/argoproj/test1.git"], "https://github.com/argoproj/test2.git", False),
    (["https://github.com/argoproj/*.git"], "https://github.com/argoproj1/test2.git", False),
    (["https://github.com/argoproj/foo"], "https://github.com/argoproj/foo1", False),
    (["https://gitlab.com/group/*"], "https://gitlab.com/group/repo/owner", False),
    (["https://gitlab.com/group/*/*"], "https://gitlab.com/group/repo/owner", True),
    (["https://gitlab.com/group/*/*/*"], "https://gitlab.com/group/sub-group/repo/owner", True),
    (["https://gitlab.com/group/**"], "https://gitlab.com/group/sub-group/repo/owner", True),
    # negated
    (["!https://github.com/argoproj/test.git"], "https://github.com/argoproj/test.git", False),
    (["!ssh://git@GITHUB.com:argoproj/test"], "ssh://git@github.com:argoproj/test", False),
    (["!https://github.com/argoproj/*"], "https://github.com/argoproj/argoproj.git", False),
    (["https://github.com/test1/test.git", "!https://github.com/test2/test.git"], "https://github.com/test2/test.git", False),
    (["!https://github.com/argoproj/foo*"], "https://github.com/argoproj/foo1", False),
    (["!https://gitlab.com/group/*/*"], "https://gitlab.com/group/repo/owner", False),
    (["!https://gitlab.com/group/*/*/*"], "https://gitlab.com/group/sub-group/repo/owner", False),
    (["!https://gitlab.com/group/**"], "https://gitlab.com/group/sub-group/repo/owner", False),
    (["https://github.com/argoproj/test1.git", "*"], "https://github.com/argoproj/test2.git", True),
    (["!https://github.com/argoproj/*.git", "*"], "https://github.com/argoproj1/test2.git", True),
]


@pytest.mark.parametrize(("patterns", "repo", "permitted"), SOURCES)
def test_upstream_source_cases(patterns: list[str], repo: str, permitted: bool) -> None:
    assert is_source_permitted({"spec": {"sourceRepos": patterns}}, repo) is permitted


K8S = "https://kubernetes.default.svc"


def d(server: str = "", namespace: str = "", name: str = "") -> dict[str, str]:
    return {"server": server, "namespace": namespace, "name": name}


DESTINATIONS = [
    ([d(K8S, "default")], d(K8S, "default"), True),
    ([d(K8S, "default")], d(K8S, "kube-system"), False),
    ([d("https://my-cluster", "default")], d(K8S, "default"), False),
    ([d(K8S, "*")], d(K8S, "kube-system"), True),
    ([d("https://*.default.svc", "default")], d(K8S, "default"), True),
    ([d("https://team1-*", "default")], d("https://test2-dev-cluster", "default"), False),
    ([d(K8S, "test-*")], d(K8S, "test-foo"), True),
    ([d(K8S, "test-*")], d(K8S, "test"), False),
    ([d("*", "*")], d(K8S, "test"), True),
    ([d("", "*", "test")], d("", "test", "test"), True),
    ([d("", "*", "test2")], d("", "test", "test"), False),
    (
        [
            d(K8S, "!{kube-system,argocd}", "host-cluster"),
            d("https://eks-cluster-endpoint.ap-southeast-1.eks.amazonaws.com", "*", "destination-cluster-01"),
        ],
        d("https://eks-cluster-endpoint.ap-southeast-1.eks.amazonaws.com", "kube-system"),
        True,
    ),
    # negated
    ([d("!" + K8S, "default")], d(K8S, "default"), False),
    ([d(K8S, "!default")], d(K8S, "kube-system"), True),
    ([d("!https://my-cluster", "default")], d(K8S, "default"), True),
    ([d("!" + K8S, "*")], d(K8S, "kube-system"), False),
    ([d("!https://*.default.svc", "default")], d(K8S, "default"), False),
    ([d("!https://team1-*", "default")], d("https://test2-dev-cluster", "default"), True),
    ([d(K8S, "!test-*")], d(K8S, "test-foo"), False),
    ([d(K8S, "!test-*")], d(K8S, "test"), True),
    ([d("", "*", "!test")], d("", "test", "test"), False),
    ([d("", "*", "!test2")], d("", "test", "test"), True),
    ([d("*", "kube-system"), d("*", "!kube-system")], d(K8S, "kube-system"), False),
    ([d("*", "*"), d("*", "!kube-system")], d(K8S, "kube-system"), False),
    ([d(K8S, "*"), d("!" + K8S, "*")], d(K8S, "kube-system"), False),
    ([d("*", "*"), d("!" + K8S, "kube-system")], d(K8S, "kube-system"), False),
    ([d("*", "*"), d("!" + K8S, "kube-system"), d("*", "!kube-system")], d(K8S, "kube-system"), False),
    ([d("*", "*"), d("!" + K8S, "kube-system"), d("*", "!kube-system")], d(K8S, "default"), True),
    ([d("*", "*"), d("!" + K8S, "kube-system"), d("*", "!kube-system")], d("https://test-dev-cluster", "kube-system"), False),
    ([d("", "*", "test"), d("", "*", "!test")], d("", "test", "test"), False),
    ([d("*", "test"), d("!https://test-server", "other")], d("https://test-server", "test"), True),
    ([d("*", "*"), d("https://test-server", "!other")], d("https://other-test-server", "other"), True),
]


@pytest.mark.parametrize(("allowed", "dest", "permitted"), DESTINATIONS)
def test_upstream_destination_cases(allowed: list[dict[str, str]], dest: dict[str, str], permitted: bool) -> None:
    project = {"spec": {"destinations": allowed}}
    assert is_destination_matched(project, Destination(dest["server"], dest["name"], dest["namespace"])) is permitted


def test_upstream_group_kind_cases() -> None:
    def allowed(spec: dict[str, Any], group: str, kind: str, name: str, namespaced: bool) -> bool:
        return is_group_kind_name_permitted({"spec": spec}, group, kind, name, namespaced)

    p1 = {"namespaceResourceWhitelist": [], "namespaceResourceBlacklist": [{"group": "apps", "kind": "Deployment"}]}
    assert not allowed(p1, "apps", "ReplicaSet", "", True)
    assert not allowed(p1, "apps", "Deployment", "", True)
    p2 = {
        "namespaceResourceWhitelist": [{"group": "apps", "kind": "ReplicaSet"}],
        "namespaceResourceBlacklist": [{"group": "apps", "kind": "Deployment"}],
    }
    assert allowed(p2, "apps", "ReplicaSet", "", True)
    assert not allowed(p2, "apps", "Action", "", True)
    assert not allowed({"clusterResourceBlacklist": [{"group": "", "kind": "Namespace"}]}, "", "Namespace", "", False)
    p4 = {"clusterResourceWhitelist": [{"group": "*", "kind": "*"}], "clusterResourceBlacklist": [{"group": "*", "kind": "*"}]}
    assert not allowed(p4, "", "Namespace", "", False)
    assert allowed(p4, "apps", "Action", "", True)
    p5 = {"clusterResourceWhitelist": [], "namespaceResourceWhitelist": [{"group": "*", "kind": "*"}]}
    assert not allowed(p5, "", "Namespace", "", False)
    assert allowed(p5, "apps", "Action", "", True)
    assert not allowed({}, "", "Namespace", "", False)
    assert allowed({}, "apps", "Action", "", True)
    p7 = {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "team1-*"}]}
    assert not allowed(p7, "", "Namespace", "other-namespace", False)
    assert allowed(p7, "", "Namespace", "team1-namespace", False)


# --- an Application and the objects it syncs -------------------------------------------------------

PROJECT: dict[str, Any] = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "AppProject",
    "metadata": {"name": "hpcforge-platform", "namespace": "argocd"},
    "spec": {
        "sourceRepos": ["https://argoproj.github.io/argo-helm"],
        "destinations": [{"server": K8S, "namespace": "argo"}],
        "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
    },
}
APPLICATION: dict[str, Any] = {
    "apiVersion": "argoproj.io/v1alpha1",
    "kind": "Application",
    "metadata": {"name": "argo-workflows", "namespace": "argocd"},
    "spec": {
        "project": "hpcforge-platform",
        "source": {"repoURL": "https://argoproj.github.io/argo-helm", "chart": "argo-workflows", "targetRevision": "1.0.18"},
        "destination": {"server": K8S, "namespace": "argo"},
    },
}


def obj(kind: str, name: str, namespace: str | None = None, api: str = "v1") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": metadata}


def test_application_in_its_project_is_permitted() -> None:
    assert check_application(PROJECT, APPLICATION) == []


def test_application_from_another_repo_is_refused_with_argocds_message() -> None:
    app = {**APPLICATION, "spec": {**APPLICATION["spec"], "source": {"repoURL": "https://example.com/charts", "chart": "x"}}}
    [refusal] = check_application(PROJECT, app)
    assert refusal.message == "application repo https://example.com/charts is not permitted in project 'hpcforge-platform'"


def test_object_in_other_namespace_refuses_the_sync() -> None:
    objects = [
        obj("ServiceAccount", "argo-workflow", "argo"),
        obj("Role", "argo-workflow", "devops", "rbac.authorization.k8s.io/v1"),
        obj("ClusterRole", "argo-view", None, "rbac.authorization.k8s.io/v1"),
        obj("ConfigMap", "no-namespace"),  # applied in the destination namespace
    ]
    refusals = check_application_sync(PROJECT, APPLICATION, objects)
    assert [str(r) for r in refusals] == [
        "Role devops/argo-workflow: namespace devops is not permitted in project 'hpcforge-platform'"
    ]


def test_cluster_scoped_object_needs_the_whitelist() -> None:
    project = {**PROJECT, "spec": {**PROJECT["spec"], "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}]}}
    objects = [obj("ClusterRole", "argo-view", None, "rbac.authorization.k8s.io/v1")]
    [refusal] = check_application_sync(project, APPLICATION, objects)
    assert refusal.message == "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project hpcforge-platform"


def test_scope_of_custom_kinds_comes_from_their_crd() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.dev"},
        "spec": {"group": "example.dev", "names": {"kind": "Widget"}, "scope": "Cluster"},
    }
    namespaced = scopes_from([crd])
    assert not namespaced("example.dev", "Widget")
    assert namespaced("example.dev", "Gadget") and not namespaced("", "Namespace")
    project = {**PROJECT, "spec": {**PROJECT["spec"], "clusterResourceWhitelist": []}}
    [refusal] = check_application_sync(project, APPLICATION, [obj("Widget", "w", None, "example.dev/v1")], namespaced)
    assert refusal.message == "resource example.dev:Widget is not permitted in project hpcforge-platform"
