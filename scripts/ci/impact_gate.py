"""The change-impact gate of the pull-request and deploy workflows (docs/operations.md, "Change impact and the gate").

    python scripts/ci/impact_gate.py --against BASE [--stack dev --stack prod] [--label-acknowledged true|false]
        [--body-file PR_BODY.txt] [--reason TEXT] [--summary FILE] [--comment FILE] [--command ./hpcforge]

For each stack it runs `./hpcforge diff --stack S --against BASE --format markdown --out FILE`, with
`--acknowledge` when the change is acknowledged: the pull request carries the label `impact-acknowledged`
(--label-acknowledged true), or its description has a line `Impact-Acknowledged: <reason>` (--body-file),
or a deploy was started by hand with a reason (--reason). It writes one markdown report of every stack
(the job summary, --summary, appended) and the same report with a hidden marker for the pull-request
comment that later runs edit in place (--comment).

Exit codes are the diff's: 0 when every stack is fine or acknowledged, 1 when a stack is gated (outage
or data loss, or nodes with running jobs restarted, not acknowledged), 2 when a diff could not run
(invalid configuration, unknown base); the highest wins.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

LABEL = "impact-acknowledged"
TRAILER = re.compile(r"^\s*Impact-Acknowledged:[ \t]*(?P<reason>\S.*?)\s*$", re.MULTILINE | re.IGNORECASE)
MARKER = "<!-- hpcforge-impact -->"
STATUS = {0: "fine", 1: "GATED: not acknowledged", 2: "ERROR: the diff could not run"}


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


def run_stack(command: list[str], stack: str, against: str, acknowledged: bool) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "impact.md"
        argv = [*command, "diff", "--stack", stack, "--against", against, "--format", "markdown", "--out", str(out)]
        if acknowledged:
            argv.append("--acknowledge")
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        report = out.read_text() if out.is_file() else ""
    if not report.strip():
        report = "```\n" + (result.stderr.strip() or result.stdout.strip() or "(no output)") + "\n```\n"
    return result.returncode, report


def build_report(results: dict[str, tuple[int, str]], against: str, acknowledged: str | None) -> str:
    worst = max((code for code, _ in results.values()), default=0)
    lines = [
        f"## Change impact against `{against}`: {STATUS.get(worst, f'exit {worst}')}",
        "",
        f"_{acknowledged}._"
        if acknowledged
        else f"_Not acknowledged. To accept an outage, data loss or restarted nodes with running jobs, add the label "
        f"`{LABEL}` or a line `Impact-Acknowledged: <reason>` to the pull-request description._",
    ]
    for stack, (code, report) in results.items():
        lines += ["", f"### `{stack}`: {STATUS.get(code, f'exit {code}')}", "", report.rstrip()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, help="git ref of the base (what is deployed, or the PR's base)")
    parser.add_argument("--stack", action="append", default=[], help="stack (repeatable; default dev and prod)")
    parser.add_argument("--label-acknowledged", choices=("true", "false"), default="false")
    parser.add_argument("--body-file", type=Path, help="the pull request's description")
    parser.add_argument("--reason", help="acknowledgement given when a deploy is started by hand")
    parser.add_argument("--summary", type=Path, help="append the report here ($GITHUB_STEP_SUMMARY)")
    parser.add_argument("--comment", type=Path, help="write the report with the comment marker here")
    parser.add_argument("--command", default="./hpcforge", help="how to run hpcforge (default ./hpcforge)")
    args = parser.parse_args(argv)

    body = args.body_file.read_text(errors="replace") if args.body_file and args.body_file.is_file() else ""
    acknowledged = acknowledgement(args.label_acknowledged == "true", body, args.reason)
    command = args.command.split()
    results = {
        stack: run_stack(command, stack, args.against, acknowledged is not None) for stack in args.stack or ["dev", "prod"]
    }
    report = build_report(results, args.against, acknowledged)
    print(report, end="")
    if args.summary:
        with args.summary.open("a") as handle:
            handle.write(report)
    if args.comment:
        args.comment.write_text(f"{MARKER}\n{report}")
    return max(code for code, _ in results.values())


if __name__ == "__main__":
    sys.exit(main())
