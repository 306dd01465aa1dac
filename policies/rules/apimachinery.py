"""k8s.io/apimachinery behaviour the admission reproductions share, each once: a resource quantity's value
(admission/slinky, admission/mariadb, admission/kueue), the DNS-1123 subdomain check (admission/slinky,
admission/kueue, admission/certmanager) and an aggregate error's message (admission/slinky,
admission/certmanager).

- pkg/api/resource (v0.36.2; quantity.go and suffix.go unchanged since v0.33 in what is reproduced):
  `ParseQuantity` (`parseQuantityString`, `suffixHandler.interpret`) decides what is a quantity, and its
  value: exact, then, as ParseQuantity's inf.Dec path does, a non-zero value finer than 1n rounded away
  from zero to the next nano, and a binary-suffixed value beyond the int64 range capped at 2**63-1
  (`maxAllowed`). `Quantity.UnmarshalJSON` trims white space first and reads a JSON number's text.
- pkg/util/validation/validation.go `IsDNS1123Subdomain` (len counts bytes; its message is `RegexError`'s).
- pkg/util/errors/errors.go `aggregate.Error`.

A value is an exact fraction (numerator, denominator > 0), compared by cross-multiplying.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

Fraction = tuple[int, int]

# --- quantities ------------------------------------------------------------------------------------

ERR_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_MAX_ALLOWED = (1 << 63) - 1
_NANO = 10**9
_LARGEST_EXPONENT = 10_000
"""Beyond 10**±10000 the exact value is not computed (Go keeps such a quantity as an exponent)."""

# What UnmarshalJSON's strings.TrimSpace trims: it is given the JSON text between the quotes, not yet unescaped, so of
# Go's unicode.IsSpace only the characters that Go's encoding/json writes as they are (it escapes the control
# characters and U+2028, U+2029).
_JSON_SPACE = " \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"


class QuantityError(ValueError):
    """ParseQuantity's error (ErrFormatWrong, ErrNumeric or ErrSuffix), with its text."""


def _scan(text: str, start: int, allowed: frozenset[str]) -> int:
    end = start
    while end < len(text) and text[end] in allowed:
        end += 1
    return end


def _split(text: str) -> tuple[bool, str, str, str]:
    """quantity.go `parseQuantityString`: (positive, numerator digits, denominator digits, suffix)."""
    positive, pos = True, 0
    if text[:1] in ("-", "+"):
        positive, pos = text[0] == "+", 1
    while pos < len(text) and text[pos] == "0":  # leading zeros
        pos += 1
    end = _scan(text, pos, _DIGITS)
    num, pos = text[pos:end] or "0", end
    denom = ""
    if text[pos : pos + 1] == ".":
        end = _scan(text, pos + 1, _DIGITS)
        denom, pos = text[pos + 1 : end], end
    suffix_start = pos
    pos = _scan(text, pos, _SUFFIX_CHARS)
    if text[pos : pos + 1] in ("-", "+"):
        pos += 1
    pos = _scan(text, pos, _DIGITS)
    if pos < len(text):
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, bool]:
    """suffix.go `suffixHandler.interpret`: (base, exponent, binary)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], False
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], True
    if len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        parsed = int(suffix[1:])
        if -(1 << 63) <= parsed < 1 << 63:  # strconv.ParseInt(_, 10, 64)
            exponent = (parsed + (1 << 31)) % (1 << 32) - (1 << 31)  # int32(parsed)
            return 10, exponent, False
    raise QuantityError(ERR_SUFFIX)


def parse_quantity(text: str) -> Fraction:
    """`resource.ParseQuantity(text)`'s value, or QuantityError with its message."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    positive, num, denom, suffix = _split(text)
    base, exponent, binary = _interpret(suffix)
    if not any(c in _DIGITS for c in text[: len(text) - len(suffix)]):
        # No digit at all (`.`, `-`, `Ki`): ParseQuantity's int64 path reads it as 0; its inf.Dec path (a scale
        # below 1n, or a binary suffix too large for the int64 path's precision) cannot read the number.
        fast = 13 - exponent * 3 // 10 >= 0 if binary else exponent >= -9
        if not fast:
            raise QuantityError(ERR_NUMERIC)
        return 0, 1
    numerator, denominator = int(num + denom), 10 ** len(denom)
    if base == 2:
        numerator <<= exponent
    elif exponent >= 0:
        if exponent > _LARGEST_EXPONENT:
            raise QuantityError(f"an exponent of {exponent} is not evaluated here")
        numerator *= 10**exponent
    elif numerator and -exponent > _LARGEST_EXPONENT:
        numerator, denominator = 1, _NANO  # far below 1n: rounded up to 1n (below)
    else:
        denominator *= 10**-exponent
    if numerator and (numerator * _NANO) % denominator:
        numerator, denominator = -(-numerator * _NANO // denominator), _NANO  # inf.RoundUp at the nano scale
    if binary and numerator > _MAX_ALLOWED * denominator:
        numerator, denominator = _MAX_ALLOWED, 1
    return (numerator if positive else -numerator), denominator


def _unmarshal_text(value: str) -> str:
    """The text UnmarshalJSON parses: a string as Go's encoding/json writes it, between the quotes, trimmed. A
    character written as an escape stays one (`\\t`, `\\u2028`, `\\u003c`, ...) and makes the text no quantity."""
    if any(c < " " or c in '\u2028\u2029<>&\\"' for c in value):
        return "\\"  # an escape sequence: not a quantity
    return value.strip(_JSON_SPACE)


def quantity(value: Any) -> Fraction | None:
    """A JSON value as `Quantity.UnmarshalJSON` reads it once Go's encoding/json has written it (a string: its text
    between the quotes, trimmed of white space; a number: its text), as an exact fraction; None when it is not a
    quantity (or null, or not a string or number)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value, 1
    if isinstance(value, float):
        value = repr(value)
    if not isinstance(value, str):
        return None
    try:
        return parse_quantity(_unmarshal_text(value))
    except QuantityError:
        return None


def compare(a: Fraction, b: Fraction) -> int:
    """-1, 0 or 1 as `a` is less than, equal to or greater than `b` (Quantity.Cmp)."""
    left, right = a[0] * b[1], b[0] * a[1]
    return (left > right) - (left < right)


# --- names -----------------------------------------------------------------------------------------

DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = DNS1123_LABEL + "(\\." + DNS1123_LABEL + ")*"
DNS1123_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character"
)


DNS1123_SUBDOMAIN_ERROR = f"{DNS1123_SUBDOMAIN_MESSAGE} (e.g. 'example.com', regex used for validation is '{DNS1123_SUBDOMAIN}')"
"""What IsDNS1123Subdomain says of a value its regexp refuses (`RegexError` with the example)."""


def is_dns1123_subdomain(value: str) -> list[str]:
    """validation.go `IsDNS1123Subdomain` (Go's `len` counts bytes; its regexp's `$` is the end of the text)."""
    errors: list[str] = []
    if len(value.encode()) > 253:
        errors.append("must be no more than 253 characters")
    if re.fullmatch(DNS1123_SUBDOMAIN, value) is None:
        errors.append(DNS1123_SUBDOMAIN_ERROR)
    return errors


# --- errors ----------------------------------------------------------------------------------------


def aggregate_message(messages: Sequence[str]) -> str:
    """errors.go `aggregate.Error` over the messages of its errors: none, "", one, its text; else each message once,
    in order, `[a, b]` (one left once the duplicates go: its text)."""
    if len(messages) <= 1:
        return messages[0] if messages else ""
    seen = list(dict.fromkeys(messages))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"
