"""cert-manager's validating webhook, as cert-manager v1.21.1 decides it, for the fields hpcforge and the
charts it deploys set on Certificates, Issuers and ClusterIssuers.

The webhook (`webhook.cert-manager.io`, chart deploy/charts/cert-manager/templates/
webhook-validating-webhook.yaml: CREATE and UPDATE of every resource of cert-manager.io and
acme.cert-manager.io v1, failurePolicy Fail) dispatches in internal/webhook/admission/
resourcevalidation/resourcevalidation.go `validationMapping`: Certificate -> `ValidateCertificate`,
Issuer -> `ValidateIssuer`, ClusterIssuer -> `ValidateClusterIssuer` (both `ValidateIssuerSpec`).
A namespaced object in a namespace labelled `cert-manager.io/disable-validation: "true"` is not sent to
it (the chart's default `webhook.validatingWebhookConfiguration.namespaceSelector`).

Reproduced from v1.21.1 (each function names its upstream function):
- internal/apis/certmanager/validation/certificate.go: `ValidateCertificateSpec` (secretName,
  issuerRef, at least one subject name, commonName length, ipAddresses, privateKey algorithm and size,
  signatureAlgorithm, usages, revisionHistoryLimit, secretTemplate annotations, additionalOutputFormats,
  keystores), `validateIssuerRef`, `ValidateDuration`, `validateUsages`; the constants
  pkg/apis/certmanager/v1/const.go (minimum duration 1h, minimum renewBefore 5m, default duration 90
  days) and pkg/util/pki (RSA key size 2048 to 8192); the usages of pkg/api/util/usages.go.
- internal/apis/certmanager/validation/issuer.go: `ValidateIssuerConfig` (exactly one issuer type),
  `ValidateACMEIssuerConfig` (without the CA bundle's PEM parse), `ValidateACMEIssuerChallengeSolverConfig`,
  `...HTTP01Config`, `...HTTP01IngressConfig`, `...HTTP01GatewayConfig`, `ValidateCAIssuerConfig`,
  `ValidateSelfSignedIssuerConfig`; of `ValidateACMEChallengeSolverDNS01` only the provider count.
Not reproduced (hpcforge and its charts set none of these): literalSubject's RDN parse, emailAddresses
(Go's net/mail), otherNames, nameConstraints, renewal windows, Vault and Venafi issuer fields, DNS-01
provider fields, CertificateRequest, Order and Challenge (created by cert-manager itself).

Errors are k8s.io/apimachinery field errors and print as they do (`spec.renewBefore: Invalid value:
"1m0s": certificate renewBefore must be greater than 5m0s`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..rules.access import get, items, mapping, text
from ..rules.apimachinery import aggregate_message, is_dns1123_subdomain
from ..rules.gotime import HOUR, MINUTE, GoError, format_duration, go_quote, parse_duration
from .pins import Pin

REPRODUCES = Pin("cert-manager", "v1.21.1", ("Charts.CERT_MANAGER",), "cert-manager/cert-manager v1.21.1")
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""


GROUP = "cert-manager.io"
WEBHOOK = "webhook.cert-manager.io"
DISABLE_VALIDATION_LABEL = "cert-manager.io/disable-validation"

MINIMUM_CERTIFICATE_DURATION = HOUR  # const.go MinimumCertificateDuration
MINIMUM_RENEW_BEFORE = 5 * MINUTE  # const.go MinimumRenewBefore
DEFAULT_CERTIFICATE_DURATION = 90 * 24 * HOUR  # const.go DefaultCertificateDuration
MIN_RSA_KEY_SIZE, MAX_RSA_KEY_SIZE = 2048, 8192  # pkg/util/pki/generate.go
MAX_COMMON_NAME_BYTES = 64

# pkg/api/util/usages.go keyUsages and extKeyUsages.
KEY_USAGES = frozenset(
    {
        "signing",
        "digital signature",
        "content commitment",
        "key encipherment",
        "key agreement",
        "data encipherment",
        "cert sign",
        "crl sign",
        "encipher only",
        "decipher only",
        "any",
        "server auth",
        "client auth",
        "code signing",
        "email protection",
        "s/mime",
        "ipsec end system",
        "ipsec tunnel",
        "ipsec user",
        "timestamping",
        "ocsp signing",
        "microsoft sgc",
        "netscape sgc",
    }
)
# certificate.go keyAlgToAllowedSigAlgs.
SIGNATURE_ALGORITHMS: Mapping[str, tuple[str, ...]] = {
    "RSA": ("SHA256WithRSA", "SHA384WithRSA", "SHA512WithRSA"),
    "ECDSA": ("ECDSAWithSHA256", "ECDSAWithSHA384", "ECDSAWithSHA512"),
    "Ed25519": ("PureEd25519",),
}


@dataclass(frozen=True)
class FieldError:
    """A k8s.io/apimachinery field.Error: `path: Type[: value][: detail]` (value already as Go prints it)."""

    type: str
    path: str
    detail: str = ""
    value: str | None = None

    def __str__(self) -> str:
        body = self.type if self.value is None else f"{self.type}: {self.value}"
        return f"{self.path}: {body}: {self.detail}" if self.detail else f"{self.path}: {body}"


def required(path: str, detail: str = "") -> FieldError:
    return FieldError("Required value", path, detail)


def invalid(path: str, value: str, detail: str) -> FieldError:
    return FieldError("Invalid value", path, detail, value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError("Forbidden", path, detail)


def aggregate(errors: list[FieldError]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message, or `[a, b]` (duplicates once)."""
    return aggregate_message([str(e) for e in errors])


