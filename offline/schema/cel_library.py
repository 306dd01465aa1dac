"""The Kubernetes CEL functions that cel-cpp (cel-expr-python) does not ship, for offline/schema/cel.py.

Each reproduces k8s.io/apiserver v0.33.9 pkg/cel/library/<file>.go (Kubernetes 1.33, the version hpcforge's
stacks target) or cel-go's ext/sets.go, as a function returning a plain CEL value: `isURL` (urls.go, with Go
net/url `ParseRequestURI`), `isSorted`/`sum`/`min`/`max`/`indexOf`/`lastIndexOf` (lists.go), `find`/`findAll`
(regex.go), `isQuantity` (quantity.go, through policies/rules/apimachinery.py), `isIP` (ip.go), `isCIDR`
(cidr.go), `isSemver` (semver.go), `sets.contains`/`sets.equivalent`/`sets.intersects`. The functions that
return a Kubernetes object type (`url()`, `quantity()`, `ip()`, `cidr()`, `semver()`, `format.*`) are not
here: the binding cannot declare such a type, and no pinned CRD's rule uses one (tests/offline/schema/test_cel.py).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped,unused-ignore]

from policies.rules.apimachinery import quantity


def _go_valid_port(port: str) -> bool:
    # net/url validOptionalPort: empty, or ':' then digits.
    return port == "" or (port[0] == ":" and all(c in "0123456789" for c in port[1:]))


_HOST_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!$&'()*+,;=:[]<>\"%")
_USERINFO_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:~!$&'()*+,;=%@")
_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")


def _go_parse_host(host: str) -> bool:
    """net/url parseHost: a bracketed IP literal with an optional port, or a name with an optional `:port`."""
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0 or not _go_valid_port(host[end + 1 :]):
            return False
    elif ":" in host and not _go_valid_port(host[host.rfind(":") :]):
        return False
    if _ESCAPE.search(host):
        return False
    return all(ord(c) >= 0x80 or c in _HOST_OK for c in host)


def go_parse_request_uri(raw: str) -> bool:  # noqa: PLR0911 (one return per refusal of Go's url.ParseRequestURI)
    """Whether Go's `net/url.ParseRequestURI` accepts `raw` (an absolute URI or an absolute path), which the
    Kubernetes `isURL` is (k8s.io/apiserver v0.33.9 pkg/cel/library/urls.go `isURL`; Go net/url `parse` with
    viaRequest: control characters, the scheme, the authority's userinfo, host and port, `%` escapes)."""
    if raw == "" or any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        return False
    if raw == "*":
        return True
    scheme, rest = "", raw
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                break
            continue
        if c == ":":
            if i == 0:
                return False  # "missing protocol scheme"
            scheme, rest = raw[:i], raw[i + 1 :]
        break
    rest = rest[:-1] if rest.endswith("?") and rest.count("?") == 1 else rest.split("?", 1)[0]
    if not rest.startswith("/"):
        return scheme != ""  # an opaque URI ("mailto:x"); a relative reference is "invalid URI for request"
    if scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        userinfo, at, host = authority.rpartition("@")
        if at and not all(c in _USERINFO_OK for c in userinfo):
            return False
        if not _go_parse_host(host):
            return False
    return not _ESCAPE.search(rest)


def _is_sorted(items: list[Any]) -> bool:
    # lists.go `isSorted`: each item <= the next (comparable items).
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _index_of(items: list[Any], item: Any) -> int:
    # lists.go `indexOf`: -1 when absent.
    return next((i for i, x in enumerate(items) if x == item), -1)


def _last_index_of(items: list[Any], item: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if items[i] == item), -1)


def _min(items: list[Any]) -> Any:
    if not items:
        raise ValueError("min of empty list")  # lists.go: "min called on empty list"
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise ValueError("max of empty list")
    return max(items)


def _find(text: str, pattern: str) -> str:
    # regex.go `find`: the first match, or "" (RE2 syntax; Python's `re` agrees on the patterns RE2 accepts,
    # except that it also accepts backreferences and lookarounds).
    match = re.search(pattern, text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str) -> list[str]:
    return [m.group(0) for m in re.finditer(pattern, text)]


