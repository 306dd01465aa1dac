"""Go's `time.ParseDuration`, as the operators whose admission is reproduced here decode a duration.

Both slurm-operator (a NodeSet's `scheduledUpdate.duration`, a `metav1.Duration`) and mariadb-operator (a
Backup's `maxRetention`) read a duration string through Go's `time.ParseDuration`; its value and its error
message are what their webhooks and the API server answer. One reproduction serves them all
(admission/slinky, admission/mariadb, admission/certmanager, admission/metallb).

cert-manager and MetalLB read theirs the same way and print durations with `Duration.String()` in their
messages (`2160h0m0s`, `5m0s`): `format_duration` (src/time/time.go).

Go src/time/format.go (go1.19 to go1.25: the same algorithm) `unitMap`, `leadingInt`, `leadingFraction`,
`ParseDuration` and `quote`, on the UTF-8 bytes of the text, as Go reads a string. The sum of the parts is
a uint64 in Go, so it wraps at 2**64 (`9223372036854775808ns9223372036854775808ns` is 0 there, and here).
"""

from __future__ import annotations

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE


class GoError(ValueError):
    """An error message as the Go code words it."""


_UNITS = {
    b"ns": 1,
    b"us": 1_000,
    "µs".encode(): 1_000,  # U+00B5
    "μs".encode(): 1_000,  # U+03BC
    b"ms": 1_000_000,
    b"s": 1_000_000_000,
    b"m": 60_000_000_000,
    b"h": 3_600_000_000_000,
}
_MAX = 1 << 63
_UINT64 = (1 << 64) - 1


def quote(raw: str | bytes) -> str:
    """time's `quote`: in double quotes, `"` and `\\` escaped, and every byte of a rune that is not ASCII or
    is a control character below space written `\\xNN` (not strconv.Quote's forms)."""
    data = go_bytes(raw) if isinstance(raw, str) else raw
    out = ['"']
    for char in data.decode(errors="surrogateescape"):
        encoded = char.encode(errors="surrogateescape")
        if len(encoded) > 1 or encoded[0] >= 0x80 or encoded[0] < 0x20:
            out += [f"\\x{byte:02x}" for byte in encoded]
        else:
            out.append("\\" + char if char in '"\\' else char)
    out.append('"')
    return "".join(out)


def go_quote(value: str) -> str:
    """strconv.Quote for the strings these messages carry (printable text)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def go_bytes(text: str) -> bytes:
    """The Go string a JSON string decodes to: UTF-8, a lone surrogate (which encoding/json reads as
    U+FFFD) written as U+FFFD."""
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text).encode()


def _leading_digits(s: bytes) -> int:
    count = 0
    while count < len(s) and 0x30 <= s[count] <= 0x39:
        count += 1
    return count


def parse_duration(text: str) -> int:  # noqa: PLR0912, PLR0915 (a port of Go's time.ParseDuration, kept in its shape)
    """Go's `time.ParseDuration`: nanoseconds, or GoError with Go's message."""
    s = go_bytes(text)
    invalid = GoError("time: invalid duration " + quote(text))
    neg = False
    if s[:1] in (b"-", b"+"):
        neg = s[:1] == b"-"
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if not (s[:1] == b"." or b"0" <= s[:1] <= b"9"):
            raise invalid
        # leadingInt
        digits, v = _leading_digits(s), 0
        for byte in s[:digits]:
            if v > _MAX // 10:
                raise invalid
            v = v * 10 + byte - 0x30
            if v > _MAX:
                raise invalid
        pre, s = digits > 0, s[digits:]
        # leadingFraction: the digits that fit are kept, the rest consumed.
        f, scale, post = 0, 1.0, False
        if s[:1] == b".":
            s = s[1:]
            digits = _leading_digits(s)
            for byte in s[:digits]:
                if f > (_MAX - 1) // 10 or f * 10 + byte - 0x30 > _MAX:
                    break
                f, scale = f * 10 + byte - 0x30, scale * 10
            post, s = digits > 0, s[digits:]
        if not pre and not post:
            raise invalid
        i = 0
        while i < len(s) and not (s[i] == 0x2E or 0x30 <= s[i] <= 0x39):
            i += 1
        if i == 0:
            raise GoError("time: missing unit in duration " + quote(text))
        unit_text, s = s[:i], s[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise GoError("time: unknown unit " + quote(unit_text) + " in duration " + quote(text))
        if v > _MAX // unit:
            raise invalid
        v *= unit
        if f > 0:
            # float64, as Go adds it: nanosecond-accurate for fractions of an hour.
            v += int(float(f) * (float(unit) / scale))
            if v > _MAX:
                raise invalid
        total = (total + v) & _UINT64  # Go's uint64 sum
        if total > _MAX:
            raise invalid
    if neg:
        return -total
    if total > _MAX - 1:
        raise invalid
    return total


# --- Duration.String (Go src/time/time.go `String`, `fmtFrac`, `fmtInt`) -----------------------------


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


def format_duration(nanoseconds: int) -> str:
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
