"""Slinky slurm-operator's admission as a family (family.py), and the rule slinky-webhook-admission."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.knobs import ObjectSelector, RuleConfig, selector_list_knob
from ...rules.podtemplates import display
from ...rules.view import StackView
from ..family import Cluster, Family, Judgement
from ..rule import Finding, StackObjects, admission_rule, has_unknown, stack_chart_values
from .scope import CHART, REPRODUCES, WebhookScope, webhook_scope
from .verdicts import create_verdicts, update_verdicts


@dataclass(frozen=True)
class SlinkyAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Slinky custom resources {namespace, kind, name} (globs) not judged."
    )


def scope_of(values: Mapping[str, Any] | None) -> WebhookScope:
    """slurm-operator's webhook as the `slurm-operator` chart's values deploy it (no chart among the stack's, or a
    helm.v4.Chart whose inputs the engine does not send: the chart's defaults, i.e. it runs everywhere)."""
    return WebhookScope() if values is None else webhook_scope(values)


def judge_slinky(stack: StackView, found: StackObjects, config: SlinkyAdmissionConfig) -> Iterator[Finding]:
    for verdict in create_verdicts(found.objects, scope_of(stack_chart_values(stack, CHART))):
        if verdict.admitted:
            continue
        yield Finding(
            verdict.obj,
            f"{display(verdict.obj)}: the API server refuses to create it: {verdict.message}. `pulumi up` stops there.",
            has_unknown(verdict.obj.get("spec")) or has_unknown(verdict.obj.get("metadata")),
        )


SLINKY_WEBHOOK_ADMISSION = admission_rule(
    "slinky-webhook-admission",
    f"Every Slinky custom resource passes its CRD's CEL rules and slurm-operator {REPRODUCES.version}'s validating webhook.",
    SlinkyAdmissionConfig,
    judge_slinky,
    "Fix the custom resource where components/layers/slurm/objects.py builds it, and refuse the config value that led to it "
    "in components/layers/slurm/config.py (a validator naming the key).",
)


def judge(objects: Sequence[Mapping[str, Any]], cluster: Cluster) -> Judgement:
    """Every Slinky custom resource, created as it is, where the stack's slurm-operator chart runs the webhook."""
    return Judgement(create_verdicts(objects, scope_of(cluster.chart_values(CHART))))


FAMILY = Family(
    name="slinky",
    order=40,
    title=f"Slinky slurm-operator {REPRODUCES.version}",
    heading=f"Slinky slurm-operator {REPRODUCES.version} (per custom resource as created: CRD CEL rules, then the webhook):",
    summary="{refused} of {total} Slinky custom resources refused",
    judge=judge,
    rule=SLINKY_WEBHOOK_ADMISSION,
    reproduces=(__name__.rpartition(".")[0],),
    updates=update_verdicts,
)
