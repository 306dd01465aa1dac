#!/usr/bin/env python3
"""Run one scheduled active GPU check (hpcforge:gpu.activeChecks) against Slurm, from its CronJob.

    active_checks.py --config checks.json --check NAME [--script active-check.sh] [--token-file PATH]

Only a check that ran and judged the hardware may drain a node; a drain or resume never touches a reason this check
does not own. For the check NAME (an entry of checks.json, rendered from the config by
components/layers/slurm/active_checks.py):

1. lists the nodes of its nodesets (`sinfo -N`; a nodeset's name is a feature of its nodes) and sorts them into
   - drained by this check earlier (reason `active-check NAME: ...`): tested again and resumed if they pass (with
     `action: drain`; `action: report` leaves them as they are);
   - usable (idle, mixed, allocated, completing, planned, with no reason): tested;
   - anything else (down, drained or reserved by anyone or anything else): left alone;
2. groups them: one node per job, or for an all-reduce `nodes` nodes of one nodeset per job (a short remainder
   joins the last group: no node is in two jobs); a nodeset with fewer usable nodes than that is reported untested;
3. creates the maintenance reservation `active-check-NAME` (Flags=MAINT,IGNORE_JOBS, for the user the check runs
   as) on those nodes: no new user job starts there, running ones finish first; resumes the nodes it drained;
4. submits one job per group into it (`--exclusive --mem=0 --gres=gpu:<the nodeset's GPUs>`: a step gets only the
   GRES its job requested, Slurm 26.05.3 src/stepmgr/stepmgr.c `_copy_job_tres_to_step`, srun(1) --gres; an
   exclusive job's implicit GPUs are not among them), waits until they leave the queue (a failing `squeue` is
   waited through, never read as "done"), cancels what is left at the time limit plus a grace period;
5. reads each job's end from accounting (`sacct`: the live job table forgets a job MinJobAge seconds after it ends):
   COMPLETED with exit 0 is PASS; FAILED with exit 10 (FAIL_EXIT, scripts/gpu/active-check.sh) is FAIL, its reason
   the job's AdminComment; anything else (exit 11: the check could not judge; cancelled, timed out, node failure,
   not in accounting) is ERROR: reported, retried next run, never drained;
6. with `action: drain`, drains each FAIL node and puts back the drain of a node it had resumed whose job did not
   judge it, each time re-reading the node immediately before: `scontrol update ... Reason=` replaces any reason
   (Slurm 26.05.3 src/slurmctld/node_mgr.c), so a node that anyone or anything else (an admin, the GPU prolog)
   drained meanwhile is left as it is;
7. deletes the reservation and prints a summary line, then one line per node (PASS/FAIL/ERROR/SKIP). A run that
   ends early (SIGTERM: the pod deleted or past its deadline) cancels its jobs, drains again each node it had resumed
   and deletes the reservation all the same.

Exit status: 1 when a node failed, else 2 when a node could not be judged or nothing was tested (unassessed: the
CronJob's Job fails, alert GpuActiveCheckFailed), else 0.

Credentials: with --token-file, the Slurm clients authenticate with the JWT in that file (SLURM_JWT, auth/jwt; read
again before every command, as the Secret behind it is refreshed), so the pod holds no slurm.key. The check then runs
as the token's user, which needs AdminLevel=Administrator: on 26.05.3 creating a reservation needs Operator
(src/slurmctld/proc_req.c `_slurm_rpc_resv_create`) but `scontrol update node` needs Administrator
(`_slurm_rpc_update_node`: validate_super_user), and so does a job's AdminComment (job_mgr.c).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import pwd
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PREFIX = "active-check"
FAIL_EXIT = 10
"""The job script's exit status when the check ran and judged the hardware failing (the only verdict that drains)."""
ERROR_EXIT = 11
"""The job script's exit status when the check could not judge (a tool missing or unreachable, a run that broke)."""
USABLE = {"idle", "mixed", "allocated", "completing", "planned"}
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}
REASON_LENGTH = 200


@dataclass
class Node:
    name: str
    features: set[str]
    state: str
    reason: str


@dataclass
class Group:
    nodeset: str
    nodes: list[str]
    job: str = ""


