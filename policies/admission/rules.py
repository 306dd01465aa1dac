"""Security rules: admission as the cluster and Argo CD decide it, one stack rule per admission family (families.py),
each declared by its family's package (its `FAMILY.rule`, built with `admission_rule`, rule.py):

- pod-security-admission (pss/), argocd-appproject-admission (argocd/), apiserver-reachability (reachability/),
  slinky-webhook-admission (slinky/), kueue-admission (kueue/), operator-webhook-admission (webhooks/: cert-manager and
  MetalLB), mariadb-operator-admission (mariadb/).

They judge every object the engine sends: hpcforge's own and charts' rendered objects alike. Each judges the stack's
objects (`stack_objects`, also what `./hpcforge admission` judges), yields the refused objects (`Finding`), leaves
out the exemptions of the rule's `exempt` knob, and reports a refusal at the resource its object came from.
"""

from __future__ import annotations

from typing import Any

from ..rules.rule import StackRule
from .families import families


def admission_rules() -> tuple[StackRule[Any], ...]:
    """Every family's rule, in the families' order."""
    return tuple(family.rule for family in families())


RULES = admission_rules()