def _find_all_n(text: str, pattern: str, limit: int) -> list[str]:
    found = _find_all(text, pattern)
    return found if limit < 0 else found[:limit]


def _is_quantity(text: str) -> bool:
    # quantity.go `isQuantity`: resource.ParseQuantity succeeds (policies/rules/apimachinery.py reproduces it).
    return quantity(text) is not None and text == text.strip()


def _is_ip(text: str) -> bool:
    # ip.go `isIP`: netip.ParseAddr without a zone, and not an IPv4-mapped IPv6 address; IPv4 with leading zeros
    # is refused (netip is strict).
    if "%" in text:
        return False
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return not (isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None)


def _is_cidr(text: str) -> bool:
    # cidr.go `isCIDR`: netip.ParsePrefix (host bits may be set), address as `isIP`.
    address, slash, bits = text.partition("/")
    if not slash or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0") or not _is_ip(address):
        return False
    return int(bits) <= (32 if "." in address and ":" not in address else 128)


_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)


def _is_semver(text: str) -> bool:
    # semver.go `isSemver` (blang/semver Parse: strict MAJOR.MINOR.PATCH with prerelease and build).
    return bool(_SEMVER.fullmatch(text))


def _sets_contains(a: list[Any], b: list[Any]) -> bool:
    # cel-go ext/sets.go: every element of b is in a.
    return all(any(x == y for x in a) for y in b)


def _sets_equivalent(a: list[Any], b: list[Any]) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(x == y for x in a for y in b)


def kubernetes_library() -> Any:
    """The functions above as a cel-expr-python extension."""
    t = cel.Type
    dyn_list = t.List(t.DYN)
    string_list = t.List(t.STRING)

    def member(name: str, overload: str, result: Any, params: list[Any], impl: Callable[..., Any]) -> Any:
        return cel.FunctionDecl(name, [cel.Overload(overload, result, params, is_member=True, impl=impl)])

    def function(name: str, overload: str, result: Any, params: list[Any], impl: Callable[..., Any]) -> Any:
        return cel.FunctionDecl(name, [cel.Overload(overload, result, params, impl=impl)])

    return cel.CelExtension(
        "hpcforge.kubernetes",
        [
            function("isURL", "is_url_string", t.BOOL, [t.STRING], go_parse_request_uri),
            member("isSorted", "list_is_sorted", t.BOOL, [dyn_list], _is_sorted),
            member("sum", "list_sum", t.DYN, [dyn_list], lambda items: sum(items[1:], items[0]) if items else 0),
            member("min", "list_min", t.DYN, [dyn_list], _min),
            member("max", "list_max", t.DYN, [dyn_list], _max),
            member("indexOf", "list_index_of", t.INT, [dyn_list, t.DYN], _index_of),
            member("lastIndexOf", "list_last_index_of", t.INT, [dyn_list, t.DYN], _last_index_of),
            member("find", "string_find", t.STRING, [t.STRING, t.STRING], _find),
            cel.FunctionDecl(
                "findAll",
                [
                    cel.Overload("string_find_all", string_list, [t.STRING, t.STRING], is_member=True, impl=_find_all),
                    cel.Overload("string_find_all_n", string_list, [t.STRING, t.STRING, t.INT], is_member=True, impl=_find_all_n),
                ],
            ),
            function("isQuantity", "is_quantity_string", t.BOOL, [t.STRING], _is_quantity),
            function("isIP", "is_ip_string", t.BOOL, [t.STRING], _is_ip),
            function("isCIDR", "is_cidr_string", t.BOOL, [t.STRING], _is_cidr),
            function("isSemver", "is_semver_string", t.BOOL, [t.STRING], _is_semver),
            function("sets.contains", "list_sets_contains_list", t.BOOL, [dyn_list, dyn_list], _sets_contains),
            function("sets.equivalent", "list_sets_equivalent_list", t.BOOL, [dyn_list, dyn_list], _sets_equivalent),
            function("sets.intersects", "list_sets_intersects_list", t.BOOL, [dyn_list, dyn_list], _sets_intersects),
        ],
    )
