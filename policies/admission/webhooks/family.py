"""The cert-manager and MetalLB webhooks as one admission family (family.py), and the rule operator-webhook-admission."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.knobs import ObjectSelector, RuleConfig, knob, selector_list_knob
from ...rules.podtemplates import display
from ...rules.view import StackView
from .. import certmanager, metallb
from ..family import Cluster, Family, Judgement
from ..rule import Finding, StackObjects, admission_rule, has_unknown, stack_chart_values
from .verdicts import webhook_verdicts


@dataclass(frozen=True)
class OperatorWebhookAdmissionConfig(RuleConfig):
    metallb_namespace: str = knob(
        "metallbNamespace",
        metallb.NAMESPACE,
        {"type": "string", "minLength": 1},
        "Namespace of the MetalLB controller: its webhooks refuse MetalLB objects anywhere else.",
    )
    metallb_bgp_type: str = knob(
        "metallbBgpType",
        "",
        {"type": "string", "enum": ["", *metallb.BGP_TYPES]},
        "MetalLB's BGP backend (`native`, `frr`, `frr-k8s`; '' = from the metallb chart's values in the stack, "
        "else the chart's default `frr-k8s`).",
    )
    exempt: tuple[ObjectSelector, ...] = selector_list_knob("exempt", "Objects {namespace, kind, name} (globs) not judged.")


def bgp_type_of(values: Mapping[str, Any] | None) -> str | None:
    """MetalLB's BGP backend for the values the stack gives its chart (None: no metallb chart, or values not known
    yet)."""
    return None if values is None or has_unknown(values) else metallb.bgp_type_from_values(values)


def judge_operator_webhooks(stack: StackView, found: StackObjects, config: OperatorWebhookAdmissionConfig) -> Iterator[Finding]:
    bgp_type = config.metallb_bgp_type or bgp_type_of(stack_chart_values(stack, "metallb"))
    # MetalLB judges a set of objects: one not known yet during a preview leaves its kind's verdicts open.
    unknown_metallb = any(metallb.judged(o) and has_unknown(o.get("spec")) for o in found.objects)
    verdicts = webhook_verdicts(found.objects, metallb_bgp_type=bgp_type, metallb_namespace=config.metallb_namespace)
    for verdict in verdicts:
        if verdict.admitted:
            continue
        yield Finding(
            verdict.obj,
            f"{display(verdict.obj)}: the API server refuses it: {verdict.refusal}.",
            has_unknown(verdict.obj.get("spec")) or (unknown_metallb and metallb.judged(verdict.obj)),
        )


OPERATOR_WEBHOOK_ADMISSION = admission_rule(
    "operator-webhook-admission",
    "Every cert-manager and MetalLB object passes the operator's validating webhook "
    f"(cert-manager {certmanager.REPRODUCES.version}, MetalLB {metallb.REPRODUCES.version}).",
    OperatorWebhookAdmissionConfig,
    judge_operator_webhooks,
    "Change the value the message names; for hpcforge's own objects, the config key behind it (tls.*, network.pools, "
    "network.advertisement.peers) has a check that names it.",
)


def judge(objects: Sequence[Mapping[str, Any]], cluster: Cluster) -> Judgement:
    return Judgement(webhook_verdicts(objects, metallb_bgp_type=bgp_type_of(cluster.chart_values("metallb"))))


FAMILY = Family(
    name="webhooks",
    order=60,
    title="cert-manager and MetalLB webhooks",
    heading=f"Operator webhooks (cert-manager {certmanager.REPRODUCES.version}, MetalLB {metallb.REPRODUCES.version}):",
    summary="{refused} of {total} cert-manager and MetalLB objects refused by their webhooks",
    judge=judge,
    rule=OPERATOR_WEBHOOK_ADMISSION,
    reproduces=(certmanager.__name__, metallb.__name__),
)
