"""Which Slurm nodes a NodeSet change drains, in which order, and how many at a time (slurm-operator v1.2.1).

A change's impact (offline/diff/slurm_rules.py `nodeset_rules`) records a `Drain` for each NodeSet that rolls or
scales in; the live view (offline/live/impact.py) orders its nodes the way the operator does, with the running jobs
that Slurm reports, and gives the figures per batch.

What the operator does, at the pin (slurm-operator v1.2.1; `git show v1.2.1:<path>` of SlinkyProject/slurm-operator):

- It picks the pods to delete, for a scale-in and for each step of a rolling update, by sorting them with
  `ActivePods.Less` (internal/controller/nodeset/utils/sort.go:36-102, `SplitActivePods` :126-137): unassigned,
  pending, not-ready pods first, then lower `pod-deletion-cost`, then EARLIER `pod-deadline`, then cordoned pods,
  and only then HIGHER ordinal first (docs/usage/nodeset-operations.md:185-202, "Influencing Scale-in Order").
- `pod-deadline` is when the node's running work ends: for every RUNNING job on the node, its start time plus its
  time limit, the latest of them; an unlimited job counts as start + math.MaxInt64 ns (about 292 years), and a node
  without running jobs has no deadline, which sorts first (slurmcontrol/slurmcontrol.go:557-612 `GetNodeDeadlines`,
  nodeset_sync.go:728-766 `syncSlurmDeadline`, a zero time being before any other).
- Scale-in takes the first `replicas before - replicas after` pods of that order (nodeset_sync.go:1057-1062); a
  rolling update takes `maxUnavailable` (scaled against replicas, rounded up, at least 1) at a time
  (nodeset_sync.go:1585-1647 `splitUpdatePods`). Each taken pod's Slurm node is drained, and the pod is deleted
  only when the node is drained: when its jobs have ended (docs/concepts/nodeset-controller.md:137).

Not visible from Slurm's JSON, so assumed equal for every pod: scheduling (assigned), phase and readiness, the
`pod-deletion-cost` annotation and the `pod-cordon` annotation. A pod that is pending, not ready or cordoned, or
carries a lower deletion cost, goes before all of these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

SLINKY_PIN = "slurm-operator v1.2.1"
EVIDENCE_ORDER = (
    f"{SLINKY_PIN} internal/controller/nodeset/utils/sort.go:36-102 ActivePods.Less (pod-deadline before ordinal) "
    "and docs/usage/nodeset-operations.md:185-202 'Influencing Scale-in Order'"
)
EVIDENCE_DEADLINE = f"{SLINKY_PIN} internal/controller/nodeset/slurmcontrol/slurmcontrol.go:557-612 GetNodeDeadlines"

UNLIMITED_S = 2**63 // 10**9
"""math.MaxInt64 nanoseconds in seconds: what GetNodeDeadlines adds for a job without a time limit."""


@dataclass(frozen=True)
class Drain:
    """A NodeSet's pods that the operator drains and deletes for one change."""

    nodeset: str
    kind: str
    """`roll` (a new pod revision, RollingUpdate) or `scale-in`."""
    nodes: tuple[str, ...]
    """The candidate Slurm nodes (`<nodeset>-<ordinal>`), in ordinal order."""
    take: int
    """scale-in: how many of `nodes` go; roll: all of them (in batches)."""
    batch: int
    """How many drain at once: maxUnavailable for a roll, every taken pod for a scale-in."""
    gpus_per_node: int = 0


def ordinal(node: str) -> int:
    match = re.search(r"(\d+)$", node)
    return int(match.group(1)) if match else -1


def slinky_order(nodes: tuple[str, ...] | list[str], deadlines: Mapping[str, float]) -> list[str]:
    """`nodes` sorted as ActivePods.Less sorts their pods: earlier deadline (none first), then higher ordinal.

    `deadlines`: Unix seconds per node with running jobs (absent: none)."""
    return sorted(nodes, key=lambda node: (node in deadlines, deadlines.get(node, 0.0), -ordinal(node)))


def batches(drain: Drain, deadlines: Mapping[str, float]) -> list[list[str]]:
    """The nodes `drain` takes, in the operator's order, cut into the groups that drain at the same time.

    The order is the one seen now; the operator sorts again at each step, with the jobs then running."""
    ordered = slinky_order(drain.nodes, deadlines)[: drain.take]
    size = max(1, drain.batch)
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def offline_order(drain: Drain) -> list[str]:
    """The nodes `drain` takes when none runs a job: the highest ordinals (the last key of the order)."""
    return slinky_order(drain.nodes, {})[: drain.take]
