"""`python -m offline diff --stack S --against REF|FILE|DIR [--config FILE] [--acknowledge] [--format text|markdown] [--out FILE]`

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

from ..engine import ProgramConfigError, run_program
from ..stackfile import PROJECT_ROOT, StackFileError, read_stack_file, stack_path
from .base import BaseError, State, load_base
from .impact import Impact, assess, rank
from .plan import Plan, make_plan
from .report import render

GATED = "outage"
"""The mildest severity that fails the gate without --acknowledge."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
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


def gate(impact: Impact, acknowledged: bool, busy_nodes: set[str] | None = None) -> int:
    """1 when the change needs an acknowledgement it does not have: an outage or data loss, or (with live data)
    Slurm nodes with running jobs among those that drain or restart now.

    `busy_nodes`: the nodes the live view found running jobs on (offline/live_impact.py: `jobs_at_risk(live,
    impact.drained_nodes)`, wired by `--squeue-json/--sinfo-json`); None without live data."""
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


def run_diff(args: argparse.Namespace) -> int:
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
    report = render(plan, impact, markdown=args.format == "markdown")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
        print(f"wrote the report to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(report)
    status = gate(impact, args.acknowledge)
    if status:
        print(f"gate: the worst impact is {impact.worst}; pass --acknowledge if that is intended", file=sys.stderr)
    elif rank(impact.worst) >= rank(GATED):
        print(f"gate: the worst impact is {impact.worst}, acknowledged", file=sys.stderr)
    return status
