"""Live impact: the running Slurm jobs on the nodes that a change will drain or restart.

The change's plan (``offline diff``) names the Slurm nodes that will drain or restart; this module
takes what Slurm itself says is running (``squeue --json`` and ``sinfo --json``, or slurmrestd's
``/slurm/v0.0.45/jobs`` and ``/nodes``) and names the jobs on those nodes, their users and accounts,
and the GPU-hours at risk.

Input (checked against Slurm 26.05.3, data_parser v0.0.45; the captures and how they were made are in
tests/fixtures/slurm-json/README.md):

- jobs: ``{"jobs": [...]}`` from ``squeue --json`` or ``GET /slurm/v0.0.45/jobs`` (the same parser,
  ``DATA_PARSER_OPENAPI_JOB_INFO_RESP``). A job holds nodes while its ``job_state`` has RUNNING,
  SUSPENDED or COMPLETING; its nodes are the hostlist ``nodes`` (``"cpu[1-2]"``). Numbers that Slurm
  may leave unset (``time_limit``, ``start_time``) come as ``{"set", "infinite", "number"}``.
- GPUs of a job: ``gres_detail``, one entry per allocated node, e.g. ``"gpu:h100:2(IDX:0-1)"``; where it
  is empty, ``gres/gpu=N`` of ``tres_alloc_str`` (present when slurmdbd accounts for gres/gpu).
- nodes: ``{"sinfo": [...]}`` from ``sinfo --json`` (nodes grouped by state, with ``gres.total``), or
  ``{"nodes": [...]}`` from ``GET /slurm/v0.0.45/nodes`` or ``scontrol show nodes --json``.

Definitions (what the report prints):

- elapsed = ``observed_at - start_time`` (seconds; ``observed_at`` is when the JSON was taken: the
  squeue file's modification time, the moment of the slurmrestd request, or the caller's value);
- GPU-hours at risk = the job's allocated GPUs x elapsed hours: the GPU work already done that is lost
  when the job is killed or requeued without a checkpoint. A job that spans a drained node and others
  is at risk as a whole (Slurm does not shrink a running job);
- GPU-hours still to run = GPUs x (time limit - elapsed), the most that a drain which waits for the job
  can be held up by (None when the limit is infinite).
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hostlist

from ..program.words import plural

HOLDING_STATES = frozenset({"RUNNING", "SUSPENDED", "COMPLETING"})
"""Job states in which a job holds its nodes (slurm.h JOB_RUNNING, JOB_SUSPENDED, the COMPLETING flag)."""

DATA_PARSERS = ("data_parser/v0.0.42", "data_parser/v0.0.43", "data_parser/v0.0.44", "data_parser/v0.0.45")
"""The data_parser versions whose job and node shapes this module reads (Slurm 26.05 ships these four)."""

REST_VERSION = "v0.0.45"


class LiveDataError(ValueError):
    """Slurm's JSON is missing, reports errors, or is not the shape this module reads."""


@dataclass(frozen=True)
class LiveJob:
    job_id: int
    name: str
    user: str
    account: str
    partition: str
    state: tuple[str, ...]
    nodes: tuple[str, ...]
    gpus: int
    start_time: int | None
    time_limit_min: int | None
    """None: no limit (infinite) or not set."""

    @property
    def nodelist(self) -> str:
        return str(hostlist.collect_hostlist(list(self.nodes))) if self.nodes else ""

    @property
    def holds_nodes(self) -> bool:
        return bool(HOLDING_STATES.intersection(self.state))


@dataclass(frozen=True)
class LiveNode:
    name: str
    state: tuple[str, ...]
    gpus: int
    partitions: tuple[str, ...] = ()


@dataclass(frozen=True)
class LiveSlurm:
    cluster: str
    release: str
    source: str
    observed_at: float
    jobs: tuple[LiveJob, ...]
    nodes: Mapping[str, LiveNode]


