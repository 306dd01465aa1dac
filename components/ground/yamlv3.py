"""YAML documents read the way the Pulumi CLI reads `Pulumi.<stack>.yaml`: gopkg.in/yaml.v3 rules.

The Pulumi CLI is Go: `sdk/go/common/encoding/marshal.go` unmarshals stack files with
gopkg.in/yaml.v3 (v3.0.1, pinned in pulumi's sdk/go.mod). Its resolver (`resolve.go` on the v3
branch, function `resolve`) is YAML 1.2-ish and differs from PyYAML's YAML 1.1 rules:

- booleans are only `true True TRUE false False FALSE` (resolve.go lines 52-53): `yes`, `no`,
  `on`, `off`, `y`, `n` are strings;
- null is `` (empty), `~`, `null`, `Null`, `NULL` (line 54);
- integers are parsed by Go's `strconv.ParseInt(plain, 0, 64)` after removing `_` (lines 191-199),
  so `0x1F` is 31, `0b101` 5, `0o17` 15 and a leading zero is octal: `010000` is 4096 (and
  `09`, not octal, falls through to a float, 9); above int64 `ParseUint` (line 200), then floats;
- floats match `^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$` (line 124) and Go's
  `strconv.ParseFloat`; a number too large for a float64 (an integer of 5,000 digits) stays a string;
  `.inf`, `.nan` are the special floats (lines 55-58), which Go's JSON encoder refuses;
- there are no sexagesimal numbers (lines 165-167): `30:00` is the string "30:00";
- an unquoted date or date-time (`2025-03-01`, lines 182-189 and `parseTimestamp`, lines 303-326)
  is a timestamp; the CLI then hands the program Go's `time.Time.String()` text
  ("2025-03-01 00:00:00 +0000 UTC", pulumi `sdk/go/common/resource/config/object.go`,
  `unmarshalObject`, `case time.Time`), so hpcforge refuses it by name and says to quote it;
- a key given twice in one mapping is an error (decode.go `mapping`, `uniqueKeys` true:
  "mapping key %q already defined at line %d");
- `<<` merge keys are applied, explicit keys winning over merged ones (decode.go `merge`);
- excessive aliasing is refused with yaml.v3's own rule (decode.go `allowedAliasRatio`, lines 455-491),
  checked without expanding anything, so an anchor bomb is refused in milliseconds;
- mapping keys must be strings: pulumi's `SimplifyMarshalledValue` (workspace/project.go) fails
  with "expected only string keys".

hpcforge is stricter than the CLI where the CLI would silently pass the program something the user
did not mean: a plain integer with a leading zero (`010000`, which the CLI makes 4096), YAML types that JSON lacks (`!!binary`, `!!set`, `!!omap`, `!!timestamp`, custom `!tags`,
`.inf`/`.nan`), nesting deeper than `MAX_DEPTH` and files over `MAX_BYTES` are named errors.
The syntax (scanner and parser) is libyaml's, which yaml.v3 is a port of; PyYAML's C binding is used
for the events when present.

Sources read: go-yaml/yaml branch v3 at f6f7691b1fdeb513f56608cd2c32c51f8194bf51 (resolve.go,
decode.go, yaml.go `indicatedString`), pulumi/pulumi at 1b5949891b (sdk/go/common/encoding/marshal.go,
sdk/go/common/workspace/loaders.go and project.go, sdk/go/common/resource/config/object.go, key.go).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import yaml

MAX_BYTES = 64 * 2**20
"""Largest stack file read (bytes)."""
MAX_DEPTH = 64
"""Deepest nesting of lists and mappings accepted (yaml.v3 allows 10,000; no hpcforge key needs more than 10)."""
MAX_EXPANDED_NODES = 5_000_000
"""Most nodes a document may hold once every alias is expanded."""

PathPart = str | int


class YamlProblem(Exception):  # noqa: N818 (a problem in a document, reported by name)
    """A document that the CLI would refuse, or read as something the user did not mean.

    `path` is the key path inside the document (possibly empty); `line` is 1-based (0: unknown).
    """

    def __init__(self, message: str, path: tuple[PathPart, ...] = (), line: int = 0) -> None:
        self.message = message
        self.path = path
        self.line = line
        super().__init__(message)


@dataclass(frozen=True)
class Timestamp:
    """An unquoted date or date-time; yaml.v3 resolves it to a time.Time."""

    text: str

    def go_string(self) -> str:
        """What the CLI hands the program: Go's time.Time.String() of the parsed value (UTC cases)."""
        match = _TIMESTAMP.match(self.text)
        assert match is not None
        year, month, day = match.group(1), int(match.group(2)), int(match.group(3))
        clock = "00:00:00"
        for base in (4, 9):
            if match.group(base):
                clock = f"{int(match.group(base)):02d}:{int(match.group(base + 1)):02d}:{int(match.group(base + 2)):02d}"
        return f"{year}-{month:02d}-{day:02d} {clock} +0000 UTC"


