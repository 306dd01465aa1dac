"""Security rules: secrets stay secret, workloads are bounded and unprivileged, namespaces are locked
down and every route is TLS from cert-manager.

- secrets-not-plaintext: Secret values and credential-like Helm values are Pulumi secrets.
- container-resources: every container requests CPU and memory and has a memory limit.
- privileged-allow-list: privileged, host namespaces, hostPath, hostPort and added capabilities only
  for allow-listed workloads.
- namespace-pod-security: every namespace hpcforge creates has Pod Security Admission labels.
- namespace-default-deny (stack): every namespace hpcforge creates has a default-deny NetworkPolicy.
- ingress-tls-cert-manager (stack): every Ingress, Traefik IngressRoute(TCP) and chart ingress has TLS
  whose certificate comes from a cert-manager issuer.

One module per family: pods.py (secrets, resources, privileges), namespaces.py (Pod Security labels, default deny) and
ingress.py (TLS from cert-manager). The pack also serves the admission rules, admission as the API server, Argo CD and
the operators decide it (policies/admission/rules.py); policies/families.py puts them together.
"""

from __future__ import annotations

from .ingress import INGRESS_TLS, ISSUER_ANNOTATIONS, TRAEFIK_GROUPS, IngressTlsConfig, check_ingress_tls
from .namespaces import (
    NAMESPACE_DEFAULT_DENY,
    NAMESPACE_POD_SECURITY,
    PSA_LEVELS,
    PSA_PREFIX,
    DefaultDenyConfig,
    PodSecurityConfig,
    check_namespace_default_deny,
    check_namespace_pod_security,
    is_default_deny,
)
from .pods import (
    CONTAINER_RESOURCES,
    CREDENTIAL_KEYS,
    FEATURES,
    NOT_CREDENTIAL_KEYS,
    PRIVILEGED_ALLOW_LIST,
    SECRETS_NOT_PLAINTEXT,
    PrivilegeConfig,
    PrivilegeGrant,
    ResourcesConfig,
    SecretsConfig,
    check_container_resources,
    check_privileged_allow_list,
    check_secrets_not_plaintext,
)

RULES = (
    SECRETS_NOT_PLAINTEXT,
    CONTAINER_RESOURCES,
    PRIVILEGED_ALLOW_LIST,
    NAMESPACE_POD_SECURITY,
    NAMESPACE_DEFAULT_DENY,
    INGRESS_TLS,
)

__all__ = [
    "CONTAINER_RESOURCES",
    "CREDENTIAL_KEYS",
    "FEATURES",
    "INGRESS_TLS",
    "ISSUER_ANNOTATIONS",
    "NAMESPACE_DEFAULT_DENY",
    "NAMESPACE_POD_SECURITY",
    "NOT_CREDENTIAL_KEYS",
    "PRIVILEGED_ALLOW_LIST",
    "PSA_LEVELS",
    "PSA_PREFIX",
    "RULES",
    "SECRETS_NOT_PLAINTEXT",
    "TRAEFIK_GROUPS",
    "DefaultDenyConfig",
    "IngressTlsConfig",
    "PodSecurityConfig",
    "PrivilegeConfig",
    "PrivilegeGrant",
    "ResourcesConfig",
    "SecretsConfig",
    "check_container_resources",
    "check_ingress_tls",
    "check_namespace_default_deny",
    "check_namespace_pod_security",
    "check_privileged_allow_list",
    "check_secrets_not_plaintext",
    "is_default_deny",
]
