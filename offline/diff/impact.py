"""What the operators and daemons of the site will do with a plan: every rule of slurm_rules.py, operator_rules.py and
site_rules.py over every change, then the rules over the whole plan, as the effects of effects.py (where the
severities are told).

Fail closed: a changed resource that no effect names, and a changed field that no effect of its resource answers for
(`Effect.covers`), get one `unassessed` effect per resource naming them (`unassessed_rules`): it gates like an
outage (offline/diff/command.py) and the summary counts it.
"""

from __future__ import annotations

from .effects import UNASSESSED, Effect, Impact, effect_for, needs_step, rank
from .naming import resource_name
from .object_rules import OBJECT_RULES
from .operator_rules import CHANGE_RULES as OPERATOR_RULES
from .operator_rules import PLAN_RULES
from .plan import Change, Plan
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
    active_check_rules, *OPERATOR_RULES, *OBJECT_RULES,
)  # fmt: skip


def assess(plan: Plan) -> Impact:
    """The site impact of `plan`: every rule over every change, then the rules over the whole plan."""
    impact = Impact([])
    for change in plan.changes:
        for rule in CHANGE_RULES:
            impact.effects.extend(rule(change, plan, impact))
    impact.effects.extend(entity_rules(plan, impact))
    impact.effects.extend(address_rules(plan, impact))
    for plan_rule in PLAN_RULES:
        impact.effects.extend(plan_rule(plan, impact))
    impact.effects.extend(unassessed_rules(plan, impact))
    impact.effects.sort(key=lambda e: -rank(e.severity))
    return impact


EVIDENCE_NO_RULE = (
    "offline/diff/impact.py: no rule of CHANGE_RULES, entity_rules or address_rules answers for it (fail closed: "
    "what no rule was written for is not assumed harmless)"
)


def unassessed_fields(change: Change, effects: list[Effect]) -> list[str]:
    """The changed fields of `change` that none of `effects` (those naming it) answers for; for a create or a delete
    (no fields), `[op]` when no effect names it at all."""
    mine = [e for e in effects if change.label in e.resources]
    if not change.fields:
        return [] if mine else [change.op]
    return [f.path for f in change.fields if not any(e.answers_for(f.path) for e in mine)]


def unassessed_rules(plan: Plan, impact: Impact) -> list[Effect]:
    """One `unassessed` effect per changed resource with something no rule answers for, naming the fields."""
    out = []
    for change in plan.changes:
        missing = unassessed_fields(change, impact.effects)
        if not missing:
            continue
        shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        what = (
            f"unassessed: {resource_name(change)} {change.op}d, and no rule knows what that does"
            if not change.fields
            else f"unassessed: {resource_name(change)} {change.op}: no rule knows what a change of {shown} does"
        )
        out.append(
            effect_for(
                change,
                plan,
                UNASSESSED,
                what,
                EVIDENCE_NO_RULE,
                needs_step("find out what it does (then add a rule to offline/diff/)"),
                covers=tuple(missing),
            )
        )
    return out


__all__ = ["CHANGE_RULES", "assess", "unassessed_fields", "unassessed_rules"]
