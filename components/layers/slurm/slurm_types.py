"""Slurm value types shared by the Slurm config modules: names, slurm.conf keys and times."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from ...ground.base import as_written

_SLURM_TIME = re.compile(
    r"^(UNLIMITED|INFINITE|[0-9]+|[0-9]+:[0-9]{2}|[0-9]+:[0-9]{2}:[0-9]{2}|"
    r"[0-9]+-[0-9]+|[0-9]+-[0-9]+:[0-9]{2}|[0-9]+-[0-9]+:[0-9]{2}:[0-9]{2})$"
)


def _slurm_time(value: Any) -> str:
    text = str(value)
    if not _SLURM_TIME.match(text):
        raise ValueError(f"{as_written(value)} is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM:SS or UNLIMITED)")
    return text


SlurmTime = Annotated[str, BeforeValidator(_slurm_time)]


# Slurm and Kubernetes both see these names: NodeSet names become object, pod and Slurm node names;
# partition names go into slurm.conf. Keep both to DNS labels and refuse Slurm's reserved words.
_SLURM_RESERVED = {"default", "all", "none"}


def _slurm_k8s_name(value: str) -> str:
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", value) or len(value) > 40:
        raise ValueError(
            f"{value!r} is not a valid Slurm and Kubernetes name (lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 40 characters)"
        )
    if value in _SLURM_RESERVED:
        raise ValueError(f"{value!r} is reserved by Slurm")
    return value


SlurmName = Annotated[str, AfterValidator(_slurm_k8s_name)]


def config_key(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", value):
        raise ValueError(f"{value!r} is not a slurm.conf parameter name")
    return value


# slurm.conf is read line by line; on a line, `Name=Value` pairs are separated by white space and
# `#` starts a comment (slurm.conf(5): "Any text following a '#' in the configuration file is treated
# as a comment"); SchedulerParameters and SelectTypeParameters are comma-separated lists.
_SLURM_VALUE = re.compile(r"[^\s#\"'\\]+")


_SLURM_OPTION = re.compile(r"[A-Za-z0-9_.:=/+-]+")


def _slurm_value(value: str) -> str:
    if not _SLURM_VALUE.fullmatch(value):
        raise ValueError(f"{value!r} is not a slurm.conf value (one word: no spaces, '#', quotes or backslashes, not empty)")
    return value


def _slurm_option(value: str) -> str:
    if not _SLURM_OPTION.fullmatch(value):
        raise ValueError(
            f"{value!r} is not one slurm.conf list item (letters, digits and _ . : = / + -; "
            "no spaces, commas or '#': give each item as its own list entry)"
        )
    return value


SlurmValue = Annotated[str, AfterValidator(_slurm_value)]
"""One slurm.conf value: no white space, `#`, quotes or backslashes."""


SlurmOption = Annotated[str, AfterValidator(_slurm_option)]
"""One item of a comma-separated slurm.conf list such as `bf_interval=30`."""