# --- scalar resolution (yaml.v3 resolve.go) ---------------------------------------------------------

_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULL = {"", "~", "null", "Null", "NULL"}
_SPECIAL_FLOAT = {
    ".nan": math.nan,
    ".NaN": math.nan,
    ".NAN": math.nan,
    ".inf": math.inf,
    ".Inf": math.inf,
    ".INF": math.inf,
    "+.inf": math.inf,
    "+.Inf": math.inf,
    "+.INF": math.inf,
    "-.inf": -math.inf,
    "-.Inf": -math.inf,
    "-.INF": -math.inf,
}
# resolve.go line 124
_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
# Go's strconv.ParseFloat for text starting with '.': a fraction and an optional exponent.
_DOT_FLOAT = re.compile(r"^\.[0-9]+([eE][-+]?[0-9]+)?$")
# resolve.go allowedTimestampFormats (lines 294-301): "2006-1-2T15:4:5.999999999Z07:00" (T or t),
# "2006-1-2 15:4:5.999999999" and "2006-1-2".
_TIMESTAMP = re.compile(
    r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
    r"(?:[Tt]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"
    r"| ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]+)?)?$"
)
# A plain integer with a leading zero: yaml.v3 (Go's ParseInt base 0) reads `010000` as octal 4096 and
# `09` as the float 9 (resolve.go line 192); hpcforge refuses both rather than pass on a surprise.
_LEADING_ZERO = re.compile(r"^[-+]?0[0-9_]+$")
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}
_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1


