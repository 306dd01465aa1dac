"""Turn the stack's `hpcforge:*` config into a `PlatformConfig`, or into readable errors.

Each problem becomes one line naming the full key path as the user wrote it in the stack file,
e.g. `hpcforge:network.pools[0].addresses: 10.0.0.300 is not an IPv4 address`.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from .base import ConfigProblems
from .inventory import InventoryError, build_items, expand_inventories, source_path
from .root import PlatformConfig

NAMESPACE = "hpcforge"


class ConfigError(Exception):
    """The stack configuration is invalid; `messages` holds one line per problem."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = messages
        super().__init__("invalid hpcforge configuration:\n" + "\n".join(f"  {m}" for m in messages))


def parse_config_values(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Keep the `hpcforge:` keys of a Pulumi config map and decode their values.

    Pulumi hands every value over as a string; structured values (objects, lists) are JSON.
    """
    data: dict[str, Any] = {}
    for key, value in raw.items():
        namespace, _, name = key.partition(":")
        if namespace != NAMESPACE or not name:
            continue
        decoded = value
        if isinstance(value, str) and value[:1] in ("{", "["):
            try:
                decoded = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ConfigError([f"{key}: not valid JSON ({exc.msg} at position {exc.pos})"]) from None
        data[name] = decoded
    return data


PROJECT_DIR = Path(__file__).resolve().parents[2]


def load_config(raw: Mapping[str, Any], root: Path | None = None) -> PlatformConfig:
    """Validate the stack config and the inventory files it names (relative to `root`, default: this
    project); raise ConfigError with every problem found."""
    data = parse_config_values(raw)
    try:
        data, sources = expand_inventories(data, root or PROJECT_DIR)
    except InventoryError as error:
        raise ConfigError(error.messages) from None
    build_items(data, sources)
    try:
        return PlatformConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_errors(exc, sources)) from None


def load_config_from_pulumi(root: Path | None = None) -> PlatformConfig:
    """Read every `hpcforge:*` key that the Pulumi engine (or the mock engine) provides."""
    from pulumi.runtime import config as runtime_config

    raw: dict[str, Any] = dict(runtime_config.get_config_env())
    raw.update(runtime_config.CONFIG.get())
    return load_config(raw, root)


# --- error formatting --------------------------------------------------------------------------


def format_errors(exc: ValidationError, sources: Mapping[tuple[str, str], tuple[str, str]] | None = None) -> list[str]:
    messages: list[str] = []
    for error in exc.errors(include_url=False):
        for parts, message in _expand(error):
            in_file = source_path(parts, sources or {})
            path = _render_path(parts)
            if in_file is not None:
                line = f"{in_file[0]}: {_render_path(in_file[1])}: {message}"
            else:
                line = f"{NAMESPACE}:{path}: {message}" if path else f"{NAMESPACE}: {message}"
            if line not in messages:
                messages.append(line)
    return messages


def _expand(error: ErrorDetails) -> Iterator[tuple[list[str | int], str]]:
    parts = _resolve_loc(error["loc"])
    ctx = error.get("ctx") or {}
    cause = ctx.get("error")
    if isinstance(cause, ConfigProblems):
        for rel_path, message in cause.problems:
            yield [*parts, *rel_path], message
        return
    yield parts, _message(error, parts)


def _render_path(parts: list[str | int]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif text == "":
            text = part
        elif _plain_key(part):
            text += f".{part}"
        else:
            text += f"[{json.dumps(part)}]"
    return text


def _plain_key(part: str) -> bool:
    return part.replace("_", "a").replace("-", "a").isalnum()


def _message(error: ErrorDetails, parts: list[str | int]) -> str:
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        return _unknown_key(parts)
    if kind == "missing":
        return "required key is missing"
    if kind in ("value_error", "assertion_error"):
        message = error["msg"]
        for prefix in ("Value error, ", "Assertion failed, "):
            message = message.removeprefix(prefix)
        return message
    if kind == "literal_error":
        expected = (error.get("ctx") or {}).get("expected", "")
        return f"{value!r} is not allowed (expected {expected})"
    if kind in ("too_short", "too_long"):
        return error["msg"].replace("List should", "needs to").replace("Tuple should", "needs to") + _got(value)
    if kind == "string_pattern_mismatch":
        pattern = (error.get("ctx") or {}).get("pattern", "")
        return f"{value!r} is not in the expected form (pattern {pattern})"
    message = error["msg"]
    message = message.replace("Input should be", "expected").replace("Input should have", "expected")
    return f"{message[0].lower()}{message[1:]}{_got(value)}"


def _got(value: Any) -> str:
    if isinstance(value, dict | list | tuple):
        return f" (got a {'mapping' if isinstance(value, dict) else 'list'})"
    text = repr(value)
    return f" (got {text if len(text) <= 60 else text[:57] + '...'})"


def _unknown_key(parts: list[str | int]) -> str:
    if not parts:
        return "unknown key"
    key = str(parts[-1])
    owner = _model_at(parts[:-1])
    if owner is None:
        return "unknown key"
    allowed = [field.alias or name for name, field in owner.model_fields.items()]
    if owner is PlatformConfig:
        allowed = [f"{NAMESPACE}:{name}" for name in allowed]
        key = f"{NAMESPACE}:{key}"
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key ({hint}allowed: {', '.join(allowed)})"


# Pydantic puts union arm tags into `loc` (e.g. `ipam.whereabouts.range`); walk the model types
# alongside the location so that the path shown is exactly the path in the stack file.


def _unwrap(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        arms: list[Any] = []
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                arms.extend(_unwrap(arg))
        return arms
    return [annotation]


def _step(annotation: Any, part: str | int) -> tuple[Any, bool]:
    """Follow one loc element from a type; returns (next type, whether the element is a real key)."""
    arms = _unwrap(annotation)
    for arm in arms:
        origin = typing.get_origin(arm)
        if isinstance(part, int) and origin in (tuple, list):
            return typing.get_args(arm)[0], True
        if isinstance(part, str) and origin is dict:
            return typing.get_args(arm)[1], True
        if isinstance(part, str) and isinstance(arm, type) and issubclass(arm, BaseModel):
            for name, field in arm.model_fields.items():
                if part in (field.alias, name):
                    return field.annotation, True
    if len(arms) > 1 and isinstance(part, str):
        for arm in arms:
            if isinstance(arm, type) and issubclass(arm, BaseModel):
                tag_field = arm.model_fields.get("type")
                if tag_field is not None and tag_field.default == part:
                    return arm, False
            if getattr(arm, "__name__", None) == part:
                return arm, False
    return None, True


def _resolve_loc(loc: tuple[str | int, ...]) -> list[str | int]:
    parts: list[str | int] = []
    current: Any = PlatformConfig
    for part in loc:
        current, is_key = _step(current, part) if current is not None else (None, True)
        if is_key:
            parts.append(part)
    return parts


def _model_at(parts: list[str | int]) -> type[BaseModel] | None:
    current: Any = PlatformConfig
    for part in parts:
        current, _ = _step(current, part)
        if current is None:
            return None
    for arm in _unwrap(current):
        if isinstance(arm, type) and issubclass(arm, BaseModel):
            return arm
    return None
