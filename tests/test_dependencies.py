"""Program tier: creation order that the engine derives from dependencies, checked by name.

Pulumi creates a resource after everything it depends on (`dependsOn` and the resources whose
outputs it takes). These tests walk the recorded dependency graph and name what must come first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from offline.program.engine import RecordedResource, RecordedStack
from tests.helpers import run_stack_file, write_variant

pytestmark = pytest.mark.program


def _before(stack: RecordedStack, resource: RecordedResource) -> set[str]:
    """URNs that the engine must create before `resource` (transitively)."""
    by_urn = {r.urn: r for r in stack.resources}
    seen: set[str] = set()
    todo = [*resource.depends_on, *(u for urns in resource.property_dependencies.values() for u in urns)]
    while todo:
        urn = todo.pop()
        if urn in seen or urn not in by_urn:
            continue
        seen.add(urn)
        todo += by_urn[urn].depends_on
    return seen


def _object(stack: RecordedStack, kind: str, name: str, namespace: str | None = None) -> RecordedResource:
    found = [
        r
        for r in stack.resources
        if r.inputs.get("kind") == kind
        and (r.inputs.get("metadata") or {}).get("name") == name
        and (namespace is None or (r.inputs.get("metadata") or {}).get("namespace") == namespace)
    ]
    assert len(found) == 1, f"{kind} {namespace}/{name}: {[r.urn for r in found]}"
    return found[0]


def test_every_certificate_waits_for_its_issuer_and_namespace(any_stack: RecordedStack) -> None:
    certificates = [r for r in any_stack.resources if r.inputs.get("kind") == "Certificate"]
    assert certificates
    for cert in certificates:
        before = _before(any_stack, cert)
        issuer = cert.inputs["spec"]["issuerRef"]["name"]
        namespace = cert.inputs["metadata"]["namespace"]
        assert _object(any_stack, "ClusterIssuer", issuer).urn in before, f"{cert.name} does not wait for ClusterIssuer {issuer}"
        assert _object(any_stack, "Namespace", namespace).urn in before, f"{cert.name} does not wait for its namespace"


def test_grendel_tls_waits_for_cert_manager(prod_stack: RecordedStack) -> None:
    tls = _object(prod_stack, "Certificate", "grendel-tls", "provisioning")
    by_urn = {r.urn: r for r in prod_stack.resources}
    names = {by_urn[u].name for u in _before(prod_stack, tls)}
    assert "argocd/cert-manager" in names or "cert-manager" in names  # the Application (argocd) or the Chart


def _sample_first_team(config: dict[str, Any]) -> None:
    """The sample AppWrapper in the FIRST of three team namespaces (it was the last one)."""
    batch = config["hpcforge:batch"]
    batch["sampleNamespace"] = batch["teams"][0]["namespace"]


def test_sample_appwrapper_waits_for_its_own_namespace_and_local_queue(tmp_path: Path) -> None:
    stack = run_stack_file(write_variant(tmp_path, "prod", _sample_first_team), "prod")
    sample = next(r for r in stack.resources if r.name.endswith("/appwrapper-sample-pair"))
    namespace = sample.inputs["metadata"]["namespace"]
    before = _before(stack, sample)
    assert _object(stack, "Namespace", namespace).urn in before
    assert _object(stack, "LocalQueue", "default", namespace).urn in before
    other_queues = [
        r for r in stack.resources if r.inputs.get("kind") == "LocalQueue" and r.inputs["metadata"]["namespace"] != namespace
    ]
    assert other_queues and not any(q.urn in sample.depends_on for q in other_queues)


def test_slurm_controller_waits_for_accounting_and_its_keys(any_stack: RecordedStack) -> None:
    controller = next(r for r in any_stack.resources if r.inputs.get("kind") == "Controller")
    namespace = controller.inputs["metadata"]["namespace"]
    before = _before(any_stack, controller)
    for kind, name in (("Secret", "slurm-auth-slurm"), ("Secret", "slurm-auth-jwt")):
        assert _object(any_stack, kind, name, namespace).urn in before, name
    accounting = [r for r in any_stack.resources if r.inputs.get("kind") == "Accounting"]
    assert all(a.urn in controller.depends_on for a in accounting)