@dataclass
class Report:
    lines: dict[str, str] = field(default_factory=dict)

    def add(self, verdict: str, node: str, detail: str = "") -> None:
        self.lines[node] = f"{verdict} {node}" + (f": {detail}" if detail else "")

    def count(self, verdict: str) -> int:
        return sum(1 for line in self.lines.values() if line.startswith(verdict + " "))


def progress(message: str) -> None:
    print(f"{PREFIX}: {message}", file=sys.stderr, flush=True)


class Slurm:
    """Runs Slurm's clients; never raises for a failing command (the caller decides what a failure means)."""

    def __init__(self, token_file: Path | None) -> None:
        self.token_file = token_file

    def token(self) -> str:
        if self.token_file is None:
            return ""
        text = self.token_file.read_text().strip()
        return text.split("=", 1)[1] if text.startswith("SLURM_JWT=") else text

    def call(self, *argv: str, timeout: float = 120, extra_env: dict[str, str] | None = None) -> tuple[int, str, str]:
        env = {**os.environ, **(extra_env or {})}
        if self.token_file is not None:
            env["SLURM_JWT"] = self.token()
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, env=env)
        except (OSError, subprocess.TimeoutExpired) as error:
            return 255, "", str(error)
        return result.returncode, result.stdout, result.stderr.strip() or result.stdout.strip()

    def user(self) -> str:
        """Who the check runs as: the token's user (claim `sun`), else this process's user."""
        token = self.token()
        if token:
            payload = token.split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            return str(claims.get("sun") or claims["username"])
        return pwd.getpwuid(os.getuid()).pw_name


def reason_prefix(name: str) -> str:
    return f"{PREFIX} {name}:"


def parse_nodes(text: str) -> dict[str, Node]:
    nodes: dict[str, Node] = {}
    for line in text.splitlines():
        name, features, state, reason = [*line.split("|", 3), "", "", ""][:4]
        if name:
            nodes[name] = Node(name, set(features.split(",")), state.lower(), "" if reason == "none" else reason)
    return nodes


def list_nodes(slurm: Slurm, names: list[str] | None = None) -> dict[str, Node] | None:
    """The nodes (all, or `names`) as slurmctld has them now; None when it does not answer."""
    argv = ["sinfo", "-h", "-N", "-o", "%N|%b|%T|%E"] + (["-n", ",".join(names)] if names else [])
    rc, out, err = slurm.call(*argv)
    if rc != 0:
        progress(f"sinfo failed (exit {rc}): {err}")
        return None
    return parse_nodes(out)


def base_state(state: str) -> str:
    return state.rstrip("*~#!%$@^-")


def sort_nodes(nodes: list[Node], check: dict[str, Any]) -> tuple[list[Node], list[Node], list[Node]]:
    """(drained by this check, usable, left alone) among the nodes of the check's nodesets."""
    ours, usable, others = [], [], []
    for node in nodes:
        if not node.features & set(check["nodesets"]):
            continue
        base = base_state(node.state)
        if "drain" in base and node.reason.startswith(reason_prefix(check["name"])):
            ours.append(node)
        elif base in USABLE and not node.reason:
            usable.append(node)
        else:
            others.append(node)
    return ours, usable, others


def plan_groups(targets: list[Node], check: dict[str, Any]) -> tuple[list[Group], dict[str, str]]:
    """The jobs' node lists, and the nodes left untested with why. One node per job, or for an all-reduce groups of
    `nodes` nodes of one nodeset; a short remainder joins the last group (an all-reduce over more nodes tests as
    well; borrowing a node of another group would make the two jobs wait for each other)."""
    by_nodeset: dict[str, list[str]] = {nodeset: [] for nodeset in check["nodesets"]}
    for node in targets:
        nodeset = next(n for n in check["nodesets"] if n in node.features)
        by_nodeset[nodeset].append(node.name)
    groups: list[Group] = []
    untested: dict[str, str] = {}
    size = int(check["nodes"]) if check["kind"] == "nccl-allreduce" else 1
    for nodeset, names in by_nodeset.items():
        if len(names) < size:
            for name in names:
                untested[name] = f"not tested: {len(names)} usable node(s) in nodeset {nodeset}, the all-reduce needs {size}"
            continue
        chunks = [names[i : i + size] for i in range(0, len(names), size)]
        if len(chunks) > 1 and len(chunks[-1]) < size:
            remainder = chunks.pop()
            chunks[-1] = chunks[-1] + remainder
        groups += [Group(nodeset, chunk) for chunk in chunks]
    return groups, untested


