"""What `offline diff` costs on a generated site: `python -m benchmarks.diff_scale [--hosts N] [--nodesets N] [--users N]`.

Generates the site (benchmarks/sitegen.py), runs the program for the base, removes one bare-metal host and one
user from the inventories, runs the program for the head, then times the plan, the impact and the report, in
this one process. Prints each figure, the peak memory and the machine's load average. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from offline.diff.base import State
from offline.diff.impact import assess
from offline.diff.plan import make_plan
from offline.diff.report import render
from offline.program.engine import run_program
from offline.program.stackfile import read_stack_file

from .sitegen import write_site


def _drop_item(path: Path, marker: str, count: int) -> None:
    """Remove the `count`-th block that starts with `marker` (a block-style YAML list item) from the file."""
    lines = path.read_text().split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(marker)]
    if len(starts) > count:
        del lines[starts[count - 1] : starts[count]]
    path.write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.diff_scale", description=__doc__)
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--nodesets", type=int, default=100)
    parser.add_argument("--users", type=int, default=10_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hpcforge-diff-bench-") as tmp:
        stack = write_site(Path(tmp) / "Pulumi.site.yaml", hosts=args.hosts, nodesets=args.nodesets, users=args.users)
        started = time.perf_counter()
        base = State.from_recorded(run_program(read_stack_file(stack, name="site")), "base")
        print(f"program (base): {time.perf_counter() - started:.1f} s, {len(base.resources)} resources")
        _drop_item(Path(tmp) / "Pulumi.site.hosts.yaml", "- name: ", 5)
        _drop_item(Path(tmp) / "Pulumi.site.users.yaml", "- name: u", 7)
        started = time.perf_counter()
        head = State.from_recorded(run_program(read_stack_file(stack, name="site")), "head")
        print(f"program (head): {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        plan = make_plan(base, head)
        print(f"plan: {time.perf_counter() - started:.2f} s, {len(plan.changes)} changed resources")
        started = time.perf_counter()
        impact = assess(plan)
        print(f"impact: {time.perf_counter() - started:.2f} s, worst {impact.worst}, {len(impact.effects)} effects")
        started = time.perf_counter()
        report = render(plan, impact)
        print(f"report: {time.perf_counter() - started:.2f} s, {len(report.splitlines())} lines")
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
