"""Turn the stack's `hpcforge:*` config into a `PlatformConfig`, or into readable errors.

Each problem becomes one line naming the full key path as the user wrote it in the stack file,
e.g. `hpcforge:network.pools[0].addresses: 10.0.0.300 is not an IPv4 address`.
"""

from __future__ import annotations

import difflib
import json
import re
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ..ground.base import ConfigProblems, as_written, describe_value
from ..ground.inventory_ref import source_path
from ..ground.root_causes import fold_unknown_references
from ..paths import PROJECT_ROOT
from .inventory import InventoryError, build_items, expand_inventories, with_core_candidates
from .inventory_numbers import needs_core_reading
from .inventory_scan import render_path
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
        if value == "null":
            # The CLI hands an empty or null YAML value over as JSON `null` (object.go MarshalString).
            decoded = None
        elif isinstance(value, str) and value[:1] in ("{", "["):
            try:
                decoded = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ConfigError([f"{key}: not valid JSON ({exc.msg} at position {exc.pos})"]) from None
        data[name] = decoded
    return data


def load_config(raw: Mapping[str, Any], root: Path | None = None, stack: str = "STACK") -> PlatformConfig:
    """Validate the stack config and the inventory files it names (relative to `root`, default: this
    project); raise ConfigError with every problem found. `stack` only names the stack in messages."""
    values = parse_config_values(raw)
    root = root or PROJECT_ROOT
    try:
        data, sources = expand_inventories(values, root, stack)
    except InventoryError as error:
        raise ConfigError(error.messages) from None
    # A number refused inside an inventory file may be a plain scalar that yaml-rs reads as a number and
    # YAML 1.2's core schema as a string (`0b101`, `1_000`): such files are read again with the core
    # schema's strings put back (inventory_numbers.py). Only a config that something refused pays for it:
    # an entry of hosts/users/groups refusing a number is seen at once (before the whole config is
    # validated for nothing), any other place after validation.
    searched = build_items(data, sources)
    reread = with_core_candidates(searched, root)
    if reread:
        del data
        data, sources = _read_with_core_strings(values, root, stack, reread)
    try:
        return PlatformConfig.model_validate(data)
    except ValidationError as exc:
        suspects = with_core_candidates(needs_core_reading(exc, sources, _resolve_loc) - searched, root)
        if not suspects:
            raise ConfigError(format_errors(exc, sources)) from None
    del data
    data, sources = _read_with_core_strings(values, root, stack, reread | suspects)
    try:
        return PlatformConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_errors(exc, sources)) from None


def _read_with_core_strings(
    values: dict[str, Any], root: Path, stack: str, files: set[str]
) -> tuple[dict[str, Any], dict[tuple[str, str], tuple[str, str]]]:
    try:
        data, sources = expand_inventories(values, root, stack, core_strings=files)
    except InventoryError as error:
        raise ConfigError(error.messages) from None
    build_items(data, sources)
    return data, sources


def load_config_from_pulumi(root: Path | None = None) -> PlatformConfig:
    """Read every `hpcforge:*` key that the Pulumi engine (or the mock engine) provides."""
    from pulumi import get_stack
    from pulumi.runtime import config as runtime_config

    raw: dict[str, Any] = dict(runtime_config.get_config_env())
    raw.update(runtime_config.CONFIG.get())
    return load_config(raw, root, get_stack())


# --- error formatting --------------------------------------------------------------------------


MAX_MESSAGES = 25
"""Problems listed at most; the rest are counted."""
SAME_CAUSE_SHOWN = 3
"""Problems of one kind (same key in list items, same message apart from names) listed before they are counted."""


def format_errors(exc: ValidationError, sources: Mapping[tuple[str, str], tuple[str, str]] | None = None) -> list[str]:
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for error in exc.errors(include_url=False):
        for parts, message in _expand(error):
            in_file = source_path(parts, sources or {})
            path = render_path(parts)
            if in_file is not None:
                where = f"{in_file[0]}: {render_path(in_file[1])}"
            else:
                where = f"{NAMESPACE}:{path}" if path else NAMESPACE
            if (where, message) not in seen:
                seen.add((where, message))
                pairs.append((where, message))
    return summarize(pairs)


