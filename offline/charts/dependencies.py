"""The subcharts a chart asks for in its Chart.yaml that its `charts/` directory lacks.

`helm.v4.Chart` refuses such a chart before rendering: it runs Helm's install action client-side, and
pulumi-kubernetes provider/pkg/helm/tool.go (`runInstall`, vendored from Helm's cmd/helm/install.go) calls
Helm's `action.CheckDependencies(chart, chart.Metadata.Dependencies)`, which fails with "found in Chart.yaml, but
missing in charts/ directory: <names>" (it downloads them only where the chart has a Chart.lock or
`dependencyUpdate` is set). A chart from its repository is packaged with every dependency; a chart exported from git
(docs/charts.md) has only the subcharts vendored there. helm-python-sdk renders such a chart without a word and
without the missing subchart's objects, so the offline renderer checks here, before rendering.

Which dependencies count: those the values enable, as Helm decides it (pkg/chartutil/dependencies.go,
`processDependencyTags` then `processDependencyConditions`): enabled unless its tags are all false; then the first
of its comma-separated condition paths that holds a boolean in the merged values decides. A disabled subchart renders
nothing, so its absence changes no rendered object (Helm itself would still ask for it; a packaged chart has it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def _path_value(values: Mapping[str, Any], path: str) -> Any:
    node: Any = values
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def dependency_enabled(dependency: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    """Whether Helm renders DEPENDENCY (an entry of Chart.yaml `dependencies`) with the merged VALUES."""
    enabled = True
    given = values.get("tags")
    tags: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    states = [tags[tag] for tag in dependency.get("tags") or () if isinstance(tags.get(tag), bool)]
    if states and True not in states:
        enabled = False
    for path in str(dependency.get("condition") or "").split(","):
        value = _path_value(values, path.strip()) if path.strip() else None
        if isinstance(value, bool):
            return value
    return enabled


def missing_dependencies(
    requested: Iterable[Mapping[str, Any]], loaded: Iterable[Mapping[str, Any]], values: Mapping[str, Any]
) -> list[str]:
    """Names of the REQUESTED dependencies (Chart.yaml) that the values enable and no LOADED subchart (charts/) is.
    Matched by name, as Helm's CheckDependencies does (an alias does not count)."""
    present = {str(chart.get("name")) for chart in loaded}
    return [str(dep["name"]) for dep in requested if str(dep.get("name")) not in present and dependency_enabled(dep, values)]
