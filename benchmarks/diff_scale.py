"""What `offline diff` costs on a generated site: `python -m benchmarks.diff_scale [--hosts N] [--nodesets N] [--users N]
[--against REF [--repeat N]]`.

Generates the site (benchmarks/sitegen.py), runs the program for the base, removes one bare-metal host and one
user from the inventories, runs the program for the head, then times the plan, the impact and the report, in
this one process. Prints each figure, the peak memory and the machine's load average. A benchmark, not a test.

`--against REF`: instead, in fresh processes alternating between this checkout and REF (checked out into a temporary
worktree, benchmarks/against.py), times each one's program on the changed site and its `offline diff` of the changed
site against the base recording (saved once, by this checkout's `offline preview --json`): one program run plus the
plan, impact and report. Prints the medians, the diff / program ratio of each, and the ratios this checkout / REF.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from components.paths import PROJECT_ROOT
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


def _diff_seconds(tree: Path, stack: Path, base: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `offline diff --stack site --config STACK --against BASE` in a fresh process in `tree`."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["HPCFORGE_RECORDING_CACHE"] = "off"
    command = [sys.executable, "-m", "offline", "diff", "--stack", "site", "--config", str(stack), "--against", str(base)]
    command += ["--acknowledge", "--out", os.devnull]
    started, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    completed = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    if completed.returncode not in (0, 1):
        raise RuntimeError(f"offline diff in {tree} failed (exit {completed.returncode}):\n{completed.stderr[-3000:]}")
    return seconds, cpu


def compare(stack: Path, folder: Path, ref: str, repeat: int) -> None:
    """Program and diff, this checkout's and `ref`'s, alternating (the module docstring's `--against`)."""
    from .against import ref_worktree, time_program

    base = folder / "base.json"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    subprocess.run(
        [sys.executable, "-m", "offline", "preview", "--stack", "site", "--config", str(stack), "--json", str(base)],
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
        env={**env, "HPCFORGE_RECORDING_CACHE": "off"},
    )
    _drop_item(folder / "Pulumi.site.hosts.yaml", "- name: ", 5)
    _drop_item(folder / "Pulumi.site.users.yaml", "- name: u", 7)
    with ref_worktree(ref) as (tree, commit):
        shown = f"{ref} ({commit[:12]})"
        kinds = ("program", "diff", "program_cpu", "diff_cpu")
        figures: dict[str, dict[str, list[float]]] = {side: {kind: [] for kind in kinds} for side in ("head", "ref")}
        for _ in range(repeat):
            for side, where in (("head", PROJECT_ROOT), ("ref", tree)):
                timed = time_program(where, stack, "site")
                figures[side]["program"].append(timed["wall"])
                figures[side]["program_cpu"].append(timed["cpu"])
                wall, cpu = _diff_seconds(where, stack, base)
                figures[side]["diff"].append(wall)
                figures[side]["diff_cpu"].append(cpu)
    medians = {side: {what: statistics.median(values) for what, values in by_kind.items()} for side, by_kind in figures.items()}
    for side, label in (("head", "this checkout"), ("ref", shown)):
        program, diff = medians[side]["program"], medians[side]["diff"]
        print(f"{label}: program {program:.2f} s, diff against a recorded base {diff:.2f} s ({diff / program:.2f}x its program)")
        program, diff = medians[side]["program_cpu"], medians[side]["diff_cpu"]
        print(
            f"{label}, CPU: program {program:.2f} s, diff against a recorded base {diff:.2f} s ({diff / program:.2f}x its program)"
        )
    for what in ("program", "diff", "program_cpu", "diff_cpu"):
        print(f"ratio {what}: {medians['head'][what] / medians['ref'][what]:.2f} (this checkout / {shown})")
    print(f"medians of {repeat} alternating runs each; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.diff_scale", description=__doc__)
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--nodesets", type=int, default=100)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--against", metavar="REF", help="compare with this git ref's program and diff (see above)")
    parser.add_argument("--repeat", type=int, default=3, help="with --against: runs of each (medians)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hpcforge-diff-bench-") as tmp:
        stack = write_site(Path(tmp) / "Pulumi.site.yaml", hosts=args.hosts, nodesets=args.nodesets, users=args.users)
        if args.against:
            compare(stack, Path(tmp), args.against, args.repeat)
            return 0
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
