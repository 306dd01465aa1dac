"""The change-impact gate of the pull-request and deploy workflows (docs/operations.md, "Change impact and the gate").

    python scripts/ci/impact_gate.py --against BASE [--state STACK=FILE ...] [--no-state-reason TEXT]
        [--stack dev --stack prod] [--label-acknowledged true|false] [--body-file PR_BODY.txt] [--reason TEXT]
        [--summary FILE] [--comment FILE] [--reports DIR] [--command ./hpcforge]

For each stack it runs `./hpcforge diff --stack S --format markdown --out FILE --json FILE --max-chars N`:

- against the stack's deployed state where `--state S=FILE` gives it (a `pulumi stack export` file), with
  `--drift-against BASE` so that the report shows the change and the drift of the deployed state from BASE;
- else against BASE (the pull request's merge base, or the commit before a push), and the report says so, with
  `--no-state-reason` (why there is no deployed state: no credentials, a fork).

`--acknowledge` is added when the change is acknowledged: the pull request carries the label `impact-acknowledged`
(--label-acknowledged true), or its description has a line `Impact-Acknowledged: <reason>` (--body-file), or a deploy
was started by hand with a reason (--reason). It writes one markdown report of every stack (the job summary,
--summary, appended), the same report with a hidden marker for the pull-request comment that later runs edit in place
(--comment), cut to GitHub's 65,536-character limit with what was cut said, and keeps each stack's JSON and markdown
report in --reports (the workflow's `impact-report` artifact).

Exit codes are the diff's: 0 when every stack is fine or acknowledged, 1 when a stack is gated (an outage or data
loss, or a drain that never finishes, not acknowledged), 2 when a diff could not run (invalid configuration, unknown
base); the highest wins. Each stack's section says why it is gated, or what was acknowledged, from the JSON report's
`gate` (offline/diff/report.schema.json).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LABEL = "impact-acknowledged"
TRAILER = re.compile(r"^\s*Impact-Acknowledged:[ \t]*(?P<reason>\S.*?)\s*$", re.MULTILINE | re.IGNORECASE)
MARKER = "<!-- hpcforge-impact -->"
STATUS = {0: "fine", 1: "GATED: not acknowledged", 2: "ERROR: the diff could not run"}
COMMENT_LIMIT = 65_536
"""GitHub's limit on an issue comment's body, in characters."""
HEADROOM = 2_000
"""Kept free in a comment for the heading, each stack's line and the cut note."""


def acknowledgement(label: bool, body: str, reason: str | None) -> str | None:
    """Why the change is acknowledged (None when it is not): the dispatch reason, the description's line, the label."""
    if reason and reason.strip():
        return f"acknowledged when the deploy was started: {reason.strip()}"
    match = TRAILER.search(body.replace("\r\n", "\n"))
    if match:
        return f"acknowledged in the description: {match['reason']}"
    if label:
        return f"acknowledged by the label `{LABEL}`"
    return None


def run_stack(
    command: list[str],
    stack: str,
    against: str,
    acknowledged: bool,
    *,
    state: Path | None = None,
    max_chars: int = COMMENT_LIMIT,
    reports: Path | None = None,
) -> tuple[int, str, dict[str, object] | None]:
    """(exit status, markdown report, JSON report or None) of one stack's diff."""
    with tempfile.TemporaryDirectory() as scratch:
        out, data = Path(scratch) / "impact.md", Path(scratch) / "impact.json"
        base = ["--against", str(state), "--drift-against", against] if state else ["--against", against]
        argv = [*command, "diff", "--stack", stack, *base, "--format", "markdown", "--out", str(out)]
        argv += ["--json", str(data), "--max-chars", str(max_chars)]
        if acknowledged:
            argv.append("--acknowledge")
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        report = out.read_text() if out.is_file() else ""
        try:
            parsed = json.loads(data.read_text()) if data.is_file() else None
        except ValueError:
            parsed = None
        if reports is not None:
            reports.mkdir(parents=True, exist_ok=True)
            for path, name in ((out, f"{stack}.md"), (data, f"{stack}.json")):
                if path.is_file():
                    shutil.copy(path, reports / name)
    if not report.strip():
        report = "```\n" + (result.stderr.strip() or result.stdout.strip() or "(no output)") + "\n```\n"
    return result.returncode, report, parsed


