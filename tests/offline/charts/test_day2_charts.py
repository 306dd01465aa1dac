"""The `charts` tier for issue 27 items 13 and 14: one owner per object, and what the charts need of each other.

Needs $HPCFORGE_CHARTS (docs/charts.md); skips without it, the one skip CI allows. The full check renders every
chart of every stack; the targeted ones only the GPU and Network Operators' charts (exported from
https://github.com/NVIDIA/gpu-operator @ v26.7.0 : deployments/gpu-operator/ and
https://github.com/Mellanox/network-operator @ v26.4.1 : deployment/network-operator/, ../shared/charts/INDEX.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components.versions import Charts
from offline.charts.render import RenderReport, render_stack
from offline.charts.source import ChartSource
from offline.policy.owners import duplicate_owners, object_key, stack_owners
from offline.program.engine import RecordedStack
from tests.helpers import CHARTS_ENV, REPO, require_charts, run_stack, run_stack_file, skip_or_fail

pytestmark = pytest.mark.charts

KUBERNETES = "1.33"
STACKS = ("dev", "prod", "prod-pulumi", "dev-argocd")
OPERATORS = ("gpu-operator", "network-operator")


def _stack(name: str, tmp_path: Path) -> RecordedStack:
    if "-" not in name:
        return run_stack(name)
    stack, delivery = name.split("-", 1)
    document = yaml.safe_load((REPO / f"Pulumi.{stack}.yaml").read_text())
    document["config"]["hpcforge:delivery"] = delivery
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return run_stack_file(path, stack)


@pytest.mark.parametrize("name", STACKS)
def test_no_object_is_applied_by_two_owners(name: str, tmp_path: Path) -> None:
    charts = require_charts()
    stack = _stack(name, tmp_path)
    report = render_stack(stack, ChartSource(charts_from=charts), KUBERNETES)
    assert report.errors == []
    assert duplicate_owners(stack_owners(stack, report)) == []


def _operator_charts() -> Path:
    charts = require_charts()
    for pin in (Charts.GPU_OPERATOR, Charts.NETWORK_OPERATOR):
        if (
            not (charts / f"{pin.chart}-{pin.version.lstrip('v')}").is_dir()
            and not (charts / f"{pin.chart}-{pin.version}").is_dir()
        ):
            skip_or_fail(f"{CHARTS_ENV} has no {pin.chart}-{pin.version}", allow_in_strict=CHARTS_ENV)
    return charts


def _operators(stack: RecordedStack, charts: Path) -> RenderReport:
    report = render_stack(stack, ChartSource(charts_from=charts), KUBERNETES, only=OPERATORS)
    assert report.errors == [] and sorted(c.release.release for c in report.charts) == sorted(OPERATORS)
    return report


def _installed(report: RenderReport, release: str) -> list[dict[str, Any]]:
    return next(c.installed for c in report.charts if c.release.release == release)


@pytest.mark.parametrize("name", ["prod", "prod-pulumi"])
def test_the_attachment_crd_has_one_owner_with_the_network_operator(name: str, tmp_path: Path) -> None:
    charts = _operator_charts()
    stack = _stack(name, tmp_path)
    report = _operators(stack, charts)
    nad = ("apiextensions.k8s.io", "CustomResourceDefinition", "", "network-attachment-definitions.k8s.cni.cncf.io")
    assert nad in {object_key(d) for d in _installed(report, "network-operator")}  # the chart ships it ...
    assert duplicate_owners(stack_owners(stack, report)) == []  # ... and nothing else applies it


@pytest.mark.parametrize("name", ["prod", "prod-pulumi"])
def test_the_node_feature_rule_needs_the_crd_of_the_gpu_operator_chart(name: str, tmp_path: Path) -> None:
    charts = _operator_charts()
    stack = _stack(name, tmp_path)
    report = _operators(stack, charts)
    rules = [d for d in _installed(report, "network-operator") if d.get("kind") == "NodeFeatureRule"]
    assert rules and all(d["apiVersion"].startswith("nfd.k8s-sigs.io/") for d in rules)
    crd = ("apiextensions.k8s.io", "CustomResourceDefinition", "", "nodefeaturerules.nfd.k8s-sigs.io")
    assert crd not in {object_key(d) for d in _installed(report, "network-operator")}
    assert crd in {object_key(d) for d in _installed(report, "gpu-operator")}
    # hence the order (tests/test_day2.py: the network operator's chart depends on the GPU Operator's)
    gpu = next(c.release.urn for c in report.charts if c.release.release == "gpu-operator")
    network = next(
        r
        for r in stack.resources
        if r.urn == next(c.release.urn for c in report.charts if c.release.release == "network-operator")
    )
    assert gpu in network.depends_on
