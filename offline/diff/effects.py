"""What an effect of a plan on the site is (`Effect`, `Impact`): one line each, with the upstream code or document
that makes it so (the `EVIDENCE_*` constant next to its rule), a severity, a blast radius and a rollback path.

Severities, mildest first: none (nothing running notices), reload (a daemon rereads its configuration or a
reconcile Job runs; nothing restarts), rolling-drain (Slurm nodes drained and restarted a few at a time),
singleton-restart (a single instance restarts: a short pause of that service), outage (a service or part
of the cluster stops until someone acts, or the deploy itself is refused half-way), unassessed (no rule knows what
the change does: it fails closed, gating like an outage, and names the resource and the fields no rule answers for),
data-loss (state that cannot be recreated is deleted or orphaned).

An effect answers for the fields of its resources that `covers` names (dotted path prefixes), or for every field
(None); offline/diff/impact.py gives what no effect answers for the verdict `unassessed`.

`Impact.drained_nodes` is the set of Slurm node names that drain or restart NOW; the live view
(offline/live/impact.py `jobs_at_risk`) names the running jobs on them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..live.drains import Drain
from .plan import Change, Plan

SEVERITIES = ("none", "reload", "rolling-drain", "singleton-restart", "outage", "unassessed", "data-loss")

UNASSESSED = "unassessed"
"""The verdict of a change no rule answers for: ranked above an outage (it could be one) and below data loss."""


REVERT_SAFE = "revert safe"


CANNOT_UNDO = "cannot undo"


def needs_step(step: str) -> str:
    return f"needs a step: {step}"


LOGIN_SESSIONS_STEP = needs_step("sessions cannot be restored; warn the users first")
"""The step of every change that replaces login pods (a roll, a scale-in, a new sssd.conf): their sessions end."""


def rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@dataclass
class Effect:
    severity: str
    what: str
    evidence: str
    resources: list[str]
    rollback: str
    namespace: str = ""
    application: str = ""
    nodes: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    gpus: int = 0
    covers: tuple[str, ...] | None = None
    """The changed fields (dotted path prefixes) of `resources` this effect answers for; None: all of them."""

    def answers_for(self, path: str) -> bool:
        return self.covers is None or any(path == p or path.startswith((p + ".", p + "[")) for p in self.covers)


@dataclass
class Impact:
    effects: list[Effect]
    drained_nodes: set[str] = field(default_factory=set)
    """Slurm nodes that drain or restart now (for the live view's running jobs)."""
    reprovisioned_nodes: set[str] = field(default_factory=set)
    """Bare-metal hosts that boot a new image or join script at their next boot (not now)."""
    drains: list[Drain] = field(default_factory=list)
    """The NodeSets that roll or scale in: which of their nodes drain, how many at once (offline/live/drains.py)."""

    @property
    def worst(self) -> str:
        return max((e.severity for e in self.effects), key=rank, default="none")

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for e in self.effects if e.severity == s) for s in SEVERITIES}


def get_path(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def scaled(value: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true), at least 1."""
    if isinstance(value, str) and value.endswith("%"):
        percent = int(value[:-1])
        return max(1, -(-percent * total // 100))
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return max(1, -(-25 * total // 100))


def hostlist(names: list[str]) -> str:
    """Slurm-style compact host list: gpu-h100-[0-3], cn[001-004]."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        match = re.fullmatch(r"(.*?)(\d+)", name)
        if match:
            digits = match.group(2)
            width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0  # zero-padded: cn001
            groups.setdefault((match.group(1), width), []).append(int(digits))
        else:
            plain.append(name)
    out = list(plain)
    for (prefix, width), numbers in groups.items():
        numbers.sort()
        ranges, start = [], numbers[0]
        for a, b in zip(numbers, [*numbers[1:], None], strict=True):
            if b is None or b != a + 1:
                ranges.append(f"{start:0{width}d}" if start == a else f"{start:0{width}d}-{a:0{width}d}")
                if b is not None:
                    start = b
        out.append(f"{prefix}{ranges[0]}" if len(numbers) == 1 else f"{prefix}[{','.join(ranges)}]")
    return ",".join(out)


def application_of(change: Change, plan: Plan) -> str:
    if change.kind == "Application":
        return f"Argo CD Application {change.object_name}"
    return f"pulumi (stack {plan.stack})"


def effect_for(change: Change, plan: Plan, severity: str, what: str, evidence: str, rollback: str, **extra: Any) -> Effect:
    return Effect(
        severity,
        what,
        evidence,
        [change.label],
        rollback,
        namespace=change.namespace or "-",
        application=application_of(change, plan),
        **extra,
    )
