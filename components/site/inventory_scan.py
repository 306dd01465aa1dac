"""What yaml-rs cannot tell about an inventory file: the YAML tags in it, where an alias or an anchor is, a second
document, and a control character.

yaml-rs (the Rust YAML 1.2 reader of inventory files, `inventory.parse_yaml_12`) returns plain Python
values and drops every tag: `!custom x` and `!!binary aGVsbG8=` come back as strings, `!!set {a, b}`
as a Python set, and nothing in its API (`loads(s, parse_datetime, alias_limits,
duplicate_key_policy)`, yaml_rs 0.1.6 `_yaml_rs.pyi`) reports that a tag was there. Its alias error
("alias replay limit exceeded: replayed 1, max 0") gives no position either. So the file's event
stream is read a second time with libyaml (PyYAML's C parser, which reports each node's tag and
position) to find the first tag outside YAML's JSON-compatible core ones, or the first alias, with
the path of the entry and the line.

That second pass runs only when it can find something: for tags, when a `!` starts a token somewhere
in the text (`_TAG_START`, a superset: a `!` after a space inside a string sets it off too); for
anchors, which yaml-rs reads without complaint when no alias repeats them, when a `&` followed by a name
starts a token (`_ANCHOR_START`, a superset too); for aliases, only after yaml-rs has refused one. A
100,000-host inventory without a `!` or a `&` costs two substring searches.

yaml-rs also reads a stream of several documents as a list of them (so a second document was reported as
"expected a mapping"), cuts a plain value at a NUL byte and reads a NUL in a comment and the other control
characters without complaint: `second_document` and `describe_control_character` find those.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import yaml

from ..ground.yamlv3 import CONTROL_CHARACTER_ADVICE, control_character

CORE_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq"))
"""Tags an inventory may carry: the YAML 1.2 core schema's, which are the JSON types."""

# A tag starts a node: at the start of the text or of a line, after `- `, `: `, `? ` (all end in
# whitespace), or right after `[`, `{`, `,` in flow style (YAML 1.2.2, 6.9.1 "Node Tags").
_TAG_START = re.compile(r"(?:\A|[\s\[{,])!")
# An anchor starts a node the same way, and a name follows the `&` at once (6.9.2 "Node Anchors").
_ANCHOR_START = re.compile(r"(?:\A|[\s\[{,])&[^\s\[\]{},]")
# A document marker starts a line (9.1.4, 9.1.2): `---` or `...`, then a space or the end of the line.
_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?:[ \t\r]|$)", re.MULTILINE)

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

PathPart = str | int


