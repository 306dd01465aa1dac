"""Slurm time values (`MaxTime`, `Duration`, ...) as typed config."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator

_SLURM_TIME = re.compile(
    r"^(UNLIMITED|INFINITE|[0-9]+|[0-9]+:[0-9]{2}|[0-9]+:[0-9]{2}:[0-9]{2}|"
    r"[0-9]+-[0-9]+|[0-9]+-[0-9]+:[0-9]{2}|[0-9]+-[0-9]+:[0-9]{2}:[0-9]{2})$"
)


def _slurm_time(value: Any) -> str:
    text = str(value)
    if not _SLURM_TIME.match(text):
        raise ValueError(f"{value!r} is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM:SS or UNLIMITED)")
    return text


SlurmTime = Annotated[str, BeforeValidator(_slurm_time)]
