"""Reservation renderer (pure): the `scontrol` commands that make `hpcforge:slurm.reservations` exist.

Reservations live in slurmctld's state, not in slurm.conf. The script is idempotent: a reservation
that exists is updated (start, duration, users, accounts), one that does not is created. Removing
an entry from the config does not delete the reservation: a maintenance window ends on its own.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from .reservations import ReservationConfig


def _who(reservation: ReservationConfig) -> list[str]:
    fields = []
    if reservation.users:
        fields.append(f"Users={','.join(reservation.users)}")
    if reservation.accounts:
        fields.append(f"Accounts={','.join(reservation.accounts)}")
    return fields


def reservation_commands(reservation: ReservationConfig) -> list[tuple[str, list[str], list[str]]]:
    """(name, create argv, update argv) for each Slurm reservation of one config entry."""
    partitions: Sequence[str | None] = reservation.partitions or (None,)
    result = []
    for name, partition in zip(reservation.command_names(), partitions, strict=True):
        timing = [f"StartTime={reservation.start_time}", f"Duration={reservation.duration}"]
        create = ["scontrol", "create", "reservation", f"ReservationName={name}", *timing]
        if partition is not None:
            create.append(f"PartitionName={partition}")
        create.append("Nodes=ALL")
        if reservation.flags:
            create.append(f"Flags={','.join(reservation.flags)}")
        create += _who(reservation)
        update = ["scontrol", "update", f"ReservationName={name}", *timing, *_who(reservation)]
        result.append((name, create, update))
    return result


def _command(argv: list[str]) -> str:
    return " ".join(shlex.quote(part) for part in argv)


def reservation_script(reservations: Sequence[ReservationConfig]) -> str:
    """A POSIX shell script that creates or updates every configured reservation."""
    lines = [
        "#!/bin/sh",
        "# hpcforge: reservations from hpcforge:slurm.reservations (create, or update when it exists)",
        "set -eu",
    ]
    for reservation in reservations:
        for name, create, update in reservation_commands(reservation):
            lines += [
                f"if scontrol show reservation {shlex.quote(name)} >/dev/null 2>&1; then",
                f"  {_command(update)}",
                "else",
                f"  {_command(create)}",
                "fi",
            ]
    return "\n".join(lines) + "\n"