def guarded_update(slurm: Slurm, node: str, name: str, *, resume: bool = False, reason: str = "") -> str:
    """Drain (with `reason`) or resume `node` only if, re-read right now, the node carries no reason but this
    check's (a drain) or this check's drain (a resume). What was done, or why not."""
    current = list_nodes(slurm, [node])
    if current is None or node not in current:
        return "not changed: could not re-read the node"
    now = current[node]
    ours = now.reason.startswith(reason_prefix(name))
    if resume:
        if not ours:
            return f"not resumed: now {now.state}" + (f" ({now.reason})" if now.reason else "")
        argv = ["scontrol", "update", f"NodeName={node}", "State=RESUME"]
    else:
        if now.reason and not ours:
            return f"not drained: it carries a reason that is not this check's ({now.reason})"
        argv = ["scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason[:REASON_LENGTH]}"]
    rc, _, err = slurm.call(*argv)
    if rc != 0:
        return f"not changed: scontrol failed (exit {rc}): {err}"
    return "resumed" if resume else "drained"


def submit(slurm: Slurm, check: dict[str, Any], group: Group, reservation: str, script: Path) -> str:
    """sbatch one group's job; its id, or raises RuntimeError with sbatch's complaint."""
    gpus = check.get("gpus", {}).get(group.nodeset)
    if not gpus:
        raise RuntimeError(f"checks.json gives no GPU count for nodeset {group.nodeset}")
    # The job's settings travel in sbatch's own environment, with no --export: sbatch keeps SLURM_JWT out of the job's
    # environment only then (26.05.3 src/sbatch/sbatch.c, DEF_ENV_EXCLUDE applies when --export is not given); a job
    # with it would hand the token to every step, and srun refuses auth/jwt ("auth/jwt is not supported for use with
    # srun", src/srun/srun.c).
    env = {f"ACTIVE_CHECK_{key}": str(value) for key, value in check["env"].items()}
    env.update(ACTIVE_CHECK_NAME=check["name"], ACTIVE_CHECK_KIND=check["kind"])
    # ib-link judges the HCAs the nodeset's pool declares (rdma.pools[].nics[].hca), not every one its pod sees.
    hcas = check.get("hcas", {}).get(group.nodeset)
    if hcas:
        env["ACTIVE_CHECK_HCAS"] = ",".join(hcas)
    argv = [
        "sbatch", "--parsable", f"--reservation={reservation}", f"--nodelist={','.join(group.nodes)}",
        f"--nodes={len(group.nodes)}", "--exclusive", "--mem=0", f"--gres=gpu:{gpus}",
        f"--time={int(check['timeLimitMinutes'])}", f"--job-name={reservation}", "--chdir=/tmp", "--output=/dev/null",
    ]  # fmt: skip
    if check.get("partition"):
        argv.append(f"--partition={check['partition']}")
    if check.get("qos"):
        argv.append(f"--qos={check['qos']}")
    rc, out, err = slurm.call(*argv, str(script), extra_env=env)
    if rc != 0:
        raise RuntimeError(f"sbatch failed (exit {rc}): {err}")
    return out.strip().split(";")[0]


def wait_for(slurm: Slurm, jobs: set[str], job_name: str, deadline: float, poll: float) -> set[str]:
    """Wait until no job of `jobs` is in the queue, or the deadline; the jobs still queued (all of them when the
    queue could not be read: an unanswered squeue is never taken as "they ended")."""
    queued = set(jobs)
    while queued and time.monotonic() < deadline:
        time.sleep(poll)
        rc, out, err = slurm.call("squeue", "-h", "-o", "%i", f"--name={job_name}", timeout=60)
        if rc != 0:
            progress(f"squeue failed (exit {rc}): {err}; waiting on")
            continue
        queued &= set(out.split())
    return queued


