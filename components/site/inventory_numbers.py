"""Plain scalars that yaml-rs reads as numbers and the YAML 1.2 core schema as strings, put back as strings.

Inventory files are documented as YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution):
an int is `[-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+`, a float `[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?`
or `.inf`/`.nan`, and every other plain scalar is a string. yaml-rs 0.1.6, which parses them for
speed (`inventory.parse_yaml_12`), reads more forms as numbers: underscores anywhere among the
digits (`1_000`, `_12`, `12_`, `1__0`, `0x_1F`, `1_0.5`), binary (`0b101`), upper-case prefixes
(`0X1F`, `0O17`) and signed hex/octal (`+0x1F`, `-0x1F`). Those forms never turn a core-schema
number into a string, nor a boolean or null into anything else (checked when this was written over
every scalar of up to four characters of `0 1 7 9 _ . e E + - x X o O b B a f F i n N`;
tests/components/site/test_inventory_numbers.py repeats it up to three).

Finding them needs the text of each plain scalar, which yaml-rs does not give back, and scanning a
100,000-host inventory (15 MB) for them on every run cost 0.25-0.8 s (a fix that did so was reverted;
the program's budget at that size is 10 s). So nothing is scanned while the config validates. Only
when validation refuses an input that is a number (not a boolean) at a path inside an inventory file
is anything more done (components/site/loader.py): a hosts/users/groups entry that refuses one is
seen at once (`inventory.build_items`), anything else after the whole config is validated
(`needs_core_reading`). For such a file, one regex search (`last_candidate_line`, ~0.15 s for 15 MB)
looks for a token that yaml-rs reads as a number and the core schema as a string; without one, the
messages stand. With one, the file is read again: yaml-rs's document, then libyaml's event stream
(PyYAML's C parser, as inventory_scan.py does for tags; ~3 s of CPU for all 2.4 million events of a
100,000-host file, so the walk stops after the line of the last candidate), whose scalar events
carry their text and style. Every plain, untagged scalar whose text yaml-rs reads as a number and the
core schema as a string is put back as that string at its place in yaml-rs's document, mapping keys
included (`restore_core_strings`), and the config is validated again; the messages are then those
of the core-schema reading. A host named `0b101` or a user whose full name is `1_000` is accepted as
that string (a 100,000-host site with such a scalar in its first host loads in about 5 s of CPU, in
its last host 9 s, instead of 3.3-3.5 s: benchmarks/inventory_load.py); an account named `0b101` is refused for its
name, not with "expected a string".

What this does NOT cover, honestly: a field that accepts a number and would refuse the core
schema's string. An integer field (`uidNumber`, `gidNumber`, `mtu`, `vlan`, `fairshare`, QOS
`priority` and job limits, `topology.blockSizes`) given `0b101`, `0X1F`, `+0x1F`, `12_` or `_12`
gets yaml-rs's number (5, 31, 31, 12, 12) where a core-schema reader hands pydantic the string,
which it refuses; and the QOS TRES limits (`maxTresPerUser: {cpu: 1_000}`), whose values take any
scalar, get "1000" where the core reading `1_000` is refused as not a whole count. (`1_000` itself
in an integer field is 1000 either way: pydantic reads the string "1_000" as 1000.) Nothing is
refused there, so the lazy pass never runs; covering them would take the scan this module exists
to avoid. When the lazy pass does run for another problem in the same file, they are put back
and refused with the rest; and where yaml-rs's number is itself refused (`uidNumber: 0b101` is uid
5, below the allowed range) the pass runs and the core reading's "0b101" is what is refused. Also not
covered: two keys of one mapping that only yaml-rs reads as the same number (`1_0:` and `10:`) are
refused by yaml-rs as a duplicate key before anything is validated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

import yaml
import yaml_rs
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..ground.inventory_ref import source_path

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# The core schema's number forms (YAML 1.2.2, 10.3.2), as in inventory._CORE_RESOLVERS.
_CORE_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_CORE_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
# Every plain scalar yaml-rs reads as a number and the core schema does not starts with a digit, `.` or `_`
# (after an optional sign) and holds only these characters; the rest are not asked of yaml-rs.
_MAYBE_NUMBER = re.compile(r"[-+]?[0-9._][0-9A-Za-z._+-]*")
_NUMBER_START = frozenset("+-._0123456789")


@lru_cache(maxsize=4096)
def yaml_rs_only_number(text: str) -> int | float | None:
    """The number yaml-rs reads from the plain scalar `text` when the core schema reads a string there, else None.

    yaml-rs itself decides (one small document per distinct text): the answer follows its rules, not
    a model of them.
    """
    if not _MAYBE_NUMBER.fullmatch(text) or _CORE_INT.fullmatch(text) or _CORE_FLOAT.fullmatch(text):
        return None
    try:
        value: Any = yaml_rs.loads(text, parse_datetime=False)  # a scalar document: its typing says dict | list
    except yaml_rs.YAMLDecodeError:
        return None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def is_yaml_rs_only_number(text: str) -> bool:
    """True when yaml-rs reads the plain scalar `text` as an int or float and the core schema as a string."""
    return yaml_rs_only_number(text) is not None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Frame:
    """A collection of yaml-rs's document being walked along libyaml's events (None: not followed)."""

    __slots__ = ("container", "index", "key", "keys", "renames", "want_key")

    def __init__(self, container: Any) -> None:
        self.container = container
        self.index = 0
        self.keys: Iterator[Any] | None = iter(list(container)) if isinstance(container, dict) else None
        self.want_key = True
        self.key: Any = None
        self.renames: dict[Any, str] = {}

    def next_child(self, text: str | None, number: Any = None) -> tuple[Any, bool]:
        """(the child in yaml-rs's document, whether it is a key) for the next node; `text` is a
        scalar's text when it must be put back as a string, `number` what yaml-rs reads from it (the node
        is changed only when it holds that number: a walk out of step changes nothing)."""
        container = self.container
        if isinstance(container, list):
            if self.index >= len(container):
                return None, False
            child = container[self.index]
            if text is not None and _is_number(child) and child == number:
                container[self.index] = child = text
            self.index += 1
            return child, False
        if self.keys is None:
            return None, False
        if self.want_key:
            self.want_key = False
            self.key = next(self.keys, None)
            if text is not None and _is_number(self.key) and self.key == number:
                self.renames[self.key] = text
            return self.key, True
        self.want_key = True
        child = container.get(self.key)
        if text is not None and _is_number(child) and child == number:
            container[self.key] = child = text
        return child, False

    def finish(self) -> str | None:
        """Apply the key renames (order kept); the duplicate key a rename makes, if any."""
        if not self.renames:
            return None
        items = [(self.renames.get(key, key), value) for key, value in self.container.items()]
        names = [key for key, _ in items]
        if len(set(names)) != len(names):
            return next(key for key in names if names.count(key) > 1)
        self.container.clear()
        self.container.update(items)
        return None


# Every plain scalar that yaml-rs reads as a number and the core schema as a string holds an `_`, a `0b`/`0B`/`0X`/`0O`
# prefix or a signed `0x`/`0o` (tests/components/site/test_inventory_numbers.py checks this over every short scalar), and only
# characters of `_TOKEN`: finding those triggers, then the whole token around each, bounds where the walk must look.
_TRIGGER = re.compile(r"_|0[bBXO]|[-+]0[xXoO]")
_TOKEN = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._+-")


def last_candidate_line(text: str) -> int:
    """The line (1-based) of the last token in `text` that yaml-rs reads as a number and the core schema as a
    string, wherever it stands (in a comment or a quoted string too: a superset); 0 when there is none.

    One regex search over the text (0.15 s for a 100,000-host inventory) and a look at the token around each hit.
    """
    last = -1
    examined = -1  # end of the last token looked at: further hits inside it are skipped
    size = len(text)
    for match in _TRIGGER.finditer(text):
        begin, end = match.start(), match.end()
        if begin < examined:
            continue
        while begin > 0 and text[begin - 1] in _TOKEN:
            begin -= 1
        while end < size and text[end] in _TOKEN:
            end += 1
        examined = end
        if is_yaml_rs_only_number(text[begin:end]):
            last = end
    return 0 if last < 0 else text.count("\n", 0, last) + 1


def restore_core_strings(text: str, document: Any) -> tuple[int, list[str]]:  # noqa: PLR0912 (one pass over the parser's events, one branch per event kind)
    """Put back as strings, in place, the plain scalars of `text` (keys included) that yaml-rs read as
    numbers in `document` and the core schema reads as strings.

    Returns (how many, duplicate keys the core reading has: `{1_0: a, "1_0": b}` is two keys to yaml-rs and
    one twice to the core schema). The walk pairs each libyaml event with the node of yaml-rs's document at
    the same place (mappings keep their order in both) and changes a node only when yaml-rs holds a number
    there. It reads libyaml's events only when `last_candidate_line` finds a candidate, and only up to it.
    """
    until = last_candidate_line(text)
    restored = 0
    duplicates: list[str] = []
    if until == 0:
        return restored, duplicates
    stack: list[_Frame] = []
    roots = 0
    scalar, start, end, alias = (
        yaml.ScalarEvent,
        (yaml.SequenceStartEvent, yaml.MappingStartEvent),
        (yaml.SequenceEndEvent, yaml.MappingEndEvent),
        yaml.AliasEvent,
    )
    events: Iterator[Any] = yaml.parse(text, Loader=_LOADER)  # checked by type below (mypy sees the base Event)
    for event in events:
        kind = type(event)
        if kind is scalar:
            value = event.value
            number = None
            # Plain and untagged (libyaml's style is "" from the C parser, None from the Python one), and able to be
            # a number at all (the cheap test first: most scalars are names).
            if value[:1] in _NUMBER_START and not event.style and event.tag is None and event.implicit[0]:
                number = yaml_rs_only_number(value)
            if stack:  # (past the last candidate line no scalar changes anything; the walk stops at the next collection)
                child, _ = stack[-1].next_child(value if number is not None else None, number)
                restored += number is not None and child == value
        elif kind in start:
            if event.start_mark.line >= until:  # marks count lines from 0
                break
            if stack:
                child, is_key = stack[-1].next_child(None)
                stack.append(_Frame(None if is_key else child))
            else:
                stack.append(_Frame(document))
        elif kind in end:
            restored += _finish(stack.pop(), duplicates)
        elif kind is alias:
            if stack:
                stack[-1].next_child(None)
        elif kind is yaml.DocumentStartEvent:
            roots += 1
            if roots > 1:
                break
    while stack:  # stopped early: the keys of the mappings still open are put back too
        restored += _finish(stack.pop(), duplicates)
    return restored, duplicates


def _finish(frame: _Frame, duplicates: list[str]) -> int:
    if not isinstance(frame.container, dict):
        return 0
    duplicate = frame.finish()
    if duplicate is not None:
        duplicates.append(duplicate)
        return 0
    return len(frame.renames)


def refuses_a_number_in(errors: Iterable[ErrorDetails]) -> bool:
    """Whether one of these validation errors refused an input that is a number (int or float, not a bool)."""
    return any(_is_number(error.get("input")) for error in errors)


def needs_core_reading(
    exc: ValidationError,
    sources: Mapping[tuple[str, str], tuple[str, str]],
    resolve: Callable[[tuple[str | int, ...]], Sequence[str | int]],
) -> set[str]:
    """Inventory files (as named in the config) where validation refused a number (int or float, not a bool).

    `resolve` turns a pydantic `loc` into the path as written (loader._resolve_loc). A number refused in
    a file may be a plain scalar that the core schema reads as a string.
    """
    files: set[str] = set()
    for error in exc.errors(include_url=False):
        if not _is_number(error.get("input")):
            continue
        found = source_path(list(resolve(error["loc"])), sources)
        if found is not None:
            files.add(found[0])
    return files
