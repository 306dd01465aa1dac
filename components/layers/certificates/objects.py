"""The certificates layer's objects as pure functions: cert-manager's chart values and namespace allows, the private
CA's `Certificate` (signed by the self-signed bootstrap issuer) and the `ClusterIssuer` specs."""

from __future__ import annotations

from typing import Any

from ...k8s.certificates import CA_SECRET
from ...k8s.resources import Allow, Port, container_resources, egress_to_apiserver, egress_to_internet, ingress_from_anywhere
from .config import Acme, CertificateAuthority

BOOTSTRAP_ISSUER = "hpcforge-selfsigned-bootstrap"
ACME_ACCOUNT_KEY = "acme-account-key"


def cert_manager_namespace_allows() -> list[Allow]:
    """cert-manager's namespace: the API server, ACME directories and HTTP-01 self-checks, and the webhook called by
    the API server."""
    return [
        egress_to_apiserver(),
        egress_to_internet(80, 443),
        ingress_from_anywhere("allow-ingress-webhook", Port(10250)),
    ]


def chart_values(*, production: bool) -> dict[str, Any]:
    """cert-manager chart values: two replicas of the controller and the webhook (with a PodDisruptionBudget)
    in production, one elsewhere."""
    return {
        "crds": {"enabled": True, "keep": True},
        # The startupapicheck Job is a Helm post-install hook, which helm.v4.Chart drops; readiness
        # is awaited instead by Pulumi on the webhook Deployment (or by Argo CD's health check).
        "startupapicheck": {"enabled": False},
        "replicaCount": 2 if production else 1,
        "podDisruptionBudget": {"enabled": production, "minAvailable": 1},
        "resources": container_resources("50m", "128Mi", "512Mi"),
        "webhook": {
            "replicaCount": 2 if production else 1,
            "resources": container_resources("20m", "64Mi", "256Mi"),
        },
        "cainjector": {"resources": container_resources("20m", "128Mi", "512Mi")},
        "prometheus": {"enabled": False},
    }


def self_signed_issuer_spec() -> dict[str, Any]:
    return {"selfSigned": {}}


def ca_certificate_spec(ca: CertificateAuthority) -> dict[str, Any]:
    """The private CA's certificate, from the bootstrap issuer, into the Secret `CA_SECRET`; its key never rotates
    (a new key would be a new CA that no client trusts yet)."""
    return {
        "isCA": True,
        "commonName": ca.common_name,
        "subject": {"organizations": [ca.organization]},
        "duration": ca.duration,
        "secretName": CA_SECRET,
        "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Never"},
        "issuerRef": {"name": BOOTSTRAP_ISSUER, "kind": "ClusterIssuer", "group": "cert-manager.io"},
    }


def ca_issuer_spec() -> dict[str, Any]:
    return {"ca": {"secretName": CA_SECRET}}


def acme_issuer_spec(acme: Acme, *, ingress_class: str) -> dict[str, Any]:
    """An ACME issuer solving HTTP-01 through the ingress class `ingress_class`."""
    return {
        "acme": {
            "email": acme.email,
            "server": acme.server,
            "privateKeySecretRef": {"name": ACME_ACCOUNT_KEY},
            "solvers": [{"http01": {"ingress": {"ingressClassName": ingress_class}}}],
        }
    }


__all__ = [
    "BOOTSTRAP_ISSUER",
    "acme_issuer_spec",
    "ca_certificate_spec",
    "ca_issuer_spec",
    "chart_values",
    "self_signed_issuer_spec",
]
