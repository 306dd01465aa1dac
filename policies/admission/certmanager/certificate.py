"""The Certificate rules of cert-manager v1.21.1's webhook: internal/apis/certmanager/validation/certificate.go
`ValidateCertificate` and the functions it calls, one function each.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...rules.access import get, items, mapping, text
from ...rules.apimachinery import is_dns1123_subdomain
from ...rules.gotime import format_duration, go_quote
from .fields import (
    DEFAULT_CERTIFICATE_DURATION,
    GROUP,
    KEY_USAGES,
    MAX_COMMON_NAME_BYTES,
    MAX_RSA_KEY_SIZE,
    MIN_RSA_KEY_SIZE,
    MINIMUM_CERTIFICATE_DURATION,
    MINIMUM_RENEW_BEFORE,
    SIGNATURE_ALGORITHMS,
    FieldError,
    decoded_duration,
    forbidden,
    go_int,
    go_ip,
    invalid,
    required,
)


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
    algorithm, size = text(key.get("algorithm")) or "", go_int(key.get("size")) or 0
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
    duration_set, renew_before = decoded_duration(spec, "duration"), decoded_duration(spec, "renewBefore")
    percentage = go_int(spec.get("renewBeforePercentage"))
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
    limit = go_int(spec.get("revisionHistoryLimit"))
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