def go_ip(value: str) -> bool:
    """net.ParseIP: a dotted IPv4 address or an IPv6 address (no zone, no prefix)."""
    if "%" in value:
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- Certificate ------------------------------------------------------------------------------------


class UndecodableError(ValueError):
    """The webhook cannot decode the object (a duration that is not a Go duration): the request is refused."""


def _duration(spec: Mapping[str, Any], key: str) -> int | None:
    """A metav1.Duration field in nanoseconds (None when absent); UndecodableError when Go cannot parse it."""
    raw = spec.get(key)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise UndecodableError(f"spec.{key}: a duration must be a string, not {raw!r}")
    try:
        return parse_duration(raw)
    except GoError as error:
        raise UndecodableError(f"spec.{key}: {error}") from None


def validate_secret_name(spec: Mapping[str, Any]) -> list[FieldError]:
    """certificate.go ValidateCertificateSpec: secretName required, a DNS-1123 subdomain (NameIsDNSSubdomain)."""
    name = text(spec.get("secretName")) or ""
    if not name:
        return [required("spec.secretName", "must be specified")]
    return [invalid("spec.secretName", go_quote(name), message) for message in is_dns1123_subdomain(name)]


def validate_issuer_ref(spec: Mapping[str, Any]) -> list[FieldError]:
    """certificate.go validateIssuerRef: a name; for the cert-manager group (or none) kind Issuer or ClusterIssuer."""
    ref = mapping(spec.get("issuerRef"))
    found: list[FieldError] = []
    if not text(ref.get("name")):
        found.append(required("spec.issuerRef.name", "must be specified"))
    group, kind = text(ref.get("group")) or "", text(ref.get("kind")) or ""
    if group in ("", GROUP) and kind not in ("", "Issuer", "ClusterIssuer"):
        message = "must be one of Issuer or ClusterIssuer"
        if group == "":
            message += " (did you forget to set spec.issuerRef.kind.group?)"
        found.append(invalid("spec.issuerRef.kind", go_quote(kind), message))
    return found