def accounted(slurm: Slurm, jobs: list[str], budget: float, poll: float) -> dict[str, tuple[str, str, str]]:
    """Job -> (state, exit code, AdminComment) from accounting, waiting up to `budget` seconds for every job's end
    to be recorded (slurmctld sends it to slurmdbd after the job ends). Jobs accounting does not know are left out."""
    deadline = time.monotonic() + budget
    found: dict[str, tuple[str, str, str]] = {}
    while True:
        argv = ["sacct", "-n", "-P", "-X", "-j", ",".join(jobs), "-o", "JobIDRaw,State,ExitCode,AdminComment"]
        rc, out, err = slurm.call(*argv, timeout=60)
        if rc == 0:
            for line in out.splitlines():
                job, state, code, comment = [*line.split("|", 3), "", "", ""][:4]
                if job in jobs:
                    found[job] = ((state.split() or ["UNKNOWN"])[0], code, comment)
        else:
            progress(f"sacct failed (exit {rc}): {err}")
        if all(job in found and found[job][0] in ENDED for job in jobs) or time.monotonic() >= deadline:
            return found
        time.sleep(poll)


def judge(job: str, end: tuple[str, str, str] | None, name: str) -> tuple[str, str]:
    """(PASS | FAIL | ERROR, detail) of one job's end."""
    if end is None:
        return "ERROR", f"job {job}: not in accounting: not judged, retried next run"
    state, code, comment = end
    if state == "COMPLETED" and code == "0:0":
        return "PASS", ""
    if state == "FAILED" and code == f"{FAIL_EXIT}:0":
        reason = comment if comment.startswith(reason_prefix(name)) else f"{reason_prefix(name)} job {job} failed the check"
        return "FAIL", reason
    if state == "FAILED" and code == f"{ERROR_EXIT}:0":
        why = comment or f"not judged (exit {ERROR_EXIT}; the job could not record why)"
        return "ERROR", f"job {job}: {why}; retried next run"
    return "ERROR", f"job {job} {state} (exit {code}): not judged, retried next run"


def run_check(slurm: Slurm, check: dict[str, Any], args: argparse.Namespace, report: Report) -> None:
    """Steps 1 to 6 (see the module's docstring); fills `report`."""
    name, drain = check["name"], check.get("action", "report") == "drain"
    reservation = f"{PREFIX}-{name}"
    slurm.call("scontrol", "delete", f"ReservationName={reservation}")  # left by a run that was killed
    nodes = list_nodes(slurm)
    if nodes is None:
        report.add("ERROR", "-", "slurmctld did not answer sinfo: nothing tested")
        return
    ours, usable, others = sort_nodes(list(nodes.values()), check)
    for node in others:
        report.add("SKIP", node.name, node.state + (f" ({node.reason})" if node.reason else ""))
    if not drain:
        for node in ours:
            report.add("SKIP", node.name, f"{node.reason} (action report: not resumed, not tested)")
        ours = []
    groups, untested = plan_groups(ours + usable, check)
    for node_name, why in untested.items():
        report.add("ERROR", node_name, why)
    targets = [node for group in groups for node in group.nodes]
    if not targets:
        return
    minutes = int(check["timeLimitMinutes"])
    rc, _, err = slurm.call(
        "scontrol", "create", "reservation", f"ReservationName={reservation}", "StartTime=now",
        f"Duration={minutes + 5}", f"Users={slurm.user()}", "Flags=MAINT,IGNORE_JOBS", f"Nodes={','.join(targets)}",
    )  # fmt: skip
    if rc != 0:
        for node_name in targets:
            report.add("ERROR", node_name, f"not tested: the reservation could not be made (exit {rc}): {err}")
        return
    old = {node.name: node.reason for node in ours if node.name in targets}
    ended = False
    try:
        for node_name in old:
            progress(f"{node_name}: {guarded_update(slurm, node_name, name, resume=True)} for the test")
        for group in groups:
            try:
                group.job = submit(slurm, check, group, reservation, args.script)
                progress(f"job {group.job} on {','.join(group.nodes)}")
            except RuntimeError as error:
                for node_name in group.nodes:
                    report.add("ERROR", node_name, f"not tested: {error}")
        submitted = [group for group in groups if group.job]
        deadline = time.monotonic() + minutes * 60 + args.grace
        left = wait_for(slurm, {g.job for g in submitted}, reservation, deadline, args.poll)
        for job in sorted(left):
            progress(f"job {job} still queued at the time limit: cancelled")
            slurm.call("scancel", job)
        wait_for(slurm, left, reservation, time.monotonic() + args.settle, args.poll)
        ends = accounted(slurm, [g.job for g in submitted], args.settle, args.poll) if submitted else {}
        for group in submitted:
            verdict, detail = judge(group.job, ends.get(group.job), name)
            for node_name in group.nodes:
                conclude(slurm, report, node_name, verdict, detail, name=name, drain=drain)
        ended = True
    finally:
        if not ended:  # jobs may still run: Slurm deletes no reservation that has any ("Reservation busy")
            jobs = [group.job for group in groups if group.job]
            if jobs:
                slurm.call("scancel", *jobs)
        # A node resumed for the test that was not judged (whatever ended the run: a verdict of ERROR, an exception,
        # SIGTERM) gets its drain back before the reservation that kept user jobs off it goes.
        for node_name, reason in old.items():
            line = report.lines.get(node_name, "")
            if not line.startswith(("PASS ", "FAIL ")):
                done = guarded_update(slurm, node_name, name, reason=reason)
                line = line or f"ERROR {node_name}: the run ended before its job was judged"
                report.lines[node_name] = f"{line} (it stays drained: {reason}: {done})"
        delete_reservation(slurm, reservation, wait=20)


