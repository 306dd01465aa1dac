"""How hpcforge's cost grows with the site: `python -m benchmarks.scale [--quick] [--json FILE]`.

For each generated site size (bare-metal hosts, Slurm nodesets, LDAP users; inventories in files,
`benchmarks/sitegen.py`) this measures, in a fresh process each: the offline program time (median
of several runs; wall clock and CPU time), peak memory, the number of resources, the largest
Kubernetes object and the total rendered size, the size of the stack config as the CLI passes it
(PULUMI_CONFIG), and the time the policy packs take over the gRPC Analyzer protocol with that
config in their environment, as the engine starts them. For the largest site it also times
`./hpcforge render` then `./hpcforge check` as a user runs them (fresh processes,
wall clock). It prints a table, then each target with its figure and whether it is met, and the
machine's load average (figures taken under contention say so). A benchmark, not a test: it
reports, it does not assert.

`--against REF` (e.g. `--only site-100k --against main`): instead of the table, each size's program runs in
alternating fresh processes, this checkout's and REF's (checked out into a temporary git worktree,
benchmarks/against.py), and the ratios this checkout / REF are printed (wall, CPU, peak memory); for the largest
site also `offline render` then `offline check`, cold. Absolute seconds on a shared machine mean little; a ratio
taken in one run does.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from components.paths import PROJECT_ROOT

from .sitegen import write_site

PACKS = ("gitops-drift", "security", "slurm-contract")
MIB = 1024 * 1024


@dataclass(frozen=True)
class Size:
    label: str
    hosts: int
    nodesets: int
    users: int
    cli: bool = False
    """Also time `offline render` then `offline check` as fresh processes."""

    @property
    def large(self) -> bool:
        return self.hosts + self.users >= 100_000


FULL = [
    Size("hosts-100", 100, 4, 6),
    Size("hosts-10k", 10_000, 4, 6),
    Size("hosts-100k", 100_000, 4, 6),
    Size("nodesets-100", 100, 100, 6),
    Size("nodesets-500", 100, 500, 6),
    Size("users-10k", 100, 4, 10_000),
    Size("users-100k", 100, 4, 100_000),
    Size("site-10k", 10_000, 100, 10_000),
    Size("site-100k", 100_000, 500, 100_000, cli=True),
]
QUICK = [
    Size("hosts-100", 100, 4, 6),
    Size("hosts-1k", 1_000, 4, 6),
    Size("nodesets-10", 100, 10, 6),
    Size("users-1k", 100, 4, 1_000),
]
SITE = "site-100k"


@dataclass
class Measurement:
    size: Size
    program_seconds: float
    program_runs: list[float]
    program_cpu_seconds: float
    peak_memory_mib: float
    resources: int
    chunk_maps: int
    """ConfigMaps that hold parts of chunked files (`*-NN` of the inventory, zones, LDIF and the accounts' desired state)."""
    charts: int
    largest_object: str
    largest_object_bytes: int
    rendered_bytes: int
    config_bytes: int
    """Bytes of PULUMI_CONFIG as the CLI would pass it (hosts, users, the Slurm topology with one leaf switch per
    40-host rack and the Slurm accounts with one account per project are in inventory files)."""
    policy_seconds: float | None
    policy_violations: int | None
    pack_peak_memory_mib: float | None
    policy_cpu_seconds: float | None = None
    """CPU time of the policy check: the driver's and the three pack processes'."""
    cli_cold: dict[str, Any] | None = None
    """`offline render` then `offline check`, each running the program (recording cache off)."""
    cli_cached: dict[str, Any] | None = None
    """The same with check reusing render's recording (same inputs, offline/program/recording.py)."""
    load_before: float = 0.0
    load_after: float = 0.0


CHUNKED = ("grendel-inventory-", "site-dns-zones-", "dirsrv-ldif-", "slurm-accounts-desired-")


def measure_in_process(config: Path, repeat: int, with_policy: bool) -> dict[str, Any]:
    """Run in a fresh worker process: program `repeat` times, then render sizes and policy time."""
    from offline.policy.packs import peak_rss_mib
    from offline.program.documents import render_documents
    from offline.program.engine import run_program
    from offline.program.environ import go_json_string_map
    from offline.program.stackfile import read_stack_file

    runs: list[float] = []
    cpu: list[float] = []
    stack = None
    stack_file = read_stack_file(config, name="bench")
    for _ in range(repeat):
        stack = None  # let the previous run's objects go before the next
        stack_file = read_stack_file(config, name="bench")
        started, started_cpu = time.perf_counter(), time.process_time()
        stack = run_program(stack_file, PROJECT_ROOT)
        runs.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    assert stack is not None
    sizes = {path: len(json.dumps(document, separators=(",", ":"))) for path, document in render_documents(stack)}
    largest = max(sizes, key=lambda key: sizes[key])
    result: dict[str, Any] = {
        "runs": runs,
        "cpu": cpu,
        "resources": len(stack.resources) + 1,
        "chunk_maps": sum(
            1 for r in stack.resources if r.type == "kubernetes:core/v1:ConfigMap" and r.name.split("/")[-1].startswith(CHUNKED)
        ),
        "charts": sum(1 for r in stack.resources if r.is_chart),
        "largest_object": largest,
        "largest_object_bytes": sizes[largest],
        "rendered_bytes": sum(sizes.values()),
        "config_bytes": len(go_json_string_map(stack_file.config).encode()),
        "policy_seconds": None,
        "policy_violations": None,
        "pack_peak_memory_mib": None,
    }
    if with_policy:
        from offline.policy.check import check_recorded_stack
        from offline.policy.packs import PackSpec

        specs = [PackSpec(PROJECT_ROOT / "policies" / pack, PROJECT_ROOT / "policies" / "config" / "prod.json") for pack in PACKS]
        started, started_cpu = time.perf_counter(), time.process_time()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        # The stack's own config goes to the packs as the engine passes it (PULUMI_CONFIG).
        report = check_recorded_stack(stack, specs, stack_file)
        result["policy_seconds"] = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        packs_cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
        result["policy_cpu_seconds"] = time.process_time() - started_cpu + packs_cpu
        result["policy_violations"] = len(report.violations)
        result["pack_peak_memory_mib"] = max(report.pack_memory_mib.values(), default=None)
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so a worker would report its
    # parent's peak when that was higher.
    result["peak_memory_mib"] = peak_rss_mib() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


REUSED = "reusing the recording"
"""What `offline check` prints (stderr) when it reuses the recording of `offline render`."""


def _timed(
    command: list[str], env: dict[str, str], tree: Path = PROJECT_ROOT
) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run a fresh process in `tree`; (result, wall seconds, CPU seconds of it and its children, e.g. policy packs)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=tree, capture_output=True, text=True, timeout=1800, check=False, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return completed, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cli_times(config: Path, workdir: Path, *, reuse: bool, tree: Path = PROJECT_ROOT) -> dict[str, Any]:
    """`offline render` then `offline check` as a user runs them: fresh processes, wall clock and CPU.

    `reuse=False` is the cold figure: the recording cache is off (HPCFORGE_RECORDING_CACHE=off), so each
    command runs the program. `reuse=True`: render keeps its recording and check reuses it (the
    content key matches, offline/program/recording.py); the check's output must say so, else this raises.
    """
    base = [sys.executable, "-m", "offline"]
    stack = ["--stack", "bench", "--config", str(config)]
    env = dict(os.environ)
    env.pop("HPCFORGE_RECORDING_CACHE", None)
    env.pop("PYTHONPATH", None)
    if tree != PROJECT_ROOT:  # another ref's checkout: its recordings stay in its own (temporary) folder
        env["HPCFORGE_RECORDINGS_DIR"] = str(workdir / "recordings-against")
    if not reuse:
        env["HPCFORGE_RECORDING_CACHE"] = "off"
    out = workdir / ("render-cached" if reuse else "render-cold")
    render, render_wall, render_cpu = _timed([*base, "render", *stack, "--out", str(out)], env, tree)
    if render.returncode != 0:
        raise RuntimeError(f"offline render failed:\n{render.stderr[-4000:]}")
    packs: list[str] = []
    for pack in PACKS:
        packs += ["--policy-pack", f"policies/{pack}", "--policy-pack-config", "policies/config/prod.json"]
    check, check_wall, check_cpu = _timed([*base, "check", *stack, *packs], env, tree)
    if check.returncode not in (0, 1):
        raise RuntimeError(f"offline check failed:\n{check.stderr[-4000:]}")
    reused = REUSED in check.stderr
    if reused != reuse:
        raise RuntimeError(f"offline check {'did not reuse' if reuse else 'reused'} the recording:\n{check.stderr[-2000:]}")
    return {
        "render_seconds": render_wall,
        "render_cpu_seconds": render_cpu,
        "check_seconds": check_wall,
        "check_cpu_seconds": check_cpu,
        "check_exit": check.returncode,
        "reused": reused,
    }


def measure(size: Size, repeat: int, with_policy: bool, workdir: Path) -> Measurement:
    # Generated in a separate process, so that this one stays small (its children inherit nothing big).
    config = workdir / f"Pulumi.{size.label}.yaml"
    generate = [sys.executable, "-m", "benchmarks.scale", "--generate", str(config)]
    generate += ["--hosts", str(size.hosts), "--nodesets", str(size.nodesets), "--users", str(size.users)]
    subprocess.run(generate, cwd=PROJECT_ROOT, check=True, timeout=1800)
    load_before = os.getloadavg()[0]
    command = [sys.executable, "-m", "benchmarks.scale", "--worker", str(config), "--repeat", str(1 if size.large else repeat)]
    if not with_policy:
        command.append("--no-policy")
    completed = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=3600, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{size.label}: worker failed:\n{completed.stderr[-4000:]}")
    data = json.loads(completed.stdout.strip().splitlines()[-1])
    cold = cached = None
    if size.cli:
        cold = _cli_times(config, workdir, reuse=False)
        cached = _cli_times(config, workdir, reuse=True)
    return Measurement(
        size=size,
        program_seconds=statistics.median(data["runs"]),
        program_runs=data["runs"],
        program_cpu_seconds=statistics.median(data["cpu"]),
        peak_memory_mib=data["peak_memory_mib"],
        resources=data["resources"],
        chunk_maps=data["chunk_maps"],
        charts=data["charts"],
        largest_object=data["largest_object"],
        largest_object_bytes=data["largest_object_bytes"],
        rendered_bytes=data["rendered_bytes"],
        config_bytes=data["config_bytes"],
        policy_seconds=data["policy_seconds"],
        policy_violations=data["policy_violations"],
        pack_peak_memory_mib=data["pack_peak_memory_mib"],
        policy_cpu_seconds=data.get("policy_cpu_seconds"),
        cli_cold=cold,
        cli_cached=cached,
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )


def _table(rows: list[Measurement]) -> str:
    header = (
        f"{'size':<13}{'hosts':>7}{'nodesets':>9}{'users':>7}{'program s':>10}{'cpu s':>7}{'peak MiB':>9}"
        f"{'resources':>10}{'parts':>6}{'largest':>9}{'rendered':>10}{'config':>8}{'policy s':>9}{'pol cpu':>8}{'packs MiB':>10}{'load':>11}"
    )
    lines = [header, "-" * len(header)]
    for m in rows:
        policy = f"{m.policy_seconds:.2f}" if m.policy_seconds is not None else "-"
        policy_cpu = f"{m.policy_cpu_seconds:.2f}" if m.policy_cpu_seconds is not None else "-"
        packs = f"{m.pack_peak_memory_mib:.0f}" if m.pack_peak_memory_mib is not None else "-"
        lines.append(
            f"{m.size.label:<13}{m.size.hosts:>7}{m.size.nodesets:>9}{m.size.users:>7}{m.program_seconds:>10.2f}"
            f"{m.program_cpu_seconds:>7.2f}{m.peak_memory_mib:>9.0f}{m.resources:>10}{m.chunk_maps:>6}"
            f"{m.largest_object_bytes / 1024:>7.0f}Ki{m.rendered_bytes / MIB:>8.1f}Mi{m.config_bytes / 1024:>6.0f}Ki"
            f"{policy:>9}{policy_cpu:>8}{packs:>10}{m.load_before:>5.1f}->{m.load_after:<4.1f}"
        )
    return "\n".join(lines)


def targets(rows: list[Measurement]) -> list[dict[str, Any]]:
    """Each target with its figure and whether it is met."""
    by = {m.size.label: m for m in rows}
    results: list[dict[str, Any]] = []

    def add(name: str, figure: str, met: bool | None) -> None:
        results.append({"target": name, "figure": figure, "met": met})

    def flat(labels: tuple[str, ...], axis: str, values: list[int]) -> None:
        found = [by[k] for k in labels if k in by]
        if len(found) < 2:
            return
        fixed = {m.resources - m.chunk_maps for m in found}
        add(
            f"resources flat in {axis} (apart from chunk ConfigMaps, one per 640 KiB of gzip)",
            ", ".join(f"{v:,} {axis}: {m.resources} ({m.chunk_maps} parts)" for v, m in zip(values, found, strict=False)),
            len(fixed) == 1,
        )

    flat(
        ("hosts-100", "hosts-10k", "hosts-100k"),
        "hosts",
        [by[k].size.hosts for k in ("hosts-100", "hosts-10k", "hosts-100k") if k in by],
    )
    flat(
        ("hosts-100", "users-10k", "users-100k"),
        "users",
        [by[k].size.users for k in ("hosts-100", "users-10k", "users-100k") if k in by],
    )
    ns_rows = [by[k] for k in ("hosts-100", "nodesets-100", "nodesets-500") if k in by]
    if len(ns_rows) > 1:
        add(
            "resources grow with nodesets (one NodeSet each)",
            ", ".join(f"{m.size.nodesets}: {m.resources}" for m in ns_rows),
            all(a.resources < b.resources for a, b in itertools.pairwise(ns_rows)),
        )
    for small, big in (("hosts-10k", "hosts-100k"), ("site-10k", "site-100k")):
        if small in by and big in by:
            ratio = by[big].program_seconds / by[small].program_seconds
            cpu_ratio = by[big].program_cpu_seconds / by[small].program_cpu_seconds
            add(
                f"time from {small} to {big} grows at most linearly (ratio <= 10)",
                f"wall {ratio:.2f}x, cpu {cpu_ratio:.2f}x",
                ratio <= 10 and cpu_ratio <= 10,
            )
    site = by.get(SITE)
    if site is not None:
        label = "100k hosts + 500 nodesets + 100k users"
        add(
            f"{label}: offline program < 10 s",
            f"{site.program_seconds:.2f} s wall, {site.program_cpu_seconds:.2f} s cpu",
            site.program_seconds < 10,
        )
        if site.policy_seconds is not None:
            add(
                f"{label}: policy check < 10 s (stack config passed as the engine passes it)",
                f"{site.policy_seconds:.2f} s wall, {site.policy_cpu_seconds or 0:.2f} s cpu (driver and packs); {site.charts} Helm charts are checked as chart resources, their objects are "
                "not rendered offline (helm.v4.Chart renders nothing under mocks)",
                site.policy_seconds < 10,
            )
        peak = max(site.peak_memory_mib, site.pack_peak_memory_mib or 0)
        add(
            f"{label}: peak memory < 1 GiB",
            f"program {site.peak_memory_mib:.0f} MiB, largest policy pack {site.pack_peak_memory_mib or 0:.0f} MiB",
            peak < 1024,
        )
        for cli, how in (
            (site.cli_cold, "cold: each command runs the program"),
            (site.cli_cached, "cached: check reuses render's recording"),
        ):
            if cli is None:
                continue
            total = cli["render_seconds"] + cli["check_seconds"]
            add(
                f"{label}: `offline render` then `offline check` as fresh processes < 20 s ({how})",
                f"{cli['render_seconds']:.2f} s + {cli['check_seconds']:.2f} s = {total:.2f} s wall; "
                f"cpu {cli['render_cpu_seconds']:.2f} s + {cli['check_cpu_seconds']:.2f} s (check exit {cli['check_exit']})",
                total < 20,
            )
    largest = max(rows, key=lambda m: m.largest_object_bytes)
    add(
        "no object over 1 MiB (chunk payloads bounded by encoded size: 640 KiB)",
        f"largest {largest.largest_object_bytes / 1024:.0f} KiB ({largest.largest_object} at {largest.size.label})",
        largest.largest_object_bytes < MIB,
    )
    biggest_config = max(rows, key=lambda m: m.config_bytes)
    add(
        "stack config passes as one environment string (< 128 KiB)",
        f"largest PULUMI_CONFIG {biggest_config.config_bytes:,} bytes ({biggest_config.size.label})",
        biggest_config.config_bytes + len("PULUMI_CONFIG=") + 1 <= 131072,
    )
    return results


def compare(sizes: list[Size], ref: str, repeat: int, workdir: Path) -> list[dict[str, Any]]:
    """Each size's program, this checkout's and `ref`'s, in alternating fresh processes (benchmarks/against.py); for
    the sizes with `cli`, also `offline render` then `offline check` cold (each running the program), alternating.
    Prints a line per figure with the ratio head / ref (below 1: this checkout is faster)."""
    from .against import alternate, ref_worktree

    results: list[dict[str, Any]] = []
    with ref_worktree(ref) as (tree, commit):
        shown = f"{ref} ({commit[:12]})"
        print(f"against {shown}: ratios are this checkout / {shown}, medians of alternating runs; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
        for size in sizes:
            config = workdir / f"Pulumi.{size.label}.yaml"
            generate = [sys.executable, "-m", "benchmarks.scale", "--generate", str(config)]
            generate += ["--hosts", str(size.hosts), "--nodesets", str(size.nodesets), "--users", str(size.users)]
            subprocess.run(generate, cwd=PROJECT_ROOT, check=True, timeout=1800)
            compared = alternate(config, "bench", tree, repeat)
            print(compared.line(size.label, shown), flush=True)
            result: dict[str, Any] = {"size": size.label, "head": compared.head, "ref": compared.ref}
            if size.cli:
                head_cli, ref_cli = [], []
                for _ in range(repeat):
                    head_cli.append(_cli_times(config, workdir, reuse=False))
                    ref_cli.append(_cli_times(config, workdir, reuse=False, tree=tree))
                head_total = statistics.median(c["render_seconds"] + c["check_seconds"] for c in head_cli)
                ref_total = statistics.median(c["render_seconds"] + c["check_seconds"] for c in ref_cli)
                print(f"{size.label}: render then check, cold: {head_total:.2f} s vs {ref_total:.2f} s at {shown} "
                      f"(ratio {head_total / ref_total:.2f})", flush=True)  # fmt: skip
                result.update(head_cli=head_cli, ref_cli=ref_cli)
            results.append(result)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (a few minutes)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--repeat", type=int, default=None, help="program runs per size (median reported)")
    parser.add_argument("--no-policy", action="store_true", help="skip the policy check timing")
    parser.add_argument("--only", action="append", default=[], help="run only these sizes (labels)")
    parser.add_argument(
        "--against",
        metavar="REF",
        help="instead of the table: time this git ref's program beside this checkout's, alternating, and print ratios",
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--hosts", type=int, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--nodesets", type=int, default=4, help=argparse.SUPPRESS)
    parser.add_argument("--users", type=int, default=6, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.generate:
        write_site(args.generate, hosts=args.hosts, nodesets=args.nodesets, users=args.users)
        return 0

    if args.worker:
        print(json.dumps(measure_in_process(args.worker, args.repeat or 3, not args.no_policy)))
        return 0

    sizes = QUICK if args.quick else FULL
    if args.only:
        sizes = [s for s in FULL if s.label in args.only]
    repeat = args.repeat or (1 if args.quick else 3)
    if args.against:
        with tempfile.TemporaryDirectory(prefix="hpcforge-bench-") as tmp:
            results = compare(sizes, args.against, repeat, Path(tmp))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps({"against": args.against, "results": results}, indent=2))
        return 0
    rows: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="hpcforge-bench-") as tmp:
        for size in sizes:
            started = time.perf_counter()
            rows.append(measure(size, repeat, not args.no_policy, Path(tmp)))
            print(f"measured {size.label} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print(_table(rows))
    print(
        f"\n(program s: median wall clock of the runs; cpu s: their CPU time; pol cpu: CPU time of the policy check, driver and packs; parts: chunk ConfigMaps; config: PULUMI_CONFIG; "
        f"load: 1-minute load average before -> after, on {os.cpu_count()} CPUs: above that, figures were taken under contention)"
    )
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
