"""components/k8s/layer_namespace.py as the layers use it (prod: Argo CD delivery, every layer on): each chart and
each Secret, ConfigMap and Certificate made through a LayerNamespace waits for its namespace and every
NetworkPolicy the layer put in it."""

from __future__ import annotations

import pytest

from offline.program.engine import RecordedResource, RecordedStack

NAMESPACE = "kubernetes:core/v1:Namespace"
POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
CHART = "kubernetes:helm.sh/v4:Chart"
APPLICATION = "kubernetes:argoproj.io/v1alpha1:Application"


def _namespace(stack: RecordedStack, namespace: str) -> RecordedResource:
    (ns,) = [r for r in stack.by_type(NAMESPACE) if r.name == namespace]
    return ns


def _namespace_ready(stack: RecordedStack, namespace: str) -> set[str]:
    ns = _namespace(stack, namespace)
    policies = {r.urn for r in stack.by_type(POLICY) if r.name.startswith(f"{namespace}/") and r.parent == ns.parent}
    assert f"{namespace}/default-deny" in {r.name for r in stack.by_type(POLICY) if r.urn in policies}
    return {ns.urn, *policies}


def _chart(stack: RecordedStack, release: str) -> RecordedResource:
    """The release as delivered: a Chart (Pulumi delivery, and Argo CD itself), or an Argo CD Application."""
    found = [r for r in stack.by_type(CHART) if r.name == release] + [
        r for r in stack.by_type(APPLICATION) if r.name == f"argocd/{release}"
    ]
    (chart,) = found
    return chart


@pytest.mark.parametrize(
    ("release", "namespace"),
    [
        ("cert-manager", "cert-manager"),
        ("argocd", "argocd"),
        ("mariadb-operator-crds", "mariadb-system"),
        ("kube-prometheus-stack", "monitoring"),
        ("metallb", "metallb-system"),
        ("traefik", "traefik"),
        ("gpu-operator", "gpu-operator"),
        ("network-operator", "nvidia-network-operator"),
        ("kueue", "kueue-system"),
        ("argo-workflows", "argo"),
        ("slurm-operator-crds", "slinky"),
    ],
)
def test_a_chart_waits_for_its_namespace_and_policies(prod_stack: RecordedStack, release: str, namespace: str) -> None:
    assert _namespace_ready(prod_stack, namespace) <= set(_chart(prod_stack, release).depends_on)


@pytest.mark.parametrize("namespace", ["directory", "database", "provisioning", "site-dns", "registry", "backups"])
def test_the_scope_objects_wait_for_their_namespace_and_policies(prod_stack: RecordedStack, namespace: str) -> None:
    ready = _namespace_ready(prod_stack, namespace)
    kinds = ("kubernetes:core/v1:Secret", "kubernetes:core/v1:ConfigMap", "kubernetes:cert-manager.io/v1:Certificate")
    layer = _namespace(prod_stack, namespace).parent
    made = [r for r in prod_stack.resources if r.type in kinds and r.name.startswith(f"{namespace}/") and r.parent == layer]
    assert made
    for resource in made:
        assert ready <= set(resource.depends_on), resource.name


@pytest.mark.parametrize(
    ("release", "component"),
    [("gpu-operator", "gpu-operator"), ("network-operator", "network-operator"), ("kueue", "chart")],
)
def test_a_chart_carries_the_component_it_is_given(prod_stack: RecordedStack, release: str, component: str) -> None:
    labels = _chart(prod_stack, release).inputs["metadata"]["labels"]
    assert labels["app.kubernetes.io/component"] == component


def test_a_chart_passes_the_fields_argo_cd_leaves_alone(prod_stack: RecordedStack) -> None:
    ignored = _chart(prod_stack, "slurm-operator").inputs["spec"]["ignoreDifferences"]
    assert {"kind": "Deployment", "name": "slurm-operator"}.items() <= ignored[0].items()
    assert "/spec/replicas" in ignored[0]["jsonPointers"]
