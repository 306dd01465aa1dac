"""Admission as the cluster and Argo CD decide it, over a whole set of plain object dicts: every family's verdicts
(families.py), for `./hpcforge admission`. The families' own words (heading, summary clause) make the report; the
security pack's rules (rules.py) use the same verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .families import families
from .family import Cluster, Family, Verdict, no_chart_values


@dataclass(frozen=True)
class Section:
    """One family's verdicts in the report."""

    family: Family
    verdicts: Sequence[Verdict]
    gaps: Sequence[str] = ()

    @property
    def refused(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.admitted is False]

    @property
    def unjudged(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.admitted is None]

    def lines(self) -> list[str]:
        out = [self.family.heading]
        for verdict in self.verdicts:
            out += verdict.lines()
        return out + [f"  GAP  {gap}" for gap in self.gaps]

    def summary(self) -> str:
        return self.family.summary.format(refused=len(self.refused), total=len(self.verdicts), unjudged=len(self.unjudged))


@dataclass(frozen=True)
class Report:
    sections: Sequence[Section]

    def section(self, family: str) -> Section:
        [found] = [s for s in self.sections if s.family.name == family]
        return found

    def verdicts(self, family: str) -> Sequence[Verdict]:
        return self.section(family).verdicts

    def refused_in(self, family: str) -> list[Verdict]:
        return self.section(family).refused

    @property
    def gaps(self) -> list[str]:
        return [gap for s in self.sections for gap in s.gaps]

    @property
    def refused(self) -> bool:
        """Anything refused, or a gap, in any family (what `offline admission` exits 1 on)."""
        return any(s.refused or s.gaps for s in self.sections)

    def advice(self) -> list[str]:
        """What the families say about their refusals (the config key behind a refused field)."""
        return [line for s in self.sections if s.family.advice for line in s.family.advice(s.refused)]

    def lines(self) -> list[str]:
        out = [line for s in self.sections for line in s.lines()]
        gaps = "".join(f" {len(s.gaps)} {s.family.gap_summary}." for s in self.sections if s.gaps)
        return [*out, "Summary: " + ", ".join(s.summary() for s in self.sections) + "." + gaps]


def admission_report(
    objects: Sequence[Mapping[str, Any]],
    synced: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    cluster_version: tuple[int, int] | None = None,
    chart_values: Callable[[str], Mapping[str, Any] | None] = no_chart_values,
    previous: Sequence[Mapping[str, Any]] = (),
) -> Report:
    """Every family's verdicts on `objects`. `synced`: per Argo CD Application, the objects its sync applies;
    `cluster_version`: the cluster's Kubernetes version; `chart_values(chart)`: the values the stack gives a chart
    (where a webhook runs, how an operator is configured); `previous`: the objects deployed before (those of `objects`
    among them are updates)."""
    cluster = Cluster(synced or {}, previous, chart_values, cluster_version)
    sections = []
    for family in families():
        judgement = family.judge(objects, cluster)
        sections.append(Section(family, judgement.verdicts, judgement.gaps))
    return Report(sections)
