"""Policy-pack configuration as the Pulumi CLI and engine handle it.

The --policy-pack-config file is parsed like the CLI, and reconciled with each pack's policies like
pkg/resource/analyzer/config.go ReconcilePolicyPackConfig: schema defaults and the policies' default
levels, then the pack's initial config, then the given file (`"all"` first, then per policy); each
policy's properties are validated against its config schema (with `enforcementLevel` injected).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LEVELS = ("advisory", "mandatory", "remediate", "disabled")


class PolicyRunError(Exception):
    """A pack could not be started, configured or driven (the engine would abort the preview)."""


# --- policy config, as pkg/resource/analyzer/config.go ----------------------------------------------


@dataclass
class PolicyConfig:
    level: str = ""
    """"" when not set."""
    properties: dict[str, Any] | None = None


def _extract_level(props: dict[str, Any], name: str) -> str:
    if "enforcementLevel" not in props:
        return ""
    value = props.pop("enforcementLevel")
    if not isinstance(value, str):
        raise PolicyRunError(
            f'parsing enforcement level for "{name}": {value!r} is not a valid enforcement level; must be a string'
        )
    if value not in LEVELS:
        raise PolicyRunError(f'parsing enforcement level for "{name}": "{value}" is not a valid enforcement level')
    return value


def parse_policy_config(text: str) -> dict[str, PolicyConfig] | None:
    """parsePolicyPackConfig: `{"policy": "level"}` or `{"policy": {"enforcementLevel": ..., props...}}`."""
    if not text.strip():
        return None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise PolicyRunError(f"policy config is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise PolicyRunError("policy config must be a JSON object")
    result: dict[str, PolicyConfig] = {}
    for name, value in document.items():
        if isinstance(value, str):
            if value not in LEVELS:
                raise PolicyRunError(f'parsing enforcement level for "{name}": "{value}" is not a valid enforcement level')
            entry = PolicyConfig(value, None)
        elif isinstance(value, dict):
            props = dict(value)
            level = _extract_level(props, name)
            entry = PolicyConfig(level, props or None)
        else:
            raise PolicyRunError(f'parsing "{name}": {value!r} is not a valid value; must be a string or object')
        if not entry.level and not entry.properties:
            continue  # empty configs are dropped
        result[name] = entry
    return result


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    level: str
    schema: dict[str, Any]
    """JSON schema properties, with `enforcementLevel` injected (the engine does this)."""
    required: tuple[str, ...]


def _defaults(policies: Sequence[PolicyInfo]) -> dict[str, PolicyConfig]:
    result: dict[str, PolicyConfig] = {}
    for policy in policies:
        props = {k: v["default"] for k, v in policy.schema.items() if isinstance(v, dict) and "default" in v}
        result[policy.name] = PolicyConfig(policy.level, props or None)
    return result


def _apply(result: dict[str, PolicyConfig], given: Mapping[str, PolicyConfig]) -> None:
    everything = given.get("all")
    if everything is not None and everything.level in LEVELS:
        for name, current in list(result.items()):
            result[name] = PolicyConfig(everything.level, current.properties)
    for name, entry in given.items():
        level, properties = "", None
        if name in result:
            level, properties = result[name].level, result[name].properties
        if entry.level in LEVELS:
            level = entry.level
        if entry.properties and properties is None:
            properties = {}
        if entry.properties:
            assert properties is not None
            properties.update(entry.properties)
        result[name] = PolicyConfig(level, properties)


def _validation_errors(policies: Sequence[PolicyInfo], config: Mapping[str, PolicyConfig]) -> list[str]:
    import jsonschema

    errors: list[str] = []
    for policy in policies:
        props = (config[policy.name].properties if policy.name in config else None) or {}
        schema: dict[str, Any] = {"type": "object", "properties": policy.schema}
        if policy.required:
            schema["required"] = list(policy.required)
        validator = jsonschema.Draft7Validator(schema)
        for error in sorted(validator.iter_errors(props), key=lambda e: list(e.path)):
            where = ".".join(str(p) for p in error.path)
            message = f"{where}: {error.message}" if where else error.message
            errors.append(f"{policy.name}: {message}")
    return errors


def reconcile_policy_config(
    policies: Sequence[PolicyInfo],
    initial: Mapping[str, PolicyConfig] | None,
    given: Mapping[str, PolicyConfig] | None,
) -> tuple[dict[str, PolicyConfig], list[str]]:
    """ReconcilePolicyPackConfig: (merged config, validation errors)."""
    result = _defaults(policies)
    if initial:
        _apply(result, initial)
    if given:
        _apply(result, given)
    errors = _validation_errors(policies, result)
    return (result, []) if not errors else ({}, errors)
