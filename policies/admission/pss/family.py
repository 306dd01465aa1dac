"""Pod Security as an admission family (family.py): every pod template at its namespace's enforce level, and the rule
pod-security-admission."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.knobs import ObjectSelector, RuleConfig, knob, selector_list_knob
from ...rules.view import StackView
from ..family import Cluster, Family, Judgement
from ..rule import Finding, StackObjects, admission_rule, has_unknown
from .verdicts import pod_security_gaps, pod_security_verdicts
from .versions import KUBERNETES_VERSION, REPRODUCES, Version


def _version(text_version: str) -> Version:
    match = re.fullmatch(r"v?1\.([0-9]+)", text_version.strip())
    return (1, int(match.group(1))) if match else KUBERNETES_VERSION


@dataclass(frozen=True)
class PodSecurityAdmissionConfig(RuleConfig):
    kubernetes_version: str = knob(
        "kubernetesVersion",
        REPRODUCES.version,
        {"type": "string", "pattern": "^v?1\\.[0-9]+$"},
        "The cluster's Kubernetes version: `latest` and newer enforce-version labels evaluate as this version.",
    )
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Workloads {namespace, kind, name} (globs) not judged (as the API server's exemptions would)."
    )


def judge_pod_security(stack: StackView, found: StackObjects, config: PodSecurityAdmissionConfig) -> Iterator[Finding]:
    verdicts = pod_security_verdicts(found.objects, _version(config.kubernetes_version))
    for gap in pod_security_gaps(verdicts):
        yield Finding(None, f"{gap.message} (and this rule's kubernetesVersion, the cluster's version, with it).")
    for verdict in verdicts:
        if verdict.admitted:
            continue
        template = verdict.template
        yield Finding(
            template.owner,
            f"{template.where}: the API server refuses its pods in namespace {template.namespace}: {verdict.message}.",
            has_unknown(template.spec) or any(has_unknown(c.body) for c in template.containers),
        )


POD_SECURITY_ADMISSION = admission_rule(
    "pod-security-admission",
    "Every pod template passes Pod Security Admission at its namespace's enforce level "
    f"(Kubernetes {REPRODUCES.version} checks).",
    PodSecurityAdmissionConfig,
    judge_pod_security,
    "Set the pod's and containers' securityContext (for charts: their securityContext values in "
    "components/chart_security.py), or lower the namespace's enforce level with a reason.",
)


def judge(objects: Sequence[Mapping[str, Any]], cluster: Cluster) -> Judgement:
    verdicts = pod_security_verdicts(objects, cluster.kubernetes_version or KUBERNETES_VERSION)
    return Judgement(verdicts, [gap.message for gap in pod_security_gaps(verdicts)])


FAMILY = Family(
    name="pss",
    order=10,
    title=f"Kubernetes {REPRODUCES.version} Pod Security",
    heading="Pod Security (per pod template, at its namespace's enforce level):",
    summary="{refused} of {total} pod templates rejected",
    judge=judge,
    rule=POD_SECURITY_ADMISSION,
    reproduces=(__name__.rpartition(".")[0],),
    gap_summary="Pod Security versions not reproduced",
)
