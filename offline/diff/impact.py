"""What the operators and daemons of the site will do with a plan: every rule of slurm_rules.py and site_rules.py
over every change, then the rules over the whole plan, as the effects of effects.py (where the severities are told).
"""

from __future__ import annotations

from .effects import Impact, rank
from .plan import Plan
from .site_rules import (
    address_rules,
    application_rules,
    certificate_rules,
    chart_rules,
    job_rules,
    kueue_rules,
    namespace_rules,
    pool_rules,
    random_rules,
    refusal_rules,
    stateful_rules,
    workload_rules,
)
from .slurm_rules import accounting_rules, active_check_rules, config_map_rules, controller_rules, entity_rules, nodeset_rules

CHANGE_RULES = (
    refusal_rules, nodeset_rules, controller_rules, config_map_rules, accounting_rules, pool_rules, certificate_rules,
    random_rules, stateful_rules, namespace_rules, application_rules, chart_rules, kueue_rules, job_rules, workload_rules,
    active_check_rules,
)  # fmt: skip


def assess(plan: Plan) -> Impact:
    """The site impact of `plan`: every rule over every change, then the rules over the whole plan."""
    impact = Impact([])
    for change in plan.changes:
        for rule in CHANGE_RULES:
            impact.effects.extend(rule(change, plan, impact))
    impact.effects.extend(entity_rules(plan, impact))
    impact.effects.extend(address_rules(plan, impact))
    impact.effects.sort(key=lambda e: -rank(e.severity))
    return impact


__all__ = ["CHANGE_RULES", "assess"]
