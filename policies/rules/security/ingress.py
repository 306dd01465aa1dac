"""Every Ingress, Traefik IngressRoute(TCP) and chart ingress has TLS whose certificate comes from a cert-manager
issuer (ingress-tls-cert-manager).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..access import get, items, mapping, text
from ..knobs import RuleConfig, knob
from ..rule import StackRule
from ..sources import helm_sources, walk
from ..view import ResourceView, StackView, Violation
from ..wire import is_unknown

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
