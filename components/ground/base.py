"""Shared building blocks of the typed stack configuration.

Every model is frozen and forbids unknown keys; keys are camelCase in the stack file (the Pulumi
convention) and snake_case in Python. Cross-field checks report through `ConfigProblems`, so that
every problem names the full key path that is wrong, not just the model it was found in.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import types
import typing
from collections.abc import Collection, Iterable, Sequence
from decimal import Decimal
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, JsonValue, ValidationInfo, model_validator
from pydantic.alias_generators import to_camel

PathPart = str | int


class ConfigProblems(ValueError):  # noqa: N818 (pydantic only carries ValueErrors through)
    """One or more problems found by a cross-field check.

    Each problem is (path relative to the model that raised it, message). The loader joins the
    relative path to the model's own location, so the user sees e.g.
    `hpcforge:slurm.partitions[1].nodesets: unknown nodeset 'gpu-x' (known: cpu, gpu-a100)`.
    """

    def __init__(self, problems: Sequence[tuple[Sequence[PathPart], str]]) -> None:
        self.problems = [(tuple(path), message) for path, message in problems]
        super().__init__("; ".join(message for _, message in self.problems))


class ProblemCollector:
    """Collects problems in a model validator and raises them all at once."""

    def __init__(self) -> None:
        self._problems: list[tuple[tuple[PathPart, ...], str]] = []

    def add(self, path: Sequence[PathPart], message: str) -> None:
        self._problems.append((tuple(path), message))

    def rewrite(
        self, change: typing.Callable[[list[tuple[tuple[PathPart, ...], str]]], list[tuple[tuple[PathPart, ...], str]]]
    ) -> None:
        """Replace the problems found so far by `change(problems)` (e.g. fold consequences into their root cause)."""
        self._problems = change(self._problems)

    def raise_if_any(self) -> None:
        if self._problems:
            raise ConfigProblems(self._problems)


MULTILINE: dict[str, JsonValue] = {"multiline": True}
"""`json_schema_extra` of a string field that may hold line breaks (scripts, command arguments)."""

# Control characters end a line or a record in every file hpcforge writes (slurm.conf, gres.conf,
# sssd.conf, LDIF, grendel.toml, kernel command lines, shell scripts): refused in every string,
# tab included, except in fields marked MULTILINE, where only NUL is refused.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\u0085]")
_NUL = re.compile(r"\x00")


def describe_value(value: Any) -> str:  # noqa: PLR0911 (one return per kind of value described)
    """A value as the user wrote it in YAML, with its type in the user's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'}, a boolean"
    if isinstance(value, int) and not -(10**60) < value < 10**60:
        # str() of an int over 4,300 digits raises (sys.int_info.default_max_str_digits): never print it whole.
        return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"
    if isinstance(value, int | float):
        return f"{value}, a number"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_written(value: Any, *, quoted: bool = True) -> str:
    """A value in a message as YAML writes it: `null`, `true`, `false`, `12`; a string quoted ('cn01', or as it is
    with quoted=False); a list or a mapping by its kind. Never Python's `None`, `True` or a container's repr."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value) if quoted else value
    return describe_value(value).removesuffix(", a number")


def _plain_type(annotation: Any) -> set[Any]:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _plain_type(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        found: set[Any] = set()
        for arg in typing.get_args(annotation):
            found |= _plain_type(arg)
        return found
    return {annotation}


def _strings(value: Any, path: tuple[PathPart, ...]) -> Iterable[tuple[tuple[PathPart, ...], str]]:
    """Strings directly in a field's value: the value itself, list items, mapping keys and values."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield (*path, index), item
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield (*path, key), key
            if isinstance(item, str):
                yield (*path, key), item


def _clean(data: dict[Any, Any], multiline: dict[str, bool], integers: Collection[str]) -> bool:
    """True when `_refuse_structure_breaking_input` would find nothing (the common case, checked fast).

    The strings of single-line fields are joined by spaces and searched once with `_CONTROL` (a
    space matches neither pattern, and each pattern matches one character, so a match in the joined
    text is a match in one of the strings); those of multi-line fields likewise with `_NUL`. Anything
    found, or a boolean given to an integer field, sends the model through the full check, which
    names the field.
    """
    single: list[str] = []
    multi: list[str] = []
    for key, value in data.items():
        kind = multiline.get(key) if isinstance(key, str) else None
        if kind is None:
            continue
        if key in integers and isinstance(value, bool):
            return False
        texts = multi if kind else single
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list | tuple):
            texts.extend(item for item in value if isinstance(item, str))
        elif isinstance(value, dict):
            for item_key, item in value.items():
                if isinstance(item_key, str):
                    texts.append(item_key)
                if isinstance(item, str):
                    texts.append(item)
    return not (_CONTROL.search(" ".join(single)) or _NUL.search(" ".join(multi)))


