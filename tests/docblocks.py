"""The fenced blocks of the operator docs (docs/operations.md, docs/layers/*.md) and where each shell block runs.

Every shell block carries a tag on the line before its fence (GitHub shows none of it):

    <!-- runs: offline ID -->        run here by a test, without a cluster (`./hpcforge ...`)
    <!-- runs: real-daemon ID -->    run by a test against the real daemons of the tier (Slurm 26.05.3, MariaDB, ...)
    <!-- runs: cluster-only [ID] --> needs a live cluster; its names are checked against the render (test_docs_commands)

The tag may share its line with a runbook marker (`<!-- runbook: db-stop --> <!-- runs: real-daemon -->`): the
runbook's id is then the block's. `block(ID)` is the exact text a test runs (dedented). Blocks between
`<!-- generated: ... -->` markers are the docs generator's (docs/blocks.py), not commands to run, and are left out.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import REPO

TIERS = ("offline", "real-daemon", "cluster-only")
SHELL = ("sh", "bash", "shell", "console")
TAG = re.compile(r"<!-- runs: (?P<tier>\S+?)(?: (?P<id>\S+?))? -->")
RUNBOOK = re.compile(r"<!-- runbook: ([a-z0-9-]+) -->")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<lang>\S*)[ \t]*$")


def operator_docs(root: Path = REPO) -> list[Path]:
    return [root / "docs" / "operations.md", *sorted((root / "docs" / "layers").glob("*.md"))]


@dataclass(frozen=True)
class Fenced:
    path: Path
    line: int
    """The opening fence's line (1-based)."""
    lang: str
    text: str
    """The block's lines, dedented by the fence's indent."""
    tag_line: str
    """The line before the fence."""

    @property
    def where(self) -> str:
        try:
            return f"{self.path.relative_to(REPO)}:{self.line}"
        except ValueError:
            return f"{self.path}:{self.line}"

    @property
    def shell(self) -> bool:
        return self.lang in SHELL

    @property
    def tier(self) -> str | None:
        match = TAG.search(self.tag_line)
        return match.group("tier") if match else None

    @property
    def id(self) -> str | None:
        match = TAG.search(self.tag_line)
        if match and match.group("id"):
            return match.group("id")
        runbook = RUNBOOK.search(self.tag_line)
        return runbook.group(1) if runbook else None


def fences_of(text: str, path: Path) -> list[Fenced]:
    """Every fenced block of a page but the generated ones."""
    lines = text.split("\n")
    found: list[Fenced] = []
    generated = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<!-- generated:" in line:
            generated = True
        elif "<!-- end generated -->" in line:
            generated = False
        match = FENCE.match(line)
        if match is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == match.group("fence")), None)
        if end is None:
            raise AssertionError(f"{path}:{i + 1}: the fence is never closed")
        if not generated:
            body = textwrap.dedent("\n".join(lines[i + 1 : end])) + "\n"
            found.append(Fenced(path, i + 1, match.group("lang"), body, lines[i - 1] if i else ""))
        i = end + 1
    return found


def fences(paths: list[Path] | None = None) -> list[Fenced]:
    return [f for path in paths or operator_docs() for f in fences_of(path.read_text(encoding="utf-8"), path)]


def problems(found: list[Fenced]) -> list[str]:
    """What the tagging rules refuse: a fence without a language, a shell block without a tag (or with an unknown
    tier), an offline or real-daemon block without an id, an id given twice."""
    refused: list[str] = []
    seen: dict[str, str] = {}
    for fenced in found:
        if not fenced.lang:
            refused.append(f"{fenced.where}: a fence without a language (```sh, ```text, ```yaml ...)")
            continue
        if not fenced.shell:
            continue
        if fenced.tier is None:
            refused.append(f"{fenced.where}: a shell block without `<!-- runs: offline|real-daemon|cluster-only ID -->`")
        elif fenced.tier not in TIERS:
            refused.append(f"{fenced.where}: unknown tier {fenced.tier!r} (one of {', '.join(TIERS)})")
        elif fenced.tier != "cluster-only" and not fenced.id:
            refused.append(f"{fenced.where}: a {fenced.tier} block needs an id, for the test that runs it")
        if fenced.id:
            if fenced.id in seen:
                refused.append(f"{fenced.where}: id {fenced.id!r} is also {seen[fenced.id]}'s")
            seen[fenced.id] = fenced.where
    return refused


def shell_blocks() -> list[Fenced]:
    return [f for f in fences() if f.shell]


def block(block_id: str) -> str:
    """The text of the tagged shell block `block_id` (exactly one)."""
    found = [f for f in shell_blocks() if f.id == block_id]
    if len(found) != 1:
        raise AssertionError(f"{len(found)} shell blocks of the operator docs are tagged {block_id!r}, not one")
    return found[0].text


__all__ = ["SHELL", "TAG", "TIERS", "Fenced", "block", "fences", "fences_of", "operator_docs", "problems", "shell_blocks"]
