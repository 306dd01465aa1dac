"""`./hpcforge diff --stack S --against REF|FILE|DIR [--config FILE] [--acknowledge] [--squeue FILE --sinfo FILE]
[--format text|markdown] [--out FILE]`

The report goes to stdout (or `--out`), progress to stderr. Exit status, the gate (`gate`):
0 nothing worse than singleton-restart, or `--acknowledge` given; 1 the worst impact is outage or data-loss
(a refusal counts as an outage), or with live data Slurm nodes running jobs drain or restart, and
`--acknowledge` was not given; 2 configuration or usage errors.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from components.paths import PROJECT_ROOT

from ..live.impact import LiveDataError, jobs_at_risk, load_live, render_markdown, render_text
from ..program.engine import ProgramConfigError, run_program
from ..program.stackfile import StackFileError, read_stack_file, stack_path
from ..program.words import plural
from .base import BaseError, State, load_base
from .effects import Impact, rank
from .impact import assess
from .plan import Plan, make_plan
from .report import render

GATED = "outage"
"""The mildest severity that fails the gate without --acknowledge."""


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("diff", help="what a change does to the running site: plan, impact, gate (offline/diff/)")
    parser.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml (the head side)")
    parser.add_argument("--config", type=Path, help="the head side's stack file instead of Pulumi.<stack>.yaml")
    parser.add_argument(
        "--against",
        required=True,
        help="the base: a git ref (its own program is run), an `offline preview --json` file, or an `offline render` folder",
    )
    parser.add_argument("--acknowledge", action="store_true", help="the change's outage or data loss is intended: exit 0")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument("--out", type=Path, help="write the report here instead of stdout")
    live = parser.add_argument_group("live impact (optional): the running jobs on the nodes that drain or restart")
    live.add_argument("--squeue", type=Path, help="output of `squeue --json` on the running cluster")
    live.add_argument("--sinfo", type=Path, help="output of `sinfo --json` on the running cluster")


def gate(impact: Impact, acknowledged: bool, busy_nodes: set[str] | None = None) -> int:
    """1 when the change needs an acknowledgement it does not have: an outage or data loss, or (with live data)
    Slurm nodes with running jobs among those that drain or restart now.

    `busy_nodes`: the nodes the live view found running jobs on (offline/live/impact.py: `jobs_at_risk(live,
    impact.drained_nodes)`, wired by `--squeue/--sinfo`); None without live data."""
    if acknowledged:
        return 0
    if rank(impact.worst) >= rank(GATED):
        return 1
    return 1 if busy_nodes and busy_nodes & impact.drained_nodes else 0


def compute(args: argparse.Namespace, progress: bool = True) -> tuple[Plan, Impact]:
    def note(message: str) -> None:
        if progress:
            print(message, file=sys.stderr)

    started = time.perf_counter()
    base = load_base(args.against, args.stack, project=PROJECT_ROOT, progress=note)
    note(f"base: {len(base.resources)} resources ({time.perf_counter() - started:.1f} s)")
    path = args.config if args.config else stack_path(args.stack)
    mark = time.perf_counter()
    head = State.from_recorded(run_program(read_stack_file(path, name=args.stack), PROJECT_ROOT), f"{path.name} (working tree)")
    note(f"head: {len(head.resources)} resources ({time.perf_counter() - mark:.1f} s)")
    mark = time.perf_counter()
    plan = make_plan(base, head)
    impact = assess(plan)
    note(f"plan and impact: {time.perf_counter() - mark:.2f} s")
    return plan, impact


def run(args: argparse.Namespace) -> int:
    try:
        plan, impact = compute(args)
    except (StackFileError, BaseError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ProgramConfigError as error:
        print("error: invalid hpcforge configuration:", file=sys.stderr)
        for message in error.messages:
            print(f"  {message}", file=sys.stderr)
        return 2
    markdown = args.format == "markdown"
    report = render(plan, impact, markdown=markdown)
    busy: set[str] | None = None
    if args.squeue or args.sinfo:
        try:
            if not (args.squeue and args.sinfo):
                raise LiveDataError("give both --squeue FILE and --sinfo FILE")
            at_risk = jobs_at_risk(load_live(args.squeue, args.sinfo), impact.drained_nodes)
        except LiveDataError as error:
            print(f"error: live impact: {error}", file=sys.stderr)
            return 2
        busy = set(at_risk.busy_nodes)
        report += "\n" + (render_markdown if markdown else render_text)(at_risk)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
        print(f"wrote the report to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(report)
    status = gate(impact, args.acknowledge, busy)
    if status and busy and busy & impact.drained_nodes and rank(impact.worst) < rank(GATED):
        print(
            f"gate: {plural(len(busy & impact.drained_nodes), 'Slurm node')} with running jobs"
            f" {'drains or restarts' if len(busy & impact.drained_nodes) == 1 else 'drain or restart'};"
            " pass --acknowledge if that is intended",
            file=sys.stderr,
        )
    elif status:
        print(f"gate: the worst impact is {impact.worst}; pass --acknowledge if that is intended", file=sys.stderr)
    elif rank(impact.worst) >= rank(GATED):
        print(f"gate: the worst impact is {impact.worst}, acknowledged", file=sys.stderr)
    return status
