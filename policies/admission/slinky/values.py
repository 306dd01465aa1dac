"""Go's view of the objects the webhook compares: zero values, semantic equality (quantities, durations) and the
references and settings its rules read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get, mapping, text
from ...rules.apimachinery import compare, is_dns1123_subdomain, quantity
from ...rules.podtemplates import name_of, namespace_of


def mask_trailing_dash(name: str) -> str:
    """pkg/api/validation/generic.go `maskTrailingDash`: a trailing dash of a name longer than one
    byte stands for the suffix to come (Go slices bytes: `name[:len(name)-2] + "a"`)."""
    raw = name.encode()
    if len(raw) > 1 and raw.endswith(b"-"):
        return (raw[:-2] + b"a").decode(errors="replace")
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """pkg/api/validation/generic.go `NameIsDNSSubdomain`."""
    return is_dns1123_subdomain(mask_trailing_dash(name) if prefix else name)


MINUTE_NS = 60 * 10**9


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, Mapping | list | tuple) and not value)


QUANTITY_MAPS = ("requests", "limits", "capacity")


def _scalar_equal(a: Any, b: Any, as_quantity: bool) -> bool:
    if as_quantity:
        left, right = quantity(a), quantity(b)
        if left is not None and right is not None:
            return compare(left, right) == 0
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def semantic_equal(a: Any, b: Any, quantity_map: bool = False) -> bool:
    """`apiequality.Semantic.DeepEqual` over JSON values: an absent, null or empty list or map are the
    same (Go's nil and empty slices and maps); the values of `requests`, `limits` and `capacity`
    compare as quantities, by value. Scalars compare as they are: a JSON zero value and an absent
    field differ here even where Go would decode both to the same zero (no comparison below depends
    on that)."""
    if _empty(a) and _empty(b):
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = {k for k, v in a.items() if not _empty(v)} | {k for k, v in b.items() if not _empty(v)}
        if quantity_map:
            return all(_scalar_equal(a.get(k), b.get(k), True) for k in keys)
        return all(semantic_equal(a.get(k), b.get(k), k in QUANTITY_MAPS) for k in keys)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping | list | tuple) or isinstance(b, Mapping | list | tuple):
        return False
    return _scalar_equal(a, b, False)


def ref_name(value: Any) -> str:
    """A `corev1.LocalObjectReference`'s Name (`""` when absent)."""
    return text(get(value, "name")) or ""


SecretKeySelector = tuple[str, str, bool | None]


def secret_key_selector(value: Any) -> SecretKeySelector:
    """A `corev1.SecretKeySelector` as Go compares it: (name, key, optional), optional a *bool."""
    body = mapping(value)
    optional = body.get("optional")
    return ref_name(body), text(body.get("key")) or "", optional if isinstance(optional, bool) else None


def auth_jwt_ref(obj: Mapping[str, Any]) -> SecretKeySelector:
    """api/v1beta1 controller_keys.go / accounting_keys.go `AuthJwtRef`, token_keys.go `JwtRef`:
    `jwtKeyRef` when set, else the deprecated `jwtHs256KeyRef`, else the zero selector."""
    spec = mapping(obj.get("spec"))
    for key in ("jwtKeyRef", "jwtHs256KeyRef"):
        if spec.get(key) is not None:
            return secret_key_selector(spec.get(key))
    return "", "", None


def cluster_name(controller: Mapping[str, Any]) -> str:
    """api/v1beta1/controller_keys.go `ClusterName`: `spec.clusterName`, else `<namespace>_<name>`."""
    return text(get(controller, "spec", "clusterName")) or f"{namespace_of(controller)}_{name_of(controller)}"


def persistence_enabled(controller: Mapping[str, Any]) -> bool | None:
    """`spec.persistence.enabled`, a *bool (None: nil; the CRD defaults it to true when `persistence` is given)."""
    value = get(controller, "spec", "persistence", "enabled")
    return value if isinstance(value, bool) else None
