"""Configuration of the platform core: the Kubernetes target, the delivery mode and the protection of stateful data."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import field_validator

from ..versions import KUBERNETES_VERSION
from .base import DnsName, IPv4Network, StrictModel


class KubernetesConfig(StrictModel):
    """The cluster hpcforge deploys into."""

    version: str = KUBERNETES_VERSION
    """Kubernetes minor version the objects are validated against (`1.33`); it also sets every namespace's Pod Security
    `enforce-version`. Pod Security is reproduced for 1.33 and below: above it, the pod-security-admission policy and
    `offline admission` report which upstream changes are not reproduced."""
    storage_class: DnsName | None = None
    """Storage class for every volume hpcforge claims, a lowercase DNS name (null: the cluster's default class). The
    MariaDB volume's class is fixed after the first deploy: while `database.storage.storageClass` is null, changing this
    is refused by mariadb-operator's webhook."""
    context: str | None = None
    """kubeconfig context to use (null: the current context, or `kubernetes:context`)."""
    api_server_addresses: tuple[IPv4Network, ...] = ()
    """The control plane's addresses (CIDRs, e.g. `10.10.0.10/32` per server) where the API server listens: the only
    peers of every namespace's API-server egress rule and of the ingress rules of the webhooks and aggregated APIs
    the API server calls (it calls them from the control-plane hosts). Empty: not known, so those rules name every
    address (`0.0.0.0/0`), as in a lab; the security pack's `apiserver-peers-bounded` refuses that in prod."""

    @field_validator("version")
    @classmethod
    def _minor_version(cls, value: str) -> str:
        # From 1.30: the storage layer's ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA in 1.30).
        if not re.fullmatch(r"1\.3[0-9]", value):
            raise ValueError(f"{value!r} is not a supported Kubernetes minor version (1.30 to 1.39, e.g. '1.33')")
        return value

    extra_api_versions: tuple[str, ...] = ()
    """API versions the cluster serves beyond its built-in APIs and the CRDs hpcforge installs, as `group/version` or
    `group/version/Kind` (e.g. `monitoring.coreos.com/v1` from a Prometheus operator installed separately): charts
    rendered offline (`--render-charts`) see them in `.Capabilities.APIVersions`, as they would the cluster's."""

    @field_validator("extra_api_versions")
    @classmethod
    def _api_versions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            if not re.fullmatch(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?v[0-9]+((alpha|beta)[0-9]+)?(/[A-Z][A-Za-z0-9]*)?", entry):
                raise ValueError(f"{entry!r} is not an API version (`group/version` or `group/version/Kind`)")
        return value


class Protection(StrictModel):
    """How stateful data is kept safe from a config change (see docs/operations.md)."""

    mode: Literal["protect", "retain", "none"] | None = None
    """protect: Pulumi refuses to delete or replace the resource; retain: Pulumi may replace/delete
    it in its state but leaves the object in the cluster; none: lab use. Default: protect in prod,
    none elsewhere."""


DeliveryMode = Literal["pulumi", "argocd"]
ProtectionMode = Literal["protect", "retain", "none"]
"""What `PlatformConfig.protection_mode` decides for stateful data (see `Protection`)."""

__all__ = [
    "DeliveryMode",
    "KubernetesConfig",
    "Protection",
    "ProtectionMode",
]
