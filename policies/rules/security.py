"""Security rules: secrets stay secret, workloads are bounded and unprivileged, namespaces are locked
down and every route is TLS from cert-manager.

- secrets-not-plaintext: Secret values and credential-like Helm values are Pulumi secrets.
- container-resources: every container requests CPU and memory and has a memory limit.
- privileged-allow-list: privileged, host namespaces, hostPath, hostPort and added capabilities only
  for allow-listed workloads.
- namespace-pod-security: every namespace hpcforge creates has Pod Security Admission labels.
- namespace-default-deny (stack): every namespace hpcforge creates has a default-deny NetworkPolicy.
- ingress-tls-cert-manager (stack): every Ingress, Traefik IngressRoute(TCP) and chart ingress has TLS
  whose certificate comes from a cert-manager issuer.
- pod-security-admission, argocd-appproject-admission, apiserver-reachability (stack): admission as the
  API server and Argo CD decide it (policies/admission/rules.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .access import get, glob, items, mapping, text
from .knobs import STRING_LIST, ObjectSelector, RuleConfig, knob, selector_list_knob
from .rule import ResourceRule, StackRule
from .sources import helm_sources, walk
from .view import ResourceView, StackView, Violation
from .wire import is_secret, is_unknown
from .workloads import containers, pod_specs

# --- secrets-not-plaintext ------------------------------------------------------------------------

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

# --- container-resources --------------------------------------------------------------------------


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

# --- privileged-allow-list ------------------------------------------------------------------------

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

# --- namespace-pod-security -----------------------------------------------------------------------

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

# --- namespace-default-deny -----------------------------------------------------------------------


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

# --- ingress-tls-cert-manager ---------------------------------------------------------------------

ISSUER_ANNOTATIONS = ("cert-manager.io/cluster-issuer", "cert-manager.io/issuer")
TRAEFIK_GROUPS = ("traefik.io", "traefik.containo.us")


@dataclass(frozen=True)
class IngressTlsConfig(RuleConfig):
    require_known_issuer: bool = knob(
        "requireKnownIssuer",
        True,
        {"type": "boolean"},
        "The issuer named by an annotation must be a ClusterIssuer/Issuer of this stack (when it has any).",
    )
    check_helm_values: bool = knob("checkHelmValues", True, {"type": "boolean"}, "Also check `ingress:` blocks in Helm values.")


@dataclass(frozen=True)
class _Certs:
    cluster_issuers: frozenset[str]
    issuers: frozenset[tuple[str, str]]
    certificates: tuple[tuple[str, str, tuple[str, ...]], ...]
    """(namespace, secretName, dnsNames)."""

    def issued_secret(self, namespace: str, secret: str) -> bool:
        return any(ns == namespace and name == secret for ns, name, _ in self.certificates)

    def covers(self, namespace: str, host: str) -> bool:
        for ns, _, names in self.certificates:
            if ns != namespace:
                continue
            for name in names:
                if name == host or (name.startswith("*.") and host.endswith(name[1:]) and host.count(".") == name.count(".")):
                    return True
        return False

    def issuer_problem(self, annotations: Mapping[str, Any], namespace: str, config: IngressTlsConfig) -> str | None:
        cluster, local = annotations.get(ISSUER_ANNOTATIONS[0]), annotations.get(ISSUER_ANNOTATIONS[1])
        if is_unknown(cluster) or is_unknown(local):
            return None
        if not (isinstance(cluster, str) and cluster) and not (isinstance(local, str) and local):
            return "no cert-manager issuer annotation"
        if config.require_known_issuer and (self.cluster_issuers or self.issuers):
            if isinstance(cluster, str) and cluster and cluster not in self.cluster_issuers:
                return f"ClusterIssuer {cluster!r} is not defined in this stack"
            if isinstance(local, str) and local and (namespace, local) not in self.issuers:
                return f"Issuer {local!r} is not defined in namespace {namespace}"
        return None


def _certs(stack: StackView) -> _Certs:
    certificates = tuple(
        (
            c.namespace,
            text(c.spec.get("secretName")) or "",
            tuple(n for n in items(c.spec.get("dnsNames")) if isinstance(n, str)),
        )
        for c in stack.objects("cert-manager.io", "Certificate")
    )
    return _Certs(
        frozenset(i.object_name for i in stack.objects("cert-manager.io", "ClusterIssuer")),
        frozenset((i.namespace, i.object_name) for i in stack.objects("cert-manager.io", "Issuer")),
        certificates,
    )


def _ingress_problems(ingress: ResourceView, certs: _Certs, config: IngressTlsConfig) -> list[str]:
    tls = [mapping(t) for t in items(ingress.spec.get("tls"))]
    if is_unknown(ingress.spec.get("tls")):
        return []
    if not tls:
        return ["spec.tls is empty: the route is served without TLS."]
    problems: list[str] = []
    covered = {h for t in tls for h in items(t.get("hosts")) if isinstance(h, str)}
    for rule in items(ingress.spec.get("rules")):
        host = get(rule, "host")
        if isinstance(host, str) and host and host not in covered:
            problems.append(f"host {host} is not listed in spec.tls[].hosts.")
    issuer = certs.issuer_problem(ingress.annotations, ingress.namespace, config)
    if issuer is None:
        return problems
    if issuer == "no cert-manager issuer annotation":
        for t in tls:
            secret = text(t.get("secretName"))
            if not secret or not certs.issued_secret(ingress.namespace, secret):
                problems.append(
                    f"spec.tls secret {secret!r} has no cert-manager issuer annotation and no cert-manager Certificate "
                    f"in namespace {ingress.namespace} issues it."
                )
        return problems
    return [*problems, f"TLS issuer: {issuer}."]


_HOST_SNI = re.compile(r"HostSNI\(\s*`([^`]*)`")


def _route_problems(route: ResourceView, certs: _Certs) -> list[str]:  # noqa: PLR0911 (one return per way a route lacks TLS)
    tls = route.spec.get("tls")
    if is_unknown(tls):
        return []
    if not isinstance(tls, Mapping):
        return ["spec.tls is not set: the route is served without TLS."]
    secret = text(tls.get("secretName"))
    ns = route.namespace
    if tls.get("passthrough") is True and route.kind == "IngressRouteTCP":
        hosts = [h for r in items(route.spec.get("routes")) for h in _HOST_SNI.findall(text(get(r, "match")) or "")]
        concrete = [h for h in hosts if h and h != "*"]
        if concrete:
            missing = [h for h in concrete if not certs.covers(ns, h)]
            if missing:
                return [f"TLS passthrough to {', '.join(missing)}, but no cert-manager Certificate in {ns} covers it."]
            return []
        if not any(c_ns == ns for c_ns, _, _ in certs.certificates):
            return [f"TLS passthrough, but no cert-manager Certificate in namespace {ns} issues the backend's certificate."]
        return []
    if secret:
        if certs.issued_secret(ns, secret):
            return []
        return [f"spec.tls.secretName {secret!r} is not issued by a cert-manager Certificate in namespace {ns}."]
    if tls.get("certResolver"):
        return ["spec.tls uses a Traefik certResolver, not a cert-manager issuer."]
    return ["spec.tls names no secretName: Traefik would serve its default certificate."]


def _values_ingress_problems(resource: ResourceView, certs: _Certs, config: IngressTlsConfig) -> list[str]:
    problems: list[str] = []
    for source in helm_sources(resource):
        for path, key, value in walk(source.values, source.values_path):
            if key != "ingress" or not isinstance(value, Mapping) or value.get("enabled") is not True:
                continue
            tls = value.get("tls")
            if is_unknown(tls):
                continue
            if not (tls is True or (isinstance(tls, list) and tls)):
                problems.append(f"{path} is enabled without TLS (tls: true or a tls list).")
                continue
            namespace = text(resource.props.get("namespace")) or text(get(resource.spec, "destination", "namespace")) or ""
            issuer = certs.issuer_problem(mapping(value.get("annotations")), namespace, config)
            if issuer:
                problems.append(f"{path}: {issuer}.")
    return problems


def check_ingress_tls(stack: StackView, config: IngressTlsConfig) -> list[Violation]:
    certs = _certs(stack)
    violations: list[Violation] = []
    for resource in stack.resources:
        problems: list[str] = []
        if resource.is_kind("networking.k8s.io", "Ingress"):
            problems = _ingress_problems(resource, certs, config)
        elif resource.is_object and resource.group in TRAEFIK_GROUPS and resource.kind in ("IngressRoute", "IngressRouteTCP"):
            problems = _route_problems(resource, certs)
        if config.check_helm_values:
            problems += _values_ingress_problems(resource, certs, config)
        violations += [Violation(f"{resource.display}: {p}", resource.urn) for p in problems]
    return violations


INGRESS_TLS = StackRule(
    "ingress-tls-cert-manager",
    "Every ingress route has TLS with a certificate from a cert-manager issuer.",
    IngressTlsConfig,
    check_ingress_tls,
    "Annotate the Ingress with cert-manager.io/cluster-issuer (components/layers/certificates/layer.py issuers), or give "
    "the IngressRoute a secretName issued by certificate() from the same module.",
)

# The admission family (policies/admission/rules.py) belongs to this pack.
from ..admission.rules import RULES as ADMISSION_RULES  # noqa: E402

RULES = (
    SECRETS_NOT_PLAINTEXT,
    CONTAINER_RESOURCES,
    PRIVILEGED_ALLOW_LIST,
    NAMESPACE_POD_SECURITY,
    NAMESPACE_DEFAULT_DENY,
    INGRESS_TLS,
    *ADMISSION_RULES,
)
