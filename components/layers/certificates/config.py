"""The certificates layer's config: the private CA, certificate lifetimes, an optional ACME issuer."""

from __future__ import annotations

from pydantic import Field, field_validator

from ...ground.base import GoDuration, StrictModel


class CertificateAuthority(StrictModel):
    common_name: str = "hpcforge internal CA"
    """Common name (CN) of the private CA certificate (cert-manager refuses a CA certificate without one, or with one
    over 64 bytes)."""
    organization: str = "hpcforge"
    """Organization (O) in the subject of the private CA certificate."""
    duration: GoDuration = "87600h"
    """Lifetime of the private CA certificate (default 10 years)."""

    @field_validator("common_name")
    @classmethod
    def _common_name(cls, value: str) -> str:
        # cert-manager v1.21.1 internal/apis/certmanager/validation/certificate.go ValidateCertificateSpec: the
        # CA Certificate has no other name, so it needs a commonName, and one of at most 64 bytes.
        if not value:
            raise ValueError("must not be empty: cert-manager refuses a CA certificate without a commonName")
        size = len(value.encode())
        if size > 64:
            raise ValueError(f"{value!r} is {size} bytes long: cert-manager refuses a commonName longer than 64 bytes")
        return value


class Acme(StrictModel):
    """Public certificates from an ACME CA (HTTP-01 through Traefik)."""

    email: str = Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    """Contact address of the ACME account (the CA sends expiry notices there)."""
    server: str = "https://acme-v02.api.letsencrypt.org/directory"
    """ACME directory URL (default: Let's Encrypt production)."""

    @field_validator("server")
    @classmethod
    def _https(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError(f"{value!r} is not an https:// ACME directory URL")
        return value


class TlsConfig(StrictModel):
    ca: CertificateAuthority = Field(default_factory=CertificateAuthority)
    """The private CA: a self-signed bootstrap issuer signs it, and the `hpcforge-ca` ClusterIssuer issues every internal
    certificate from it."""
    acme: Acme | None = None
    """When set, ingress hosts may use the public `acme` issuer instead of the internal CA."""
    certificate_duration: GoDuration = "2160h"
    """Lifetime of certificates issued by the internal CA (default 90 days): at least 1h, at most `ca.duration`."""
    renew_before: GoDuration = "360h"
    """How long before expiry cert-manager renews a certificate of the internal CA (default 15 days); at least 5m and
    shorter than `certificateDuration` (cert-manager refuses it otherwise)."""
