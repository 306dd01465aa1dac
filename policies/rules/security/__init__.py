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
- rbac-least-privilege: Roles and ClusterRoles grant no wildcards and read Secrets only by name.
- appproject-scoped: AppProjects other than the platform's reach neither Argo CD's namespace nor cluster-scoped kinds.
- loadbalancer-source-ranges: every LoadBalancer names its clients or says it is public.
- user-code-policies-select-pods (stack): where users' code runs beside services, NetworkPolicies name their pods.
- apiserver-peers-bounded: no NetworkPolicy reaches the API server's port at every address.
- images-by-digest: container images are pinned by digest.

One module per family: pods.py (secrets, resources, privileges), namespaces.py (Pod Security labels, default deny),
ingress.py (TLS from cert-manager) and privilege.py (least privilege, issue 39). The pack also serves the admission rules, admission as the API server, Argo CD and
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
from .privilege import (
    APISERVER_PEERS_BOUNDED,
    APPPROJECT_SCOPED,
    IMAGES_BY_DIGEST,
    LOADBALANCER_SOURCE_RANGES,
    RBAC_LEAST_PRIVILEGE,
    USER_CODE_POLICIES,
    ApiServerPeersConfig,
    AppProjectConfig,
    DigestConfig,
    RbacConfig,
    UserCodeConfig,
)
from .privilege import RULES as PRIVILEGE_RULES

RULES = (
    SECRETS_NOT_PLAINTEXT,
    CONTAINER_RESOURCES,
    PRIVILEGED_ALLOW_LIST,
    NAMESPACE_POD_SECURITY,
    NAMESPACE_DEFAULT_DENY,
    INGRESS_TLS,
    *PRIVILEGE_RULES,
)

__all__ = [
    "APISERVER_PEERS_BOUNDED",
    "APPPROJECT_SCOPED",
    "CONTAINER_RESOURCES",
    "CREDENTIAL_KEYS",
    "FEATURES",
    "IMAGES_BY_DIGEST",
    "INGRESS_TLS",
    "ISSUER_ANNOTATIONS",
    "LOADBALANCER_SOURCE_RANGES",
    "NAMESPACE_DEFAULT_DENY",
    "NAMESPACE_POD_SECURITY",
    "NOT_CREDENTIAL_KEYS",
    "PRIVILEGED_ALLOW_LIST",
    "PSA_LEVELS",
    "PSA_PREFIX",
    "RBAC_LEAST_PRIVILEGE",
    "RULES",
    "SECRETS_NOT_PLAINTEXT",
    "TRAEFIK_GROUPS",
    "USER_CODE_POLICIES",
    "ApiServerPeersConfig",
    "AppProjectConfig",
    "DefaultDenyConfig",
    "DigestConfig",
    "IngressTlsConfig",
    "PodSecurityConfig",
    "PrivilegeConfig",
    "PrivilegeGrant",
    "RbacConfig",
    "ResourcesConfig",
    "SecretsConfig",
    "UserCodeConfig",
    "check_container_resources",
    "check_ingress_tls",
    "check_namespace_default_deny",
    "check_namespace_pod_security",
    "check_privileged_allow_list",
    "check_secrets_not_plaintext",
    "is_default_deny",
]
