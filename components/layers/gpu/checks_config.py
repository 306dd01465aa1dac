"""Scheduled active GPU health checks (`hpcforge:gpu.activeChecks`): what runs, where, when, and what it costs.

Per-job checks (the GPU prolog and epilog) see one job's GPUs for seconds; an active check takes whole nodes out of
service on a schedule and tests what a job cannot: a DCGM diagnostic at a level, an NCCL all-reduce across nodes
over the RDMA fabric, the InfiniBand/RoCE links. Each runs as Slurm jobs in a maintenance reservation; a node that
fails is drained with a reason naming the check (`active-check <name>: ...`), and resumed when a later run passes
(only nodes the check drained itself). See docs/layers/gpu.md "Active checks".

`weekly_gpu_hours` is what each check costs: the GPU-hours per week it holds GPU nodes away from jobs, at most
(runs per week from the cron schedule, times the GPUs it holds, times its time limit). The change-impact report
prints it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from ...config.base import StrictModel

if TYPE_CHECKING:
    from ..slurm.config import SlurmConfig

CheckKind = Literal["dcgm-diag", "nccl-allreduce", "ib-link"]

_CRON_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))
_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")


def cron_field(text: str, low: int, high: int) -> set[int]:
    """The values one cron field (`*`, `5`, `1-5`, `*/15`, `1,3,5`, `0-30/10`) matches; ValueError otherwise."""
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else None
        if step_text and step is None:
            raise ValueError(f"{part!r}: the step must be a positive number")
        if body == "*":
            start, end = low, high
        elif re.fullmatch(r"[0-9]+", body):
            start = end = int(body)
            if step is not None:
                end = high
        elif re.fullmatch(r"[0-9]+-[0-9]+", body):
            start, end = (int(x) for x in body.split("-"))
        else:
            raise ValueError(f"{part!r} is not a cron field value (*, N, N-M, with /STEP, comma-separated)")
        if not low <= start <= end <= high:
            raise ValueError(f"{part!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step or 1))
    return values


def parse_cron(schedule: str) -> list[set[int]]:
    """The five fields of a cron schedule (Kubernetes CronJob syntax without @-macros), as sets of values."""
    fields = schedule.split()
    if len(fields) != 5:
        raise ValueError(f"{schedule!r} is not a cron schedule (five fields: minute hour day-of-month month day-of-week)")
    parsed = []
    for text, (name, low, high) in zip(fields, _CRON_FIELDS, strict=True):
        try:
            parsed.append(cron_field(text, low, high))
        except ValueError as error:
            raise ValueError(f"{schedule!r}: {name}: {error}") from None
    if 7 in parsed[4]:
        parsed[4] = (parsed[4] - {7}) | {0}  # both 0 and 7 are Sunday
    return parsed


WEEKS_PER_YEAR = 365.2425 / 7


def _month_share(day: int) -> float:
    """Share of months that have this day of the month (29: 11.25 of 12, counting leap Februaries; 30: 11; 31: 7)."""
    return {29: 11.25 / 12, 30: 11 / 12, 31: 7 / 12}.get(day, 1.0)


def runs_per_week(schedule: str) -> float:
    """How often a cron schedule fires in an average week. A day-of-month restriction counts its days over the year
    (`0 3 1 * *`: 12 runs a year, 12 / 52.18 a week); with both day-of-month and day-of-week restricted cron fires
    when either matches, counted here as the weekdays plus the month days that fall on other weekdays."""
    minute, hour, dom, month, dow = parse_cron(schedule)
    per_day = len(minute) * len(hour)
    month_share = len(month) / 12
    dom_days_per_week = sum(_month_share(day) for day in dom) * 12 / WEEKS_PER_YEAR
    if len(dom) == 31 and len(dow) == 7:
        days = 7.0
    elif len(dom) == 31:
        days = float(len(dow))
    elif len(dow) == 7:
        days = dom_days_per_week
    else:
        days = len(dow) + dom_days_per_week * (7 - len(dow)) / 7
    return per_day * days * month_share


class ActiveCheck(StrictModel):
    """One scheduled check: a kind, the GPU nodesets it tests, when, and its thresholds."""

    name: str
    """Check name (lowercase letters, digits, `-`, at most 32): in the drain reason (`active-check <name>: ...`),
    the CronJob (`gpu-check-<name>`) and the Slurm reservation (`active-check-<name>`)."""
    kind: CheckKind
    """`dcgm-diag` (`dcgmi diag -r <dcgmLevel>` on each node), `nccl-allreduce` (nccl-tests' all_reduce_perf across
    `nodes` nodes, the bus bandwidth against `minBusBandwidth`), `ib-link` (every InfiniBand/RoCE port Active,
    LinkUp, at `minRateGbps` or more: `ibstat`)."""
    nodesets: tuple[str, ...] = Field(min_length=1)
    """GPU nodesets it tests (every node of each)."""
    schedule: str
    """When, in cron syntax (Kubernetes CronJob, UTC unless the cluster says otherwise), e.g. `0 3 * * 0`."""
    time_limit_minutes: int = Field(default=30, ge=1, le=1440)
    """Slurm time limit of each check job, and the length of the maintenance reservation: what the check costs."""
    dcgm_level: int = Field(default=2, ge=1, le=4)
    """`dcgm-diag`: the `dcgmi diag -r` level (1 quick, 2 medium, 3 long, 4 extended)."""
    nodes: int = Field(default=2, ge=2, le=64)
    """`nccl-allreduce`: nodes per all-reduce (the nodeset's nodes are tested in groups of this many)."""
    min_bus_bandwidth: float = Field(default=50.0, gt=0, le=100_000)
    """`nccl-allreduce`: the lowest acceptable "Avg bus bandwidth" in GB/s."""
    message_size: str = Field(default="1G", pattern=r"^[0-9]+[KMG]?$")
    """`nccl-allreduce`: message size (`-b`/`-e`)."""
    min_rate_gbps: int = Field(default=100, ge=1, le=3200)
    """`ib-link`: the lowest acceptable port rate in Gb/s (`ibstat` "Rate:")."""
    qos: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")
    """Slurm QOS of the check jobs (e.g. a high-priority `maintenance` QOS declared in slurm.accounts); null: none."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"{value!r}: lowercase letters, digits and '-', at most 32, starting and ending alphanumeric")
        return value

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        parse_cron(value)
        return value


def _gpu_nodes(slurm: SlurmConfig, nodeset: str) -> tuple[int, int]:
    """(nodes, GPUs per node) of a nodeset: its replicas (pods), or 0 where they are not known in advance."""
    for ns in slurm.nodesets:
        if ns.name == nodeset and ns.gpus is not None:
            return (ns.replicas if ns.scaling_mode == "StatefulSet" else 0), ns.gpus.count
    return 0, 0


def gpus_held(slurm: SlurmConfig, check: ActiveCheck) -> int:
    """GPUs one run of `check` holds: every GPU of its nodesets' nodes; an all-reduce tests nodes in groups of
    `nodes`, and a last, partial group is filled up with nodes tested already (so it holds `nodes` nodes too)."""
    total = 0
    for nodeset in check.nodesets:
        nodes, per_node = _gpu_nodes(slurm, nodeset)
        if check.kind == "nccl-allreduce" and nodes:
            nodes = math.ceil(nodes / check.nodes) * check.nodes
        total += nodes * per_node
    return total


def weekly_gpu_hours(slurm: SlurmConfig, checks: Sequence[ActiveCheck]) -> dict[str, float]:
    """GPU-hours per week each active check holds at most (check name -> hours, rounded to 0.1): runs per week of
    its schedule x the GPUs one run holds x its time limit. Pure; each check's CronJob carries its figure
    (`hpcforge.io/gpu-hours-per-week`), which `./hpcforge preview` and `diff` print."""
    return {
        check.name: round(runs_per_week(check.schedule) * gpus_held(slurm, check) * check.time_limit_minutes / 60, 1)
        for check in checks
    }


__all__ = ["ActiveCheck", "gpus_held", "parse_cron", "runs_per_week", "weekly_gpu_hours"]
