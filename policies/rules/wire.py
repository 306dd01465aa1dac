"""Pulumi's wire format as rules see it: secret and unknown markers, and the conversion from wire form.

Values inside `ResourceView.props` are plain Python values (dict, list, str, int, float, bool,
None) except for three markers:

- `SecretStr`, `SecretInt`, `SecretFloat`: a value that arrived wrapped in Pulumi's secret
  signature (every leaf under a secret map or list is marked). They are subclasses of `str`,
  `int` and `float`, so rules that do not care about secretness see ordinary values.
- `Unknown`: a value that is not known during a preview (the engine's unknown sentinels); it
  remembers whether it was inside a secret. Rules skip what they cannot know.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
UNKNOWN_SENTINELS = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",  # boolean
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",  # number
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",  # string
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",  # array
        "030794c1-ac77-496b-92df-f27374a8bd58",  # asset
        "e48ece36-62e2-4504-bad9-02848725956a",  # archive
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",  # object
    }
)


class SecretStr(str):
    """A string that was a Pulumi secret on the wire."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SecretStr('[secret]')"


class SecretInt(int):
    """An integer that was a Pulumi secret on the wire."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SecretInt([secret])"


class SecretFloat(float):
    """A number that was a Pulumi secret on the wire."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SecretFloat([secret])"


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be known during a preview."""

    secret: bool = False

    def __repr__(self) -> str:
        return "Unknown(secret)" if self.secret else "Unknown()"


def is_secret(value: Any) -> bool:
    """True if `value` arrived as a Pulumi secret (or is an unknown inside a secret)."""
    if isinstance(value, Unknown):
        return value.secret
    return isinstance(value, SecretStr | SecretInt | SecretFloat)


def is_unknown(value: Any) -> bool:
    return isinstance(value, Unknown)


def _number(value: float, secret: bool) -> int | float:
    if value.is_integer():
        return SecretInt(int(value)) if secret else int(value)
    return SecretFloat(value) if secret else value


def from_wire(value: Any, *, in_secret: bool = False, special: Callable[[dict[str, Any]], Any] | None = None) -> Any:  # noqa: PLR0911 (one return per kind of wire value)
    """Turn a deserialized protobuf Struct value (Pulumi's wire form) into plain values with markers.

    Secret wrappers `{SIG_KEY: SECRET_SIG, "value": v}` disappear and every leaf below them is
    marked; unknown sentinels become `Unknown`; integral numbers become `int` (protobuf has only
    doubles). Other signatures (assets, archives) go to `special` when given, else stay as they are.
    """
    if isinstance(value, Mapping):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            return from_wire(value.get("value"), in_secret=True, special=special)
        if sig is not None and special is not None:
            return special(dict(value))
        return {str(k): from_wire(v, in_secret=in_secret, special=special) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [from_wire(v, in_secret=in_secret, special=special) for v in value]
    if isinstance(value, bool) or value is None:
        return value  # a bool cannot be subclassed: secret booleans stay plain
    if isinstance(value, str):
        if value in UNKNOWN_SENTINELS:
            return Unknown(secret=in_secret)
        return SecretStr(value) if in_secret else value
    if isinstance(value, float):
        return _number(value, in_secret)
    if isinstance(value, int):
        return SecretInt(value) if in_secret else value
    return value


_PROXY_MODULE = "pulumi_policy.proxy"


def _plain_item(proxy: Any, key: Any, item: Any) -> Any:
    # An unknown sentinel is read through the proxy, which raises UnknownValueError as before.
    if isinstance(item, str) and item in UNKNOWN_SENTINELS:
        return to_plain(proxy[key])
    return to_plain(item)


def to_plain(value: Any) -> Any:  # noqa: PLR0911 (one return per kind of wire value)
    """Copy any Mapping/Sequence tree (e.g. pulumi_policy's proxies) into dicts and lists, keeping markers.

    pulumi_policy's proxies are read through their `__target` (the wrapped dict or list), not item by
    item through `__getitem__`: the same values at a fraction of the cost (every policy of a pack
    copies every resource's properties); an unknown sentinel still goes through the proxy, which raises.
    Plain dicts and lists (the packs' shared trees, policies/framework.py) are copied first, without the
    abstract `Mapping`/`Sequence` checks.
    """
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, str | Unknown) or value is None or isinstance(value, bool | int | float):
        return value
    if type(value).__module__ == _PROXY_MODULE:
        target = value["__target"]
        if isinstance(target, dict):
            return {str(k): _plain_item(value, k, v) for k, v in target.items()}
        if isinstance(target, list):
            return [_plain_item(value, i, v) for i, v in enumerate(target)]
    if isinstance(value, Mapping):
        return {str(k): to_plain(value[k]) for k in value}
    if isinstance(value, Sequence):
        return [to_plain(v) for v in value]
    return value