class StrictModel(BaseModel):
    """Frozen, closed model with camelCase keys in the stack file.

    Before any field is validated, every string given to the model is checked for control
    characters (line breaks, NUL, tab), which would change the structure of a generated file, and
    every integer or number field refuses a boolean (`true` is not 1 to a reader of the stack file).
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        use_attribute_docstrings=True,
    )

    _guard_cache: ClassVar[dict[type, tuple[dict[str, bool], dict[str, str]]]] = {}

    @classmethod
    def _guards(cls) -> tuple[dict[str, bool], dict[str, str]]:
        cached = StrictModel._guard_cache.get(cls)
        if cached is None:
            multiline: dict[str, bool] = {}
            integers: dict[str, str] = {}  # key -> what it expects, in the user's words
            for name, info in cls.model_fields.items():
                key = info.alias or name
                extra = info.json_schema_extra
                multiline[key] = isinstance(extra, dict) and bool(extra.get("multiline"))
                kinds = _plain_type(info.annotation)
                if int in kinds and bool not in kinds:
                    integers[key] = "an integer"
                elif float in kinds and bool not in kinds:
                    integers[key] = "a number"
            cached = (multiline, integers)
            StrictModel._guard_cache[cls] = cached
        return cached

    @model_validator(mode="before")
    @classmethod
    def _refuse_structure_breaking_input(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict) or (info.context is not None and info.context.get(PRECHECKED)):
            return data
        multiline, integers = cls._guards()
        if _clean(data, multiline, integers):
            return data
        problems = ProblemCollector()
        for key, value in data.items():
            if not isinstance(key, str) or key not in multiline:
                continue
            if key in integers and isinstance(value, bool):
                problems.add([key], f"expected {integers[key]} (got {describe_value(value)})")
                continue
            pattern = _NUL if multiline[key] else _CONTROL
            for path, text in _strings(value, (key,)):
                found = pattern.search(text)
                if found:
                    what = {"\n": "a line break", "\r": "a carriage return", "\x00": "a NUL character", "\t": "a tab"}
                    char = found.group(0)
                    problems.add(
                        path,
                        f"{describe_value(text)} contains {what.get(char, f'the control character U+{ord(char):04X}')}; "
                        "a value must stay on one line (it is written into configuration files)",
                    )
        problems.raise_if_any()
        return data


PRECHECKED = "hpcforge.prechecked"
"""Validation context key: `bulk_clean` found nothing in the input, so each model skips its own check of its strings."""

# What json.dumps(..., ensure_ascii=False) writes for a character `_CONTROL` matches: an escape (`\n`, `\u001b`) for
# U+0000 to U+001F, the character itself for U+007F, U+2028, U+2029 and U+0085. An escaped backslash followed by `n`
# (`\\n`) matches too: a false alarm only sends the input through the models' own checks.
_DUMPED_CONTROL = re.compile(r"\\[nrtbf]|\\u00[01][0-9a-fA-F]|[\x7f\u2028\u2029\u0085]")


def _model_tree(model: type[BaseModel]) -> set[type[BaseModel]]:
    """`model` and every model class its fields can hold, at any depth."""
    found: set[type[BaseModel]] = set()
    todo: list[Any] = [model]
    while todo:
        annotation = todo.pop()
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation in found:
                continue
            found.add(annotation)
            todo += [info.annotation for info in annotation.model_fields.values()]
            continue
        todo += typing.get_args(annotation)
    return found


_BULK_GUARDS: dict[type, re.Pattern[str] | None] = {}


def bulk_clean(model: type[StrictModel], items: Any) -> bool:
    """True when no model that validating `items` as `model`s builds would be refused by its own
    `_refuse_structure_breaking_input`: one search over the JSON text of all of them instead of one walk per model.

    Conservative: any control character in any string (in any field, multi-line ones included), or `true`/`false`
    as the value of a key that is an integer or number field of any model of the tree, counts as found; so does data
    JSON cannot write. Then the caller validates without PRECHECKED, and each model checks (and names) its own fields.
    """
    if model not in _BULK_GUARDS:
        keys = sorted({key for cls in _model_tree(model) if issubclass(cls, StrictModel) for key in cls._guards()[1]})
        _BULK_GUARDS[model] = re.compile(f'"(?:{"|".join(map(re.escape, keys))})": (?:true|false)') if keys else None
    try:
        text = json.dumps(items, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return False
    booleans = _BULK_GUARDS[model]
    # Substring tests first (a scan each, in C), the patterns only where one of them finds something.
    if ("\\" in text or any(char in text for char in "\x7f\u2028\u2029\u0085")) and _DUMPED_CONTROL.search(text):
        return False
    return booleans is None or not (": true" in text or ": false" in text) or booleans.search(text) is None


def duplicates(values: Iterable[Any]) -> list[Any]:
    """Values that occur more than once, in first-seen order."""
    seen: set[Any] = set()
    found: set[Any] = set()
    dups: list[Any] = []
    for value in values:
        if value in seen and value not in found:
            found.add(value)
            dups.append(value)
        seen.add(value)
    return dups


class _Named(typing.Protocol):
    @property
    def name(self) -> str: ...


_NamedT = typing.TypeVar("_NamedT", bound=_Named)


def first_by_name(items: Iterable[_NamedT]) -> dict[str, _NamedT]:
    """The first item of each name, as a scan finds it: configs' lookups by name (looped over) cost one step each."""
    found: dict[str, _NamedT] = {}
    for item in items:
        found.setdefault(item.name, item)
    return found


