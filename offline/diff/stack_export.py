"""A base from what the engine last applied: the file `pulumi stack export` writes, mapped to the resources of an
`offline preview --json` recording so that the plan compares it like any other base.

The format is Pulumi's own (pulumi/pulumi sdk/go/common/apitype/core.go at v3.259.0, the newest tag of the
snapshot read; hpcforge pins pulumi==3.272.0, whose CLI writes the same version 3):

- `pulumi stack export` writes an `UntypedDeployment` (core.go:382-393): `{"version": 3, "deployment": {...}}`
  (version 4 when the stack uses features that need it, `features` listed; DeploymentSchemaVersionCurrent = 3,
  core.go:81-88). A file backend's own checkpoint, `{"version": 3, "checkpoint": {"stack", "latest": {...}}}`
  (VersionedCheckpoint and CheckpointV3, core.go:90-132), is read too.
- the deployment (`DeploymentV3`, core.go:156-176): `manifest` (`time`, `magic`, `version`), `secrets_providers`,
  `resources`, `pending_operations`;
- each resource (`ResourceV3`, core.go:489-569): `urn`, `custom`, `delete`, `id`, `type`, `inputs`, `outputs`,
  `parent`, `protect`, `external`, `dependencies`, `provider`, `pendingReplacement`, `retainOnDelete`,
  `ignoreChanges`, `replaceOnChanges`, ... The URN is `urn:pulumi:<stack>::<project>::<type chain>::<name>`.
- a secret value is `{"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext": ...}`,
  or with `--show-secrets` `"plaintext": <the JSON of the value>` (pkg/resource/stack/deployment.go:842-870
  SerializePropertyValue; sdk/go/common/resource/sig/sig.go:21-24 the signature key and the secret signature).

What is left out, and said in the base's notes: the stack itself (`pulumi:pulumi:Stack`) and the engine's default
providers (the program never registers them); the objects a `helm.v4.Chart` or a `yaml.v2` component rendered
(the program's recording under mocks has the chart, not its objects: hpcforge compares the chart's inputs);
resources marked `delete` (an earlier replacement's old half, pending deletion). An encrypted secret (no
plaintext) cannot be compared: the command takes the head's value for it and counts it in the notes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..program.engine import REDACTED, SECRET_SIG, RecordedResource
from ..program.words import plural

SIG_KEY = "4dabf18193072939515e22adb298388d"
COMPONENT_PARENTS = ("kubernetes:helm.sh/v4:Chart", "kubernetes:yaml/v2:ConfigFile", "kubernetes:yaml/v2:ConfigGroup")
"""Components whose children are the objects a chart or manifest rendered in the cluster."""
ENCRYPTED = "[secret: encrypted in the state file]"


class StackExportError(ValueError):
    """The file is not a `pulumi stack export` (or checkpoint) this module reads."""


@dataclass
class StackExport:
    stack: str
    project: str
    updated: str
    """manifest.time: when the engine wrote the deployment."""
    cli_version: str
    resources: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    encrypted: dict[str, list[str]] = field(default_factory=dict)
    """Per URN, the input paths whose deployed value is encrypted (cannot be compared)."""


def is_stack_export(data: Any) -> bool:
    return isinstance(data, dict) and "version" in data and ("deployment" in data or "checkpoint" in data)


def _deployment(data: dict[str, Any], where: str) -> dict[str, Any]:
    version = data.get("version")
    if version not in (3, 4):
        raise StackExportError(f"{where}: deployment version {version!r}; this reads versions 3 and 4 (`pulumi stack export`)")
    deployment = data.get("deployment")
    if deployment is None and isinstance(data.get("checkpoint"), dict):
        deployment = data["checkpoint"].get("latest")
    if not isinstance(deployment, dict) or not isinstance(deployment.get("resources", []), list):
        raise StackExportError(f"{where}: no deployment with a list of resources")
    return deployment


def _plain(value: Any, path: str, encrypted: list[str]) -> Any:
    """The value with Pulumi's secret objects opened (plaintext) or marked (ciphertext), as the recording keeps them."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            if "plaintext" in value:
                try:
                    return {SIG_KEY: SECRET_SIG, "value": json.loads(value["plaintext"])}
                except (TypeError, ValueError):
                    return {SIG_KEY: SECRET_SIG, "value": value["plaintext"]}
            encrypted.append(path)
            return ENCRYPTED
        return {k: _plain(v, f"{path}.{k}" if path else k, encrypted) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, f"{path}[{i}]", encrypted) for i, v in enumerate(value)]
    return value


def _redacted(urn: str, type_: str, raw: dict[str, Any]) -> dict[str, Any]:
    """The inputs as a recording keeps them (offline/program/engine.py RecordedResource.redacted_inputs: secrets
    redacted, resource references as their URN, unknown values as `<unknown>`)."""
    return RecordedResource(urn, type_, _name(urn), "", True, False, "", {}, raw, []).redacted_inputs()


def _name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise StackExportError(f"{path.name}: {error.strerror}") from None
    except ValueError as error:
        raise StackExportError(f"{path.name}: not JSON ({error})") from None
    if not is_stack_export(data):
        raise StackExportError(f"{path.name}: not a `pulumi stack export` file (no version and deployment)")
    return _deployment(data, path.name)


