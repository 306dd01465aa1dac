"""What Slurm says is running, read from its JSON: ``squeue --json`` and ``sinfo --json`` (or slurmrestd's
``/slurm/v0.0.45/jobs`` and ``/nodes``, or ``scontrol show nodes --json``).

Checked against Slurm 26.05.3, data_parser v0.0.45 (the captures and how they were made are in
tests/fixtures/slurm-json/README.md):

- jobs: ``{"jobs": [...]}`` (``DATA_PARSER_OPENAPI_JOB_INFO_RESP``). A job holds nodes while its ``job_state``
  has RUNNING, SUSPENDED or COMPLETING; its nodes are the hostlist ``nodes`` (``"cpu[1-2]"``). Numbers that
  Slurm may leave unset (``time_limit``, ``start_time``) come as ``{"set", "infinite", "number"}``; a time limit
  that is ``infinite`` (``-t UNLIMITED``, or ``-t 0``: src/common/slurm_opt.c arg_set_time_limit) is None here.
- when: the jobs' ``last_update``, the moment slurmctld packed the answer (src/slurmctld/job_mgr.c@26.05.3
  ``_pack_init_job_info``: ``pack_time(time(NULL))``); never the file's modification time, which says when the
  file was copied, not when Slurm spoke.
- GPUs of a job: ``gres_detail``, one entry per allocated node, e.g. ``"gpu:h100:2(IDX:0-1)"``; where it is
  empty, ``gres/gpu=N`` of ``tres_alloc_str`` (present when slurmdbd accounts for gres/gpu).
- nodes: ``{"sinfo": [...]}`` from ``sinfo --json`` (nodes grouped by state, with ``gres.total``), or
  ``{"nodes": [...]}``.

Which data_parser wrote it (``meta.plugin.data_parser``) must be said: Slurm 26.05 writes v0.0.42 to v0.0.45,
which this reads. A newer one is read only when every field read here has the shape it has in v0.0.45, with a
warning that says so; otherwise it is refused with the fields that differ. Anything else that is not the shape
read here is a `LiveDataError` naming the item and the field (the commands exit 2).
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hostlist

HOLDING_STATES = frozenset({"RUNNING", "SUSPENDED", "COMPLETING"})
"""Job states in which a job holds its nodes (slurm.h JOB_RUNNING, JOB_SUSPENDED, the COMPLETING flag)."""

DATA_PARSERS = ("data_parser/v0.0.42", "data_parser/v0.0.43", "data_parser/v0.0.44", "data_parser/v0.0.45")
"""The data_parser versions whose job and node shapes this module reads (Slurm 26.05 ships these four)."""
KNOWN_RANGE = "v0.0.42 to v0.0.45"

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

    @property
    def unlimited(self) -> bool:
        return self.time_limit_min is None


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
    """Where it came from, without a machine path: file names, or `slurmrestd`."""
    observed_at: float
    jobs: tuple[LiveJob, ...]
    nodes: Mapping[str, LiveNode]
    warnings: tuple[str, ...] = field(default=())


# --------------------------------------------------------------------------------------------------
# shapes


def number(value: Any, where: str = "value") -> int | None:
    """A Slurm number: plain, or data_parser's ``{"set": bool, "infinite": bool, "number": n}``; None when unset or
    infinite."""
    if isinstance(value, bool):
        raise LiveDataError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, Mapping) and "number" in value:
        if value.get("infinite") or not value.get("set", True):
            return None
        return number(value.get("number"), where)
    if value is None:
        return None
    raise LiveDataError(f"{where}: expected a number, got {json.dumps(value)[:60]}")


def _string(value: Any, where: str, what: str = "a string") -> str:
    if not isinstance(value, str):
        raise LiveDataError(f"{where}: expected {what}, got {json.dumps(value)[:60]}")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise LiveDataError(f"{where}: expected a list of strings, got {json.dumps(value)[:60]}")


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


def expand(nodes: str) -> tuple[str, ...]:
    try:
        return tuple(hostlist.expand_hostlist(nodes)) if nodes else ()
    except hostlist.BadHostlist as error:
        raise LiveDataError(f"bad hostlist {nodes!r}: {error}") from None


def _items(data: Mapping[str, Any], key: str) -> list[Any]:
    items = data.get(key)
    if items is None:
        raise LiveDataError(f"{key!r} is null, not a list")
    if not isinstance(items, list):
        raise LiveDataError(f"{key!r} is {'an object' if isinstance(items, Mapping) else type(items).__name__}, not a list")
    return items


def _job(job: Any, index: int) -> LiveJob:
    if not isinstance(job, Mapping):
        raise LiveDataError(f"jobs[{index}]: expected an object, got {json.dumps(job)[:60]}")
    if "job_id" not in job:
        raise LiveDataError(f"jobs[{index}] (job) has no job_id")
    job_id = number(job["job_id"], f"jobs[{index}]: job_id")
    if job_id is None:
        raise LiveDataError(f"jobs[{index}]: job_id is not set")
    where = f"jobs[{index}] (job {job_id})"
    detail = job.get("gres_detail") or []
    if not isinstance(detail, list) or not all(isinstance(d, str) for d in detail):
        raise LiveDataError(f"{where}: gres_detail: expected a list of strings, got {json.dumps(detail)[:60]}")
    gpus = (
        sum(gres_gpus(entry) for entry in detail)
        if detail
        else tres_gpus(_string(job.get("tres_alloc_str") or "", f"{where}: tres_alloc_str"))
    )
    user = job.get("user_name") or job.get("user_id", "")
    return LiveJob(
        job_id=job_id,
        name=_string(job.get("name", ""), f"{where}: name"),
        user=str(user),
        account=_string(job.get("account", ""), f"{where}: account"),
        partition=_string(job.get("partition", ""), f"{where}: partition"),
        state=_strings(job.get("job_state") or [], f"{where}: job_state"),
        nodes=expand(_string(job.get("nodes") or "", f"{where}: nodes", "a hostlist string")),
        gpus=gpus,
        start_time=number(job.get("start_time"), f"{where}: start_time"),
        time_limit_min=number(job.get("time_limit"), f"{where}: time_limit"),
    )


def _check_response(data: Any, what: str, key: str) -> tuple[Mapping[str, Any], str | None]:
    """`data` if it is Slurm's answer with `key` and no errors, with a warning when a newer data_parser wrote it;
    the caller checks the items' shape (`_newer` turns a shape error into the refusal of a newer version)."""
    if not isinstance(data, Mapping) or key not in data:
        raise LiveDataError(f"{what}: not Slurm JSON with {key!r} (expected the output of data_parser {KNOWN_RANGE})")
    errors = data.get("errors") or []
    if errors:
        first = errors[0] if isinstance(errors[0], Mapping) else {"error": str(errors[0])}
        raise LiveDataError(f"{what}: Slurm reported an error: {first.get('error', '')} ({first.get('description', '')})")
    meta = data.get("meta")
    parser = ((meta.get("plugin") or {}) if isinstance(meta, Mapping) else {}).get("data_parser")
    if not isinstance(parser, str) or not parser:
        raise LiveDataError(
            f"{what}: no meta.plugin.data_parser: which data_parser wrote it cannot be told, so neither can the meaning "
            f"of its fields (Slurm 26.05 writes {KNOWN_RANGE} and says which)"
        )
    if parser in DATA_PARSERS:
        return data, None
    match = re.fullmatch(r"data_parser/v0\.0\.(\d+)", parser)
    if match and int(match.group(1)) > 45:
        return data, f"{what}: written by {parser}, newer than {KNOWN_RANGE}; the fields read here match"
    raise LiveDataError(f"{what}: written by {parser}; this reads data_parser {KNOWN_RANGE}")


