"""What the families read of Slinky's CRs: the kind, the slurmd container, `Key=Value` Slurm configuration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..view import ResourceView
from ..workloads import SLINKY_GROUP, containers


def is_slinky(resource: ResourceView, kind: str) -> bool:
    return resource.is_kind(SLINKY_GROUP, kind)


def parse_conf(line: str) -> dict[str, str]:
    """`Key=Value Key2=Value2` (slurm.conf / slurmd --conf syntax) with lower-cased keys."""
    result: dict[str, str] = {}
    for token in line.split():
        key, sep, value = token.partition("=")
        if sep:
            result[key.strip().lower()] = value.strip()
    return result


def slurmd_container(resource: ResourceView) -> Mapping[str, Any]:
    return next((c.container for c in containers(resource) if c.path == "spec.slurmd"), {})