@dataclass(frozen=True)
class JobAtRisk:
    job: LiveJob
    nodes_hit: tuple[str, ...]
    elapsed_s: int
    remaining_s: int | None

    @property
    def gpu_hours_at_risk(self) -> float:
        return self.job.gpus * self.elapsed_s / 3600

    @property
    def gpu_hours_to_run(self) -> float | None:
        return None if self.remaining_s is None else self.job.gpus * self.remaining_s / 3600


@dataclass(frozen=True)
class LiveImpact:
    cluster: str
    release: str
    source: str
    observed_at: float
    nodes: tuple[str, ...]
    """The nodes the change drains or restarts, sorted."""
    unknown_nodes: tuple[str, ...]
    """Of those, the ones this Slurm does not know (not registered yet, or another naming)."""
    gpus_out: int
    jobs: tuple[JobAtRisk, ...] = field(default_factory=tuple)

    @property
    def users(self) -> tuple[str, ...]:
        return tuple(sorted({risk.job.user for risk in self.jobs}))

    @property
    def gpu_hours_at_risk(self) -> float:
        return sum(risk.gpu_hours_at_risk for risk in self.jobs)

    @property
    def busy_nodes(self) -> set[str]:
        """Of the nodes that drain or restart, those with a job at risk (what `offline diff`'s gate refuses)."""
        return {node for risk in self.jobs for node in risk.nodes_hit}


# --------------------------------------------------------------------------------------------------
# parsing


def _number(value: Any) -> int | None:
    """A Slurm number: plain, or data_parser's ``{"set": bool, "infinite": bool, "number": n}``."""
    if isinstance(value, bool):
        raise LiveDataError(f"expected a number, got {value!r}")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, Mapping):
        if value.get("infinite") or not value.get("set", True):
            return None
        return _number(value.get("number"))
    if value is None:
        return None
    raise LiveDataError(f"expected a number, got {value!r}")


_GRES_ENTRY = re.compile(r"(?:^|,)(?P<name>[a-z_]+)(?::(?P<type>[^:(,]+))?:(?P<count>\d+)(?:\((?P<extra>[^)]*)\))?", re.I)


def gres_gpus(text: str) -> int:
    """The number of GPUs in a GRES string: ``gpu:h100:2(IDX:0-1)`` -> 2, ``gpu:4,nic:1`` -> 4."""
    return sum(int(m["count"]) for m in _GRES_ENTRY.finditer(text or "") if m["name"].lower() == "gpu")


_TRES_GPU = re.compile(r"(?:^|,)gres/gpu(?P<type>:[^=,]+)?=(?P<count>\d+)")


def tres_gpus(text: str) -> int:
    """GPUs in a TRES string: ``gres/gpu=N`` (the total); typed entries (``gres/gpu:h100=N``) only without it."""
    entries = [(m["type"], int(m["count"])) for m in _TRES_GPU.finditer(text or "")]
    untyped = [count for kind, count in entries if kind is None]
    return untyped[0] if untyped else sum(count for _, count in entries)


def _job_gpus(job: Mapping[str, Any]) -> int:
    detail = job.get("gres_detail") or []
    if detail:
        return sum(gres_gpus(entry) for entry in detail)
    return tres_gpus(job.get("tres_alloc_str") or "")


def _expand(nodes: str) -> tuple[str, ...]:
    try:
        return tuple(hostlist.expand_hostlist(nodes)) if nodes else ()
    except hostlist.BadHostlist as error:
        raise LiveDataError(f"bad hostlist {nodes!r}: {error}") from None


def _check_response(data: Any, what: str, key: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping) or key not in data:
        raise LiveDataError(f"{what}: not Slurm JSON with {key!r} (expected the output of data_parser v0.0.42 to v0.0.45)")
    errors = data.get("errors") or []
    if errors:
        first = errors[0] if isinstance(errors[0], Mapping) else {"error": str(errors[0])}
        raise LiveDataError(f"{what}: Slurm reported an error: {first.get('error', '')} ({first.get('description', '')})")
    parser = ((data.get("meta") or {}).get("plugin") or {}).get("data_parser")
    if parser and parser not in DATA_PARSERS:
        raise LiveDataError(f"{what}: written by {parser}; this reads {', '.join(DATA_PARSERS)}")
    return data


