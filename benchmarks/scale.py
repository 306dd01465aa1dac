"""How hpcforge's cost grows with the site: `python -m benchmarks.scale [--quick] [--json FILE]`.

For each generated site size (bare-metal hosts, Slurm nodesets, LDAP users) this measures, in a
fresh process each: the offline program time (median of several runs), peak memory, the number of
resources, the largest Kubernetes object and the total rendered size, and the time the policy
packs take over the gRPC Analyzer protocol. It prints a table, then each target with its figure and
whether it is met. A benchmark, not a test: it reports, it does not assert.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .sitegen import PROJECT_ROOT, write_site

PACKS = ("gitops-drift", "security", "slurm-contract")
MIB = 1024 * 1024


@dataclass(frozen=True)
class Size:
    label: str
    hosts: int
    nodesets: int
    users: int


FULL = [
    Size("hosts-100", 100, 4, 6),
    Size("hosts-1k", 1_000, 4, 6),
    Size("hosts-10k", 10_000, 4, 6),
    Size("nodesets-1", 100, 1, 6),
    Size("nodesets-10", 100, 10, 6),
    Size("nodesets-100", 100, 100, 6),
    Size("users-1k", 100, 4, 1_000),
    Size("users-10k", 100, 4, 10_000),
    Size("site-10k", 10_000, 100, 10_000),
]
QUICK = [
    Size("hosts-100", 100, 4, 6),
    Size("hosts-1k", 1_000, 4, 6),
    Size("nodesets-10", 100, 10, 6),
    Size("users-1k", 100, 4, 1_000),
]


@dataclass
class Measurement:
    size: Size
    program_seconds: float
    program_runs: list[float]
    peak_memory_mib: float
    resources: int
    largest_object: str
    largest_object_bytes: int
    rendered_bytes: int
    policy_seconds: float | None
    policy_violations: int | None


def measure_in_process(config: Path, repeat: int, with_policy: bool) -> dict[str, Any]:
    """Run in a fresh worker process: program `repeat` times, then render sizes and policy time."""
    from offline.engine import run_program
    from offline.render import render_documents
    from offline.stackfile import read_stack_file

    runs: list[float] = []
    stack = None
    for _ in range(repeat):
        stack_file = read_stack_file(config, name="bench")
        started = time.perf_counter()
        stack = run_program(stack_file, PROJECT_ROOT)
        runs.append(time.perf_counter() - started)
    assert stack is not None
    sizes = {path: len(json.dumps(document, separators=(",", ":"))) for path, document in render_documents(stack)}
    largest = max(sizes, key=lambda key: sizes[key])
    result: dict[str, Any] = {
        "runs": runs,
        "resources": len(stack.resources) + 1,
        "largest_object": largest,
        "largest_object_bytes": sizes[largest],
        "rendered_bytes": sum(sizes.values()),
        "policy_seconds": None,
        "policy_violations": None,
    }
    if with_policy:
        from offline.check import PackSpec, check_recorded_stack

        specs = [PackSpec(PROJECT_ROOT / "policies" / pack, PROJECT_ROOT / "policies" / "config" / "prod.json") for pack in PACKS]
        started = time.perf_counter()
        report = check_recorded_stack(stack, specs)
        result["policy_seconds"] = time.perf_counter() - started
        result["policy_violations"] = len(report.violations)
    result["peak_memory_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def measure(size: Size, repeat: int, with_policy: bool, workdir: Path) -> Measurement:
    config = write_site(workdir / f"Pulumi.{size.label}.yaml", hosts=size.hosts, nodesets=size.nodesets, users=size.users)
    command = [sys.executable, "-m", "benchmarks.scale", "--worker", str(config), "--repeat", str(repeat)]
    if not with_policy:
        command.append("--no-policy")
    completed = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=1800, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{size.label}: worker failed:\n{completed.stderr[-4000:]}")
    data = json.loads(completed.stdout.strip().splitlines()[-1])
    return Measurement(
        size=size,
        program_seconds=statistics.median(data["runs"]),
        program_runs=data["runs"],
        peak_memory_mib=data["peak_memory_mib"],
        resources=data["resources"],
        largest_object=data["largest_object"],
        largest_object_bytes=data["largest_object_bytes"],
        rendered_bytes=data["rendered_bytes"],
        policy_seconds=data["policy_seconds"],
        policy_violations=data["policy_violations"],
    )


def _table(rows: list[Measurement]) -> str:
    header = f"{'size':<14}{'hosts':>7}{'nodesets':>9}{'users':>7}{'program s':>11}{'peak MiB':>10}{'resources':>10}{'largest obj':>13}{'rendered':>11}{'policy s':>10}"
    lines = [header, "-" * len(header)]
    for m in rows:
        policy = f"{m.policy_seconds:.2f}" if m.policy_seconds is not None else "-"
        lines.append(
            f"{m.size.label:<14}{m.size.hosts:>7}{m.size.nodesets:>9}{m.size.users:>7}{m.program_seconds:>11.2f}"
            f"{m.peak_memory_mib:>10.0f}{m.resources:>10}{m.largest_object_bytes / 1024:>11.0f}Ki{m.rendered_bytes / MIB:>9.1f}Mi{policy:>10}"
        )
    return "\n".join(lines)


def targets(rows: list[Measurement]) -> list[dict[str, Any]]:
    """Each target with its figure and whether it is met."""
    by = {m.size.label: m for m in rows}
    results: list[dict[str, Any]] = []

    def add(name: str, figure: str, met: bool | None) -> None:
        results.append({"target": name, "figure": figure, "met": met})

    host_rows = [by[k] for k in ("hosts-100", "hosts-1k", "hosts-10k") if k in by]
    if len(host_rows) > 1:
        counts = sorted({m.resources for m in host_rows})
        add(
            "resources do not grow with hosts",
            f"resources at {', '.join(str(m.size.hosts) for m in host_rows)} hosts: {', '.join(str(m.resources) for m in host_rows)}",
            len(counts) == 1,
        )
    user_rows = [m for m in (by.get("hosts-100"), by.get("users-1k"), by.get("users-10k")) if m]
    if len(user_rows) > 1:
        add(
            "resources do not grow with users",
            f"resources at {', '.join(str(m.size.users) for m in user_rows)} users: {', '.join(str(m.resources) for m in user_rows)}",
            len({m.resources for m in user_rows}) == 1,
        )
    ns_rows = [by[k] for k in ("nodesets-1", "hosts-100", "nodesets-10", "nodesets-100") if k in by]
    if len(ns_rows) > 1:
        increasing = all(a.resources < b.resources for a, b in itertools.pairwise(ns_rows) if a.size.nodesets < b.size.nodesets)
        add(
            "resources grow with nodesets (one NodeSet each)",
            ", ".join(f"{m.size.nodesets}: {m.resources}" for m in ns_rows),
            increasing,
        )
    if "hosts-1k" in by and "hosts-10k" in by:
        ratio = by["hosts-10k"].program_seconds / by["hosts-1k"].program_seconds
        add("time from 1,000 to 10,000 hosts grows at most linearly (ratio <= 10)", f"{ratio:.2f}x", ratio <= 10)
    site = by.get("site-10k")
    if site is not None:
        add(
            "10k hosts + 100 nodesets + 10k users: offline program < 10 s",
            f"{site.program_seconds:.2f} s",
            site.program_seconds < 10,
        )
        if site.policy_seconds is not None:
            add(
                "10k hosts + 100 nodesets + 10k users: policy check < 10 s",
                f"{site.policy_seconds:.2f} s",
                site.policy_seconds < 10,
            )
        add(
            "10k hosts + 100 nodesets + 10k users: peak memory < 1 GiB",
            f"{site.peak_memory_mib:.0f} MiB",
            site.peak_memory_mib < 1024,
        )
    largest = max(rows, key=lambda m: m.largest_object_bytes)
    add(
        "no object over 1 MiB",
        f"largest {largest.largest_object_bytes / 1024:.0f} KiB ({largest.largest_object} at {largest.size.label})",
        largest.largest_object_bytes < MIB,
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (under a minute)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--repeat", type=int, default=None, help="program runs per size (median reported)")
    parser.add_argument("--no-policy", action="store_true", help="skip the policy check timing")
    parser.add_argument("--only", action="append", default=[], help="run only these sizes (labels)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(measure_in_process(args.worker, args.repeat or 3, not args.no_policy)))
        return 0

    sizes = QUICK if args.quick else FULL
    if args.only:
        sizes = [s for s in FULL if s.label in args.only]
    repeat = args.repeat or (1 if args.quick else 3)
    rows: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="hpcforge-bench-") as tmp:
        for size in sizes:
            started = time.perf_counter()
            rows.append(measure(size, repeat, not args.no_policy, Path(tmp)))
            print(f"measured {size.label} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print(_table(rows))
    print()
    results = targets(rows)
    for result in results:
        verdict = {True: "met", False: "NOT MET", None: "n/a"}[result["met"]]
        print(f"[{verdict:>7}] {result['target']}: {result['figure']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"measurements": [{**asdict(m), "size": asdict(m.size)} for m in rows], "targets": results}, indent=2)
        )
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
