"""Certificates that layers ask cert-manager for: the private CA's ClusterIssuer and Secret, and `certificate`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..context import DeployContext

CA_ISSUER = "hpcforge-ca"
"""The ClusterIssuer of the private CA (the certificates layer creates it)."""
CA_SECRET = "hpcforge-ca"
"""The Secret holding the private CA in cert-manager's namespace."""


def certificate(
    ctx: DeployContext,
    parent: pulumi.Resource,
    *,
    name: str,
    namespace: str,
    dns_names: Sequence[str],
    issuer: str,
    duration: str,
    renew_before: str,
    component: str,
    app: str,
    usages: Sequence[str] = ("server auth",),
    depends_on: Sequence[pulumi.Resource] = (),
) -> k8s.apiextensions.CustomResource:
    """A cert-manager Certificate from a ClusterIssuer; its Secret `name` has tls.crt, tls.key and ca.crt."""
    return k8s.apiextensions.CustomResource(
        f"{namespace}/{name}",
        api_version="cert-manager.io/v1",
        kind="Certificate",
        metadata=ctx.meta(name, component, namespace, app=app),
        spec=certificate_spec(name, dns_names, issuer, duration, renew_before, usages),
        opts=ctx.opts(parent, depends_on=list(depends_on)),
    )


MAX_COMMON_NAME_BYTES = 64
"""X.509's upper bound on a common name, which cert-manager v1.21.1's webhook enforces
(internal/apis/certmanager/validation/certificate.go ValidateCertificateSpec)."""


def certificate_spec(
    secret_name: str, dns_names: Sequence[str], issuer: str, duration: str, renew_before: str, usages: Sequence[str]
) -> dict[str, Any]:
    """The spec of `certificate`: the first DNS name is also the common name when it fits in 64 bytes; a longer
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