def _newer(warning: str | None, error: LiveDataError) -> LiveDataError:
    if warning is None:
        return error
    what, _, rest = warning.partition(": written by ")
    parser = rest.split(",")[0]
    return LiveDataError(f"{what}: written by {parser}, whose fields differ from v0.0.45's: {error}")


def parse_jobs(data: Any, what: str = "jobs", warnings: list[str] | None = None) -> tuple[LiveJob, ...]:
    checked, warning = _check_response(data, what, "jobs")
    try:
        jobs = tuple(_job(job, index) for index, job in enumerate(_items(checked, "jobs")))
    except LiveDataError as error:
        if warning is None:
            raise LiveDataError(f"{what}: {error}") from None
        raise _newer(warning, error) from None
    if warning and warnings is not None:
        warnings.append(warning)
    return jobs


def _sinfo_nodes(data: Mapping[str, Any]) -> dict[str, LiveNode]:
    nodes: dict[str, LiveNode] = {}
    for index, group in enumerate(_items(data, "sinfo")):
        where = f"sinfo[{index}]"
        if not isinstance(group, Mapping):
            raise LiveDataError(f"{where}: expected an object")
        state = _strings((group.get("node") or {}).get("state") or [], f"{where}: node.state")
        gpus = gres_gpus(_string((group.get("gres") or {}).get("total", ""), f"{where}: gres.total"))
        partition = _string((group.get("partition") or {}).get("name") or "", f"{where}: partition.name")
        for name in _strings((group.get("nodes") or {}).get("nodes") or [], f"{where}: nodes.nodes"):
            known = nodes.get(name)
            partitions = (*known.partitions, partition) if known else (partition,)
            nodes[name] = LiveNode(name, state, gpus, tuple(p for p in partitions if p))
    return nodes


