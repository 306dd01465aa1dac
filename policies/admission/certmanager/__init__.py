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

One module per job: fields.py (names, limits, the field error, durations), certificate.py, issuer.py (Issuer and
ClusterIssuer) and objects.py (the webhook over hpcforge's objects).
"""

from __future__ import annotations

from ..family import Pin
from .certificate import (
    CERTIFICATE_RULES,
    validate_additional_output_formats,
    validate_certificate,
    validate_duration,
    validate_durations,
    validate_ip_addresses,
    validate_issuer_ref,
    validate_keystores,
    validate_private_key,
    validate_revision_history_limit,
    validate_secret_name,
    validate_secret_template,
    validate_signature_algorithm,
    validate_subject_names,
    validate_usages,
)
from .fields import (
    DEFAULT_CERTIFICATE_DURATION,
    DISABLE_VALIDATION_LABEL,
    GROUP,
    KEY_USAGES,
    MAX_COMMON_NAME_BYTES,
    MAX_RSA_KEY_SIZE,
    MIN_RSA_KEY_SIZE,
    MINIMUM_CERTIFICATE_DURATION,
    MINIMUM_RENEW_BEFORE,
    SIGNATURE_ALGORITHMS,
    WEBHOOK,
    FieldError,
    UndecodableError,
    aggregate,
    decoded_duration,
    forbidden,
    go_int,
    go_ip,
    invalid,
    required,
)
from .issuer import (
    DNS01_PROVIDERS,
    ISSUER_RULES,
    ISSUER_TYPES,
    validate_acme_issuer,
    validate_ca_issuer,
    validate_issuer,
    validate_issuer_type,
)
from .objects import NAMESPACED, VALIDATORS, judged, refusal, validation_disabled, with_crd_defaults

REPRODUCES = Pin("cert-manager", "v1.21.1", ("Charts.CERT_MANAGER",), "cert-manager/cert-manager v1.21.1")
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""

__all__ = [
    "CERTIFICATE_RULES",
    "DEFAULT_CERTIFICATE_DURATION",
    "DISABLE_VALIDATION_LABEL",
    "DNS01_PROVIDERS",
    "GROUP",
    "ISSUER_RULES",
    "ISSUER_TYPES",
    "KEY_USAGES",
    "MAX_COMMON_NAME_BYTES",
    "MAX_RSA_KEY_SIZE",
    "MINIMUM_CERTIFICATE_DURATION",
    "MINIMUM_RENEW_BEFORE",
    "MIN_RSA_KEY_SIZE",
    "NAMESPACED",
    "REPRODUCES",
    "SIGNATURE_ALGORITHMS",
    "VALIDATORS",
    "WEBHOOK",
    "FieldError",
    "UndecodableError",
    "aggregate",
    "decoded_duration",
    "forbidden",
    "go_int",
    "go_ip",
    "invalid",
    "judged",
    "refusal",
    "required",
    "validate_acme_issuer",
    "validate_additional_output_formats",
    "validate_ca_issuer",
    "validate_certificate",
    "validate_duration",
    "validate_durations",
    "validate_ip_addresses",
    "validate_issuer",
    "validate_issuer_ref",
    "validate_issuer_type",
    "validate_keystores",
    "validate_private_key",
    "validate_revision_history_limit",
    "validate_secret_name",
    "validate_secret_template",
    "validate_signature_algorithm",
    "validate_subject_names",
    "validate_usages",
    "validation_disabled",
    "with_crd_defaults",
]
