"""Subcharts a chart asks for but does not carry (offline/charts/dependencies.py): which count, as Helm decides it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from offline.charts.dependencies import dependency_enabled, missing_dependencies
from offline.charts.source import ChartSource
from tests.offline.charts.test_charts import CHARTS, render, run_test_program


@pytest.mark.parametrize(
    ("dependency", "values", "expected"),
    [
        ({"name": "grafana", "condition": "grafana.enabled"}, {"grafana": {"enabled": True}}, True),
        ({"name": "grafana", "condition": "grafana.enabled"}, {"grafana": {"enabled": False}}, False),
        # No value at the path, or one that is not a boolean: the condition decides nothing (enabled).
        ({"name": "grafana", "condition": "grafana.enabled"}, {}, True),
        ({"name": "grafana", "condition": "grafana.enabled"}, {"grafana": {"enabled": "false"}}, True),
        # The first path that holds a boolean decides.
        ({"name": "x", "condition": "a.on, b.on"}, {"b": {"on": False}}, False),
        ({"name": "x", "condition": "a.on,b.on"}, {"a": {"on": True}, "b": {"on": False}}, True),
        # Tags: disabled only when every tag set is false; a condition overrides the tags.
        ({"name": "x", "tags": ["t1", "t2"]}, {"tags": {"t1": False, "t2": False}}, False),
        ({"name": "x", "tags": ["t1", "t2"]}, {"tags": {"t1": False, "t2": True}}, True),
        ({"name": "x", "tags": ["t1"], "condition": "x.enabled"}, {"tags": {"t1": False}, "x": {"enabled": True}}, True),
    ],
)
def test_a_dependency_is_enabled_as_helm_decides(dependency: dict[str, Any], values: dict[str, Any], expected: bool) -> None:
    assert dependency_enabled(dependency, values) is expected


def test_only_enabled_dependencies_that_no_subchart_provides_are_missing() -> None:
    requested = [
        {"name": "crds", "condition": "crds.enabled"},
        {"name": "grafana", "condition": "grafana.enabled"},
        {"name": "prometheus-windows-exporter", "condition": "windowsMonitoring.enabled"},
    ]
    values = {"crds": {"enabled": True}, "grafana": {"enabled": True}, "windowsMonitoring": {"enabled": False}}
    assert missing_dependencies(requested, [{"name": "crds"}], values) == ["grafana"]
    assert missing_dependencies(requested, [{"name": "crds"}, {"name": "grafana"}], values) == []


def _chart_with_dependency(tmp_path: Path) -> ChartSource:
    chart = tmp_path / "hpcforge-test-0.1.0"
    shutil.copytree(CHARTS / "hpcforge-test-0.1.0", chart)
    with (chart / "Chart.yaml").open("a") as chart_yaml:
        chart_yaml.write("dependencies:\n  - name: extra\n    version: 0.1.0\n    condition: extra.enabled\n")
    return ChartSource(charts_from=tmp_path)


def test_a_chart_missing_an_enabled_subchart_is_refused_naming_it(tmp_path: Path) -> None:
    source = _chart_with_dependency(tmp_path)
    enabled = render(run_test_program({"hook": {"enabled": False}, "extra": {"enabled": True}}), source)
    assert enabled.errors == [
        "chart hpcforge-test 0.1.0 (release 'demo' in namespace 'demo'): found in Chart.yaml and enabled by the values,"
        " but missing in charts/ directory: extra (a chart from its repository carries them; unpack them under the"
        " chart's charts/ for a git export, docs/charts.md)"
    ]
    disabled = render(run_test_program({"hook": {"enabled": False}, "extra": {"enabled": False}}), source)
    assert disabled.errors == [] and disabled.charts[0].objects


def test_a_subchart_packaged_as_an_archive_counts_as_present(tmp_path: Path) -> None:
    import tarfile

    source = _chart_with_dependency(tmp_path)
    subchart = tmp_path / "build" / "extra"
    (subchart / "templates").mkdir(parents=True)
    (subchart / "Chart.yaml").write_text("apiVersion: v2\nname: extra\nversion: 0.1.0\n")
    (subchart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  labels:\n    app.kubernetes.io/name: extra\n"
    )
    (tmp_path / "hpcforge-test-0.1.0" / "charts").mkdir()
    with tarfile.open(tmp_path / "hpcforge-test-0.1.0" / "charts" / "extra-0.1.0.tgz", "w:gz") as archive:
        archive.add(subchart, arcname="extra")
    report = render(run_test_program({"hook": {"enabled": False}, "extra": {"enabled": True}}), source)
    assert report.errors == []
    assert any(o["kind"] == "ConfigMap" and o["metadata"]["name"] == "extra" for o in report.charts[0].objects)
