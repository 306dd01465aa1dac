"""What `preview` prints by default: the resources per layer, counted by type (the full tree is `--tree`).

A resource's layer is the hpcforge component directly under the Platform that it sits in (its parent chain:
`hpcforge:slurm:Slurm` -> `slurm`); resources directly under the Platform or the Stack (providers, the
Platform itself) count as `platform`. The type is the Kubernetes kind for Kubernetes objects, `Helm chart`
for charts, `component` for hpcforge's ComponentResources, `provider` for providers and the short type
name otherwise (`RandomPassword`, `Command`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from components.layers.slurm.face import GPU_HOURS_ANNOTATION

from ..program.engine import RecordedResource, RecordedStack
from ..program.words import plural

PLATFORM = "hpcforge:platform:Platform"


def type_label(resource: RecordedResource) -> str:
    if resource.is_chart:
        return "Helm chart"
    if resource.is_kubernetes_object:
        return str(resource.inputs["kind"])
    if resource.type.startswith("pulumi:providers:"):
        return "provider"
    if resource.type.startswith("hpcforge:"):
        return "component"
    return resource.type.rsplit(":", 1)[-1]


@dataclass(frozen=True)
class LayerCount:
    layer: str
    types: Counter[str]

    @property
    def total(self) -> int:
        return sum(self.types.values())


def layer_of(resource: RecordedResource, by_urn: dict[str, RecordedResource]) -> str:
    """The component under the Platform that `resource` belongs to (`platform` when none)."""
    current = resource
    while True:
        parent = by_urn.get(current.parent)
        if parent is None:
            return "platform"
        if parent.type == PLATFORM:
            return current.name if current.type.startswith("hpcforge:") else "platform"
        current = parent


def layer_counts(stack: RecordedStack) -> list[LayerCount]:
    """Resources per layer and type, layers in alphabetical order (`platform` last)."""
    by_urn = {r.urn: r for r in stack.resources}
    layers: dict[str, Counter[str]] = {}
    for resource in stack.resources:
        layers.setdefault(layer_of(resource, by_urn), Counter())[type_label(resource)] += 1
    return [LayerCount(name, layers[name]) for name in sorted(layers, key=lambda name: (name == "platform", name))]


def layer_summary(stack: RecordedStack) -> str:
    """One line per layer: its resource count, then each type's count, most numerous first."""
    counts = layer_counts(stack)
    width = max((len(count.layer) for count in counts), default=0)
    number = max((len(plural(count.total, "resource")) for count in counts), default=0)
    lines = []
    for count in counts:
        types = ", ".join(plural(n, label) for label, n in sorted(count.types.items(), key=lambda item: (-item[1], item[0])))
        lines.append(f"    {count.layer:<{width}}  {plural(count.total, 'resource'):>{number}}: {types}")
    return "\n".join(lines)


def active_check_costs(stack: RecordedStack) -> str | None:
    """One line: the scheduled active GPU checks and the GPU-hours a week each holds away from jobs, at most; None
    without checks."""
    costs = sorted(
        (str(r.inputs["metadata"]["name"]), float(r.inputs["metadata"]["annotations"][GPU_HOURS_ANNOTATION]))
        for r in stack.kubernetes_objects()
        if r.inputs.get("kind") == "CronJob" and GPU_HOURS_ANNOTATION in (r.inputs["metadata"].get("annotations") or {})
    )
    if not costs:
        return None
    each = ", ".join(f"{name} {hours:.1f}" for name, hours in costs)
    return (
        f"Scheduled GPU checks ({plural(len(costs), 'CronJob')}) hold up to {sum(h for _, h in costs):.1f} GPU-hours a week"
        f" away from jobs: {each}"
    )