def _is_timestamp(text: str) -> bool:
    """resolve.go parseTimestamp: four digits and '-', then one of Go's time.Parse layouts."""
    match = _TIMESTAMP.match(text)
    if match is None:
        return False
    year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
    if not 1 <= month <= 12 or not 1 <= day <= _DAYS[month - 1]:
        return False
    if month == 2 and day == 29 and not (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
        return False
    for base in (4, 9):
        if match.group(base) and (
            int(match.group(base)) > 23 or int(match.group(base + 1)) > 59 or int(match.group(base + 2)) > 59
        ):
            return False
    return True


def go_parse_int(text: str, *, signed: bool) -> int | None:
    """Go's strconv.ParseInt(text, 0, 64) (signed) or ParseUint(text, 0, 64); None on any error."""
    negative = False
    body = text
    if signed and body[:1] in ("+", "-"):
        negative = body[0] == "-"
        body = body[1:]
    prefix = body[:2].lower()
    if prefix == "0x":
        base, digits = 16, body[2:]
    elif prefix == "0b":
        base, digits = 2, body[2:]
    elif prefix == "0o":
        base, digits = 8, body[2:]
    elif body[:1] == "0" and len(body) > 1:
        base, digits = 8, body[1:]
    else:
        base, digits = 10, body
    if not digits or any(c not in _DIGITS[base] for c in digits):
        return None
    significant = digits.lstrip("0") or "0"
    if len(significant) > 64:  # beyond 64 bits in any base: a range error, without a huge int()
        return None
    value = int(significant, base)
    if negative:
        value = -value
    if signed:
        return value if -(2**63) <= value <= _INT64_MAX else None
    return value if value <= _UINT64_MAX else None


def resolve_plain(text: str) -> Any:  # noqa: PLR0911 (one return per tag of YAML 1.2's core schema)
    """The value yaml.v3 gives an untagged plain scalar (resolve.go `resolve("", in)`)."""
    if text in _BOOL:
        return _BOOL[text]
    if text in _NULL:
        return None
    if text in _SPECIAL_FLOAT:
        return _SPECIAL_FLOAT[text]
    first = text[0]
    if first == ".":
        if _DOT_FLOAT.match(text):
            return float(text)
        return text
    if first not in "+-0123456789":
        return text
    if _is_timestamp(text):
        return Timestamp(text)
    plain = text.replace("_", "")
    if plain:
        number = go_parse_int(plain, signed=True)
        if number is None:
            number = go_parse_int(plain, signed=False)
        if number is not None:
            return number
        if _YAML_FLOAT.match(plain):
            value = float(plain)
            if not math.isinf(value):  # strconv.ParseFloat returns ErrRange: the text stays a string
                return value
    return text


_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _kind_of(value: Any) -> str:
    if value is None:
        return _NULL_TAG
    if isinstance(value, bool):
        return _BOOL_TAG
    if isinstance(value, int):
        return _INT_TAG
    if isinstance(value, float):
        return _FLOAT_TAG
    if isinstance(value, Timestamp):
        return "tag:yaml.org,2002:timestamp"
    return _STR_TAG


def _short(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!")


def resolve_scalar(tag: str | None, text: str, style: str | None, path: tuple[PathPart, ...], line: int) -> Any:
    """A scalar's value: yaml.v3 decode.go `scalar` with `indicatedString` and resolve.go `resolve`."""
    if tag in (None, "!"):
        if style:  # quoted or block scalars are strings (yaml.go indicatedString)
            return text
        return resolve_plain(text) if text else None
    if tag == _STR_TAG:
        return text
    if tag in (_INT_TAG, _FLOAT_TAG, _BOOL_TAG, _NULL_TAG):
        value = resolve_plain(text) if text else None
        kind = _kind_of(value)
        if tag == _FLOAT_TAG and kind == _INT_TAG:  # resolve.go lines 136-147: an int is accepted as !!float
            return float(value)  # type: ignore[arg-type]
        if kind != tag:
            raise YamlProblem(f"cannot decode {_short(kind)} `{text}` as a {_short(tag)} (the Pulumi CLI refuses it)", path, line)
        return value
    raise YamlProblem(
        f"the YAML tag {_short(tag)} has no JSON equivalent (Pulumi config values are strings, numbers, "
        "booleans, null, lists and mappings): remove the tag, or quote the value to make it a string",
        path,
        line,
    )


# --- documents -------------------------------------------------------------------------------------


def _allowed_alias_ratio(decode_count: int) -> float:
    """yaml.v3 decode.go allowedAliasRatio (lines 455-482)."""
    low, high = 400_000, 4_000_000
    if decode_count <= low:
        return 0.99
    if decode_count >= high:
        return 0.10
    return 0.99 - 0.89 * (decode_count - low) / (high - low)


class _Frame:
    __slots__ = ("anchor", "key", "key_line", "keys", "kind", "line", "merges", "path", "size", "value")

    def __init__(self, kind: str, path: tuple[PathPart, ...], anchor: str | None, line: int) -> None:
        self.kind = kind
        self.value: Any = {} if kind == "map" else []
        self.path = path
        self.anchor = anchor
        self.size = 1
        self.key: Any = _NO_KEY
        self.key_line = 0
        self.keys: dict[str, int] = {}
        self.merges: list[Any] = []
        self.line = line


_NO_KEY = object()
_MERGE = object()


class _Builder:
    def __init__(self) -> None:
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.decodes = 0
        self.alias_decodes = 0

    def child_path(self, frame: _Frame | None) -> tuple[PathPart, ...]:
        if frame is None:
            return ()
        if frame.kind == "seq":
            return (*frame.path, len(frame.value))
        return (*frame.path, frame.key) if isinstance(frame.key, str) else frame.path

    def add(self, frame: _Frame | None, value: Any, size: int, line: int, *, key_text: str | None = None) -> Any:
        """Attach a finished value to its parent; returns the value when there is no parent."""
        if frame is None:
            return value
        frame.size += size
        if frame.kind == "seq":
            frame.value.append(value)
            return None
        if frame.key is _NO_KEY:
            if key_text == "<<" and value is _MERGE:
                frame.key, frame.key_line = _MERGE, line
                if "<<" in frame.keys:
                    raise YamlProblem(f'mapping key "<<" already defined at line {frame.keys["<<"]}', frame.path, line)
                frame.keys["<<"] = line
                return None
            if not isinstance(value, str):
                shown = f"`{key_text}`" if key_text is not None else "a list or mapping"
                raise YamlProblem(
                    f"the mapping key {shown} is not a string (the Pulumi CLI accepts only string keys: "
                    "expected only string keys); quote it",
                    frame.path,
                    line,
                )
            if value in frame.keys:
                raise YamlProblem(
                    f"mapping key {value!r} already defined at line {frame.keys[value]} (a key may be given once)",
                    frame.path,
                    line,
                )
            frame.keys[value] = line
            frame.key, frame.key_line = value, line
            return None
        if frame.key is _MERGE:
            sources = value if isinstance(value, list) else [value]
            if not all(isinstance(source, dict) for source in sources):
                raise YamlProblem("map merge requires map or sequence of maps as the value", frame.path, line)
            frame.merges.extend(sources)
        else:
            frame.value[frame.key] = value
        frame.key = _NO_KEY
        return None

    def count(self, size: int, *, alias: bool, path: tuple[PathPart, ...], line: int) -> None:
        self.decodes += size
        if alias:
            self.alias_decodes += size
            # decode.go lines 484-491: the same rule as yaml.v3, evaluated after each alias (the
            # ratio only grows while an alias is being expanded, so this is where it peaks).
            if (
                self.alias_decodes > 100
                and self.decodes > 1000
                and self.alias_decodes / self.decodes > _allowed_alias_ratio(self.decodes)
            ) or self.decodes > MAX_EXPANDED_NODES:
                raise YamlProblem(
                    "document contains excessive aliasing (anchors expanding into "
                    f"{self.decodes:,} values or more); refused like the Pulumi CLI does",
                    path,
                    line,
                )


def _finish_map(frame: _Frame) -> dict[str, Any]:
    if frame.key is not _NO_KEY:
        raise YamlProblem("mapping ended after a key without value", frame.path, frame.line)
    result: dict[str, Any] = frame.value
    for source in frame.merges:  # decode.go merge: explicit keys win, then the first source that has a key
        for key, value in source.items():
            if key not in result:
                result[key] = value
    return result


_NOT_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]")
"""The characters YAML allows nowhere in a stream: those outside c-printable (YAML 1.2.2, 5.1)."""
_PRINTABLE_BYTES = bytes([0x09, 0x0A, 0x0D, *range(0x20, 0x7F), *range(0x80, 0x100)])
_MAY_START_C1_OR_NONCHARACTER = (b"\xc2", b"\xef")
"""The UTF-8 bytes that start U+0080-U+009F and U+FFFE/U+FFFF (among other characters)."""
CONTROL_CHARACTER_ADVICE = "YAML does not allow control characters in a file (YAML 1.2.2, 5.1 c-printable); remove it"


def control_character(text: str, data: bytes | None = None) -> tuple[int, int, str] | None:
    """(line, column, what) of the first character of `text` that YAML does not allow (1-based), or None.

    `data`: the text's UTF-8 bytes where the caller has them. One `bytes.translate` over them finds the C0 controls
    (about 40 ms for a 17 MB inventory); the regex runs only where one was found, or where a byte that may start a C1
    control or U+FFFE/U+FFFF is (none in an ASCII text).
    """
    data = text.encode("utf-8", "surrogatepass") if data is None else data.removeprefix(b"\xef\xbb\xbf")
    if not data.translate(None, _PRINTABLE_BYTES) and (
        text.isascii() or not any(start in data for start in _MAY_START_C1_OR_NONCHARACTER)
    ):
        return None
    match = _NOT_PRINTABLE.search(text)
    if match is None:
        return None
    offset, char = match.start(), match.group(0)
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    code = f"U+{ord(char):04X}"
    if char == "\x00":
        return line, column, f"a NUL byte ({code})"
    kind = "non-character" if ord(char) >= 0xFFFE else "control character"
    return line, column, f"the {kind} {code}"


def load_document(text: str, source: str = "<string>") -> Any:  # noqa: PLR0912, PLR0915 (the reader's one loop over the parser's events, one branch per event kind)
    """Parse the first document of `text` with yaml.v3's rules; raise YamlProblem on anything refused."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise YamlProblem(f"{source} is larger than {MAX_BYTES // 2**20} MiB")
    if text.startswith("\ufeff"):  # readFileStripUTF8BOM (workspace/loaders.go)
        text = text[1:]
    found = control_character(text)
    if found is not None:
        line, column, what = found
        raise YamlProblem(f"{what} at column {column}: {CONTROL_CHARACTER_ADVICE}", (), line)
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(text)
    builder = _Builder()
    stack: list[_Frame] = []
    result: Any = None
    documents = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            line = event.start_mark.line + 1 if event.start_mark is not None else 0
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise YamlProblem("a second YAML document ('---'): the Pulumi CLI reads only the first; remove it", (), line)
                continue
            if isinstance(event, yaml.StreamStartEvent | yaml.StreamEndEvent | yaml.DocumentEndEvent):
                continue
            parent = stack[-1] if stack else None
            path = builder.child_path(parent)
            is_key = parent is not None and parent.kind == "map" and parent.key is _NO_KEY
            if isinstance(event, yaml.ScalarEvent):
                text_value = event.value
                if is_key and text_value == "<<" and event.tag in (None, "!", _MERGE_TAG) and not event.style:
                    value: Any = _MERGE  # decode.go isMerge
                else:
                    value = resolve_scalar(event.tag, text_value, event.style, path, line)
                    if event.tag is None and not event.style and _LEADING_ZERO.match(text_value):
                        raise YamlProblem(
                            f"{text_value} has a leading zero, so the Pulumi CLI reads it as "
                            f"{'the octal number ' if isinstance(value, int) else ''}{value!r}; write the number "
                            f'without the zero (or 0o... for octal), or quote it ("{text_value}") to keep the text',
                            path,
                            line,
                        )
                builder.count(1, alias=False, path=path, line=line)
                if event.anchor:
                    builder.anchors[event.anchor] = (value, 1)
                done = builder.add(parent, value, 1, line, key_text=text_value if is_key else None)
                if parent is None:
                    result = done
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor not in builder.anchors:
                    raise YamlProblem(f"unknown anchor '{event.anchor}' referenced", path, line)
                value, size = builder.anchors[event.anchor]
                builder.count(size + 1, alias=True, path=path, line=line)
                done = builder.add(parent, value, size, line, key_text=f"*{event.anchor}" if is_key else None)
                if parent is None:
                    result = done
            elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                kind = "seq" if isinstance(event, yaml.SequenceStartEvent) else "map"
                if event.tag not in (None, "!", _MAP_TAG if kind == "map" else _SEQ_TAG):
                    raise YamlProblem(
                        f"the YAML tag {_short(event.tag)} has no JSON equivalent (Pulumi config values are strings, "
                        "numbers, booleans, null, lists and mappings): write a plain list or mapping",
                        path,
                        line,
                    )
                if is_key:
                    raise YamlProblem(
                        "a list or mapping used as a mapping key (the Pulumi CLI accepts only string keys)", path, line
                    )
                if len(stack) >= MAX_DEPTH:
                    raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep", path, line)
                builder.count(1, alias=False, path=path, line=line)
                stack.append(_Frame(kind, path, event.anchor, line))
            elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                frame = stack.pop()
                value = _finish_map(frame) if frame.kind == "map" else frame.value
                if frame.anchor:
                    builder.anchors[frame.anchor] = (value, frame.size)
                parent = stack[-1] if stack else None
                done = builder.add(parent, value, frame.size, line)
                if parent is None:
                    result = done
    except yaml.YAMLError as exc:
        raise YamlProblem(f"not valid YAML: {exc}") from None
    except RecursionError:  # pragma: no cover - depth is bounded above
        raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep") from None
    finally:
        loader.dispose()
    return result


# --- what the program receives ---------------------------------------------------------------------


def go_json_float(value: float) -> str:
    """Go's encoding/json float64 text: 'f' format, or 'e' below 1e-6 and from 1e21 (encode.go floatEncoder)."""
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    number = Decimal(repr(value))
    magnitude = abs(value)
    if magnitude < 1e-6 or magnitude >= 1e21:
        sign, digits, exponent = number.as_tuple()
        assert isinstance(exponent, int)
        text = "".join(str(d) for d in digits).rstrip("0") or "0"
        exp = exponent + len(digits) - 1
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        exp_text = f"{'-' if exp < 0 else '+'}{abs(exp):02d}"
        if exp_text.startswith("-0"):  # "clean up e-09 to e-9"
            exp_text = "-" + exp_text[2:]
        return f"{'-' if sign else ''}{mantissa}e{exp_text}"
    text = format(number, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def go_json(value: Any) -> str:  # noqa: PLR0911 (one return per JSON type, as Go's encoding/json writes it)
    """Go's json.Marshal of a decoded config object: sorted keys, no spaces, <, >, & escaped."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_json_float(value)
    if isinstance(value, str):
        return _go_json_string(value)
    if isinstance(value, list):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_go_json_string(k)}:{go_json(v)}" for k, v in sorted(value.items())) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_JSON_SPECIAL = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029]')


def _go_json_string(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match.group(0)
        return _JSON_ESCAPES.get(char) or f"\\u{ord(char):04x}"

    return '"' + _JSON_SPECIAL.sub(escape, text) + '"'
