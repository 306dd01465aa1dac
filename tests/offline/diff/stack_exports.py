"""State files shaped like the ones `pulumi stack export` writes, made from a recorded program for the tests.

No Pulumi CLI can be installed here (../shared/NOTES-pulumi.md), so the files are written to the apitype the CLI
serialises (pulumi/pulumi sdk/go/common/apitype/core.go@v3.259.0: UntypedDeployment :382, DeploymentV3 :156,
ResourceV3 :489; the secret object of pkg/resource/stack/deployment.go:842-870, as in its
testdata/checkpoint-secrets.json): the stack resource and the engine's default providers, which a program never
registers; an id, outputs, a provider reference, dependencies and times on each custom resource; the objects a Helm
chart rendered as its children; each secret as ciphertext (or, `show_secrets`, as plaintext JSON).
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from offline.program.engine import RecordedResource, RecordedStack

SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
TIME = "2026-11-30T09:12:44.118Z"


def _secret(value: Any, show: bool) -> dict[str, Any]:
    text = json.dumps(value)
    if show:
        return {SIG_KEY: SECRET_SIG, "plaintext": text}
    return {SIG_KEY: SECRET_SIG, "ciphertext": base64.b64encode(b"v1:" + text.encode()[::-1]).decode()}


def _wrap(value: Any, path: str, secret_paths: set[str], show: bool) -> Any:
    if path in secret_paths:
        return _secret(value, show)
    if isinstance(value, dict):
        return {k: _wrap(v, f"{path}.{k}" if path else k, secret_paths, show) for k, v in value.items()}
    if isinstance(value, list):
        return [_wrap(v, f"{path}[{i}]", secret_paths, show) for i, v in enumerate(value)]
    return value


def _resource(r: RecordedResource, provider: str, show: bool) -> dict[str, Any]:
    inputs = _wrap(copy.deepcopy(r.inputs), "", set(r.secret_paths), show)
    out: dict[str, Any] = {"urn": r.urn, "custom": r.custom, "type": r.type}
    if r.custom:
        metadata = r.inputs.get("metadata") or {}
        name = metadata.get("name") or r.name
        out["id"] = f"{metadata['namespace']}/{name}" if metadata.get("namespace") else str(name)
        out["inputs"] = inputs
        outputs = copy.deepcopy(inputs)
        if isinstance(outputs.get("metadata"), dict):
            outputs["metadata"].update({"uid": "3f1c9a8e-0d2b-4c7e-9a51-6b2f0e4d8c10", "resourceVersion": "48211"})
        out["outputs"] = outputs
        out["provider"] = r.provider or provider
    else:
        out["inputs"] = inputs if r.remote else {}
        out["outputs"] = {}
    if r.parent:
        out["parent"] = r.parent
    if r.protect:
        out["protect"] = True
    if r.depends_on:
        out["dependencies"] = list(r.depends_on)
    if r.ignore_changes:
        out["ignoreChanges"] = list(r.ignore_changes)
    if r.replace_on_changes:
        out["replaceOnChanges"] = list(r.replace_on_changes)
    out["created"] = out["modified"] = TIME
    return out


def export_of(stack: RecordedStack, *, show_secrets: bool = False, version: int = 3) -> dict[str, Any]:
    """`pulumi stack export` of `stack` as deployed: what `pulumi up` of that recording would have left."""
    root = f"urn:pulumi:{stack.stack}::{stack.project}::pulumi:pulumi:Stack::{stack.project}-{stack.stack}"
    defaults = [
        {
            "urn": f"urn:pulumi:{stack.stack}::{stack.project}::pulumi:providers:{package}::default_{version_.replace('.', '_')}",
            "custom": True,
            "id": "8a2d6e4c-5b1f-4f0e-a7c3-2e9b1d6f4a08",
            "type": f"pulumi:providers:{package}",
            "inputs": {"version": version_},
            "outputs": {"version": version_},
            "created": TIME,
            "modified": TIME,
        }
        for package, version_ in (("random", "4.21.4"), ("command", "1.2.1"))
    ]
    provider = next((f"{r.urn}::8a2d6e4c" for r in stack.resources if r.type == "pulumi:providers:kubernetes"), "")
    resources: list[dict[str, Any]] = [
        {"urn": root, "custom": False, "type": "pulumi:pulumi:Stack", "created": TIME, "modified": TIME}
    ]
    resources += defaults
    for r in stack.resources:
        resource = _resource(r, provider, show_secrets)
        resource.setdefault("parent", root)
        resources.append(resource)
        if r.is_chart:
            resources.append(_chart_child(r, provider))
    return {
        "version": version,
        "deployment": {
            "manifest": {
                "time": TIME,
                "magic": "2b5a91c8e1f0d4a6b3c7e9f2a1d8c6b4e0f3a7d9c2b5e8f1a4d7c0b3e6f9a2d5",
                "version": "v3.272.0",
            },
            "secrets_providers": {
                "type": "service",
                "state": {"url": "https://api.pulumi.com", "owner": "hpc", "project": stack.project, "stack": stack.stack},
            },
            "resources": resources,
            "metadata": {},
        },
    }


def _chart_child(chart: RecordedResource, provider: str) -> dict[str, Any]:
    """One object the chart rendered in the cluster (the program's recording never has these)."""
    namespace = str(chart.inputs.get("namespace") or "default")
    name = f"{chart.name.rpartition('/')[2]}-server"
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1},
    }
    return {
        "urn": f"{chart.urn.rpartition('::')[0]}$kubernetes:apps/v1:Deployment::{namespace}/{name}",
        "custom": True,
        "id": f"{namespace}/{name}",
        "type": "kubernetes:apps/v1:Deployment",
        "inputs": obj,
        "outputs": obj,
        "parent": chart.urn,
        "provider": provider,
        "created": TIME,
        "modified": TIME,
    }


def edit(export: dict[str, Any], name: str, change: Any) -> dict[str, Any]:
    """The resource named `name` (its URN's last part) in `export`, after `change(inputs)`: drift made by hand."""
    for resource in export["deployment"]["resources"]:
        if resource["urn"].rsplit("::", 1)[-1] == name:
            change(resource["inputs"])
            return resource
    raise KeyError(name)
