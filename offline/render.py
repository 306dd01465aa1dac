"""Write what a recorded program declares as YAML files, and print its resource tree."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from .engine import RecordedResource, RecordedStack

CHART_API_VERSION = "offline.hpcforge.dev/v1"
CHART_KIND = "HelmChart"


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Block-style multi-line strings, so rendered config files stay readable."""


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_representer)


_TOP_LEVEL_ORDER = ("apiVersion", "kind", "metadata", "type", "spec", "data", "stringData", "binaryData")


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def dump_yaml(document: Any) -> str:
    """Stable YAML: apiVersion, kind, metadata first; every mapping below sorted by key."""
    if isinstance(document, dict):
        ordered = {key: _sorted(document[key]) for key in _TOP_LEVEL_ORDER if key in document}
        ordered.update({key: _sorted(document[key]) for key in sorted(document) if key not in ordered})
        document = ordered
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def chart_document(resource: RecordedResource) -> dict[str, Any]:
    """A Helm chart declaration as a YAML document (values redacted where secret)."""
    inputs = resource.redacted_inputs()
    repo = (inputs.get("repositoryOpts") or {}).get("repo")
    spec = {
        "chart": inputs.get("chart"),
        "version": inputs.get("version"),
        "repository": repo,
        "namespace": inputs.get("namespace"),
        "values": inputs.get("values") or {},
    }
    return {
        "apiVersion": CHART_API_VERSION,
        "kind": CHART_KIND,
        "metadata": {"name": resource.name, "namespace": inputs.get("namespace")},
        "spec": spec,
    }


MANIFEST_KIND = "ManifestFile"


def manifest_document(resource: RecordedResource) -> dict[str, Any]:
    """A remote manifest applied by yaml.v2.ConfigFile (its objects are not known offline)."""
    return {
        "apiVersion": CHART_API_VERSION,
        "kind": MANIFEST_KIND,
        "metadata": {"name": resource.name},
        "spec": {"file": resource.inputs.get("file")},
    }


def object_document(resource: RecordedResource) -> dict[str, Any]:
    return resource.redacted_inputs()


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", part)


def render_documents(stack: RecordedStack) -> list[tuple[str, dict[str, Any]]]:
    """(relative path, document) for every Kubernetes object and Helm chart the program declares."""
    documents: list[tuple[str, dict[str, Any]]] = []
    for resource in stack.resources:
        if resource.is_chart:
            document = chart_document(resource)
        elif resource.is_manifest_file:
            document = manifest_document(resource)
        elif resource.is_kubernetes_object:
            document = object_document(resource)
        else:
            continue
        metadata = document.get("metadata") or {}
        namespace = metadata.get("namespace") or "_cluster"
        name = metadata.get("name") or resource.name
        documents.append((f"{_safe(namespace)}/{_safe(document['kind'])}-{_safe(name)}.yaml", document))
    return documents


def write_render(stack: RecordedStack, out_dir: Path, extra: list[tuple[str, dict[str, Any]]] | None = None) -> list[Path]:
    """Write `render_documents(stack)` (and `extra` documents, e.g. rendered chart objects) under `out_dir`."""
    paths: list[Path] = []
    seen: set[str] = set()
    for relative, document in [*render_documents(stack), *(extra or [])]:
        if relative in seen:
            raise ValueError(f"two objects render to {relative}: object names must be unique per kind and namespace")
        seen.add(relative)
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_yaml(document))
        paths.append(path)
    return paths


def resource_tree(stack: RecordedStack) -> str:
    """The tree `pulumi preview` prints: type and name, indented by parent."""
    children: dict[str, list[RecordedResource]] = defaultdict(list)
    urns = {r.urn for r in stack.resources}
    stack_urn = f"urn:pulumi:{stack.stack}::{stack.project}::pulumi:pulumi:Stack::{stack.project}-{stack.stack}"
    for resource in stack.resources:
        parent = resource.parent if resource.parent in urns else stack_urn
        children[parent].append(resource)
    rows: list[tuple[str, str]] = [("pulumi:pulumi:Stack", f"{stack.project}-{stack.stack}")]

    def walk(urn: str, prefix: str) -> None:
        kids = sorted(children.get(urn, []), key=lambda r: (not r.type.startswith("hpcforge:"), r.type, r.name))
        for index, child in enumerate(kids):
            last = index == len(kids) - 1
            rows.append((f"{prefix}{'└─ ' if last else '├─ '}{child.type}", child.name))
            walk(child.urn, prefix + ("   " if last else "│  "))

    walk(stack_urn, "")
    width = max(len(row[0]) for row in rows) + 2
    lines = [f"     {'Type':<{width}}Name"]
    lines += [f" +   {type_:<{width}}{name}" for type_, name in rows]
    return "\n".join(lines)
