"""Program tier: `Scope.custom` and `Scope.network_policy` (components/k8s/scope.py), the one way a layer makes a
custom resource or a NetworkPolicy, run under the mock engine in a small program: the name each is registered under,
its metadata, and the options that decide how Pulumi treats it (what it waits for, protection, replacement)."""

from __future__ import annotations

import textwrap

import pytest

from offline.program.engine import RecordedResource, RecordedStack, run_program
from offline.program.stackfile import StackFile

pytestmark = pytest.mark.program

PROGRAM = """
import pulumi
from components.context import DeployContext, Stateful
from components.k8s.scope import Scope


class Layer(pulumi.ComponentResource):
    def __init__(self):
        super().__init__("hpcforge:test:Layer", "layer", None, None)
        ctx = DeployContext("dev", "pulumi", "example.org", "1.33", None, "protect", None)
        first = Scope(ctx, self, "team", "setup").config_map("first", {"a": "b"})
        scope = Scope(ctx, self, "team", "queues", app="kueue", depends_on=(first,))
        widget = scope.custom("example.io/v1", "Widget", "w", {"size": 1}, annotations={"note": "x"})
        scope.custom("example.io/v1", "Global", "g", {"x": 1}, cluster_scoped=True, depends_on=[widget])
        scope.custom("example.io/v1", "Priority", "p", None, fields={"value": 5}, immutable=["value"])
        scope.custom("example.io/v1", "Store", "s", {}, resource_name="team/store-s", stateful=Stateful.DATABASE)
        scope.network_policy("allow-x", {"podSelector": {}, "policyTypes": ["Ingress"]})
        self.register_outputs({})


Layer()
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> RecordedStack:
    directory = tmp_path_factory.mktemp("scope")
    (directory / "__main__.py").write_text(textwrap.dedent(PROGRAM))
    return run_program(StackFile(name="dev", path=directory / "Pulumi.dev.yaml", config={}), directory)


def _named(stack: RecordedStack, name: str) -> RecordedResource:
    (found,) = [r for r in stack.resources if r.name == name]
    return found


def test_a_custom_resource_is_named_after_its_namespace_and_waits_for_the_scope(stack: RecordedStack) -> None:
    widget, first = _named(stack, "team/w"), _named(stack, "team/first")
    assert widget.type == "kubernetes:example.io/v1:Widget"
    assert widget.inputs["spec"] == {"size": 1}
    metadata = widget.inputs["metadata"]
    assert (metadata["name"], metadata["namespace"], metadata["annotations"]) == ("w", "team", {"note": "x"})
    assert metadata["labels"]["app.kubernetes.io/component"] == "queues"
    assert metadata["labels"]["app.kubernetes.io/name"] == "kueue"
    assert widget.depends_on == [first.urn]
    assert widget.parent == _named(stack, "layer").urn


def test_a_cluster_scoped_custom_resource_has_no_namespace_and_waits_for_what_it_is_given(stack: RecordedStack) -> None:
    cluster = _named(stack, "g")
    assert "namespace" not in cluster.inputs["metadata"]
    assert cluster.depends_on == [_named(stack, "team/w").urn]


def test_top_level_fields_go_beside_the_metadata_and_immutable_fields_replace_delete_first(stack: RecordedStack) -> None:
    priority = _named(stack, "team/p")
    assert priority.inputs["value"] == 5 and "spec" not in priority.inputs
    assert (priority.replace_on_changes, priority.delete_before_replace) == (["value"], True)
    assert _named(stack, "team/w").delete_before_replace is not True


def test_a_stateful_custom_resource_is_protected_under_its_own_name(stack: RecordedStack) -> None:
    store = _named(stack, "team/store-s")
    assert store.inputs["metadata"]["name"] == "s"
    assert store.protect is True
    assert store.inputs["metadata"]["annotations"] == {"hpcforge.io/protection": "protect"}


def test_a_network_policy_carries_the_network_policy_component_and_waits_for_the_scope(stack: RecordedStack) -> None:
    policy = _named(stack, "team/allow-x")
    assert policy.type == "kubernetes:networking.k8s.io/v1:NetworkPolicy"
    assert policy.inputs["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
    labels = policy.inputs["metadata"]["labels"]
    assert (labels["app.kubernetes.io/component"], labels["app.kubernetes.io/name"]) == ("network-policy", "kueue")
    assert policy.depends_on == [_named(stack, "team/first").urn]
