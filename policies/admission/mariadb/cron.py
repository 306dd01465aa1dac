"""robfig/cron v3.0.1's parser as mariadb-operator configures it (base_types.go `CronParser`), for a Backup's
`spec.schedule.cron`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...rules.gotime import GoError, go_quote

# robfig/cron v3.0.1 spec.go bounds and parser.go `Parser.Parse`, `normalizeFields`, `getField`, `getRange`,
# `parseIntOrName`, `mustParseInt`, for mariadb-operator's parser (base_types.go `CronParser`:
# Minute | Hour | Dom | Month | Dow, no descriptors).
_MONTHS = {n: i for i, n in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_DOWS = {n: i for i, n in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_CRON_BOUNDS: tuple[tuple[int, int, Mapping[str, int]], ...] = (
    (0, 59, {}),  # second (not in the spec: "0")
    (0, 59, {}),  # minute
    (0, 23, {}),  # hour
    (1, 31, {}),  # day of month
    (1, 12, _MONTHS),
    (0, 6, _DOWS),
)
_GO_INT = re.compile(r"[+-]?[0-9]+")


def go_atoi(expr: str) -> int:
    """Go's `strconv.Atoi` (base 10, an optional sign, int64 range), or GoError with its message."""
    if not _GO_INT.fullmatch(expr):
        raise GoError(f"strconv.Atoi: parsing {go_quote(expr)}: invalid syntax")
    num = int(expr)
    if not -(1 << 63) <= num < (1 << 63):
        raise GoError(f"strconv.Atoi: parsing {go_quote(expr)}: value out of range")
    return num


def _must_parse_int(expr: str) -> int:
    try:
        num = go_atoi(expr)
    except GoError as error:
        raise GoError(f"failed to parse int from {expr}: {error}") from None
    if num < 0:
        raise GoError(f"negative number ({num}) not allowed: {expr}")
    return num


def _parse_int_or_name(expr: str, names: Mapping[str, int]) -> int:
    if expr.lower() in names:
        return names[expr.lower()]
    return _must_parse_int(expr)


def cron_range(expr: str, low: int, high: int, names: Mapping[str, int]) -> None:  # noqa: PLR0912 (one branch per form of a cron field)
    """robfig/cron v3.0.1 parser.go `getRange` (it returns the bits; here only whether it errs)."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _parse_int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _parse_int_or_name(low_and_high[1], names)
        else:
            raise GoError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:
            end = high
    else:
        raise GoError(f"too many slashes: {expr}")
    if start < low:
        raise GoError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise GoError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise GoError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise GoError(f"step of range should be a positive number: {expr}")


def cron_parse(spec: str) -> None:
    """mariadb-operator's `CronParser.Parse`: None, or GoError with robfig/cron's message. A `TZ=`/`CRON_TZ=` prefix
    is skipped without checking the location (Go loads it from its time zone database)."""
    if not spec:
        raise GoError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")) and " " in spec:
        spec = spec[spec.index(" ") :].strip()
    if spec.startswith("@"):
        raise GoError(f"parser does not accept descriptors: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise GoError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for field, (low, high, names) in zip(["0", *fields], _CRON_BOUNDS, strict=True):
        for expr in (part for part in field.split(",") if part):
            cron_range(expr, low, high, names)
