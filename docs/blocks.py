"""Generated blocks in the hand-written docs: find them, and write each anew from what the generator produces.

A generated block is everything between a begin marker and its end marker, on lines of their own, at the
marker's indent (a block inside a numbered step is indented like the step's text):

    <!-- generated: render prod ConfigMap slurm/slurm-config-extra data:gres.conf -->
    ```text
    ...what the generator wrote...
    ```
    <!-- end generated -->

The words after `generated:` name the producer and its arguments (docs/examples.py). The generator owns the
fenced block between the markers, fence included; the prose around it is hand-written and stays. GitHub shows
neither marker.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

BEGIN = re.compile(r"^(?P<indent>[ \t]*)<!-- generated: (?P<spec>[^\n]*?) -->[ \t]*$")
END = re.compile(r"^[ \t]*<!-- end generated -->[ \t]*$")


class BlockError(ValueError):
    """A marker without its end, an end without its marker, or a producer that cannot make the block."""


@dataclass(frozen=True)
class Block:
    """What a producer makes: the fenced block's language and its text (without the fence)."""

    lang: str
    text: str


@dataclass(frozen=True)
class Marked:
    """One generated block of a file: its marker's words, its indent, and the lines it spans (0-based, half-open:
    `start` is the first line after the begin marker, `end` the end marker's line)."""

    spec: str
    indent: str
    line: int
    """The begin marker's line number (1-based), for messages."""
    start: int
    end: int


def find(text: str, where: str = "") -> list[Marked]:
    """Every generated block of `text`, in order; a BlockError for a marker without its end (or the reverse)."""
    lines = text.split("\n")
    found: list[Marked] = []
    open_at: tuple[int, re.Match[str]] | None = None
    for number, line in enumerate(lines):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_at is not None:
                raise BlockError(f"{where}:{number + 1}: a generated block begins inside the one of line {open_at[0] + 1}")
            open_at = (number, begin)
        elif end:
            if open_at is None:
                raise BlockError(f"{where}:{number + 1}: `<!-- end generated -->` without its begin marker")
            start, match = open_at
            found.append(Marked(match.group("spec").strip(), match.group("indent"), start + 1, start + 1, number))
            open_at = None
    if open_at is not None:
        raise BlockError(f"{where}:{open_at[0] + 1}: the generated block has no `<!-- end generated -->`")
    return found


def fenced(block: Block, indent: str) -> list[str]:
    """The block as Markdown lines at `indent`: a fence longer than any backtick run in the text (a block that
    quotes a fenced block stays one block)."""
    runs = [len(run) for run in re.findall(r"`+", block.text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    body = block.text.rstrip("\n").split("\n") if block.text.strip() else []
    return [f"{indent}{fence}{block.lang}", *(f"{indent}{line}" if line else "" for line in body), f"{indent}{fence}"]


def refresh(text: str, produce: Callable[[str], Block], where: str = "") -> str:
    """`text` with the body of every generated block written anew by `produce(spec)`."""
    lines = text.split("\n")
    out: list[str] = []
    last = 0
    for marked in find(text, where):
        try:
            block = produce(marked.spec)
        except BlockError as error:
            raise BlockError(f"{where}:{marked.line}: {error}") from error
        out += lines[last : marked.start]
        out += fenced(block, marked.indent)
        last = marked.end
    out += lines[last:]
    return "\n".join(out)


def body(text: str, marked: Marked) -> str:
    """The committed lines of one generated block (fence included)."""
    return "\n".join(text.split("\n")[marked.start : marked.end])


__all__ = ["BEGIN", "END", "Block", "BlockError", "Marked", "body", "fenced", "find", "refresh"]