def _node(node: Any, index: int) -> LiveNode:
    if not isinstance(node, Mapping) or not isinstance(node.get("name"), str):
        raise LiveDataError(f"nodes[{index}]: expected an object with a name")
    where = f"nodes[{index}] ({node['name']})"
    return LiveNode(
        node["name"],
        _strings(node.get("state") or [], f"{where}: state"),
        gres_gpus(_string(node.get("gres") or "", f"{where}: gres")),
        _strings(node.get("partitions") or [], f"{where}: partitions"),
    )


def parse_nodes(data: Any, what: str = "nodes", warnings: list[str] | None = None) -> dict[str, LiveNode]:
    """Nodes from ``sinfo --json`` (``{"sinfo": [...]}``) or slurmrestd/scontrol (``{"nodes": [...]}``)."""
    key = "sinfo" if isinstance(data, Mapping) and "sinfo" in data else "nodes"
    checked, warning = _check_response(data, what, key)
    try:
        if key == "sinfo":
            nodes = _sinfo_nodes(checked)
        else:
            nodes = {n.name: n for n in (_node(node, i) for i, node in enumerate(_items(checked, "nodes")))}
    except LiveDataError as error:
        if warning is None:
            raise LiveDataError(f"{what}: {error}") from None
        raise _newer(warning, error) from None
    if warning and warnings is not None:
        warnings.append(warning)
    return nodes


def _meta(data: Mapping[str, Any]) -> tuple[str, str]:
    slurm = (data.get("meta") or {}).get("slurm") or {}
    return str(slurm.get("cluster", "")), str(slurm.get("release", ""))


def _last_update(data: Mapping[str, Any], what: str) -> int | None:
    try:
        return number(data.get("last_update"), f"{what}: last_update")
    except LiveDataError:
        raise
    except (TypeError, ValueError):
        return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as error:
        raise LiveDataError(f"{path.name}: {error.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise LiveDataError(f"{path.name}: not JSON ({error})") from None


def load_live(squeue_json: Path, sinfo_json: Path, *, observed_at: float | None = None) -> LiveSlurm:
    """Slurm's jobs and nodes from ``squeue --json`` and ``sinfo --json`` files.

    ``observed_at`` (Unix seconds): when Slurm gave the answer; by default the jobs' own ``last_update``."""
    warnings: list[str] = []
    jobs_data = _read_json(squeue_json)
    jobs = parse_jobs(jobs_data, squeue_json.name, warnings)
    nodes = parse_nodes(_read_json(sinfo_json), sinfo_json.name, warnings)
    cluster, release = _meta(jobs_data)
    when = observed_at if observed_at is not None else _last_update(jobs_data, squeue_json.name)
    if when is None:
        raise LiveDataError(
            f"{squeue_json.name}: no last_update (when slurmctld answered): give --observed-at (Unix seconds or ISO 8601)"
        )
    return LiveSlurm(cluster, release, f"{squeue_json.name} + {sinfo_json.name}", when, jobs, nodes, tuple(warnings))


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
    asked = time.time()

    def get(endpoint: str) -> Any:
        target = f"{base}/slurm/{REST_VERSION}/{endpoint}"
        request = urllib.request.Request(target, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            body = error.read()
            try:
                _check_response(json.loads(body), target, endpoint)
                raise LiveDataError("no error in the answer")
            except (LiveDataError, json.JSONDecodeError) as inner:
                raise LiveDataError(f"{target}: HTTP {error.code}: {inner}") from None
        except (urllib.error.URLError, OSError) as error:
            raise LiveDataError(f"{target}: {getattr(error, 'reason', error)}") from None
        except json.JSONDecodeError as error:
            raise LiveDataError(f"{target}: not JSON ({error})") from None

    warnings: list[str] = []
    jobs_data = get("jobs")
    jobs = parse_jobs(jobs_data, "slurmrestd /jobs", warnings)
    nodes = parse_nodes(get("nodes"), "slurmrestd /nodes", warnings)
    cluster, release = _meta(jobs_data)
    when = observed_at if observed_at is not None else (_last_update(jobs_data, "slurmrestd /jobs") or asked)
    return LiveSlurm(cluster, release, "slurmrestd", when, jobs, nodes, tuple(warnings))
