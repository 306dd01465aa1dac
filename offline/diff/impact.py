"""What the operators and daemons of the site will do with a plan: one effect per line, each with the
upstream code or document that makes it so (the `EVIDENCE_*` constant next to its rule), a severity, a
blast radius and a rollback path.

Severities, mildest first: none (nothing running notices), reload (a daemon rereads its configuration or a
reconcile Job runs; nothing restarts), rolling-drain (Slurm nodes drained and restarted a few at a time),
singleton-restart (a single instance restarts: a short pause of that service), outage (a service or part
of the cluster stops until someone acts, or the deploy itself is refused half-way), data-loss (state that
cannot be recreated is deleted or orphaned).

`Impact.drained_nodes` is the set of Slurm node names that drain or restart NOW; the live view
(offline/live/impact.py `jobs_at_risk`) names the running jobs on them.
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