def parse_jobs(data: Any, what: str = "jobs") -> tuple[LiveJob, ...]:
    data = _check_response(data, what, "jobs")
    jobs = []
    for job in data["jobs"]:
        state = job.get("job_state") or []
        jobs.append(
            LiveJob(
                job_id=int(job["job_id"]),
                name=str(job.get("name", "")),
                user=str(job.get("user_name") or job.get("user_id", "")),
                account=str(job.get("account", "")),
                partition=str(job.get("partition", "")),
                state=tuple(state if isinstance(state, list) else [state]),
                nodes=_expand(str(job.get("nodes") or "")),
                gpus=_job_gpus(job),
                start_time=_number(job.get("start_time")),
                time_limit_min=_number(job.get("time_limit")),
            )
        )
    return tuple(jobs)


def parse_nodes(data: Any, what: str = "nodes") -> dict[str, LiveNode]:
    """Nodes from ``sinfo --json`` (``{"sinfo": [...]}``) or slurmrestd/scontrol (``{"nodes": [...]}``)."""
    if isinstance(data, Mapping) and "sinfo" in data:
        data = _check_response(data, what, "sinfo")
        nodes: dict[str, LiveNode] = {}
        for group in data["sinfo"]:
            state = tuple((group.get("node") or {}).get("state") or ())
            gpus = gres_gpus((group.get("gres") or {}).get("total", ""))
            partition = ((group.get("partition") or {}).get("name")) or ""
            for name in (group.get("nodes") or {}).get("nodes") or ():
                known = nodes.get(name)
                partitions = (*known.partitions, partition) if known else (partition,)
                nodes[name] = LiveNode(name, state, gpus, tuple(p for p in partitions if p))
        return nodes
    data = _check_response(data, what, "nodes")
    return {
        str(node["name"]): LiveNode(
            str(node["name"]),
            tuple(node.get("state") or ()),
            gres_gpus(str(node.get("gres") or "")),
            tuple(node.get("partitions") or ()),
        )
        for node in data["nodes"]
    }


