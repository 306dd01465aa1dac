"""A run of many cases with a fixed seed, tallied."""

from __future__ import annotations

from collections.abc import Callable

from .cases import Mutation, Outcome, Tally
from .judge import judge, warm_up
from .mutations import mutations


def run(cases: int, seed: int, report: Callable[[int, Outcome], None] | None = None) -> Tally:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    tally = Tally()
    warm_up()

    @hypothesis_seed(seed)
    @settings(
        max_examples=cases,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(mutations())
    def one(mutation: Mutation) -> None:
        outcome = judge(mutation)
        tally.add(outcome)
        if report is not None:
            report(len(tally.outcomes), outcome)

    one()
    return tally