def render_path(parts: Sequence[PathPart]) -> str:
    """`hosts[3].mac` from ('hosts', 3, 'mac'); the stack-file reader (offline/program/stackfile.py) writes its paths with it too."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif text == "":
            text = part
        elif part.replace("_", "a").replace("-", "a").isalnum():
            text += f".{part}"
        else:
            text += f"[{json.dumps(part)}]"
    return text


def may_have_tags(text: str) -> bool:
    """False when no `!` in the text can start a tag (the common case: nothing more to read)."""
    return "!" in text and _TAG_START.search(text) is not None


def may_have_anchors(text: str) -> bool:
    """False when no `&` in the text can start an anchor (the common case: nothing more to read)."""
    return "&" in text and _ANCHOR_START.search(text) is not None


def _short(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!")


class _Frame:
    __slots__ = ("index", "is_map", "key", "path", "want_key")

    def __init__(self, is_map: bool, path: tuple[PathPart, ...]) -> None:
        self.is_map = is_map
        self.path = path
        self.want_key = True
        self.key: PathPart | None = None
        self.index = 0

    def child(self) -> tuple[PathPart, ...]:
        if not self.is_map:
            return (*self.path, self.index)
        if self.want_key or self.key is None:
            return self.path
        return (*self.path, self.key)

    def done(self, key_text: str | None) -> None:
        """One child node is complete (`key_text`: a scalar's text)."""
        if not self.is_map:
            self.index += 1
        elif self.want_key:
            self.key = key_text if key_text is not None else "<key>"
            self.want_key = False
        else:
            self.want_key = True


SHOWN_DEPTH = 8
"""Path parts named in a message; a deeper path (a value nested 200 lists deep) ends in `...`."""


def _where(label: str, path: tuple[PathPart, ...], line: int) -> str:
    shown = render_path(path[:SHOWN_DEPTH]) + ("..." if len(path) > SHOWN_DEPTH else "")
    return f"{label}: {shown} (line {line}): " if shown else f"{label} (line {line}): "


def find_tag_or_alias(text: str, label: str) -> str | None:
    """The message for the first tag other than the core ones, or the first alias, or else the first anchor, or None.

    The message names the file, the path of the entry in it and the line, like the stack-file
    reader's (components/ground/yamlv3.py): `hosts.yaml: hosts[3].mac (line 5): the YAML tag !custom ...`.
    """
    stack: list[_Frame] = []
    anchor: str | None = None
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            parent = stack[-1] if stack else None
            path = parent.child() if parent else ()
            line = event.start_mark.line + 1 if event.start_mark else 0
            if isinstance(event, yaml.AliasEvent):
                return (
                    f"{_where(label, path, line)}the alias *{event.anchor} repeats another entry: YAML anchors and aliases "
                    "are not allowed in inventory files (write the entry out)"
                )
            if isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if event.anchor and anchor is None:
                    anchor = (
                        f"{_where(label, path, line)}the anchor &{event.anchor}: YAML anchors and aliases are not allowed "
                        "in inventory files (remove it)"
                    )
                tag = event.tag
                if tag not in (None, "!") and tag not in CORE_TAGS:
                    return (
                        f"{_where(label, path, line)}the YAML tag {_short(tag)} has no JSON equivalent (inventory values "
                        "are strings, numbers, booleans, null, lists and mappings): remove the tag, or quote the value "
                        "to make it a string"
                    )
                if isinstance(event, yaml.ScalarEvent):
                    if parent:
                        parent.done(event.value)
                else:
                    stack.append(_Frame(isinstance(event, yaml.MappingStartEvent), path))
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                stack.pop()
                if stack:
                    stack[-1].done(None)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        at = f" (line {mark.line + 1})" if mark else ""
        return f"{label}{at}: not valid YAML: {error.problem or error.context}"
    return anchor


def second_document(text: str, label: str) -> str | None:
    """The message for a second YAML document in the text, naming its line, or None."""
    if _DOCUMENT_MARKER.search(text) is None:
        return None
    documents = 0
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents == 2:
                    line = event.start_mark.line + 1 if event.start_mark else 0
                    return (
                        f"{label} (line {line}): a second YAML document ('---'): an inventory file holds one document; "
                        "remove the '---' and merge what follows into the first"
                    )
    except yaml.YAMLError:
        return None
    return None


def describe_control_character(text: str, label: str, data: bytes | None = None) -> str | None:
    """`<file>: <entry> (line N): a NUL byte (U+0000) at column M: ...` for the first character YAML does not allow
    in the text (`data`: its UTF-8 bytes, where the caller has them), or None."""
    found = control_character(text, data)
    if found is None:
        return None
    line, column, what = found
    offset = sum(len(part) + 1 for part in text.split("\n", line - 1)[: line - 1]) + column - 1
    readable = text[:offset] + " " + text[offset + 1 :]  # libyaml stops at the character too: locate the entry without it
    return f"{_where(label, entry_at_line(readable, line, column), line)}{what} at column {column}: {CONTROL_CHARACTER_ADVICE}"


_YAML_RS_POSITION = re.compile(r"^YAML parse error at line (\d+), column (\d+)")


def entry_at_line(text: str, line: int, column: int = 0) -> tuple[PathPart, ...]:
    """The path of the innermost entry libyaml had reached at `line` (1-based), for a syntax error there; with
    `column`, at that column of the line."""
    stack: list[_Frame] = []
    last: tuple[PathPart, ...] = ()
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            mark = event.start_mark
            if mark is not None and (mark.line + 1, mark.column + 1 if column else 0) > (line, column):
                break
            parent = stack[-1] if stack else None
            path = parent.child() if parent else ()
            if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                if parent and not (parent.is_map and parent.want_key):
                    last = path
                if parent:
                    parent.done(event.value if isinstance(event, yaml.ScalarEvent) else None)
            elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                last = path
                stack.append(_Frame(isinstance(event, yaml.MappingStartEvent), path))
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                stack.pop()
                if stack:
                    stack[-1].done(None)
    except yaml.YAMLError:
        pass
    return last


def describe_syntax_error(text: str, label: str, message: str) -> str | None:
    """`<file>: <entry> (line N): not valid YAML: <problem> (column M)` from a yaml-rs parse error, whose own
    text is a multi-line excerpt; None when the message carries no position."""
    match = _YAML_RS_POSITION.match(message)
    if match is None:
        return None
    line, column = int(match.group(1)), int(match.group(2))
    problem = message.strip().splitlines()[-1].strip() if "\n" in message.strip() else message[match.end() :].strip()
    problem = problem or "syntax error"
    return f"{_where(label, entry_at_line(text, line), line)}not valid YAML: {problem} (column {column})"
