"""Kueue's admission as a family (family.py), and the rule kueue-admission."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.knobs import ObjectSelector, RuleConfig, selector_list_knob
from ...rules.view import StackView
from ..family import Cluster, Family, Judgement
from ..rule import Finding, StackObjects, admission_rule, has_unknown
from .fields import REPRODUCES, answer
from .verdicts import kueue_verdicts


@dataclass(frozen=True)
class KueueAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Objects {namespace, kind, name} (globs) not judged (e.g. jobs of a namespace Kueue does not watch)."
    )


def judge_kueue(stack: StackView, found: StackObjects, config: KueueAdmissionConfig) -> Iterator[Finding]:
    for verdict in kueue_verdicts(found.objects):
        if verdict.admitted:
            continue
        how = (
            "the API server refuses it (its CRD's rules)"
            if answer(verdict.refusals) == "Invalid"
            else "Kueue's webhook denies it"
        )
        yield Finding(verdict.obj, f"{how}: {verdict.message}.", has_unknown(verdict.obj))


KUEUE_ADMISSION = admission_rule(
    "kueue-admission",
    f"Every Kueue object, and every job Kueue's webhooks see, passes Kueue {REPRODUCES.version}'s webhooks and CRD rules.",
    KueueAdmissionConfig,
    judge_kueue,
    "Change the config that set the refused field (components/layers/batch/config.py validates what it can before "
    "anything is registered), or the object's labels and annotations for a job.",
)


def judge(objects: Sequence[Mapping[str, Any]], cluster: Cluster) -> Judgement:
    return Judgement(kueue_verdicts(objects))


FAMILY = Family(
    name="kueue",
    order=50,
    title=f"Kueue {REPRODUCES.version}",
    heading=f"Kueue {REPRODUCES.version} (webhooks and CRD rules; per Kueue object, and per job its webhooks see):",
    summary="{refused} of {total} Kueue objects and jobs refused",
    judge=judge,
    rule=KUEUE_ADMISSION,
    reproduces=(__name__.rpartition(".")[0],),
)
