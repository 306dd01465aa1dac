"""Helm and Argo CD sources: helm.v4.Chart / helm.v3.Release and Argo CD Applications' Helm and
Git sources, and a walker over values trees."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .access import get, items, mapping, text
from .view import ResourceView
from .workloads import ARGO_GROUP

HELM_CHART_TYPES = frozenset({"kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Release"})


@dataclass(frozen=True)
class HelmSource:
    """A Helm chart deployment: a helm.v4.Chart / helm.v3.Release, or an Argo CD Application's Helm source."""

    where: str
    """Path of the source in the resource, e.g. `spec.source` or `chart`."""
    chart: str | None
    version: Any
    repo: str | None
    values: Mapping[str, Any]
    values_path: str


@dataclass(frozen=True)
class GitSource:
    """An Argo CD Application source that is a Git directory (no `chart`)."""

    where: str
    repo: str | None
    path: str | None
    revision: Any


def is_application(resource: ResourceView) -> bool:
    return resource.is_kind(ARGO_GROUP, "Application")


def application_sources(resource: ResourceView) -> list[tuple[str, Mapping[str, Any]]]:
    spec = resource.spec
    found: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(spec.get("source"), Mapping):
        found.append(("spec.source", mapping(spec.get("source"))))
    for index, source in enumerate(items(spec.get("sources"))):
        found.append((f"spec.sources[{index}]", mapping(source)))
    return found


def _application_values(source: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], str]:
    helm = mapping(source.get("helm"))
    if isinstance(helm.get("valuesObject"), Mapping):
        return mapping(helm.get("valuesObject")), f"{where}.helm.valuesObject"
    raw = helm.get("values")
    if isinstance(raw, str) and raw.strip():
        try:
            import yaml

            parsed = yaml.safe_load(raw)
        except Exception:  # not YAML: nothing to inspect
            parsed = None
        if isinstance(parsed, Mapping):
            return parsed, f"{where}.helm.values"
    return {}, f"{where}.helm.valuesObject"


def helm_sources(resource: ResourceView) -> list[HelmSource]:
    if resource.type in HELM_CHART_TYPES:
        props = resource.props
        chart = text(props.get("chart"))
        return [
            HelmSource(
                where=resource.type.rsplit(":", 1)[-1],
                chart=chart,
                version=props.get("version"),
                repo=text(get(props, "repositoryOpts", "repo")),
                values=mapping(props.get("values")),
                values_path="values",
            )
        ]
    found: list[HelmSource] = []
    if is_application(resource):
        for where, source in application_sources(resource):
            if source.get("chart") is None:
                continue
            values, values_path = _application_values(source, where)
            found.append(
                HelmSource(
                    where=where,
                    chart=text(source.get("chart")),
                    version=source.get("targetRevision"),
                    repo=text(source.get("repoURL")),
                    values=values,
                    values_path=values_path,
                )
            )
    return found


def git_sources(resource: ResourceView) -> list[GitSource]:
    if not is_application(resource):
        return []
    return [
        GitSource(where, text(source.get("repoURL")), text(source.get("path")), source.get("targetRevision"))
        for where, source in application_sources(resource)
        if source.get("chart") is None
    ]


def chart_basename(chart: str | None) -> str:
    """`argo-cd` for `argo-cd`, `oci://ghcr.io/x/argo-cd` or `repo/argo-cd`."""
    if not chart:
        return ""
    return chart.rstrip("/").rsplit("/", 1)[-1]


def walk(value: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    """Every (path, key, value) under a values tree, depth first (list items have key '')."""
    if isinstance(value, Mapping):
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else str(key)
            yield child_path, str(key), child
            yield from walk(child, child_path)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            child_path = f"{path}[{index}]"
            yield child_path, "", child
            yield from walk(child, child_path)
