"""Live impact: the running Slurm jobs on the nodes that a change drains or stops, as Slurm reports them
(offline/live/slurm_json.py reads the JSON).

A change (``offline diff``) drains some Slurm nodes and may stop others without a drain (a NodeSet deleted). A
drain WAITS for the jobs: the operator deletes a pod only once its Slurm node is drained (slurm-operator v1.2.1
docs/concepts/nodeset-controller.md:137), so nothing is lost, but the roll takes as long as the jobs run, and a
job without a time limit holds it forever. A stopped node kills its jobs.

Definitions (what the report prints):

- elapsed = ``observed_at - start_time``, ``observed_at`` being when Slurm answered (slurm_json.py);
- GPU-hours at risk = the job's GPUs x elapsed hours: the work lost when the job is killed or requeued without a
  checkpoint (a job on several nodes is at risk as a whole: Slurm does not shrink a running job);
- GPU-hours still to run = GPUs x (time limit - elapsed): the most a drain that waits for the job waits for, in
  GPU work; none when the limit is infinite, and then the drain never finishes by itself;
- batches (offline/live/drains.py): the nodes of a NodeSet roll in the operator's order, maxUnavailable at a
  time; a batch waits for its longest job. The order and the waits are those of the jobs running now.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import hostlist

from ..program.words import plural
from .drains import UNLIMITED_S, Drain, batches
from .slurm_json import LiveJob, LiveSlurm, expand


@dataclass(frozen=True)
class JobAtRisk:
    job: LiveJob
    nodes_hit: tuple[str, ...]
    elapsed_s: int
    remaining_s: int | None
    """None: no time limit."""

    @property
    def gpu_hours_at_risk(self) -> float:
        return self.job.gpus * self.elapsed_s / 3600

    @property
    def gpu_hours_to_run(self) -> float | None:
        return None if self.remaining_s is None else self.job.gpus * self.remaining_s / 3600


@dataclass(frozen=True)
class Batch:
    """Nodes that drain at the same time, and the running jobs their drain waits for."""

    number: int
    nodes: tuple[str, ...]
    jobs: tuple[JobAtRisk, ...]
    gpus_out: int

    @property
    def unlimited(self) -> tuple[JobAtRisk, ...]:
        return tuple(risk for risk in self.jobs if risk.remaining_s is None)

    @property
    def wait_s(self) -> int | None:
        """How long this batch waits for its jobs (by their limits); None: never (a job without a limit)."""
        if self.unlimited:
            return None
        return max((risk.remaining_s or 0 for risk in self.jobs), default=0)

    @property
    def gpu_hours_to_run(self) -> float:
        return sum(risk.gpu_hours_to_run or 0 for risk in self.jobs)


@dataclass(frozen=True)
class DrainView:
    drain: Drain
    batches: tuple[Batch, ...]

    @property
    def never_finishes(self) -> tuple[tuple[JobAtRisk, str], ...]:
        """(job, node) for every job without a time limit on a node this drain takes."""
        return tuple((risk, node) for batch in self.batches for risk in batch.unlimited for node in risk.nodes_hit)

    @property
    def wait_s(self) -> int | None:
        """The batches one after the other, each as long as its longest job: None when one never ends."""
        waits = [batch.wait_s for batch in self.batches]
        return None if any(w is None for w in waits) else sum(w or 0 for w in waits)


@dataclass(frozen=True)
class LiveImpact:
    cluster: str
    release: str
    source: str
    observed_at: float
    nodes: tuple[str, ...]
    """Every node the change drains or stops, sorted."""
    unknown_nodes: tuple[str, ...]
    """Of those, the ones this Slurm does not know (not registered yet, or another naming)."""
    gpus_out: int
    jobs: tuple[JobAtRisk, ...] = field(default_factory=tuple)
    drains: tuple[DrainView, ...] = ()
    stopped: tuple[str, ...] = ()
    """Nodes stopped without a drain: their jobs are killed."""
    warnings: tuple[str, ...] = ()

    @property
    def users(self) -> tuple[str, ...]:
        return tuple(sorted({risk.job.user for risk in self.jobs}))

    @property
    def killed(self) -> tuple[JobAtRisk, ...]:
        stopped = set(self.stopped)
        return tuple(risk for risk in self.jobs if stopped.intersection(risk.job.nodes))

    @property
    def gpu_hours_at_risk(self) -> float:
        """Of the jobs on stopped nodes (killed), or of every job when nothing says which nodes drain (`live-impact`)."""
        return sum(risk.gpu_hours_at_risk for risk in (self.killed if self.drains or self.stopped else self.jobs))

    @property
    def gpu_hours_to_run(self) -> float:
        return sum(risk.gpu_hours_to_run or 0 for risk in self.jobs)

    @property
    def busy_nodes(self) -> set[str]:
        """Of the nodes that drain or stop, those running a job."""
        return {node for risk in self.jobs for node in risk.nodes_hit}

    @property
    def never_finishes(self) -> tuple[tuple[JobAtRisk, str], ...]:
        found = [pair for view in self.drains for pair in view.never_finishes]
        if not self.drains:
            found = [(risk, node) for risk in self.jobs if risk.remaining_s is None for node in risk.nodes_hit]
        return tuple(found)


# --------------------------------------------------------------------------------------------------
# figures


def _risk(live: LiveSlurm, job: LiveJob, hit: Iterable[str]) -> JobAtRisk:
    elapsed = max(0, int(live.observed_at - job.start_time)) if job.start_time else 0
    remaining = None if job.time_limit_min is None else max(0, job.time_limit_min * 60 - elapsed)
    return JobAtRisk(job, tuple(sorted(hit)), elapsed, remaining)


def _running_on(live: LiveSlurm, nodes: set[str]) -> list[JobAtRisk]:
    risks = [
        _risk(live, job, nodes.intersection(job.nodes)) for job in live.jobs if job.holds_nodes and nodes.intersection(job.nodes)
    ]
    risks.sort(key=lambda risk: (-risk.gpu_hours_at_risk, risk.job.job_id))
    return risks


def deadlines(live: LiveSlurm) -> dict[str, float]:
    """Per node, when its RUNNING jobs end by their limits, the latest: the operator's `pod-deadline`
    (offline/live/drains.py; an unlimited job counts as start + math.MaxInt64 ns)."""
    found: dict[str, float] = {}
    for job in live.jobs:
        if "RUNNING" not in job.state:
            continue
        start = job.start_time or 0
        end = start + (UNLIMITED_S if job.time_limit_min is None else job.time_limit_min * 60)
        for node in job.nodes:
            found[node] = max(found.get(node, 0.0), float(end))
    return found


def drain_view(live: LiveSlurm, drain: Drain) -> DrainView:
    ends = deadlines(live)
    views = []
    for number, nodes in enumerate(batches(drain, ends), start=1):
        wanted = set(nodes)
        views.append(
            Batch(
                number, tuple(nodes), tuple(_running_on(live, wanted)), sum(live.nodes[n].gpus for n in nodes if n in live.nodes)
            )
        )
    return DrainView(drain, tuple(views))


def jobs_at_risk(
    live: LiveSlurm, nodes: Iterable[str] = (), *, drains: Iterable[Drain] = (), stopped: Iterable[str] = ()
) -> LiveImpact:
    """The jobs holding any node the change drains or stops.

    `nodes`: Slurm node names or hostlists (``gpu[1-4]``) with no drain order known; `drains`: the NodeSets' drains
    (ordered and batched the operator's way); `stopped`: nodes stopped without a drain."""
    views = tuple(drain_view(live, drain) for drain in drains)
    wanted = {name for expression in nodes for name in expand(expression)}
    wanted |= {node for view in views for batch in view.batches for node in batch.nodes}
    wanted |= set(stopped)
    return LiveImpact(
        cluster=live.cluster,
        release=live.release,
        source=live.source,
        observed_at=live.observed_at,
        nodes=tuple(sorted(wanted)),
        unknown_nodes=tuple(sorted(wanted - set(live.nodes))),
        gpus_out=sum(live.nodes[name].gpus for name in wanted if name in live.nodes),
        jobs=tuple(_running_on(live, wanted)),
        drains=views,
        stopped=tuple(sorted(set(stopped))),
        warnings=live.warnings,
    )


# --------------------------------------------------------------------------------------------------
# rendering


def duration(seconds: int | None) -> str:
    """Slurm's elapsed-time format: ``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS``; ``UNLIMITED`` for None."""
    if seconds is None:
        return "UNLIMITED"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def _hosts(nodes: Iterable[str]) -> str:
    names = list(nodes)
    return str(hostlist.collect_hostlist(names)) if names else "no nodes"


def headline(impact: LiveImpact) -> str:
    verb = "drain or stop" if impact.stopped else "drain or restart"
    line = (
        f"{plural(len(impact.jobs), 'running job')} of {plural(len(impact.users), 'user')} on "
        f"{plural(len(impact.nodes), 'node')} that {verb} ({_hosts(impact.nodes)}); "
        f"{impact.gpu_hours_at_risk:.2f} GPU-hours at risk, {impact.gpu_hours_to_run:.2f} GPU-hours still to run, "
        f"{plural(impact.gpus_out, 'GPU')} out"
    )
    if impact.never_finishes:
        line += f"; {plural(len({r.job.job_id for r, _ in impact.never_finishes}), 'job')} without a time limit"
    return line


def notes(impact: LiveImpact) -> list[str]:
    """One line each: the drains batch by batch, the jobs that hold a drain forever, the killed jobs, warnings."""
    lines = [f"warning: {w}" for w in impact.warnings]
    for view in impact.drains:
        drain = view.drain
        how = (
            f"scale-in: {drain.take} of {plural(len(drain.nodes), 'node')}"
            if drain.kind == "scale-in"
            else f"roll of {plural(len(drain.nodes), 'node')}, {drain.batch} at a time"
        )
        total = view.wait_s
        lines.append(
            f"{drain.nodeset} ({how}, in the operator's order: idle nodes first, then the earliest job end, then the highest "
            f"ordinal): {'never finishes' if total is None else f'waits up to {duration(total)} for the jobs running now'}"
        )
        for batch in view.batches:
            wait = batch.wait_s
            waits = (
                "drains at once (idle)"
                if not batch.jobs
                else ("never drains" if wait is None else f"waits up to {duration(wait)}")
            )
            lines.append(
                f"  batch {batch.number}: {_hosts(batch.nodes)}: {waits}; {plural(len(batch.jobs), 'job')}, "
                f"{batch.gpu_hours_to_run:.2f} GPU-hours still to run, {plural(batch.gpus_out, 'GPU')} out"
            )
    seen: set[tuple[int, str]] = set()
    for risk, node in impact.never_finishes:
        if (risk.job.job_id, node) not in seen:
            seen.add((risk.job.job_id, node))
            lines.append(f"job {risk.job.job_id} ({risk.job.user}) has no time limit: a drain of {node} never finishes")
    if impact.stopped:
        killed = impact.killed
        lines.append(
            f"stopped without a drain: {_hosts(impact.stopped)}: {plural(len(killed), 'job')} killed, "
            f"{sum(r.gpu_hours_at_risk for r in killed):.2f} GPU-hours lost"
        )
    return lines


_COLUMNS = ("job", "user", "account", "partition", "nodes", "GPUs", "elapsed", "time limit", "GPU-h at risk", "GPU-h to run")


def _rows(impact: LiveImpact) -> list[tuple[str, ...]]:
    return [
        (
            str(risk.job.job_id),
            risk.job.user,
            risk.job.account,
            risk.job.partition,
            risk.job.nodelist,
            str(risk.job.gpus),
            duration(risk.elapsed_s),
            duration(None if risk.job.time_limit_min is None else risk.job.time_limit_min * 60),
            f"{risk.gpu_hours_at_risk:.2f}",
            "never ends" if risk.gpu_hours_to_run is None else f"{risk.gpu_hours_to_run:.2f}",
        )
        for risk in impact.jobs
    ]


def source_line(impact: LiveImpact) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(impact.observed_at))
    release = f"Slurm {impact.release}" if impact.release else "Slurm"
    cluster = f" cluster {impact.cluster}" if impact.cluster else ""
    return f"{release}{cluster}, observed {stamp} ({impact.source})"


def render_text(impact: LiveImpact) -> str:
    lines = [f"Live impact: {headline(impact)}", f"  from {source_line(impact)}"]
    lines += [f"  {line}" for line in notes(impact)]
    if impact.unknown_nodes:
        lines.append(f"  not known to Slurm: {_hosts(impact.unknown_nodes)}")
    rows = _rows(impact)
    if rows:
        widths = [max(len(column), *(len(row[i]) for row in rows)) for i, column in enumerate(_COLUMNS)]
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip())
        lines.extend("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows)
    return "\n".join(lines) + "\n"


def render_markdown(impact: LiveImpact) -> str:
    lines = [f"**Live impact:** {headline(impact)}", "", f"_From {source_line(impact)}._"]
    extra = notes(impact)
    if extra:
        lines += ["", *(f"- {line.strip()}" if not line.startswith("  ") else f"  - {line.strip()}" for line in extra)]
    if impact.unknown_nodes:
        lines += ["", f"Not known to Slurm: `{_hosts(impact.unknown_nodes)}`"]
    rows = _rows(impact)
    if rows:
        lines += ["", "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        lines += ["| " + " | ".join(v.replace("|", "\\|") for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