def validate_subject_names(spec: Mapping[str, Any]) -> list[FieldError]:
    """ValidateCertificateSpec: at least one of commonName (or a CN in literalSubject), dnsNames, uris,
    emailAddresses, ipAddresses, otherNames; and commonName at most 64 bytes."""
    common_name = text(spec.get("commonName")) or ""
    literal = text(spec.get("literalSubject")) or ""
    has_literal_cn = bool(re.search(r"(^|[,+])\s*CN=", literal))
    found: list[FieldError] = []
    if literal and common_name:
        found.append(
            invalid(
                "spec.commonName", go_quote(common_name), "When providing a `LiteralSubject` no `commonName` may be provided."
            )
        )
    if not (
        common_name
        or has_literal_cn
        or any(items(spec.get(key)) for key in ("dnsNames", "uris", "emailAddresses", "ipAddresses", "otherNames"))
    ):
        found.append(
            invalid(
                "spec",
                '""',
                "at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, "
                "ipAddresses, otherNames, or uriSANs must be set",
            )
        )
    if len(common_name.encode()) > MAX_COMMON_NAME_BYTES:
        found.append(FieldError("Too long", "spec.commonName", f"may not be more than {MAX_COMMON_NAME_BYTES} bytes"))
    return found


def validate_ip_addresses(spec: Mapping[str, Any]) -> list[FieldError]:
    """certificate.go validateIPAddresses: each entry parses with net.ParseIP."""
    return [
        invalid(f"spec.ipAddresses[{i}]", go_quote(str(address)), "invalid IP address")
        for i, address in enumerate(items(spec.get("ipAddresses")))
        if not (isinstance(address, str) and go_ip(address))
    ]


def validate_private_key(spec: Mapping[str, Any]) -> list[FieldError]:
    """ValidateCertificateSpec, privateKey: RSA (or none) 2048..8192, ECDSA 256/384/521, Ed25519 any size."""
    key = spec.get("privateKey")
    if not isinstance(key, Mapping):
        return []
    algorithm, size = text(key.get("algorithm")) or "", _int(key.get("size")) or 0
    if algorithm in ("", "RSA"):
        if size > 0 and not MIN_RSA_KEY_SIZE <= size <= MAX_RSA_KEY_SIZE:
            detail = f"must be between {MIN_RSA_KEY_SIZE} and {MAX_RSA_KEY_SIZE} for rsa keyAlgorithm"
            return [invalid("spec.privateKey.size", str(size), detail)]
    elif algorithm == "ECDSA":
        if size > 0 and size not in (256, 384, 521):
            return [FieldError("Unsupported value", "spec.privateKey.size", 'supported values: "256", "384", "521"', str(size))]
    elif algorithm != "Ed25519":
        return [invalid("spec.privateKey.algorithm", go_quote(algorithm), "must be either empty or one of rsa, ecdsa or ed25519")]
    return []


def validate_signature_algorithm(spec: Mapping[str, Any]) -> list[FieldError]:
    """ValidateCertificateSpec: signatureAlgorithm must suit the key algorithm (RSA when none is set)."""
    signature = text(spec.get("signatureAlgorithm")) or ""
    if not signature:
        return []
    algorithm = text(get(spec, "privateKey", "algorithm")) or "RSA"
    allowed = SIGNATURE_ALGORITHMS.get(algorithm)
    if allowed is None or signature in allowed:
        return []
    detail = f"for key algorithm {algorithm} the allowed signature algorithms are [{' '.join(allowed)}]"
    return [invalid("spec.signatureAlgorithm", go_quote(signature), detail)]


