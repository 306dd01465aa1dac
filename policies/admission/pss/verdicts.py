"""Pod Security over a whole set of objects: every pod template at its namespace's `enforce` level and version, and the
versions a namespace enforces that are not reproduced (`pod_security_gaps`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.podtemplates import PodTemplate, pod_templates
from ..family import mark, namespace_labels
from .levels import Failure, evaluate_pod, forbidden_message
from .namespaces import NamespacePolicy
from .versions import KUBERNETES_VERSION, LABEL_PREFIX, LEVELS, Version, unreproduced


def _known_policy_labels(labels: Mapping[str, Any]) -> bool:
    """Whether every pod-security label holds a known value."""
    return all(isinstance(v, str) for k, v in labels.items() if str(k).startswith(LABEL_PREFIX))


@dataclass(frozen=True)
class PodVerdict:
    template: PodTemplate
    policy: NamespacePolicy
    failures: tuple[Failure, ...]
    warn_policy: NamespacePolicy | None = None
    warnings: tuple[Failure, ...] = ()
    """What the namespace's `warn` level (when stricter than enforce) would tell the client."""

    @property
    def obj(self) -> Mapping[str, Any]:
        return self.template.owner

    @property
    def admitted(self) -> bool:
        return not self.failures

    @property
    def reasons(self) -> tuple[str, ...]:
        return () if self.admitted else (self.message,)

    @property
    def message(self) -> str:
        if self.admitted:
            return f"admitted ({self.policy.level}:{self.policy.version_label})"
        return forbidden_message(self.failures, self.policy.level, self.policy.version_label)

    def lines(self) -> list[str]:
        out = [f"  {mark(self.admitted)} {self.template.where} [{self.template.namespace}]: {self.message}"]
        if self.admitted and self.warnings and self.warn_policy is not None:
            level = f"{self.warn_policy.level}:{self.warn_policy.version_label}"
            out.append(f"         warn ({level}): " + ", ".join(str(w) for w in self.warnings))
        return out


def _pod_meta(template: PodTemplate) -> dict[str, Any]:
    return {"labels": dict(template.labels), "annotations": dict(template.annotations)}


def _pod_spec(template: PodTemplate) -> dict[str, Any]:
    """The pod spec as the pod will have it: for operator CRs, the role containers merged in."""
    spec = dict(template.spec)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        spec[key] = [dict(c.body) for c in template.containers if c.kind == key]
    return spec


def pod_security_verdicts(
    objects: Sequence[Mapping[str, Any]], cluster_version: Version = KUBERNETES_VERSION
) -> list[PodVerdict]:
    """Every pod template of `objects`, judged at its namespace's `enforce` level and version (pods of
    a namespace whose labels are not known yet are left out)."""
    labels = namespace_labels(objects)
    verdicts: list[PodVerdict] = []
    for obj in objects:
        for template in pod_templates(obj):
            namespace = labels.get(template.namespace, {})
            if namespace is None or not _known_policy_labels(namespace):
                continue  # the namespace's level is not known during a preview: not judged
            policy = NamespacePolicy.from_labels(namespace, cluster_version)
            meta, spec = _pod_meta(template), _pod_spec(template)
            failures = evaluate_pod(meta, spec, policy.level, policy.version)
            warn = NamespacePolicy.from_labels(namespace, cluster_version, "warn")
            warnings: list[Failure] = []
            if LEVELS.index(warn.level) > LEVELS.index(policy.level):
                warnings = evaluate_pod(meta, spec, warn.level, warn.version)
            verdicts.append(PodVerdict(template, policy, tuple(failures), warn, tuple(warnings)))
    return verdicts


@dataclass(frozen=True)
class PodSecurityGap:
    """Namespaces whose pods Kubernetes evaluates at a version newer than the reproduced one (`unreproduced`)."""

    version: Version
    namespaces: tuple[str, ...]
    reason: str

    @property
    def message(self) -> str:
        label = f"v{self.version[0]}.{self.version[1]}"
        reproduced = f"{KUBERNETES_VERSION[0]}.{KUBERNETES_VERSION[1]}"
        return (
            f"Pod Security of Kubernetes {self.version[0]}.{self.version[1]} is not reproduced: namespace"
            f"{'s' if len(self.namespaces) > 1 else ''} {', '.join(self.namespaces)} enforce{'' if len(self.namespaces) > 1 else 's'} "
            f"{label} (its enforce-version label, or `latest` on a cluster of that version), and their pods were judged as "
            f"{reproduced} judges them: {self.reason}. Bring policies/admission/pss/ (and its REPRODUCES, in versions.py) to "
            f"Kubernetes {self.version[0]}.{self.version[1]}, or keep hpcforge:kubernetes.version (which sets "
            f"hpcforge's enforce-version labels) at {reproduced} or below"
        )


def pod_security_gaps(verdicts: Sequence[PodVerdict]) -> list[PodSecurityGap]:
    """One gap per Kubernetes version above the reproduced one that a namespace of `verdicts` enforces (at baseline
    or restricted: privileged runs no check at any version)."""
    found: dict[Version, set[str]] = {}
    for verdict in verdicts:
        if verdict.policy.level != "privileged" and unreproduced(verdict.policy.named) is not None:
            found.setdefault(verdict.policy.named, set()).add(verdict.template.namespace)
    return [PodSecurityGap(v, tuple(sorted(found[v])), unreproduced(v) or "") for v in sorted(found)]
