"""Go's `time.Duration` as operators read it from their objects (stdlib only).

Operators written in Go decode a duration field (`metav1.Duration`) with `time.ParseDuration` and
print one with `Duration.String()`; their webhooks' messages show durations in that form
(`2160h0m0s`, `5m0s`). Both reproduced from Go 1.25 src/time/format.go (`ParseDuration`,
`leadingInt`, `leadingFraction`) and src/time/time.go (`Duration.String`, `fmtFrac`, `fmtInt`).
"""

from __future__ import annotations

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS: dict[str, int] = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,  # U+00B5 micro sign
    "\u03bcs": MICROSECOND,  # U+03BC Greek mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}
_MAX = 1 << 63


class DurationError(ValueError):
    """`time.ParseDuration`'s error, with Go's message."""


def go_quote(value: str) -> str:
    """strconv.Quote for the strings these messages carry (printable text)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _leading_int(s: str) -> tuple[int, str]:
    value, i = 0, 0
    while i < len(s) and "0" <= s[i] <= "9":
        if value > _MAX // 10:
            raise OverflowError
        value = value * 10 + int(s[i])
        if value > _MAX:
            raise OverflowError
        i += 1
    return value, s[i:]


def _leading_fraction(s: str) -> tuple[int, float, str]:
    value, scale, overflow, i = 0, 1.0, False, 0
    while i < len(s) and "0" <= s[i] <= "9":
        if not overflow:
            if value > (_MAX - 1) // 10:
                overflow = True
            else:
                candidate = value * 10 + int(s[i])
                if candidate > _MAX:
                    overflow = True
                else:
                    value, scale = candidate, scale * 10
        i += 1
    return value, scale, s[i:]


def parse_go_duration(text: str) -> int:
    """time.ParseDuration: nanoseconds, or DurationError with Go's message."""
    original, s, negative = text, text, False
    invalid = DurationError(f"time: invalid duration {go_quote(original)}")
    if s and s[0] in "+-":
        negative, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise invalid
        before = len(s)
        try:
            value, s = _leading_int(s)
        except OverflowError:
            raise invalid from None
        digits_before = before != len(s)
        fraction, scale, digits_after = 0, 1.0, False
        if s and s[0] == ".":
            s = s[1:]
            before = len(s)
            fraction, scale, s = _leading_fraction(s)
            digits_after = before != len(s)
        if not digits_before and not digits_after:
            raise invalid
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise DurationError(f"time: missing unit in duration {go_quote(original)}")
        unit_text, s = s[:i], s[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise DurationError(f"time: unknown unit {go_quote(unit_text)} in duration {go_quote(original)}")
        if value > _MAX // unit:
            raise invalid
        value *= unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > _MAX:
                raise invalid
        total += value
        if total > _MAX:
            raise invalid
    if negative:
        return -total
    if total > _MAX - 1:
        raise invalid
    return total


def _frac(value: int, precision: int) -> tuple[str, int]:
    """fmtFrac: the fraction of value/10^precision without trailing zeros, and the integer part."""
    digits: list[str] = []
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        value //= 10
    return ("." + "".join(reversed(digits)) if printed else ""), value


def format_go_duration(nanoseconds: int) -> str:
    """Duration.String(): `72h3m0.5s`, `1m0s`, `1.5ms`, `0s`."""
    negative, u = nanoseconds < 0, abs(nanoseconds)
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            body = f"{u}ns"
        elif u < MILLISECOND:
            fraction, whole = _frac(u, 3)
            body = f"{whole}{fraction}\u00b5s"
        else:
            fraction, whole = _frac(u, 6)
            body = f"{whole}{fraction}ms"
    else:
        fraction, whole = _frac(u, 9)
        body = f"{whole % 60}{fraction}s"
        minutes = whole // 60
        if minutes > 0:
            body = f"{minutes % 60}m{body}"
            hours = minutes // 60
            if hours > 0:
                body = f"{hours}h{body}"
    return f"-{body}" if negative else body