def delete_reservation(slurm: Slurm, reservation: str, wait: float) -> None:
    """Delete the reservation, trying again for up to `wait` seconds while cancelled jobs end."""
    deadline = time.monotonic() + wait
    while True:
        rc, _, err = slurm.call("scontrol", "delete", f"ReservationName={reservation}", timeout=30)
        if rc == 0 or time.monotonic() >= deadline:
            if rc != 0:
                progress(f"reservation {reservation} not deleted (exit {rc}: {err}); it ends by itself")
            return
        time.sleep(1)


def conclude(slurm: Slurm, report: Report, node: str, verdict: str, detail: str, **how: Any) -> None:
    """Record one node's verdict; drain it if it failed and the check may drain."""
    if verdict != "FAIL":
        report.add(verdict, node, detail)
    elif not how["drain"]:
        report.add("FAIL", node, f"{detail} (action report: not drained)")
    else:
        report.add("FAIL", node, f"{detail} ({guarded_update(slurm, node, how['name'], reason=detail)})")


class StoppedError(Exception):
    """SIGTERM arrived."""


def _stop(signum: int, frame: object) -> None:
    raise StoppedError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--check", required=True)
    parser.add_argument("--script", type=Path, default=Path(__file__).with_name("active-check.sh"))
    parser.add_argument("--token-file", type=Path, help="a file with the JWT (SLURM_JWT) the clients authenticate with")
    parser.add_argument("--poll", type=float, default=5.0)
    parser.add_argument("--grace", type=float, default=300.0, help="seconds to wait beyond the time limit")
    parser.add_argument("--settle", type=float, default=120.0, help="seconds to wait for cancelled jobs and accounting")
    args = parser.parse_args(argv)
    checks = {c["name"]: c for c in json.loads(args.config.read_text())["checks"]}
    check = checks[args.check]
    report = Report()
    signal.signal(signal.SIGTERM, _stop)  # the pod deleted, or the Job's activeDeadlineSeconds: clean up first
    try:
        run_check(Slurm(args.token_file), check, args, report)
    except StoppedError:
        report.add("ERROR", "-", "the run was stopped (SIGTERM) before it ended")
    except (OSError, ValueError, KeyError) as error:  # e.g. no token file: unassessed (2), not "a node failed" (1)
        report.add("ERROR", "-", f"the run broke off: {type(error).__name__}: {error}")
    failed, errors, skipped = report.count("FAIL"), report.count("ERROR"), report.count("SKIP")
    passed = report.count("PASS")
    print(
        f"{PREFIX} {check['name']} (action {check.get('action', 'report')}): {passed} passed, {failed} failed, "
        f"{errors} not judged, {skipped} left alone"
    )
    if not passed and not failed:
        print(f"{PREFIX} {check['name']}: no node was judged")
    for line in sorted(report.lines.values()):
        print(line)
    if failed:
        return 1
    if errors or not passed:
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
