"""`offline diff` examples for docs/operations.md: the report of a variant against prod, and the pull-request comment
for it against a deployed state that drifted from main.

- `diff VARIANT`: the text report of the variant (head) against prod laid out the same way (base), labelled as
  `./hpcforge diff --stack prod --against origin/main` labels them when run on the edited working tree;
- `diff-comment VARIANT`: what `./hpcforge diff --format markdown --against prod-state.json --drift-against
  main.json` writes, where prod-state.json is prod's deployed state with one drift (NodeSet gpu-h100 scaled to 3 by
  hand) and main.json is `./hpcforge preview --json` of main. No Pulumi CLI runs here, so the state file is built
  from the recorded program the way tests/offline/diff/stack_exports.py builds the tests' state files (the
  apitype `pulumi stack export` writes); that builder is used as it is.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

from docs.blocks import Block, BlockError
from docs.sources import Sources, variant

BASE_LABEL = "origin/main"


def diff_report(sources: Sources, args: list[str]) -> Block:
    from offline.diff.base import State
    from offline.diff.impact import assess
    from offline.diff.plan import make_plan
    from offline.diff.report import render

    if len(args) != 1:
        raise BlockError("diff VARIANT")
    spec = variant(args[0])
    base = sources.run(f"{spec.stack}-copy")
    head = sources.run(args[0])
    plan = make_plan(State.from_recorded(base, spec.stack), State.from_recorded(head, "edited"))
    plan.base, plan.head = BASE_LABEL, f"Pulumi.{spec.stack}.yaml (working tree)"
    return Block("text", render(plan, assess(plan)))


def diff_comment(sources: Sources, args: list[str]) -> Block:
    from offline.cli import main
    from tests.offline.diff.stack_exports import edit, export_of

    if len(args) != 1:
        raise BlockError("diff-comment VARIANT")
    spec = variant(args[0])
    base = sources.run(f"{spec.stack}-copy")
    head = sources.stack_file(args[0])
    with tempfile.TemporaryDirectory(prefix="hpcforge-docs-diff-") as folder:
        work = Path(folder)
        main_json = {"stack": spec.stack, "resources": [r.to_json() for r in base.resources]}
        (work / "main.json").write_text(json.dumps(main_json))
        export = export_of(base)
        edit(export, "slurm/nodeset-gpu-h100", lambda inputs: inputs["spec"].update(replicas=3))
        (work / f"{spec.stack}-state.json").write_text(json.dumps(export))
        out = work / "comment.md"
        here = Path.cwd()
        os.chdir(work)  # the report names its inputs as given: relative names, as in the workflow
        args = ["diff", "--stack", spec.stack, "--config", str(head), "--against", f"{spec.stack}-state.json"]
        args += ["--drift-against", "main.json", "--format", "markdown", "--out", str(out)]
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = main(args)
        finally:
            os.chdir(here)
        if code != 0:
            raise BlockError(f"./hpcforge diff of {args[0]} exited {code}")
        text = out.read_text(encoding="utf-8")
    if str(sources.tmp) in text or folder in text:
        raise BlockError("the comment names a temporary path")
    return Block("markdown", text)


__all__ = ["BASE_LABEL", "diff_comment", "diff_report"]
