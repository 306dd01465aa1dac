"""`./hpcforge diff --stack S --against REF|FILE|DIR [--drift-against REF] [--config FILE] [--acknowledge]
[--squeue FILE --sinfo FILE [--observed-at WHEN]] [--format text|markdown|json] [--out FILE] [--json FILE] [--max-chars N]`

`./hpcforge diff --verify PREDICTION.json --observed DIR [--format text|markdown|json] [--out FILE]` after a deploy:
each predicted effect seen, not seen or unpredicted (offline/diff/verify.py).

The report goes to stdout (or `--out`), progress and the gate's words to stderr. Exit status, the gate (`gate`):
0 nothing worse than singleton-restart, or `--acknowledge` given; 1 the worst impact is outage, unassessed (a change no
rule answers for: it fails closed) or data loss (a refusal counts as an outage), or with live data a drain that never finishes (a job without a time limit on a node that must
drain), and `--acknowledge` was not given; 2 configuration, input or usage errors. A drain that waits for running jobs
does not gate: the operator deletes a pod only once its node is drained.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.paths import PROJECT_ROOT

from ..live.command import observed_at
from ..live.impact import LiveImpact, headline, jobs_at_risk, notes, render_markdown, render_text, source_line
from ..live.slurm_json import LiveDataError, load_live
from ..program.engine import ProgramConfigError
from ..program.recording import reuse_or_run
from ..program.stackfile import StackFileError, read_stack_file, stack_path
from .base import BaseError, State, load_base
from .effects import UNASSESSED, Impact, rank
from .impact import assess
from .naming import resource_name, what_changed
from .plan import Plan, make_plan
from .report import GITHUB_COMMENT_LIMIT, render_json
from .report import render_markdown as report_markdown
from .report import render_text as report_text
from .stack_export import fill_encrypted
from .verdicts import build, refresh_summary
from .verify import predictions, run_verify

GATED = "outage"
"""The mildest severity that fails the gate without --acknowledge."""


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("diff", help="what a change does to the running site: plan, impact, gate (offline/diff/)")
    parser.add_argument("--stack", help="stack name: reads Pulumi.<stack>.yaml (the head side)")
    parser.add_argument("--config", type=Path, help="the head side's stack file instead of Pulumi.<stack>.yaml")
    parser.add_argument(
        "--against",
        help="the base: a git ref (its own program is run), a `pulumi stack export` file (what is deployed), "
        "an `offline preview --json` file, or an `offline render` folder",
    )
    parser.add_argument(
        "--drift-against",
        metavar="REF",
        help="with a deployed-state base: the git ref the deployed state should match (main); what differs is drift",
    )
    parser.add_argument("--acknowledge", action="store_true", help="the change's outage or data loss is intended: exit 0")
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    parser.add_argument("--out", type=Path, help="write the report here instead of stdout")
    parser.add_argument("--json", type=Path, dest="json_out", help="also write the JSON report here")
    parser.add_argument(
        "--max-chars", type=int, help=f"markdown: cut the report to this many characters (a comment: {GITHUB_COMMENT_LIMIT})"
    )
    live = parser.add_argument_group("live impact (optional): the running jobs on the nodes that drain or stop")
    live.add_argument("--squeue", type=Path, help="output of `squeue --json` on the running cluster")
    live.add_argument("--sinfo", type=Path, help="output of `sinfo --json` on the running cluster")
    live.add_argument("--observed-at", type=observed_at, help="when Slurm answered (default: the squeue JSON's last_update)")
    verify = parser.add_argument_group("after the deploy: check the prediction against what the cluster shows")
    verify.add_argument("--verify", type=Path, metavar="PREDICTION", help="the JSON report written before the deploy")
    verify.add_argument("--observed", type=Path, metavar="DIR", help="the JSON files collected after the deploy")


@dataclass
class Computed:
    plan: Plan
    impact: Impact
    base: State
    origins: dict[str, str] = field(default_factory=dict)
    drift: list[dict[str, str]] | None = None
    drift_against: str = ""


def gate_reasons(impact: Impact, live: LiveImpact | None = None) -> list[str]:
    """Why the change needs an acknowledgement: an outage or data loss; with live data, a drain that never finishes."""
    reasons = []
    if rank(impact.worst) >= rank(GATED):
        reasons.append(f"the worst impact is {impact.worst}")
    unassessed = [e for e in impact.effects if e.severity == UNASSESSED]
    if unassessed:
        names = sorted({r.rpartition(" ")[2] for e in unassessed for r in e.resources})
        reasons.append(
            f"{len(names)} change(s) unassessed (no rule knows what they do): {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}"
        )
    if live is not None:
        for risk, node in live.never_finishes:
            reasons.append(f"the drain of {node} never finishes: job {risk.job.job_id} ({risk.job.user}) has no time limit")
    return reasons


def gate(impact: Impact, acknowledged: bool, live: LiveImpact | None = None) -> int:
    """1 when the change needs an acknowledgement it does not have (`gate_reasons`)."""
    return 0 if acknowledged or not gate_reasons(impact, live) else 1


def compute(args: argparse.Namespace, progress: bool = True) -> Computed:
    def note(message: str) -> None:
        if progress:
            print(message, file=sys.stderr)

    started = time.perf_counter()
    base = load_base(args.against, args.stack, project=PROJECT_ROOT, progress=note)
    note(f"base: {len(base.resources)} resources ({time.perf_counter() - started:.1f} s)")
    path = args.config if args.config else stack_path(args.stack)
    mark = time.perf_counter()
    # The recording `offline render` or `offline check` kept for exactly these inputs, if any; else run and keep it.
    recorded, reused = reuse_or_run(read_stack_file(path, name=args.stack), PROJECT_ROOT, store=True)
    head = State.from_recorded(recorded, f"{path.name} (working tree)")
    how = "reused the recording of the same inputs" if reused else "ran the program"
    note(f"head: {len(head.resources)} resources ({how}, {time.perf_counter() - mark:.1f} s)")
    if base.export is not None:
        fill_encrypted(base.export, head.resources)
        base.notes = list(base.export.notes)
    mark = time.perf_counter()
    plan = make_plan(base, head)
    impact = assess(plan)
    note(f"plan and impact: {time.perf_counter() - mark:.2f} s")
    computed = Computed(plan, impact, base)
    if getattr(args, "drift_against", None):
        main = load_base(args.drift_against, args.stack, project=PROJECT_ROOT, progress=note)
        drift_plan, change_plan = make_plan(main, base), make_plan(main, head)
        drifted, changed = {c.key for c in drift_plan.changes}, {c.key for c in change_plan.changes}
        computed.origins = {
            c.key: "change+drift" if c.key in drifted and c.key in changed else "drift" if c.key in drifted else "change"
            for c in plan.changes
        }
        computed.drift = [{"op": c.op, "name": resource_name(c), "changed": what_changed(c)} for c in drift_plan.changes]
        computed.drift_against = main.origin
    return computed


def _usage(args: argparse.Namespace) -> str | None:
    if args.verify:
        return None if args.observed else "--verify needs --observed DIR (the files collected after the deploy)"
    if not args.stack or not args.against:
        return "give --stack and --against (or --verify PREDICTION --observed DIR)"
    if args.drift_against and not Path(args.against).is_file():
        return "--drift-against needs a deployed-state base: --against a `pulumi stack export` file"
    if bool(args.squeue) != bool(args.sinfo):
        return "live impact: give both --squeue FILE and --sinfo FILE"
    return None


def _live(args: argparse.Namespace, impact: Impact) -> LiveImpact | None:
    if not args.squeue:
        return None
    live = load_live(args.squeue, args.sinfo, observed_at=args.observed_at)
    in_drains = {node for drain in impact.drains for node in drain.nodes}
    stopped = {n for e in impact.effects if rank(e.severity) >= rank(GATED) for n in e.nodes} & impact.drained_nodes
    others = sorted(impact.drained_nodes - in_drains - stopped)
    return jobs_at_risk(live, others, drains=impact.drains, stopped=sorted(stopped))


def _write(args: argparse.Namespace, text: str) -> None:
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote the report to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def report_of(computed: Computed, acknowledged: bool, live: LiveImpact | None) -> dict[str, Any]:
    reasons = gate_reasons(computed.impact, live)
    status = "pass" if not reasons else "acknowledged" if acknowledged else "gated"
    decided = {"exit": 0 if status != "gated" else 1, "status": status, "reasons": reasons}
    report = build(
        computed.plan,
        computed.impact,
        gate=decided,
        origins=computed.origins,
        base_kind=computed.base.kind,
        base_notes=computed.base.notes,
    )
    if live is not None:
        report["live"] = {
            "headline": headline(live),
            "source": source_line(live),
            "text": render_text(live),
            "markdown": render_markdown(live),
            "jobs": len(live.jobs),
            "gpu_hours_at_risk": round(live.gpu_hours_at_risk, 2),
            "gpu_hours_to_run": round(live.gpu_hours_to_run, 2),
            "never_finishes": [{"job": r.job.job_id, "user": r.job.user, "node": n} for r, n in live.never_finishes],
            "notes": notes(live),
        }
    if computed.drift is not None:
        report["drift"] = {"against": computed.drift_against, "resources": computed.drift}
    report["predictions"] = predictions(computed.plan, computed.impact)
    refresh_summary(report)
    return report


def run(args: argparse.Namespace) -> int:
    problem = _usage(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.verify:
        return run_verify(args)
    try:
        computed = compute(args)
        live = _live(args, computed.impact)
    except (StackFileError, BaseError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except LiveDataError as error:
        print(f"error: live impact: {error}", file=sys.stderr)
        return 2
    except ProgramConfigError as error:
        print("error: invalid hpcforge configuration:", file=sys.stderr)
        for message in error.messages:
            print(f"  {message}", file=sys.stderr)
        return 2
    if live is not None:
        for warning in live.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    report = report_of(computed, args.acknowledge, live)
    _output(args, report, computed.plan)
    decided = report["gate"]
    if decided["status"] == "gated":
        print(f"gate: {'; '.join(decided['reasons'])}; pass --acknowledge if that is intended", file=sys.stderr)
    elif decided["status"] == "acknowledged":
        print(f"gate: {'; '.join(decided['reasons'])}, acknowledged", file=sys.stderr)
    return int(decided["exit"])


def _output(args: argparse.Namespace, report: dict[str, Any], plan: Plan) -> None:
    """The report in the format asked, to stdout or --out; the JSON beside it with --json."""
    if args.format == "json":
        text = render_json(report)
    elif args.format == "markdown":
        text = report_markdown(report, plan, limit=args.max_chars)
    else:
        text = report_text(report, plan)
    _write(args, text)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(render_json(report))
