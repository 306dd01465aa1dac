"""Slurm reservations from config: maintenance windows and other standing reservations.

slurm.conf cannot hold reservations: they live in slurmctld's state and are made with
`scontrol create reservation`. hpcforge renders those commands (idempotent: update when the
reservation exists) and runs them in a Job against the controller (see
`components/layers/slurm/reservation_script.py` and `reservation_job_spec` in `components/layers/slurm/site.py`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from ...ground.base import StrictModel, as_written, duplicates
from .slurm_types import SlurmTime

# scontrol(1), "RESERVATIONS - SPECIFICATIONS FOR CREATE, UPDATE, AND DELETE COMMANDS", Flags=.
ReservationFlag = Literal[
    "ANY_NODES",
    "DAILY",
    "FLEX",
    "IGNORE_JOBS",
    "MAGNETIC",
    "MAINT",
    "NO_HOLD_JOBS_AFTER",
    "OVERLAP",
    "PART_NODES",
    "PURGE_COMP",
    "REPLACE",
    "REPLACE_DOWN",
    "STATIC_ALLOC",
    "TIME_FLOAT",
    "WEEKDAY",
    "WEEKEND",
    "WEEKLY",
]

_START = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?$")


def _start_time(value: Any) -> str:
    text = value.isoformat(timespec="seconds") if hasattr(value, "isoformat") else str(value)
    if not _START.match(text):
        raise ValueError(f"{as_written(value)} is not a start time YYYY-MM-DDTHH:MM[:SS] (the controller's local time)")
    return text


StartTime = Annotated[str, BeforeValidator(_start_time)]


class ReservationConfig(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
    """`ReservationName`."""
    start_time: StartTime
    """`StartTime`, `YYYY-MM-DDTHH:MM[:SS]` in the controller's time zone."""
    duration: SlurmTime
    """`Duration` (e.g. `8:00:00`, `1-00:00:00`)."""
    partitions: tuple[str, ...] = ()
    """Reserve every node of these partitions (`PartitionName=` with `Nodes=ALL`, one command each);
    empty: every node of the cluster."""
    flags: tuple[ReservationFlag, ...] = ("MAINT", "IGNORE_JOBS")
    """`Flags`: `MAINT` marks nodes as in maintenance (not counted as idle), `IGNORE_JOBS` reserves even nodes
    that run jobs."""
    users: tuple[str, ...] = ("root",)
    """`Users` allowed to run jobs in the reservation."""
    accounts: tuple[str, ...] = ()
    """`Accounts` allowed to run jobs in the reservation (instead of or besides `users`)."""

    @model_validator(mode="after")
    def _who(self) -> ReservationConfig:
        if not self.users and not self.accounts:
            raise ValueError(f"reservation {self.name!r}: give users or accounts (Slurm needs one of them)")
        for what, values in (("partitions", self.partitions), ("flags", self.flags), ("users", self.users)):
            for name in duplicates(values):
                raise ValueError(f"reservation {self.name!r}: {what} lists {name!r} twice")
        return self

    def command_names(self) -> list[str]:
        """Names of the Slurm reservations this entry makes (one per partition)."""
        if len(self.partitions) <= 1:
            return [self.name]
        return [f"{self.name}-{partition}" for partition in self.partitions]