def overlapping_pairs(spans: Sequence[tuple[Any, Any]]) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j, of inclusive spans (first, last) that share a point, in the order of two nested
    loops over the spans (i, then j): what comparing each span with every later one finds, in O(n log n + pairs).

    Sorted by their first point, a span overlaps exactly the spans after it that start at or before its last point."""
    order = sorted(range(len(spans)), key=lambda index: spans[index][0])
    pairs: list[tuple[int, int]] = []
    for position, a in enumerate(order):
        first, last = spans[a]
        later = position + 1
        while later < len(order) and spans[order[later]][0] <= last:
            b = order[later]
            if spans[b][1] >= first:
                pairs.append((a, b) if a < b else (b, a))
            later += 1
    pairs.sort()
    return pairs


# --- names -------------------------------------------------------------------------------------

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_HOSTNAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def _dns_label(value: str) -> str:
    if len(value) > 63 or not _DNS_LABEL.match(value):
        raise ValueError(
            f"{value!r} is not a valid Kubernetes name (lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters)"
        )
    return value


def _dns_name(value: str) -> str:
    if len(value) > 253 or not _DNS_SUBDOMAIN.match(value):
        raise ValueError(f"{value!r} is not a valid DNS name (lowercase, dot-separated labels)")
    return value


def _hostname(value: str) -> str:
    if not _HOSTNAME.match(value):
        raise ValueError(f"{value!r} is not a valid hostname (lowercase letters, digits and '-', at most 63 characters)")
    return value


K8sName = Annotated[str, AfterValidator(_dns_label)]
"""A Kubernetes object name that is also a DNS label (namespaces, services, most objects)."""

DnsName = Annotated[str, AfterValidator(_dns_name)]
"""A fully qualified DNS name such as `argocd.hpc.example.org`."""

Hostname = Annotated[str, AfterValidator(_hostname)]
"""A single host name label."""


# Label keys and values, taint keys (Kubernetes apimachinery validation IsQualifiedName and
# IsValidLabelValue): `[prefix/]name`, the prefix a DNS subdomain of at most 253 characters, the name
# at most 63 characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit.
_QUALIFIED_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def _label_key(value: str) -> str:
    prefix, _, name = value.rpartition("/")
    if (
        not name
        or len(name) > 63
        or not _QUALIFIED_PART.match(name)
        or ("/" in value and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)))
    ):
        raise ValueError(
            f"{value!r} is not a Kubernetes label or taint key ([prefix/]name: the name at most 63 letters, digits, "
            "'-', '_' or '.', starting and ending with a letter or digit; the prefix a lowercase DNS name)"
        )
    return value


def _label_value(value: str) -> str:
    if value and (len(value) > 63 or not _QUALIFIED_PART.match(value)):
        raise ValueError(
            f"{value!r} is not a Kubernetes label value (empty, or at most 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit)"
        )
    return value


LabelKey = Annotated[str, AfterValidator(_label_key)]
"""A Kubernetes label (or taint) key: `[prefix/]name`, e.g. `hpcforge.io/pool` or `nvidia.com/gpu`."""
LabelValue = Annotated[str, AfterValidator(_label_value)]
"""A Kubernetes label value: empty or at most 63 letters, digits, `-`, `_`, `.`."""


def _linux_ifname(value: str) -> str:
    # Linux dev_valid_name (net/core/dev.c): 1 to 15 bytes (IFNAMSIZ 16), not "." or "..", no '/', ':' or
    # space; hpcforge also keeps to the characters interface names use in practice (udev, systemd, VLANs),
    # and refuses a leading '-', which `ip link` and the CNI plugins would read as an option.
    if not re.fullmatch(r"[A-Za-z0-9_.@][A-Za-z0-9_.@-]{0,14}", value) or value in (".", ".."):
        raise ValueError(
            f"{value!r} is not a Linux interface name (1 to 15 letters, digits, '_', '.', '-' or '@', not starting with '-';"
            " e.g. eth1, bond0.20)"
        )
    return value


InterfaceName = Annotated[str, AfterValidator(_linux_ifname)]
"""A Linux network interface name such as `eth1` or `bond0.20` (1 to 15 letters, digits, `_`, `.`, `-`, `@`)."""


def _kernel_cmdline(value: str) -> str:
    # The kernel reads one line of space-separated parameters, at most COMMAND_LINE_SIZE (2048 on x86)
    # bytes; Grendel expands it as a Go text/template, so `{{` and `}}` must pair up.
    if len(value) > 2047 or not all(" " <= char <= "~" for char in value):
        raise ValueError(f"{value[:60]!r} is not a kernel command line (printable ASCII on one line, at most 2047 characters)")
    braces = [match.group(0) for match in re.finditer(r"{{|}}", value)]
    if braces[0::2] != ["{{"] * len(braces[0::2]) or braces[1::2] != ["}}"] * len(braces[1::2]) or len(braces) % 2:
        raise ValueError(f"{value[:60]!r}: unbalanced Go template braces ({{{{ ... }}}}), which Grendel would fail to expand")
    return value


KernelCmdline = Annotated[str, AfterValidator(_kernel_cmdline)]
"""A kernel command line: printable ASCII on one line, at most 2047 characters; Go template actions
`{{ ... }}` (expanded by Grendel) must be balanced."""


def _no_space(value: str) -> str:
    if not value or re.search(r"\s", value):
        raise ValueError(f"{value!r} is not a path or URL (not empty, no spaces)")
    return value


PathOrUrl = Annotated[str, AfterValidator(_no_space)]
"""A path or URL: not empty, no white space."""


# --- Kubernetes quantities -----------------------------------------------------------------------

# Kubernetes' quantity grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go):
#   <quantity> ::= <signedNumber><suffix>;  <number> ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
#   <suffix> ::= <binarySI> (Ki..Ei) | <decimalExponent> ("e"/"E" <signedNumber>) | <decimalSI> (m, "", k, M, G, T, P, E)
# so `1e3` and `1.5E2` are quantities, `1e3Mi` is not. Resource amounts are never negative here, and a
# quantity must fit Kubernetes' int64 milli-units (9.2e15 units), so `1e30` is refused as too large.
_QUANTITY = re.compile(r"^\+?(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)(?P<suffix>[eE][-+]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"m": Decimal("1e-3"), "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}  # fmt: skip
_QUANTITY_MAX = Decimal(2**63 - 1) / 1000


def _quantity_decimal(text: str) -> Decimal | None:
    match = _QUANTITY.match(text)
    if not match:
        return None
    number, suffix = Decimal(match.group("number")), match.group("suffix") or ""
    if suffix[:1] in ("e", "E"):
        exponent = int(suffix[1:]) if len(suffix) < 8 else 10**6 * (-1 if suffix[1] == "-" else 1)
        if exponent > 40:
            return Decimal("Infinity")
        if exponent < -40:
            return Decimal(0)
        return number.scaleb(exponent)
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    return number * _DECIMAL.get(suffix, Decimal(1))


def _quantity(value: Any) -> str:
    if isinstance(value, bool):
        raise ValueError(f"{'true' if value else 'false'} is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)")
    if isinstance(value, int):
        value = str(value)
    elif isinstance(value, float):
        value = repr(value) if value != int(value) or abs(value) >= 1e16 else str(int(value))
    if not isinstance(value, str):
        raise ValueError(f"expected a Kubernetes quantity such as 500m, 2 or 4Gi (got {describe_value(value)})")
    amount = _quantity_decimal(value)
    if amount is None:
        raise ValueError(
            f"{value!r} is not a Kubernetes quantity (a number with an optional suffix: m, k, M, G, T, P, E, "
            "Ki, Mi, Gi, Ti, Pi, Ei, or an exponent such as 1e3; e.g. 500m, 2, 4Gi)"
        )
    if amount > _QUANTITY_MAX:
        raise ValueError(f"{value!r} is too large for a Kubernetes quantity (at most about 9.2e15)")
    return value


def quantity_value(quantity: str) -> float:
    """The numeric value of a quantity in base units (cores or bytes)."""
    amount = _quantity_decimal(quantity)
    if amount is None:
        raise ValueError(f"{quantity!r} is not a Kubernetes quantity")
    return float(amount)


Quantity = Annotated[str, BeforeValidator(_quantity)]
"""A Kubernetes resource quantity: a non-negative number with an optional suffix (`m k M G T P E`, `Ki Mi Gi Ti Pi Ei`)
or exponent (`1e3`), e.g. `500m`, `2`, `4Gi`; at most about 9.2e15 (numbers are accepted and kept as text)."""


# --- addresses -----------------------------------------------------------------------------------


_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_CANONICAL_IPV4 = re.compile(rf"{_OCTET}(\.{_OCTET}){{3}}")


def _host_or_ipv4(value: str) -> str:
    if not (_CANONICAL_IPV4.fullmatch(value) or (len(value) <= 253 and _DNS_SUBDOMAIN.fullmatch(value))):
        raise ValueError(f"{value!r} is not a host (a lowercase DNS name or an IPv4 address)")
    return value


HostOrIPv4 = Annotated[str, AfterValidator(_host_or_ipv4)]
"""A server: a lowercase DNS name or a dotted-quad IPv4 address."""


def _ipv4(value: Any) -> str:
    # Fast path for the canonical dotted quad (inventories hold tens of thousands of addresses).
    if isinstance(value, str) and _CANONICAL_IPV4.fullmatch(value):
        return value
    try:
        return str(ipaddress.IPv4Address(str(value)))
    except ValueError:
        raise ValueError(f"{as_written(value, quoted=False)} is not an IPv4 address") from None


def ipv4_int(address: str) -> int:
    """The integer value of a canonical dotted-quad address (cheaper than ipaddress for bulk checks)."""
    return int.from_bytes(socket.inet_aton(address), "big")


def _ipv4_network(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{as_written(value)} is not an IPv4 network in CIDR form")
    try:
        return str(ipaddress.IPv4Network(str(value), strict=True))
    except ValueError as exc:
        raise ValueError(f"{value} is not an IPv4 network in CIDR form ({exc})") from None


def _ipv4_interface(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{as_written(value)} is not an IPv4 address with prefix length (e.g. 10.0.0.5/24)")
    text = value
    if "/" not in text:
        raise ValueError(f"{value} needs a prefix length, e.g. 10.0.0.5/24")
    try:
        return str(ipaddress.IPv4Interface(text))
    except ValueError:
        raise ValueError(f"{value} is not an IPv4 address with prefix length") from None


IPv4 = Annotated[str, BeforeValidator(_ipv4)]
IPv4Network = Annotated[str, BeforeValidator(_ipv4_network)]
IPv4Interface = Annotated[str, BeforeValidator(_ipv4_interface)]


def parse_address_range(text: str) -> tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]:
    """Parse `10.0.0.10-10.0.0.20` or `10.0.0.0/28` into (first, last). Raises ValueError naming the bad part."""
    text = text.strip()
    if "-" in text:
        first_text, last_text = (part.strip() for part in text.split("-", 1))
        first = ipaddress.IPv4Address(_ipv4(first_text))
        last = ipaddress.IPv4Address(_ipv4(last_text))
        if last < first:
            raise ValueError(f"{text}: the range ends before it starts")
        return first, last
    if "/" in text:
        network = ipaddress.IPv4Network(_ipv4_network(text))
        return network.network_address, network.broadcast_address
    address = ipaddress.IPv4Address(_ipv4(text))
    return address, address


# --- durations -----------------------------------------------------------------------------------

_GO_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(h|m|s|ms))+$")


def _go_duration(value: Any) -> str:
    if not isinstance(value, str) or not _GO_DURATION.match(value):
        raise ValueError(f"{as_written(value)} is not a duration (e.g. 90s, 15m, 2160h)")
    return value


GoDuration = Annotated[str, BeforeValidator(_go_duration)]

_GO_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(h|ms|m|s)")
_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def go_duration_seconds(text: str) -> float:
    """Seconds of a Go duration such as `2160h` or `1h30m` (already validated by GoDuration)."""
    return sum(float(number) * _SECONDS[unit] for number, unit in _GO_DURATION_PART.findall(text))