def _left_out(resource: dict[str, Any], types: dict[str, str], parents: dict[str, str]) -> str | None:
    """Why a deployed resource is not compared (`engine`, `pending delete`, `rendered`), or None."""
    urn, type_ = resource["urn"], resource["type"]
    if type_ == "pulumi:pulumi:Stack" or (type_.startswith("pulumi:providers:") and _name(urn).startswith("default")):
        return "engine"
    if resource.get("delete"):
        return "pending delete"
    seen: set[str] = set()
    parent = parents.get(urn, "")
    while parent and parent not in seen:
        if types.get(parent) in COMPONENT_PARENTS:
            return "rendered"
        seen.add(parent)
        parent = parents.get(parent, "")
    return None


def _recorded(resource: dict[str, Any], hidden: list[str]) -> dict[str, Any]:
    """A deployed resource in the form of a recording's (offline/program/engine.py RecordedResource.to_json)."""
    urn, type_ = resource["urn"], resource["type"]
    return {
        "urn": urn,
        "type": type_,
        "name": _name(urn),
        "parent": resource.get("parent") or "",
        "custom": bool(resource.get("custom")),
        "provider": resource.get("provider") or "",
        "inputs": _redacted(urn, type_, _plain(resource.get("inputs") or {}, "", hidden)),
        "options": {
            "protect": bool(resource.get("protect")),
            "ignoreChanges": list(resource.get("ignoreChanges") or []),
            "retainOnDelete": bool(resource.get("retainOnDelete")),
            "replaceOnChanges": list(resource.get("replaceOnChanges") or []),
            "dependsOn": list(resource.get("dependencies") or []),
        },
    }


def read_stack_export(path: Path) -> StackExport:
    deployment = _load(path)
    manifest = deployment.get("manifest") or {}
    raw = deployment["resources"]
    for index, resource in enumerate(raw):
        if (
            not isinstance(resource, dict)
            or not isinstance(resource.get("urn"), str)
            or not isinstance(resource.get("type"), str)
        ):
            raise StackExportError(f"{path.name}: deployment.resources[{index}] has no urn and type")
    types = {r["urn"]: r["type"] for r in raw}
    parents = {r["urn"]: str(r.get("parent") or "") for r in raw}
    first = raw[0]["urn"].split("::") if raw else []
    stack, project = (first[0].removeprefix("urn:pulumi:"), first[1]) if len(first) >= 4 else ("", "")
    resources: list[dict[str, Any]] = []
    skipped = {"engine": 0, "rendered": 0, "pending delete": 0}
    encrypted: dict[str, list[str]] = {}
    for resource in raw:
        why = _left_out(resource, types, parents)
        if why is not None:
            skipped[why] += 1
            continue
        hidden: list[str] = []
        resources.append(_recorded(resource, hidden))
        if hidden:
            encrypted[resource["urn"]] = hidden
    notes = [
        f"deployed state of stack {stack or '?'} written {manifest.get('time', '?')} by Pulumi {manifest.get('version', '?')}"
    ]
    if skipped["rendered"]:
        notes.append(
            f"{plural(skipped['rendered'], 'object')} rendered by charts or manifests not compared (their chart's inputs are)"
        )
    if skipped["pending delete"]:
        notes.append(f"{plural(skipped['pending delete'], 'resource')} pending deletion from an earlier update left out")
    if deployment.get("pending_operations"):
        notes.append(
            f"{plural(len(deployment['pending_operations']), 'operation')} still pending: the last update did not finish"
        )
    return StackExport(
        stack, project, str(manifest.get("time", "")), str(manifest.get("version", "")), resources, notes, encrypted
    )


def _fill(deployed: Any, head: Any) -> tuple[Any, int]:
    """`deployed` with each encrypted value replaced by the head's value at the same place; how many."""
    if deployed == ENCRYPTED:
        return (REDACTED if head is _NONE else head), 1
    if isinstance(deployed, dict):
        out, count = {}, 0
        for key, value in deployed.items():
            out[key], n = _fill(value, head.get(key, _NONE) if isinstance(head, dict) else _NONE)
            count += n
        return out, count
    if isinstance(deployed, list):
        items, count = [], 0
        for index, value in enumerate(deployed):
            item, n = _fill(value, head[index] if isinstance(head, list) and index < len(head) else _NONE)
            items.append(item)
            count += n
        return items, count
    return deployed, 0


_NONE: Any = object()


def fill_encrypted(export: StackExport, head: list[dict[str, Any]]) -> int:
    """Give each encrypted deployed value the head's value at the same place (it cannot be compared); the count."""
    heads = {str(r.get("urn")): r for r in head}
    filled = 0
    for resource in export.resources:
        if resource["urn"] not in export.encrypted:
            continue
        other = heads.get(resource["urn"])
        resource["inputs"], count = _fill(resource["inputs"], (other or {}).get("inputs", _NONE))
        filled += count
    if filled:
        export.notes.append(
            f"{plural(filled, 'secret value')} encrypted in the state file not compared (export with --show-secrets to compare them)"
        )
    return filled
