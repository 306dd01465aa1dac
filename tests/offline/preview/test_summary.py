"""offline/preview/summary.py: what `./hpcforge preview` prints by default, the resources per layer and type."""

from __future__ import annotations

from collections import Counter
from typing import Any

from offline.preview.summary import layer_counts, layer_summary
from offline.program.engine import RecordedResource, RecordedStack
from offline.program.words import plural

STACK_URN = "urn:pulumi:dev::hpcforge::pulumi:pulumi:Stack::hpcforge-dev"


def resource(type_: str, name: str, parent: str, inputs: dict[str, Any] | None = None, custom: bool = True) -> RecordedResource:
    urn = f"urn:pulumi:dev::hpcforge::{type_}::{name}"
    return RecordedResource(
        urn=urn,
        type=type_,
        name=name,
        parent=parent,
        custom=custom,
        remote=False,
        provider="",
        inputs=inputs or {},
        raw_inputs=inputs or {},
        secret_paths=[],
    )


def small_stack() -> RecordedStack:
    platform = resource("hpcforge:platform:Platform", "hpcforge", STACK_URN, custom=False)
    slurm = resource("hpcforge:slurm:Slurm", "slurm", platform.urn, custom=False)
    inner = resource("hpcforge:slurm:Accounts", "accounts", slurm.urn, custom=False)
    kinds = [("NetworkPolicy", "a"), ("NetworkPolicy", "b"), ("NodeSet", "gpu")]
    objects = [resource(f"kubernetes:x/v1:{kind}", name, slurm.urn, {"apiVersion": "x/v1", "kind": kind}) for kind, name in kinds]
    deep = resource("kubernetes:core/v1:ConfigMap", "accounts", inner.urn, {"apiVersion": "v1", "kind": "ConfigMap"})
    chart = resource("kubernetes:helm.sh/v4:Chart", "slurm-operator", slurm.urn, custom=False)
    password = resource("random:index/randomPassword:RandomPassword", "db", platform.urn)
    provider = resource("pulumi:providers:kubernetes", "kubernetes", STACK_URN)
    resources = [platform, slurm, inner, *objects, deep, chart, password, provider]
    return RecordedStack(project="hpcforge", stack="dev", resources=resources, outputs={}, secret_outputs=[])


def test_plurals() -> None:
    assert [plural(n, "resource") for n in (0, 1, 2)] == ["0 resources", "1 resource", "2 resources"]
    assert plural(2, "NetworkPolicy") == "2 NetworkPolicies" and plural(3, "Ingress") == "3 Ingresses"
    assert plural(2, "Gateway") == "2 Gateways" and plural(2, "RandomBytes") == "2 RandomBytes"
    assert plural(1, "GPU") == "1 GPU" and plural(4, "GPU") == "4 GPUs"


def test_each_resource_counts_in_the_layer_under_the_platform_it_sits_in() -> None:
    counts = {count.layer: count.types for count in layer_counts(small_stack())}
    assert list(counts) == ["slurm", "platform"]  # layers sorted, platform last
    assert counts["slurm"] == Counter({"NetworkPolicy": 2, "NodeSet": 1, "ConfigMap": 1, "component": 2, "Helm chart": 1})
    assert counts["platform"] == Counter({"component": 1, "RandomPassword": 1, "provider": 1})


def test_the_summary_is_one_line_per_layer_most_numerous_type_first() -> None:
    lines = layer_summary(small_stack()).splitlines()
    assert lines == [
        "    slurm     7 resources: 2 NetworkPolicies, 2 components, 1 ConfigMap, 1 Helm chart, 1 NodeSet",
        "    platform  3 resources: 1 RandomPassword, 1 component, 1 provider",
    ]