def validate_duration(spec: Mapping[str, Any]) -> list[FieldError]:
    """certificate.go ValidateDuration: duration (default 90 days) at least 1h; renewBefore at least 5m and
    below the duration; renewBefore and renewBeforePercentage exclusive; the percentage's renewBefore in range."""
    duration_set, renew_before = _duration(spec, "duration"), _duration(spec, "renewBefore")
    percentage = _int(spec.get("renewBeforePercentage"))
    duration = DEFAULT_CERTIFICATE_DURATION if duration_set is None else duration_set
    found: list[FieldError] = []
    if duration < MINIMUM_CERTIFICATE_DURATION:
        detail = f"certificate duration must be greater than {format_duration(MINIMUM_CERTIFICATE_DURATION)}"
        found.append(invalid("spec.duration", format_duration(duration), detail))
    if renew_before is not None and percentage is not None:
        detail = "renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set"
        found.append(invalid("spec.renewBefore", format_duration(renew_before), detail))
        found.append(invalid("spec.renewBeforePercentage", str(percentage), detail))
    if renew_before is not None and renew_before < MINIMUM_RENEW_BEFORE:
        detail = f"certificate renewBefore must be greater than {format_duration(MINIMUM_RENEW_BEFORE)}"
        found.append(invalid("spec.renewBefore", format_duration(renew_before), detail))
    if renew_before is not None and renew_before >= duration:
        detail = (
            f"certificate duration {format_duration(duration)} must be greater than renewBefore {format_duration(renew_before)}"
        )
        found.append(invalid("spec.renewBefore", format_duration(renew_before), detail))
    if percentage is not None:
        derived = int(float(duration) * float(100 - percentage) / 100)
        if derived < MINIMUM_RENEW_BEFORE:
            detail = (
                "certificate renewBeforePercentage must result in a renewBefore greater than "
                f"{format_duration(MINIMUM_RENEW_BEFORE)}"
            )
            found.append(invalid("spec.renewBeforePercentage", str(percentage), detail))
        if derived >= duration:
            detail = "certificate renewBeforePercentage must result in a renewBefore less than duration"
            found.append(invalid("spec.renewBeforePercentage", str(percentage), detail))
    return found


def validate_durations(spec: Mapping[str, Any]) -> list[FieldError]:
    """ValidateCertificateSpec: ValidateDuration runs only when duration or renewBefore is set."""
    if spec.get("duration") is None and spec.get("renewBefore") is None:
        return []
    return validate_duration(spec)


def validate_usages(spec: Mapping[str, Any]) -> list[FieldError]:
    """certificate.go validateUsages: every usage is a known key usage or extended key usage."""
    return [
        invalid(f"spec.usages[{i}]", go_quote(str(usage)), "unknown keyusage")
        for i, usage in enumerate(items(spec.get("usages")))
        if usage not in KEY_USAGES
    ]


def validate_revision_history_limit(spec: Mapping[str, Any]) -> list[FieldError]:
    """ValidateCertificateSpec: revisionHistoryLimit, when set, at least 1."""
    limit = _int(spec.get("revisionHistoryLimit"))
    if limit is not None and limit < 1:
        return [invalid("spec.revisionHistoryLimit", str(limit), "must not be less than 1")]
    return []


def validate_secret_template(spec: Mapping[str, Any]) -> list[FieldError]:
    """certificate.go validateSecretTemplateAnnotations: no cert-manager.io/ annotation except
    cert-manager.io/allow-direct-injection (the labels' and annotations' own syntax is not reproduced)."""
    annotations = mapping(get(spec, "secretTemplate", "annotations"))
    return [
        invalid("spec.secretTemplate.annotations", go_quote(key), "cert-manager.io/* annotations are not allowed")
        for key in annotations
        if key.startswith("cert-manager.io/") and key != "cert-manager.io/allow-direct-injection"
    ]


def validate_additional_output_formats(spec: Mapping[str, Any]) -> list[FieldError]:
    """certificate.go validateAdditionalOutputFormats: each type once."""
    seen: set[str] = set()
    found: list[FieldError] = []
    for entry in items(spec.get("additionalOutputFormats")):
        kind = text(get(entry, "type")) or ""
        if kind in seen:
            found.append(FieldError("Duplicate value", "spec.additionalOutputFormats[type]", "", go_quote(kind)))
        seen.add(kind)
    return found


