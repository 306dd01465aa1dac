"""docs/operations.md shows real `offline diff` output: the add-a-nodeset example is generated here from the corpus
case `add-gpu-pool` (tests/offline/diff/diff_corpus.py) and must match the block after `<!-- offline-diff: add-gpu-pool -->`.

HPCFORGE_UPDATE_DOCS=1 rewrites the block instead of failing (say why in the commit message)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from offline.diff.report import render
from offline.program.engine import RecordedStack
from tests.helpers import REPO
from tests.offline.diff.diff_corpus import CASES
from tests.offline.diff.test_diff_corpus import base_prod, diff_case  # noqa: F401  (base_prod: the fixture)

DOC = REPO / "docs" / "operations.md"
MARKER = "<!-- offline-diff: add-gpu-pool -->"
INDENT = "   "


def _block(text: str) -> tuple[int, int]:
    """Start and end offsets of the fenced block's body after the marker."""
    start = text.index(MARKER)
    fence = text.index(f"{INDENT}```text\n", start) + len(f"{INDENT}```text\n")
    end = text.index(f"{INDENT}```\n", fence)
    return fence, end


def test_operations_guide_shows_the_diff_the_add_nodeset_example_produces(
    base_prod: RecordedStack,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = next(c for c in CASES if c.id == "add-gpu-pool")
    plan, impact, _ = diff_case(case, base_prod, tmp_path, monkeypatch)
    plan.base, plan.head = "origin/main", "Pulumi.prod.yaml (working tree)"
    report = render(plan, impact)
    expected = "".join(f"{INDENT}{line}\n" if line else "\n" for line in report.rstrip("\n").split("\n"))
    text = DOC.read_text()
    start, end = _block(text)
    if os.environ.get("HPCFORGE_UPDATE_DOCS") == "1":
        DOC.write_text(text[:start] + expected + text[end:])
        return
    assert re.sub(r"[ \t]+\n", "\n", text[start:end]) == re.sub(r"[ \t]+\n", "\n", expected), (
        "docs/operations.md: the offline diff example is stale; rerun with HPCFORGE_UPDATE_DOCS=1"
    )