def _meta(data: Mapping[str, Any]) -> tuple[str, str]:
    slurm = (data.get("meta") or {}).get("slurm") or {}
    return str(slurm.get("cluster", "")), str(slurm.get("release", ""))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as error:
        raise LiveDataError(f"{path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise LiveDataError(f"{path}: not JSON ({error})") from None


def load_live(squeue_json: Path, sinfo_json: Path, *, observed_at: float | None = None) -> LiveSlurm:
    """Slurm's jobs and nodes from ``squeue --json`` and ``sinfo --json`` files.

    ``observed_at`` (Unix seconds) defaults to the squeue file's modification time: when it was captured.
    """
    jobs_data = _read_json(squeue_json)
    jobs = parse_jobs(jobs_data, str(squeue_json))
    nodes = parse_nodes(_read_json(sinfo_json), str(sinfo_json))
    cluster, release = _meta(jobs_data)
    when = squeue_json.stat().st_mtime if observed_at is None else observed_at
    return LiveSlurm(cluster, release, f"{squeue_json} + {sinfo_json}", when, jobs, nodes)


def fetch_live(
    url: str, token: str, *, user: str | None = None, timeout: float = 30, observed_at: float | None = None
) -> LiveSlurm:
    """Slurm's jobs and nodes from slurmrestd (``GET {url}/slurm/v0.0.45/jobs`` and ``/nodes``) with a JWT.

    The token goes in ``X-SLURM-USER-TOKEN`` (and ``user`` in ``X-SLURM-USER-NAME``, needed with a
    token that slurmctld's jwt_key signed for another user), as slurmrestd's rest_auth/jwt reads them.
    """
    headers = {"X-SLURM-USER-TOKEN": token, "Accept": "application/json"}
    if user:
        headers["X-SLURM-USER-NAME"] = user
    base = url.rstrip("/")
    when = time.time() if observed_at is None else observed_at

    def get(endpoint: str) -> Any:
        target = f"{base}/slurm/{REST_VERSION}/{endpoint}"
        request = urllib.request.Request(target, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            body = error.read()
            try:
                return _check_response(json.loads(body), target, endpoint)
            except (LiveDataError, json.JSONDecodeError) as inner:
                raise LiveDataError(f"{target}: HTTP {error.code}: {inner}") from None
        except (urllib.error.URLError, OSError) as error:
            raise LiveDataError(f"{target}: {getattr(error, 'reason', error)}") from None
        except json.JSONDecodeError as error:
            raise LiveDataError(f"{target}: not JSON ({error})") from None

    jobs_data = get("jobs")
    jobs = parse_jobs(jobs_data, f"{base}/slurm/{REST_VERSION}/jobs")
    nodes = parse_nodes(get("nodes"), f"{base}/slurm/{REST_VERSION}/nodes")
    cluster, release = _meta(jobs_data)
    return LiveSlurm(cluster, release, base, when, jobs, nodes)


# --------------------------------------------------------------------------------------------------
# impact


def jobs_at_risk(live: LiveSlurm, nodes: Iterable[str]) -> LiveImpact:
    """The jobs holding any of ``nodes`` (Slurm node names, or hostlists such as ``gpu[1-4]``)."""
    wanted = {name for expression in nodes for name in _expand(expression)}
    risks = []
    for job in live.jobs:
        hit = wanted.intersection(job.nodes)
        if not job.holds_nodes or not hit:
            continue
        elapsed = max(0, int(live.observed_at - job.start_time)) if job.start_time else 0
        remaining = None if job.time_limit_min is None else max(0, job.time_limit_min * 60 - elapsed)
        risks.append(JobAtRisk(job, tuple(sorted(hit)), elapsed, remaining))
    risks.sort(key=lambda risk: (-risk.gpu_hours_at_risk, risk.job.job_id))
    return LiveImpact(
        cluster=live.cluster,
        release=live.release,
        source=live.source,
        observed_at=live.observed_at,
        nodes=tuple(sorted(wanted)),
        unknown_nodes=tuple(sorted(wanted - set(live.nodes))),
        gpus_out=sum(live.nodes[name].gpus for name in wanted if name in live.nodes),
        jobs=tuple(risks),
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


def _headline(impact: LiveImpact) -> str:
    nodes = str(hostlist.collect_hostlist(list(impact.nodes))) if impact.nodes else "no nodes"
    return (
        f"{plural(len(impact.jobs), 'running job')} of {plural(len(impact.users), 'user')} on "
        f"{plural(len(impact.nodes), 'node')} that drain or restart ({nodes}); "
        f"{impact.gpu_hours_at_risk:.2f} GPU-hours at risk, {plural(impact.gpus_out, 'GPU')} out"
    )


_COLUMNS = ("job", "user", "account", "partition", "nodes", "GPUs", "elapsed", "time limit", "GPU-h at risk")


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
        )
        for risk in impact.jobs
    ]


def _source_line(impact: LiveImpact) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(impact.observed_at))
    release = f"Slurm {impact.release}" if impact.release else "Slurm"
    cluster = f" cluster {impact.cluster}" if impact.cluster else ""
    return f"{release}{cluster}, observed {stamp} ({impact.source})"


def render_text(impact: LiveImpact) -> str:
    lines = [f"Live impact: {_headline(impact)}", f"  from {_source_line(impact)}"]
    if impact.unknown_nodes:
        lines.append(f"  not known to Slurm: {hostlist.collect_hostlist(list(impact.unknown_nodes))}")
    rows = _rows(impact)
    if rows:
        widths = [max(len(column), *(len(row[i]) for row in rows)) for i, column in enumerate(_COLUMNS)]
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip())
        lines.extend("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows)
    return "\n".join(lines) + "\n"


def render_markdown(impact: LiveImpact) -> str:
    lines = [f"**Live impact:** {_headline(impact)}", "", f"_From {_source_line(impact)}._"]
    if impact.unknown_nodes:
        lines += ["", f"Not known to Slurm: `{hostlist.collect_hostlist(list(impact.unknown_nodes))}`"]
    rows = _rows(impact)
    if rows:
        lines += ["", "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        lines += ["| " + " | ".join(v.replace("|", "\\|") for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
