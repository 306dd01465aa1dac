#!/usr/bin/env python3
"""Run one scheduled active GPU check (hpcforge:gpu.activeChecks) against Slurm, from its CronJob.

    active_checks.py --config checks.json --check NAME [--script active-check.sh]

For the check NAME (an entry of checks.json, rendered from the config by components/layers/slurm/active_checks.py):

1. lists the nodes of its nodesets (`sinfo -N`, the nodeset's name is a feature of its nodes) and sorts them into
   - drained by this check earlier (reason `active-check NAME: ...`): tested again, to be resumed if they pass;
   - usable (idle, mixed, allocated...): tested;
   - down, or drained by anyone or anything else: left alone (never resumed by this check);
2. creates the maintenance reservation `active-check-NAME` (Flags=MAINT,IGNORE_JOBS, Users=root) on the nodes to
   test, for the check's time limit: no new user job starts there, running ones finish first; resumes the nodes it
   drained itself, which the reservation keeps for the check;
3. submits the check jobs into the reservation (one per node; an all-reduce per group of `nodes` nodes), exclusive,
   with the check's QOS, and waits for them (time limit plus a grace period; cancelled after that);
4. a job's script (scripts/gpu/active-check.sh) drains a failing node with the reason naming the check; a job that
   failed without doing so (crashed, timed out, cancelled) drains its nodes here with the job's state. A node this
   check had drained whose job never ran is drained again with its old reason;
5. deletes the reservation, prints one line per node (PASS/FAIL/SKIP) and exits 1 when a node failed (the
   CronJob's Job then fails: alert GpuActiveCheckFailed).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIX = "active-check"
USABLE = {"idle", "mixed", "allocated", "completing"}


@dataclass
class Node:
    name: str
    features: set[str]
    state: str
    reason: str


def run(*argv: str, check: bool = True) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {result.returncode}: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def list_nodes() -> list[Node]:
    nodes: dict[str, Node] = {}
    for line in run("sinfo", "-h", "-N", "-o", "%N|%b|%T|%E").splitlines():
        name, features, state, reason = [*line.split("|", 3), "", "", ""][:4]
        reason = "" if reason == "none" else reason
        nodes[name] = Node(name, set(features.split(",")), state.lower(), reason)
    return list(nodes.values())


def reason_prefix(name: str) -> str:
    return f"{PREFIX} {name}:"


def sort_nodes(nodes: list[Node], check: dict[str, Any]) -> tuple[list[Node], list[Node], list[Node]]:
    """(drained by this check, usable, left alone) among the nodes of the check's nodesets."""
    ours, usable, others = [], [], []
    for node in nodes:
        if not node.features & set(check["nodesets"]):
            continue
        base = node.state.rstrip("*~#!%$@^-")
        if "drain" in base and node.reason.startswith(reason_prefix(check["name"])):
            ours.append(node)
        elif base in USABLE and not node.reason:
            usable.append(node)
        else:
            others.append(node)
    return ours, usable, others


def groups(names: list[str], size: int) -> list[list[str]]:
    """Jobs' node lists: one node each, or groups of `size` (a last, short group is filled up with tested nodes)."""
    if size <= 1:
        return [[name] for name in names]
    if len(names) < size:
        return []
    out = [names[i : i + size] for i in range(0, len(names), size)]
    if len(out[-1]) < size:
        out[-1] = out[-1] + [n for n in names if n not in out[-1]][: size - len(out[-1])]
    return out


