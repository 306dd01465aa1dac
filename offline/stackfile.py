"""Read a `Pulumi.<stack>.yaml` the way the Pulumi CLI hands it to a program.

The CLI passes every config value as a string: scalars as their text, objects and lists as JSON.
Encrypted values (`secure: v1:...`) cannot be decrypted without the stack's secrets provider, so
offline they become a recognisable placeholder and their keys are reported as secret.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class StackFileError(Exception):
    pass


@dataclass(frozen=True)
class StackFile:
    name: str
    path: Path
    config: dict[str, str]
    secret_keys: list[str] = field(default_factory=list)


def _placeholder(key: str) -> str:
    return f"offline-placeholder-for-secret-{key.replace(':', '-')}"


def _replace_secure(value: Any, key: str, found: list[bool]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            found.append(True)
            return _placeholder(key)
        return {k: _replace_secure(v, f"{key}.{k}", found) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_secure(v, f"{key}[{i}]", found) for i, v in enumerate(value)]
    return value


def _as_config_string(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def stack_path(stack: str, root: Path = PROJECT_ROOT) -> Path:
    return root / f"Pulumi.{stack}.yaml"


def read_stack_file(path: Path, name: str | None = None) -> StackFile:
    try:
        # libyaml's loader when available: a 10,000-host stack file is several MB.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        document = yaml.load(path.read_text(), Loader=loader) or {}
    except FileNotFoundError:
        raise StackFileError(f"{path}: no such stack file") from None
    except yaml.YAMLError as exc:
        raise StackFileError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(document, dict):
        raise StackFileError(f"{path}: expected a mapping with a 'config' key")
    config = document.get("config") or {}
    if not isinstance(config, dict):
        raise StackFileError(f"{path}: 'config' must be a mapping of keys to values")
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in config.items():
        if not isinstance(key, str) or ":" not in key:
            raise StackFileError(f"{path}: config key {key!r} has no namespace (expected e.g. 'hpcforge:{key}')")
        found: list[bool] = []
        plain = _replace_secure(value, key, found)
        if found:
            secret_keys.append(key)
        values[key] = _as_config_string(plain)
    stack_name = name or path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    return StackFile(name=stack_name, path=path, config=values, secret_keys=secret_keys)