def validate_keystores(spec: Mapping[str, Any]) -> list[FieldError]:
    """certificate.go validateKeystores: exactly one of password and passwordSecretRef, a literal one not empty."""
    found: list[FieldError] = []
    for key, label in (("jks", "JKS"), ("pkcs12", "PKCS#12")):
        store = get(spec, "keystores", key)
        if not isinstance(store, Mapping):
            continue
        password, ref = store.get("password"), text(get(store, "passwordSecretRef", "name")) or ""
        if password is not None and ref:
            detail = f"exactly one of passwordSecretRef and password must be provided for {label} keystores; cannot set both"
            found.append(forbidden(f"spec.keystores.{key}", detail))
        if password is None and not ref:
            found.append(
                forbidden(
                    f"spec.keystores.{key}", f"must set exactly one of passwordSecretRef and password must for {label} keystores"
                )
            )
        if password is not None and password == "":
            found.append(
                forbidden(f"spec.keystores.{key}.password", f"literal password cannot be empty if set on {label} keystores")
            )
    return found


CERTIFICATE_RULES = (
    validate_secret_name,
    validate_issuer_ref,
    validate_subject_names,
    validate_ip_addresses,
    validate_private_key,
    validate_signature_algorithm,
    validate_durations,
    validate_usages,
    validate_revision_history_limit,
    validate_secret_template,
    validate_additional_output_formats,
    validate_keystores,
)


def validate_certificate(spec: Mapping[str, Any]) -> list[FieldError]:
    """ValidateCertificateSpec over `spec` (UndecodableError when the webhook could not decode it)."""
    return [error for rule in CERTIFICATE_RULES for error in rule(spec)]


# --- Issuer and ClusterIssuer ------------------------------------------------------------------------------

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


# --- objects ------------------------------------------------------------------------------------------------

VALIDATORS = {"Certificate": validate_certificate, "Issuer": validate_issuer, "ClusterIssuer": validate_issuer}
NAMESPACED = frozenset({"Certificate", "Issuer"})


def judged(obj: Mapping[str, Any]) -> bool:
    """Whether this reproduction judges `obj` (a cert-manager.io v1 Certificate, Issuer or ClusterIssuer)."""
    api = text(obj.get("apiVersion")) or ""
    return api == f"{GROUP}/v1" and text(obj.get("kind")) in VALIDATORS


def validation_disabled(namespace_labels: Mapping[str, Any] | None) -> bool:
    """The chart's namespaceSelector: `cert-manager.io/disable-validation NotIn [true]` leaves such namespaces out."""
    return mapping(namespace_labels).get(DISABLE_VALIDATION_LABEL) == "true"


def with_crd_defaults(kind: str, spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The defaults the API server applies from the CRDs' schemas before calling the webhook, for the fields
    validated here: an ACME HTTP-01 gateway parentRef's `kind` defaults to `Gateway`
    (deploy/crds/cert-manager.io_{cluster,}issuers.yaml)."""
    acme = spec.get("acme")
    if kind == "Certificate" or not isinstance(acme, Mapping):
        return spec
    solvers = []
    for solver in items(acme.get("solvers")):
        route = get(solver, "http01", "gatewayHTTPRoute")
        if isinstance(route, Mapping) and isinstance(route.get("parentRefs"), list):
            refs = [{"kind": "Gateway", **ref} if isinstance(ref, Mapping) else ref for ref in items(route.get("parentRefs"))]
            http01 = {**mapping(get(solver, "http01")), "gatewayHTTPRoute": {**route, "parentRefs": refs}}
            solvers.append({**mapping(solver), "http01": http01})
        else:
            solvers.append(solver)
    return {**spec, "acme": {**acme, "solvers": solvers}} if "solvers" in acme else spec


def refusal(obj: Mapping[str, Any]) -> str | None:
    """The webhook's answer for `obj`: None when admitted, else the message the API server relays."""
    kind = text(obj.get("kind")) or ""
    spec = with_crd_defaults(kind, mapping(obj.get("spec")))
    try:
        errors = VALIDATORS[kind](spec)
    except UndecodableError as error:
        return f'admission webhook "{WEBHOOK}" denied the request: cannot decode {kind}: {error}'
    if not errors:
        return None
    return f'admission webhook "{WEBHOOK}" denied the request: {aggregate(errors)}'