def base_line(against: str, state: Path | None, no_state_reason: str) -> str:
    if state is not None:
        return f"_Base: the deployed state (`pulumi stack export`), with its drift from `{against}`._"
    why = no_state_reason or "the deployed state was not exported"
    return f"_Base: `{against}`, not the deployed state ({why})._"


def build_report(
    results: dict[str, tuple[int, str, dict[str, object] | None]],
    against: str,
    acknowledged: str | None,
    states: dict[str, Path] | None = None,
    no_state_reason: str = "",
) -> str:
    worst = max((code for code, _, _ in results.values()), default=0)
    lines = [
        f"## Change impact against `{against}`: {STATUS.get(worst, f'exit {worst}')}",
        "",
        f"_{acknowledged}._"
        if acknowledged
        else f"_Not acknowledged. To accept an outage, data loss or a drain that never finishes, add the label "
        f"`{LABEL}` or a line `Impact-Acknowledged: <reason>` to the pull-request description._",
    ]
    for stack, (code, report, data) in results.items():
        state = (states or {}).get(stack)
        lines += ["", f"### `{stack}`: {STATUS.get(code, f'exit {code}')}", "", base_line(against, state, no_state_reason)]
        gate = data.get("gate") if isinstance(data, dict) else None
        if isinstance(gate, dict) and gate.get("reasons"):
            lines.append(f"_Gate ({gate.get('status')}): {'; '.join(str(r) for r in gate['reasons'])}._")
        lines += ["", report.rstrip()]
    return "\n".join(lines) + "\n"


def fit_comment(report: str, limit: int = COMMENT_LIMIT) -> str:
    """`MARKER` and the report, at most `limit` characters: what does not fit is cut, and the comment says so."""
    comment = f"{MARKER}\n{report}"
    if len(comment) <= limit:
        return comment
    note = "\n\n_Cut to fit GitHub's 65,536-character comment limit: the rest is in the job summary and the `impact-report` artifact._\n"
    return comment[: limit - len(note)].rsplit("\n", 1)[0] + note


def _states(values: list[str]) -> dict[str, Path]:
    states: dict[str, Path] = {}
    for value in values:
        stack, sep, path = value.partition("=")
        if not sep or not stack or not path:
            raise SystemExit(f"--state {value!r}: expected STACK=FILE")
        if Path(path).is_file():
            states[stack] = Path(path)
    return states


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, help="git ref of the base (the PR's merge base, or the commit before a push)")
    parser.add_argument("--state", action="append", default=[], metavar="STACK=FILE", help="a stack's `pulumi stack export`")
    parser.add_argument("--no-state-reason", default="", help="why a stack has no deployed state (said in the comment)")
    parser.add_argument("--stack", action="append", default=[], help="stack (repeatable; default dev and prod)")
    parser.add_argument("--label-acknowledged", choices=("true", "false"), default="false")
    parser.add_argument("--body-file", type=Path, help="the pull request's description")
    parser.add_argument("--reason", help="acknowledgement given when a deploy is started by hand")
    parser.add_argument("--summary", type=Path, help="append the report here ($GITHUB_STEP_SUMMARY)")
    parser.add_argument("--comment", type=Path, help="write the report with the comment marker here")
    parser.add_argument("--reports", type=Path, help="keep each stack's JSON and markdown report here")
    parser.add_argument("--command", default="./hpcforge", help="how to run hpcforge (default ./hpcforge)")
    args = parser.parse_args(argv)

    body = args.body_file.read_text(errors="replace") if args.body_file and args.body_file.is_file() else ""
    acknowledged = acknowledgement(args.label_acknowledged == "true", body, args.reason)
    command = args.command.split()
    stacks = args.stack or ["dev", "prod"]
    states = _states(args.state)
    budget = (COMMENT_LIMIT - HEADROOM) // len(stacks)
    results = {
        stack: run_stack(
            command,
            stack,
            args.against,
            acknowledged is not None,
            state=states.get(stack),
            max_chars=budget,
            reports=args.reports,
        )
        for stack in stacks
    }
    report = build_report(results, args.against, acknowledged, states, args.no_state_reason)
    print(report, end="")
    if args.summary:
        with args.summary.open("a") as handle:
            handle.write(report)
    if args.comment:
        args.comment.write_text(fit_comment(report))
    return max(code for code, _, _ in results.values())


if __name__ == "__main__":
    sys.exit(main())
