"""`./hpcforge live-impact`: the running jobs on Slurm nodes that a change drains or restarts.

    ./hpcforge live-impact --nodes 'gpu-a100-[0-3]' --squeue squeue.json --sinfo sinfo.json [--max-unavailable N]
        [--observed-at WHEN] [--format markdown]
    SLURM_JWT=... ./hpcforge live-impact --nodes gpu1 --slurmrestd http://slurm-restapi:6820 [--user NAME]

The node names come from a change's impact (`offline diff` names the Slurm nodes that drain or restart);
the JSON from `squeue --json` and `sinfo --json`, or from slurmrestd (token in SLURM_JWT, never on the
command line). With `--max-unavailable N` the nodes drain N at a time in the operator's order
(offline/live/drains.py), with the figures per batch. offline/live/impact.py says what the figures mean.
Exit 0 with a report, 2 when the input cannot be read (warnings, e.g. a newer data_parser, go to stderr too).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from .drains import Drain
from .impact import jobs_at_risk, render_markdown, render_text
from .slurm_json import LiveDataError, expand, fetch_live, load_live

TOKEN_VARIABLE = "SLURM_JWT"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    live = commands.add_parser("live-impact", help="running Slurm jobs and GPU-hours on nodes that drain or restart")
    live.add_argument(
        "--nodes", action="append", required=True, help="Slurm node names or hostlists, e.g. 'gpu[1-4]' (repeatable)"
    )
    live.add_argument("--squeue", type=Path, help="output of `squeue --json`")
    live.add_argument("--sinfo", type=Path, help="output of `sinfo --json` (or `scontrol show nodes --json`)")
    live.add_argument("--slurmrestd", metavar="URL", help=f"slurmrestd base URL instead of files (token in ${TOKEN_VARIABLE})")
    live.add_argument("--user", help="X-SLURM-USER-NAME for slurmrestd (a token of SlurmUser for another user)")
    live.add_argument(
        "--observed-at",
        type=observed_at,
        help="when Slurm answered, Unix seconds or ISO 8601 (default: the jobs' own last_update)",
    )
    live.add_argument("--max-unavailable", type=int, help="the nodes drain this many at a time, in the operator's order")
    live.add_argument("--format", choices=("text", "markdown"), default="text")


def observed_at(text: str) -> float:
    """`--observed-at`: Unix seconds, or an ISO 8601 time (`2026-11-27T08:00:30Z`; UTC when it names no zone)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected Unix seconds or an ISO 8601 time") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def run(args: argparse.Namespace) -> int:
    try:
        if args.slurmrestd:
            if args.squeue or args.sinfo:
                raise LiveDataError("give --slurmrestd or --squeue and --sinfo, not both")
            token = os.environ.get(TOKEN_VARIABLE)
            if not token:
                raise LiveDataError(f"--slurmrestd needs a token in ${TOKEN_VARIABLE} (`scontrol token`)")
            live = fetch_live(args.slurmrestd, token, user=args.user, observed_at=args.observed_at)
        else:
            if not (args.squeue and args.sinfo):
                raise LiveDataError("give --squeue FILE and --sinfo FILE (or --slurmrestd URL)")
            live = load_live(args.squeue, args.sinfo, observed_at=args.observed_at)
    except LiveDataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        if args.max_unavailable:
            if args.max_unavailable < 1:
                raise LiveDataError("--max-unavailable: at least 1")
            nodes = tuple(name for expression in args.nodes for name in expand(expression))
            drain = Drain("the nodes", "roll", nodes, len(nodes), args.max_unavailable)
            impact = jobs_at_risk(live, drains=[drain])
        else:
            impact = jobs_at_risk(live, args.nodes)
    except LiveDataError as error:
        print(f"error: --nodes: {error}", file=sys.stderr)
        return 2
    for warning in live.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print((render_markdown if args.format == "markdown" else render_text)(impact), end="")
    return 0
