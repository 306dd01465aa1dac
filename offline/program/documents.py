"""What a recorded program declares, as YAML documents and files (`render_documents`, `write_render`).

The offline renderer's own kinds (`offline.hpcforge.dev/v1` HelmChart and ManifestFile) stand for what the
engine does not see as objects: a chart release and a remote manifest. `offline render` writes these files;
`offline diff` reads such a folder back (offline/diff/base.py) and the schema tier validates them
(offline/schema/validate.py)."""

from __future__ import annotations

import re
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
