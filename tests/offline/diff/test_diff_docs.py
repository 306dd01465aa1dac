"""docs/operations.md shows real `offline diff` output: the add-a-nodeset example is generated here from the corpus
case `add-gpu-pool` (tests/offline/diff/diff_corpus.py) and must match the block after `<!-- offline-diff: add-gpu-pool -->`;
the pull-request comment after `<!-- offline-diff-comment: add-gpu-pool -->` is what the command prints for the same
change against a deployed state (a `pulumi stack export` shaped like the CLI's) that drifted from main.

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
from tests.offline.diff.stack_exports import edit, export_of
from tests.offline.diff.test_diff_corpus import _site, _write, base_prod, diff_case  # noqa: F401  (base_prod: the fixture)

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


COMMENT = "<!-- offline-diff-comment: add-gpu-pool -->"


def test_operations_guide_shows_the_comment_the_command_writes(
    base_prod: RecordedStack,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import json

    from offline.cli import main

    case = next(c for c in CASES if c.id == "add-gpu-pool")
    site = _site()
    case.edit(site)
    head = _write(site, tmp_path / "head")
    (tmp_path / "main.json").write_text(json.dumps({"stack": "prod", "resources": [r.to_json() for r in base_prod.resources]}))
    export = export_of(base_prod)
    edit(export, "slurm/nodeset-gpu-h100", lambda inputs: inputs["spec"].update(replicas=3))
    (tmp_path / "prod-state.json").write_text(json.dumps(export))
    out = tmp_path / "comment.md"
    monkeypatch.chdir(tmp_path)
    args = ["diff", "--stack", "prod", "--config", str(head), "--against", "prod-state.json", "--drift-against", "main.json"]
    assert main([*args, "--format", "markdown", "--out", str(out)]) == 0
    comment = out.read_text()
    assert str(tmp_path) not in comment
    text = DOC.read_text()
    start = text.index("````markdown\n", text.index(COMMENT)) + len("````markdown\n")
    end = text.index("````\n", start)
    if os.environ.get("HPCFORGE_UPDATE_DOCS") == "1":
        DOC.write_text(text[:start] + comment + text[end:])
        return
    assert text[start:end] == comment, "docs/operations.md: the example comment is stale; rerun with HPCFORGE_UPDATE_DOCS=1"
