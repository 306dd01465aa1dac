"""Secrets stay secret and workloads are bounded and unprivileged: secrets-not-plaintext, container-resources,
privileged-allow-list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..access import get, items, mapping, text
from ..knobs import STRING_LIST, ObjectSelector, RuleConfig, knob, selector_list_knob
from ..rule import ResourceRule
from ..sources import helm_sources, walk
from ..view import ResourceView
from ..wire import is_secret, is_unknown
from ..workloads import containers, pod_specs

CREDENTIAL_KEYS = r"(?i)(password|passwd|passphrase|secret|token|api[-_]?key|credentials?|private[-_]?key)$"
NOT_CREDENTIAL_KEYS = r"(?i)^(existing|use|create)"


@dataclass(frozen=True)
class SecretsConfig(RuleConfig):
    credential_key_pattern: str = knob(
        "credentialKeyPattern",
        CREDENTIAL_KEYS,
        {"type": "string", "format": "regex"},
        "A Helm value whose key matches this regular expression is a credential.",
    )
    ignored_key_pattern: str = knob(
        "ignoredKeyPattern",
        NOT_CREDENTIAL_KEYS,
        {"type": "string", "format": "regex"},
        "Keys matching this are references or switches, not credentials (existingSecret, useSecret, ...).",
    )
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Secrets {namespace, kind, name} (globs) that may hold literals (e.g. public CA bundles)."
    )


def _literal(value: Any) -> bool:
    """A value that is not a Pulumi secret (an unknown outside a secret is computed in plaintext)."""
    if is_secret(value):
        return False
    if is_unknown(value):
        return True
    return value is not None and value != ""


def check_secrets_not_plaintext(resource: ResourceView, config: SecretsConfig) -> list[str]:  # noqa: PLR0912 (one branch per place a secret value can be)
    problems: list[str] = []
    if resource.is_kind("", "Secret") and not any(s.matches(resource) for s in config.exempt):
        for field in ("data", "stringData"):
            value = resource.props.get(field)
            if value is None:
                continue
            if not isinstance(value, Mapping):
                if _literal(value):
                    problems.append(f"{field} is not a Pulumi secret.")
                continue
            for key, item in value.items():
                if _literal(item):
                    problems.append(
                        f"{field}.{key} is a plaintext value, not a Pulumi secret: it is stored unencrypted in the "
                        "state and shown in diffs. Wrap it in pulumi.Output.secret() (components/k8s/resources.py secret() does)."
                    )
    credential = re.compile(config.credential_key_pattern)
    ignored = re.compile(config.ignored_key_pattern)
    for source in helm_sources(resource):
        for path, key, value in walk(source.values, source.values_path):
            if not key or not credential.search(key) or ignored.search(key):
                continue
            if isinstance(value, Mapping | list):
                continue
            if isinstance(value, bool | int | float) and not is_secret(value):
                continue  # switches and counts, not credentials
            if _literal(value):
                problems.append(
                    f"{path} looks like a credential and is a plaintext value, not a Pulumi secret. Pass a Pulumi "
                    "secret (e.g. a RandomPassword result) or reference an existing Secret."
                )
    return problems


SECRETS_NOT_PLAINTEXT = ResourceRule(
    "secrets-not-plaintext",
    "Secret values and credential Helm values are Pulumi secrets, never literals.",
    SecretsConfig,
    check_secrets_not_plaintext,
    "Generate the value (pulumi_random) or read it with config.require_secret(); wrap it with pulumi.Output.secret().",
)


@dataclass(frozen=True)
class ResourcesConfig(RuleConfig):
    require_cpu_request: bool = knob("requireCpuRequest", True, {"type": "boolean"}, "Require resources.requests.cpu.")
    require_memory_request: bool = knob("requireMemoryRequest", True, {"type": "boolean"}, "Require resources.requests.memory.")
    require_memory_limit: bool = knob("requireMemoryLimit", True, {"type": "boolean"}, "Require resources.limits.memory.")
    include_init_containers: bool = knob("includeInitContainers", True, {"type": "boolean"}, "Check init containers too.")
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Workloads {namespace, kind, name} (globs) exempt from this rule."
    )


def check_container_resources(resource: ResourceView, config: ResourcesConfig) -> list[str]:
    if resource.is_patch or any(s.matches(resource) for s in config.exempt):
        return []
    problems: list[str] = []
    for ref in containers(resource):
        if ref.init and not config.include_init_containers:
            continue
        res = ref.container.get("resources")
        if is_unknown(res):
            continue
        requests, limits = mapping(get(res, "requests")), mapping(get(res, "limits"))
        missing = [
            name
            for name, wanted, value in (
                ("requests.cpu", config.require_cpu_request, requests.get("cpu")),
                ("requests.memory", config.require_memory_request, requests.get("memory")),
                ("limits.memory", config.require_memory_limit, limits.get("memory")),
            )
            if wanted and (value is None or value == "")
        ]
        if missing:
            problems.append(
                f"{ref.path}: container {ref.name!r} has no {', '.join(missing)}: without requests the scheduler "
                "overcommits nodes, without a memory limit one leak evicts its neighbours."
            )
    return problems


CONTAINER_RESOURCES = ResourceRule(
    "container-resources",
    "Every container has CPU and memory requests and a memory limit.",
    ResourcesConfig,
    check_container_resources,
    "Set resources with container_resources(cpu, memory, memory_limit) from components/k8s/resources.py.",
)


FEATURES = ("privileged", "hostNetwork", "hostPID", "hostIPC", "hostPath", "hostPort")


@dataclass(frozen=True)
class PrivilegeGrant:
    selector: ObjectSelector
    allow: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    reason: str = ""

    @classmethod
    def from_json(cls, value: Any) -> PrivilegeGrant:
        body = mapping(value)
        return cls(
            ObjectSelector.from_json(body),
            tuple(str(v) for v in items(body.get("allow"))),
            tuple(_capability(str(v)) for v in items(body.get("capabilities"))),
            str(body.get("reason", "")),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.selector.to_json(),
            "allow": list(self.allow),
            "capabilities": list(self.capabilities),
            "reason": self.reason,
        }


def _capability(name: str) -> str:
    upper = name.strip().upper()
    return upper.removeprefix("CAP_")


@dataclass(frozen=True)
class PrivilegeConfig(RuleConfig):
    allow_list: tuple[PrivilegeGrant, ...] = knob(
        "allowList",
        (),
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    **ObjectSelector.SCHEMA,
                    "allow": {"type": "array", "items": {"type": "string", "enum": list(FEATURES)}},
                    "capabilities": STRING_LIST,
                    "reason": {"type": "string"},
                },
                "additionalProperties": False,
            },
        },
        "Entries {namespace, kind, name, allow, capabilities, reason}: workloads (globs) allowed these privileges "
        f"({', '.join(FEATURES)}) and added capabilities.",
        parse=lambda raw: tuple(PrivilegeGrant.from_json(v) for v in items(raw)),
    )


def _used_privileges(resource: ResourceView) -> list[tuple[str, str]]:
    """(feature, where) pairs; features are FEATURES or `capability:<NAME>`."""
    used: list[tuple[str, str]] = []
    for ref in pod_specs(resource):
        for feature in ("hostNetwork", "hostPID", "hostIPC"):
            if ref.spec.get(feature) is True:
                used.append((feature, f"{ref.path}.{feature}"))
        for volume in items(ref.spec.get("volumes")):
            if isinstance(get(volume, "hostPath"), Mapping):
                used.append(("hostPath", f"{ref.path}.volumes[{text(get(volume, 'name')) or '?'}]"))
    for container in containers(resource):
        security = mapping(container.container.get("securityContext"))
        if security.get("privileged") is True:
            used.append(("privileged", f"{container.path}.securityContext.privileged"))
        for cap in items(get(security, "capabilities", "add")):
            if isinstance(cap, str):
                used.append((f"capability:{_capability(cap)}", f"{container.path}.securityContext.capabilities.add"))
        for port in items(container.container.get("ports")):
            if get(port, "hostPort") not in (None, 0):
                used.append(("hostPort", f"{container.path}.ports"))
    return used


def check_privileged_allow_list(resource: ResourceView, config: PrivilegeConfig) -> list[str]:
    used = _used_privileges(resource)
    if not used:
        return []
    grants = [g for g in config.allow_list if g.selector.matches(resource)]
    allowed = {f for g in grants for f in g.allow}
    capabilities = {c for g in grants for c in g.capabilities}
    denied: dict[str, list[str]] = {}
    denied_caps: dict[str, list[str]] = {}
    for feature, where in used:
        if feature.startswith("capability:"):
            cap = feature.split(":", 1)[1]
            if cap not in capabilities and cap not in denied_caps.setdefault(where, []):
                denied_caps[where].append(cap)
        elif feature not in allowed and where not in denied.setdefault(feature, []):
            denied[feature].append(where)
    problems = [
        f"uses {feature} ({', '.join(places)}), which only allow-listed workloads may (allowList[].allow in the policy config)."
        for feature, places in denied.items()
        if places
    ]
    problems += [
        f"{where} adds capabilities {', '.join(caps)}, which only allow-listed workloads may "
        "(allowList[].capabilities in the policy config)."
        for where, caps in denied_caps.items()
        if caps
    ]
    return problems


PRIVILEGED_ALLOW_LIST = ResourceRule(
    "privileged-allow-list",
    "Privileged containers, host namespaces, hostPath, hostPort and added capabilities only for allow-listed workloads.",
    PrivilegeConfig,
    check_privileged_allow_list,
    "Drop the privilege, or add the workload with exactly what it needs (and why) to allowList in the policy config.",
)
