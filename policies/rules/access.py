"""Small accessors over plain values that may be missing, mistyped or unknown (stdlib only)."""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .wire import is_unknown


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    """`value` if it is a list (not a string), else an empty list."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    return []


def get(value: Any, *path: str | int) -> Any:
    """`value[path[0]][path[1]]...`, or None as soon as a step is missing."""
    current = value
    for step in path:
        if isinstance(step, int):
            seq = items(current)
            if not -len(seq) <= step < len(seq):
                return None
            current = seq[step]
        else:
            current = mapping(current).get(step)
        if current is None:
            return None
    return current


def text(value: Any) -> str | None:
    """`value` if it is a known string."""
    return value if isinstance(value, str) else None


def glob(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern)


def int_or_percent(value: Any) -> int | str | None:
    """A Kubernetes IntOrString: an int, a 'N%' string, or None when absent/invalid/unknown."""
    if isinstance(value, bool) or value is None or is_unknown(value):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        stripped = value.strip()
        if re.fullmatch(r"[0-9]+%", stripped):
            return stripped
        if stripped.isdigit():
            return int(stripped)
    return None


def resolve_int_or_percent(value: int | str, total: int, *, round_up: bool) -> int:
    """Kubernetes' GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    percent = int(value.rstrip("%"))
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None or is_unknown(value):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None
