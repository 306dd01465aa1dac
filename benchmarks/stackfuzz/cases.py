"""A fuzz case and its outcome: the mutation (where, what, the verdict the oracle expects), the outcome classes,
and the tally the run prints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

STACKS = ("dev", "prod", "site")
"""The two stack files, and a generated example site (benchmarks/sitegen.py: 6 nodesets, 20 hosts, 10 users)."""
CLASSES = ("rejected-by-name", "valid", "rejected-unnamed", "wrongly-accepted", "traceback", "crash-after-preview")
BAD_CLASSES = ("rejected-unnamed", "wrongly-accepted", "traceback", "crash-after-preview")

PathT = tuple[str | int, ...]


@dataclass(frozen=True)
class Raw:
    """YAML text put in place of a value, verbatim."""

    text: str


@dataclass(frozen=True)
class Mutation:
    stack: str
    kind: str
    path: PathT
    value: Any = None
    expect: str = "either"  # "reject" or "either"
    why: str = ""
    other: PathT | None = None

    def describe(self) -> str:
        shown = repr(self.value.text if isinstance(self.value, Raw) else self.value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        target = render_path(self.path)
        extra = f" (from {render_path(self.other)})" if self.other else ""
        return f"{self.stack}: {self.kind} {target} = {shown}{extra} [{self.expect}]"


@dataclass
class Outcome:
    mutation: Mutation
    verdict: str
    seconds: float
    detail: str = ""
    cpu_seconds: float = 0.0
    """CPU time of this process for the case (wall `seconds` minus waiting for a shared machine)."""


@dataclass
class Tally:
    outcomes: list[Outcome] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def counts(self) -> Counter[str]:
        return Counter(outcome.verdict for outcome in self.outcomes)

    def table(self, show: int = 3) -> str:
        counts = self.counts()
        total = len(self.outcomes)
        lines = [f"{'outcome':<22}{'cases':>7}", "-" * 29]
        lines += [f"{verdict:<22}{counts.get(verdict, 0):>7}" for verdict in CLASSES]
        lines.append("-" * 29)
        lines.append(f"{'total':<22}{total:>7}")
        lines += self.slowest_lines()
        lines += self.wordiest_lines()
        kinds = Counter(o.mutation.kind for o in self.outcomes)
        lines.append("mutations: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
        for verdict in BAD_CLASSES:
            examples = [o for o in self.outcomes if o.verdict == verdict][:show]
            for outcome in examples:
                lines.append(f"  {verdict}: {outcome.mutation.describe()}\n      {outcome.detail[:300]}")
        return "\n".join(lines)

    def wordiest_lines(self, count: int = 3) -> list[str]:
        """The refusals with the most messages: a one-key mutation that yields many is a cascade to fold."""
        refused = [o for o in self.outcomes if o.verdict.startswith("rejected")]
        if not refused:
            return []
        wordiest = sorted(refused, key=lambda o: o.detail.count("\n"), reverse=True)[:count]
        lines = ["most messages for one mutation:"]
        lines += [f"  {o.detail.count(chr(10)) + 1:4d}  {o.mutation.describe()}" for o in wordiest]
        return lines

    def slowest_lines(self, count: int = 5) -> list[str]:
        """The slowest cases by CPU time, with wall time beside it (wall includes waiting for the CPU)."""
        if not self.outcomes:
            return []
        slowest = sorted(self.outcomes, key=lambda o: o.cpu_seconds, reverse=True)[:count]
        walls = sorted(o.seconds for o in self.outcomes)
        lines = [f"case time: median {walls[len(walls) // 2]:.2f} s wall, max {walls[-1]:.2f} s wall; slowest by CPU:"]
        lines += [f"  {o.cpu_seconds:6.2f} s CPU {o.seconds:6.2f} s wall  {o.verdict}: {o.mutation.describe()}" for o in slowest]
        return lines


def render_path(path: PathT | None) -> str:
    text = ""
    for part in path or ():
        text += f"[{part}]" if isinstance(part, int) else (part if not text else f".{part}")
    return text