_INDEX = re.compile(r"\[[0-9]+\]")
_QUOTED = re.compile(r"'[^']*'|\b[0-9][0-9.:/]*\b")


def summarize(pairs: list[tuple[str, str]]) -> list[str]:
    """One line per problem (`<where>: <message>`), repeats of one cause counted instead of listed, and a cap.

    Problems are of one kind when their keys differ only in list indexes and their messages only in
    quoted names and numbers: the first few are listed and the rest counted on one line, with the keys
    of the first ones they concern. Before that, references to one unknown name (97 hosts naming one
    missing image) are folded into one message (root_causes.fold_unknown_references).
    """
    pairs = fold_unknown_references(pairs)
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for where, message in pairs:
        groups.setdefault((_INDEX.sub("[*]", where), _QUOTED.sub("_", message)), []).append((where, message))
    lines: list[str] = []
    for members in groups.values():
        lines += [f"{where}: {message}" for where, message in members[:SAME_CAUSE_SHOWN]]
        rest = members[SAME_CAUSE_SHOWN:]
        if rest:
            shown = ", ".join(where for where, _ in rest[:3]) + (", ..." if len(rest) > 3 else "")
            lines.append(f"{_INDEX.sub('[*]', members[0][0])}: ... and {len(rest)} more like these ({shown})")
    if len(lines) > MAX_MESSAGES:
        hidden = len(lines) - MAX_MESSAGES
        lines = [*lines[:MAX_MESSAGES], f"{NAMESPACE}: ... and {hidden} more problems (fix the ones above first)"]
    return lines


def _expand(error: ErrorDetails) -> Iterator[tuple[list[str | int], str]]:
    parts = _resolve_loc(error["loc"])
    ctx = error.get("ctx") or {}
    cause = ctx.get("error")
    if isinstance(cause, ConfigProblems):
        for rel_path, message in cause.problems:
            yield [*parts, *rel_path], message
        return
    yield parts, _message(error, parts)


def _message(error: ErrorDetails, parts: list[str | int]) -> str:  # noqa: PLR0911 (one return per pydantic error type, worded for users)
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
        return f"{as_written(value)} is not allowed (expected {expected})"
    if kind in ("too_short", "too_long"):
        ctx = error.get("ctx") or {}
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        if isinstance(bound, int):
            noun = "entry" if isinstance(value, dict) else "item"
            plural = noun if bound == 1 else ("entries" if noun == "entry" else "items")
            size = len(value) if isinstance(value, dict | list | tuple) else ctx.get("actual_length")
            return f"needs {'at least' if kind == 'too_short' else 'at most'} {bound} {plural} (got {size})"
        return error["msg"].replace("List should", "needs to").replace("Tuple should", "needs to") + _got(value)
    if kind == "string_pattern_mismatch":
        pattern = (error.get("ctx") or {}).get("pattern", "")
        return f"{as_written(value)} is not in the expected form (pattern {pattern})"
    if kind in _EXPECTED:
        hint = ""
        if kind == "string_type" and isinstance(value, bool | int | float):
            hint = "; put it in quotes to keep it as text"
        return f"expected {_EXPECTED[kind]} (got {describe_value(value)}{hint})"
    message = error["msg"]
    message = message.replace("Input should be", "expected").replace("Input should have", "expected")
    return f"{message[0].lower()}{message[1:]}{_got(value)}"


# Pydantic error types in the user's words (no Python type names).
_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "none_required": "null",
}


def _got(value: Any) -> str:
    return f" (got {describe_value(value)})"


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
        if part == "[key]":  # pydantic's marker for a mapping key that failed (the key is the part before)
            continue
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
