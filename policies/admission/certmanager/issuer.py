"""The Issuer and ClusterIssuer rules of cert-manager v1.21.1's webhook: internal/apis/certmanager/validation/
issuer.go `ValidateIssuer`, with the CA and ACME issuer types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get, items, mapping, text
from ...rules.apimachinery import is_dns1123_subdomain
from ...rules.gotime import GoError, format_duration, go_quote, parse_duration
from .fields import FieldError, UndecodableError, forbidden, invalid, required

ISSUER_TYPES = ("acme", "ca", "selfSigned", "vault", "venafi")
DNS01_PROVIDERS = ("akamai", "azureDNS", "cloudDNS", "cloudflare", "route53", "acmeDNS", "digitalocean", "rfc2136", "webhook")
# ValidateACMEChallengeSolverDNS01 counts akamai and acmeDNS without the "more than one" guard.
_UNGUARDED_DNS01 = frozenset({"akamai", "acmeDNS"})


def _present(body: Mapping[str, Any], key: str) -> bool:
    """A pointer field set in JSON (`{}` counts, `null` does not)."""
    return body.get(key) is not None


def validate_issuer_type(spec: Mapping[str, Any]) -> list[FieldError]:
    """issuer.go ValidateIssuerConfig: exactly one of acme, ca, selfSigned, vault, venafi."""
    found: list[FieldError] = []
    configured = 0
    for key in ISSUER_TYPES:
        if not _present(spec, key):
            continue
        if configured:
            found.append(forbidden(f"spec.{key}", "may not specify more than one issuer type"))
        configured += 1
    if not configured:
        found.append(required("spec", "at least one issuer must be configured"))
    return found


def validate_ca_issuer(spec: Mapping[str, Any]) -> list[FieldError]:
    """issuer.go ValidateCAIssuerConfig: secretName; OCSP and issuing-certificate URLs not empty."""
    ca = spec.get("ca")
    if not isinstance(ca, Mapping) or _first_type(spec) != "ca":
        return []
    found: list[FieldError] = []
    if not text(ca.get("secretName")):
        found.append(required("spec.ca.secretName"))
    for i, url in enumerate(items(ca.get("ocspServers"))):
        if url == "":
            found.append(
                invalid(f"spec.ca.ocspServer[{i}]", '""', "must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org")
            )
    for i, url in enumerate(items(ca.get("issuingCertificateURLs"))):
        if url == "":
            found.append(invalid(f"spec.ca.issuingCertificateURLs[{i}]", '""', "must be a valid URL"))
    return found


def _first_type(spec: Mapping[str, Any]) -> str | None:
    """The issuer type ValidateIssuerConfig validates in depth (the first one set)."""
    return next((key for key in ISSUER_TYPES if _present(spec, key)), None)


def _http01_ingress(ingress: Mapping[str, Any], path: str) -> list[FieldError]:
    """issuer.go ValidateACMEIssuerChallengeSolverHTTP01IngressConfig."""
    found: list[FieldError] = []
    given = sum(
        1
        for present in (ingress.get("class") is not None, ingress.get("ingressClassName") is not None, bool(ingress.get("name")))
        if present
    )
    if given > 1:
        found.append(forbidden(path, "only one of 'ingressClassName', 'name' or 'class' should be specified"))
    class_name = ingress.get("ingressClassName")
    if isinstance(class_name, str):
        errors = is_dns1123_subdomain(class_name)
        if errors:
            detail = "must be a valid IngressClass name: " + ", ".join(errors)
            found.append(invalid(f"{path}.ingressClassName", go_quote(class_name), detail))
    service_type = text(ingress.get("serviceType")) or ""
    if service_type not in ("", "ClusterIP", "NodePort"):
        found.append(invalid(f"{path}.serviceType", go_quote(service_type), 'must be empty, "ClusterIP" or "NodePort"'))
    return found


def _http01_gateway(gateway: Mapping[str, Any], path: str) -> list[FieldError]:
    """issuer.go ValidateACMEIssuerChallengeSolverHTTP01GatewayConfig (path `gateway`, as upstream names it)."""
    found: list[FieldError] = []
    service_type = text(gateway.get("serviceType")) or ""
    if service_type not in ("", "ClusterIP", "NodePort"):
        found.append(invalid(f"{path}.serviceType", go_quote(service_type), 'must be empty, "ClusterIP" or "NodePort"'))
    for i, ref in enumerate(items(gateway.get("parentRefs"))):
        body = mapping(ref)
        if body.get("kind") is not None and not body.get("name"):
            return [*found, required(f"{path}.parentRefs[{i}].name", "name is required when kind is specified")]
        if body.get("name") and body.get("kind") is None:
            return [*found, required(f"{path}.parentRefs[{i}].kind", "kind is required when name is specified")]
    return found


def _solver(solver: Mapping[str, Any], path: str) -> list[FieldError]:  # noqa: PLR0912 (one branch per check of the upstream webhook, in its order)
    """issuer.go ValidateACMEIssuerChallengeSolverConfig (HTTP-01 in full, DNS-01 by provider count)."""
    found: list[FieldError] = []
    providers = 0
    http01 = solver.get("http01")
    if isinstance(http01, Mapping):
        providers += 1
        defined = 0
        if isinstance(http01.get("ingress"), Mapping):
            defined += 1
            found += _http01_ingress(mapping(http01.get("ingress")), f"{path}.http01.ingress")
        if isinstance(http01.get("gatewayHTTPRoute"), Mapping):
            defined += 1
            found += _http01_gateway(mapping(http01.get("gatewayHTTPRoute")), f"{path}.http01.gateway")
        if defined == 0:
            found.append(required(f"{path}.http01", "no HTTP01 solver type configured"))
        if defined > 1:
            found.append(required(f"{path}.http01", "only 1 HTTP01 solver type may be configured"))
    dns01 = solver.get("dns01")
    if isinstance(dns01, Mapping):
        if providers:
            found.append(forbidden(path, "may not specify more than one solver type in a single solver"))
        else:
            providers += 1
            count = 0
            for key in DNS01_PROVIDERS:
                if not _present(dns01, key):
                    continue
                if count and key not in _UNGUARDED_DNS01:
                    found.append(forbidden(f"{path}.dns01.{key}", "may not specify more than one provider type"))
                    continue
                count += 1
            if not count:
                found.append(required(f"{path}.dns01", "no DNS01 provider configured"))
    if not providers:
        found.append(required(path, "no solver type configured"))
    wait = solver.get("waitInsteadOfSelfCheck")
    if isinstance(wait, str):
        try:
            waited = parse_duration(wait)
        except GoError as error:
            raise UndecodableError(f"{path}.waitInsteadOfSelfCheck: {error}") from None
        if waited < 0:
            found.append(
                invalid(f"{path}.waitInsteadOfSelfCheck", format_duration(waited), "waitInsteadOfSelfCheck must not be negative")
            )
    return found


def validate_acme_issuer(spec: Mapping[str, Any]) -> list[FieldError]:
    """issuer.go ValidateACMEIssuerConfig: caBundle/skipTLSVerify exclusive, privateKeySecretRef.name and server
    required, external account binding's keyID and key, every solver."""
    acme = spec.get("acme")
    if not isinstance(acme, Mapping):
        return []
    found: list[FieldError] = []
    if acme.get("caBundle") and acme.get("skipTLSVerify") is True:
        detail = "caBundle and skipTLSVerify are mutually exclusive and cannot both be set"
        found.append(invalid("spec.acme.caBundle", '""', detail))
        found.append(invalid("spec.acme.skipTLSVerify", "true", detail))
    if not text(get(acme, "privateKeySecretRef", "name")):
        found.append(required("spec.acme.privateKeySecretRef.name", "private key secret name is a required field"))
    if not text(acme.get("server")):
        found.append(required("spec.acme.server", "acme server URL is a required field"))
    binding = acme.get("externalAccountBinding")
    if isinstance(binding, Mapping):
        if not text(binding.get("keyID")):
            found.append(
                required(
                    "spec.acme.externalAccountBinding.keyID", "the keyID field is required when using externalAccountBinding"
                )
            )
        if not text(get(binding, "keySecretRef", "name")):
            found.append(required("spec.acme.externalAccountBinding.keySecretRef.name", "secret name is required"))
        if not text(get(binding, "keySecretRef", "key")):
            found.append(required("spec.acme.externalAccountBinding.keySecretRef.key", "secret key is required"))
    for i, solver in enumerate(items(acme.get("solvers"))):
        found += _solver(mapping(solver), f"spec.acme.solvers[{i}]")
    return found


ISSUER_RULES = (validate_issuer_type, validate_acme_issuer, validate_ca_issuer)


def validate_issuer(spec: Mapping[str, Any]) -> list[FieldError]:
    """ValidateIssuerSpec over an Issuer's or ClusterIssuer's `spec`. Only the first issuer type set is
    validated in depth (ValidateIssuerConfig puts the others in the `more than one` error)."""
    return [error for rule in ISSUER_RULES for error in rule(spec)]
