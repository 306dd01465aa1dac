"""Argo CD's AppProjects as an admission family (family.py), and the rule argocd-appproject-admission."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.knobs import ObjectSelector, RuleConfig, selector_list_knob
from ...rules.podtemplates import kind_of, name_of
from ...rules.view import StackView
from ..family import Cluster, Family, Judgement, application_key
from ..rule import Finding, StackObjects, admission_rule, has_unknown
from .verdicts import appproject_verdicts


@dataclass(frozen=True)
class AppProjectAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob("exempt", "Applications {namespace, kind, name} (globs) not judged.")


def judge_appprojects(stack: StackView, found: StackObjects, config: AppProjectAdmissionConfig) -> Iterator[Finding]:
    unknown_projects = {name_of(o) for o in found.objects if kind_of(o) == "AppProject" and has_unknown(o.get("spec"))}
    for verdict in appproject_verdicts(found.objects, found.synced):
        if verdict.admitted:
            continue
        reasons = "; ".join(verdict.reasons)
        yield Finding(
            verdict.application,
            f"Argo CD refuses Application {application_key(verdict.application)} (project "
            f"{verdict.project}): {reasons}. One refused object fails the whole sync.",
            # during a preview: decided once the project's and the Application's values are known
            verdict.project in unknown_projects or has_unknown(verdict.application.get("spec")),
        )


ARGOCD_APPPROJECT_ADMISSION = admission_rule(
    "argocd-appproject-admission",
    "Every Argo CD Application, and every object it syncs, is permitted by its AppProject (as Argo CD 3.4 computes it).",
    AppProjectAdmissionConfig,
    judge_appprojects,
    "Keep the chart's objects in its destination namespace through its values (create what it would put elsewhere "
    "as hpcforge objects), or list the namespace in the AppProject's destinations.",
)


def judge(objects: Sequence[Mapping[str, Any]], cluster: Cluster) -> Judgement:
    return Judgement(appproject_verdicts(objects, cluster.synced))


FAMILY = Family(
    name="argocd",
    order=20,
    title="Argo CD 3.4 AppProjects",
    heading="Argo CD AppProjects (per Application, and each object it would sync):",
    summary="{refused} of {total} Applications refused",
    judge=judge,
    rule=ARGOCD_APPPROJECT_ADMISSION,
    reproduces=(__name__.rpartition(".")[0],),
)
