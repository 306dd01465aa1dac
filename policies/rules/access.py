"""Small accessors over plain values that may be missing, mistyped or unknown (stdlib only).

An accessor that meets an `Unknown` (a value not known during a preview) answers as if the value
were absent, and notes that it did (`unknown_reads`): a rule that decided on such an answer did not
see the real value. The packs then report the policy as the engine reports a policy that reads an
unknown value, "can't run during preview" (policies/framework.py), never as a violation or a pass.
Rules that handle unknowns themselves test `is_unknown(value)` / `is_secret(value)` first.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .wire import is_unknown

_UNKNOWN_READS: ContextVar[list[str] | None] = ContextVar("hpcforge_unknown_reads", default=None)


@contextmanager
def unknown_reads() -> Iterator[list[str]]:
    """Collect, while the block runs, which accessors answered for an unknown value."""
    reads: list[str] = []
    token = _UNKNOWN_READS.set(reads)
    try:
        yield reads
    finally:
        _UNKNOWN_READS.reset(token)


def _unknown(value: Any, accessor: str) -> bool:
    if not is_unknown(value):
        return False
    reads = _UNKNOWN_READS.get()
    if reads is not None:
        reads.append(accessor)
    return True


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one."""
    if isinstance(value, Mapping):
        return value
    _unknown(value, "a mapping")
    return {}


def items(value: Any) -> list[Any]:
    """`value` if it is a list (not a string), else an empty list."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    _unknown(value, "a list")
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
    if isinstance(value, str):
        return value
    _unknown(value, "a string")
    return None


def glob(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern)


def int_or_percent(value: Any) -> int | str | None:
    """A Kubernetes IntOrString: an int, a 'N%' string, or None when absent/invalid/unknown."""
    if isinstance(value, bool) or value is None or _unknown(value, "an int or percent"):
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
    if isinstance(value, bool) or value is None or _unknown(value, "an integer"):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None
