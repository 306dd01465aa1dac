"""Every namespace hpcforge creates is locked down: Pod Security Admission labels (namespace-pod-security) and a
default-deny NetworkPolicy (namespace-default-deny).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..access import glob, items
from ..knobs import STRING_LIST, RuleConfig, knob
from ..rule import ResourceRule, StackRule
from ..view import ResourceView, StackView, Violation
from ..wire import is_unknown

PSA_PREFIX = "pod-security.kubernetes.io/"
PSA_LEVELS = ("privileged", "baseline", "restricted")


@dataclass(frozen=True)
class PodSecurityConfig(RuleConfig):
    required_modes: tuple[str, ...] = knob(
        "requiredModes",
        ("enforce", "audit", "warn"),
        {"type": "array", "items": {"type": "string", "enum": ["enforce", "audit", "warn"]}},
        "Pod Security Admission modes every namespace must set.",
    )
    require_versions: bool = knob(
        "requireVersions", True, {"type": "boolean"}, "Also require the <mode>-version labels (v1.NN or latest)."
    )
    allowed_enforce_levels: tuple[str, ...] = knob(
        "allowedEnforceLevels",
        PSA_LEVELS,
        {"type": "array", "items": {"type": "string", "enum": list(PSA_LEVELS)}},
        "Levels a namespace may enforce.",
    )
    include_rendered: bool = knob(
        "includeRendered", False, {"type": "boolean"}, "Also check namespaces rendered by a helm.v4.Chart."
    )


def check_namespace_pod_security(resource: ResourceView, config: PodSecurityConfig) -> list[str]:
    if not resource.is_kind("", "Namespace") or (resource.rendered_by_component and not config.include_rendered):
        return []
    labels = resource.labels
    problems: list[str] = []
    for mode in config.required_modes:
        level = labels.get(PSA_PREFIX + mode)
        if is_unknown(level):
            continue
        if level not in PSA_LEVELS:
            problems.append(f"namespace {resource.object_name} has no valid {PSA_PREFIX}{mode} label (got {level!r}).")
        elif mode == "enforce" and level not in config.allowed_enforce_levels:
            problems.append(f"namespace {resource.object_name} enforces {level!r}, not one of allowedEnforceLevels.")
        if config.require_versions:
            version = labels.get(f"{PSA_PREFIX}{mode}-version")
            if not is_unknown(version) and not (isinstance(version, str) and re.fullmatch(r"latest|v1\.[0-9]+", version)):
                problems.append(f"namespace {resource.object_name} has no valid {PSA_PREFIX}{mode}-version label.")
    return problems


NAMESPACE_POD_SECURITY = ResourceRule(
    "namespace-pod-security",
    "Every namespace hpcforge creates carries Pod Security Admission labels.",
    PodSecurityConfig,
    check_namespace_pod_security,
    "Create namespaces with components/k8s/resources.py Namespace, which sets enforce/audit/warn and their versions.",
)


@dataclass(frozen=True)
class DefaultDenyConfig(RuleConfig):
    policy_name: str = knob(
        "policyName", "default-deny", {"type": "string"}, "Required name of the deny-all NetworkPolicy ('' for any)."
    )
    excluded_namespaces: tuple[str, ...] = knob(
        "excludedNamespaces",
        ("kube-system", "kube-public", "kube-node-lease", "default"),
        STRING_LIST,
        "Namespaces (globs) exempt from this rule: Kubernetes' own, which hpcforge may patch but does not create.",
    )
    include_rendered: bool = knob(
        "includeRendered", False, {"type": "boolean"}, "Also require it for namespaces rendered by a helm.v4.Chart."
    )


def is_default_deny(policy: ResourceView) -> bool:
    spec = policy.spec
    selector = spec.get("podSelector")
    if not isinstance(selector, Mapping) or any(v for v in selector.values()):
        return False
    types = {t for t in items(spec.get("policyTypes")) if isinstance(t, str)}
    return {"Ingress", "Egress"} <= types and not items(spec.get("ingress")) and not items(spec.get("egress"))


def check_namespace_default_deny(stack: StackView, config: DefaultDenyConfig) -> list[Violation]:
    policies = stack.objects("networking.k8s.io", "NetworkPolicy")
    violations: list[Violation] = []
    for namespace in stack.objects("", "Namespace"):
        name = namespace.object_name
        if (namespace.rendered_by_component and not config.include_rendered) or not name:
            continue
        if any(glob(p, name) for p in config.excluded_namespaces):
            continue
        found = [
            p
            for p in policies
            if p.namespace == name and is_default_deny(p) and (not config.policy_name or p.object_name == config.policy_name)
        ]
        if not found:
            named = f" named {config.policy_name!r}" if config.policy_name else ""
            violations.append(
                Violation(
                    f"namespace {name} has no default-deny NetworkPolicy{named} (podSelector {{}}, policyTypes "
                    "[Ingress, Egress], no rules): every pod in it accepts and opens any connection.",
                    namespace.urn,
                )
            )
    return violations


NAMESPACE_DEFAULT_DENY = StackRule(
    "namespace-default-deny",
    "Every namespace hpcforge creates has a default-deny NetworkPolicy.",
    DefaultDenyConfig,
    check_namespace_default_deny,
    "Create namespaces with components/k8s/resources.py Namespace (default-deny plus explicit allows).",
)