def job_state(job: str) -> tuple[str, str]:
    text = run("scontrol", "show", "job", "-o", job, check=False)
    fields = dict(item.split("=", 1) for item in text.split() if "=" in item)
    return fields.get("JobState", "UNKNOWN"), fields.get("ExitCode", "?")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--check", required=True)
    parser.add_argument("--script", type=Path, default=Path(__file__).with_name("active-check.sh"))
    parser.add_argument("--poll", type=float, default=5.0)
    parser.add_argument("--grace", type=float, default=300.0, help="seconds to wait beyond the time limit")
    args = parser.parse_args(argv)
    checks = {c["name"]: c for c in json.loads(args.config.read_text())["checks"]}
    check = checks[args.check]
    name = check["name"]
    ours, usable, others = sort_nodes(list_nodes(), check)
    results: dict[str, str] = {n.name: f"SKIP {n.name}: {n.state}{' (' + n.reason + ')' if n.reason else ''}" for n in others}
    targets = [n.name for n in ours + usable]
    planned = groups(targets, check["nodes"] if check["kind"] == "nccl-allreduce" else 1)
    if not planned:
        for line in sorted(results.values()):
            print(line)
        print(f"{PREFIX} {name}: no node to test")
        return 0
    reservation = f"{PREFIX}-{name}"
    minutes = int(check["timeLimitMinutes"])
    run("scontrol", "delete", f"ReservationName={reservation}", check=False)  # left by a run that was killed
    run(
        "scontrol", "create", "reservation", f"ReservationName={reservation}", "StartTime=now",
        f"Duration={minutes + 5}", "Users=root", "Flags=MAINT,IGNORE_JOBS", f"Nodes={','.join(targets)}",
    )  # fmt: skip
    old_reasons = {n.name: n.reason for n in ours}
    try:
        if ours:
            run("scontrol", "update", f"NodeName={','.join(old_reasons)}", "State=RESUME")
        env = {f"ACTIVE_CHECK_{key}": str(value) for key, value in check["env"].items()}
        export = ",".join(
            ["ALL", f"ACTIVE_CHECK_NAME={name}", f"ACTIVE_CHECK_KIND={check['kind']}"] + [f"{k}={v}" for k, v in env.items()]
        )
        jobs: dict[str, list[str]] = {}
        for group in planned:
            command = [
                "sbatch", "--parsable", f"--reservation={reservation}", f"--nodelist={','.join(group)}",
                f"--nodes={len(group)}", "--exclusive", f"--time={minutes}", f"--job-name={reservation}",
                f"--export={export}", "--chdir=/tmp", "--output=/dev/null",
            ]  # fmt: skip
            if check.get("partition"):
                command.append(f"--partition={check['partition']}")
            if check.get("qos"):
                command.append(f"--qos={check['qos']}")
            jobs[run(*command, str(args.script)).strip().split(";")[0]] = group
        deadline = time.monotonic() + minutes * 60 + args.grace
        pending = set(jobs)
        while pending and time.monotonic() < deadline:
            time.sleep(args.poll)
            queued = set(run("squeue", "-h", "-o", "%i", "-j", ",".join(pending), check=False).split())
            pending &= queued
        for job in pending:
            run("scancel", job, check=False)
        now = {n.name: n for n in list_nodes()}
        for job, group in jobs.items():
            state, exit_code = job_state(job)
            for node in group:
                current = now.get(node)
                drained_by_job = current is not None and current.reason.startswith(reason_prefix(name))
                if state == "COMPLETED" and not drained_by_job:
                    results[node] = f"PASS {node}"
                    continue
                if job in pending and node in old_reasons and not drained_by_job:
                    # never ran: the node stays drained with the reason it had
                    run("scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={old_reasons[node]}")
                    results[node] = f"FAIL {node}: {old_reasons[node]} (not tested again: the job did not run)"
                    continue
                if not drained_by_job:
                    reason = f"{reason_prefix(name)} job {job} {state} (exit {exit_code})"
                    run("scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason[:200]}")
                    results[node] = f"FAIL {node}: {reason}"
                else:
                    results[node] = f"FAIL {node}: {current.reason if current else ''}"
    finally:
        run("scontrol", "delete", f"ReservationName={reservation}", check=False)
    for line in sorted(results.values()):
        print(line)
    return 1 if any(line.startswith("FAIL") for line in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
