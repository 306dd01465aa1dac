"""Certificates that layers ask cert-manager for (`Scope.certificate`): the private CA's ClusterIssuer and Secret, and
the spec of a Certificate (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CERT_MANAGER_API = "cert-manager.io/v1"
CA_ISSUER = "hpcforge-ca"
"""The ClusterIssuer of the private CA (the certificates layer creates it)."""
CA_SECRET = "hpcforge-ca"
"""The Secret holding the private CA in cert-manager's namespace."""


MAX_COMMON_NAME_BYTES = 64
"""X.509's upper bound on a common name, which cert-manager v1.21.1's webhook enforces
(internal/apis/certmanager/validation/certificate.go ValidateCertificateSpec)."""


def certificate_spec(
    secret_name: str, dns_names: Sequence[str], issuer: str, duration: str, renew_before: str, usages: Sequence[str]
) -> dict[str, Any]:
    """The spec of a Certificate (`Scope.certificate`): the first DNS name is also the common name when it fits in 64 bytes; a longer
    one (a long Slurm namespace, a long Grendel host name) is left to the dnsNames alone, which clients
    verify anyway, since cert-manager refuses a longer commonName."""
    spec: dict[str, Any] = {"secretName": secret_name}
    if len(dns_names[0].encode()) <= MAX_COMMON_NAME_BYTES:
        spec["commonName"] = dns_names[0]
    spec.update(
        {
            "dnsNames": list(dns_names),
            "duration": duration,
            "renewBefore": renew_before,
            "usages": list(usages),
            "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
            "issuerRef": {"name": issuer, "kind": "ClusterIssuer", "group": "cert-manager.io"},
        }
    )
    return spec
