"""cert-manager's names and limits, a field error as its webhook reports it (field.ErrorList), and the
decoding of durations the webhook does before any rule.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...rules.apimachinery import aggregate_message
from ...rules.gotime import HOUR, MINUTE, GoError, parse_duration

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


def go_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class UndecodableError(ValueError):
    """The webhook cannot decode the object (a duration that is not a Go duration): the request is refused."""


def decoded_duration(spec: Mapping[str, Any], key: str) -> int | None:
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
