"""Configuration of the platform core: Kubernetes target, TLS, GitOps."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ..versions import KUBERNETES_VERSION
from .base import DnsName, GoDuration, K8sName, ProblemCollector, StrictModel, duplicates


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

    @field_validator("version")
    @classmethod
    def _minor_version(cls, value: str) -> str:
        if not re.fullmatch(r"1\.(2[6-9]|3[0-9])", value):
            raise ValueError(f"{value!r} is not a supported Kubernetes minor version (1.26 to 1.39, e.g. '1.33')")
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


REVISION_PINNED = re.compile(r"^(v?[0-9]+(\.[0-9]+){0,2}([-+][0-9A-Za-z.-]+)?|[0-9a-f]{40})$")


class GitOpsApp(StrictModel):
    """A user application that the app-of-apps root syncs from Git."""

    name: K8sName
    """Name of the Argo CD Application (in namespace `argocd`)."""
    repo_url: str = Field(alias="repoURL")
    """Git repository of the application (`https://`, `ssh://` or `git@`)."""
    path: str = "."
    """Directory in the repository that holds the manifests."""
    target_revision: str
    """A tag (`v1.4.0`) or a full commit SHA; branches are allowed only outside prod."""
    namespace: K8sName
    """Namespace the application deploys into (Argo CD creates it with Pod Security `restricted`); never one of the
    platform's own namespaces (`argocd`, `slurm`, `provisioning`, ...)."""

    @field_validator("repo_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not re.match(r"^(https://|ssh://|git@)", value):
            raise ValueError(f"{value!r} is not a Git URL (https://, ssh:// or git@)")
        return value

    def revision_is_pinned(self) -> bool:
        return bool(REVISION_PINNED.match(self.target_revision))


class ArgoCd(StrictModel):
    hostname: DnsName | None = None
    """Host name of the Argo CD UI through Traefik (default: `argocd.<domain>`)."""
    ha: bool = False
    """Run the server, repo-server and applicationset controller with 2 replicas each. The application
    controller and Redis stay single pods (Argo CD uses Redis only as a cache and rebuilds it after a
    restart)."""


class GitOpsConfig(StrictModel):
    argocd: ArgoCd = Field(default_factory=ArgoCd)
    """Argo CD itself: UI host name and replicas."""
    root_repo_url: str | None = Field(default=None, alias="rootRepoURL")
    """Repository holding the app-of-apps root (null: no root app; only `apps` are created)."""
    root_path: str = "apps"
    """Directory of the app-of-apps root in `rootRepoURL`."""
    root_revision: str = "main"
    """Revision of the app-of-apps root: a tag or a full commit SHA (in prod, policy `git-revisions-pinned`
    refuses a branch such as the default)."""
    apps: tuple[GitOpsApp, ...] = ()
    """Applications synced from Git into AppProject `site-apps` (namespaced objects only), automated with prune and self-heal."""
    sync_retry_limit: int = Field(default=5, ge=0, le=20)
    """Sync retries of the site's applications (backoff 5s, doubling, at most 3m)."""

    @model_validator(mode="after")
    def _unique(self) -> GitOpsConfig:
        problems = ProblemCollector()
        for name in duplicates(app.name for app in self.apps):
            problems.add(["apps"], f"duplicate app name {name!r}")
        problems.raise_if_any()
        return self


class Protection(StrictModel):
    """How stateful data is kept safe from a config change (see docs/operations.md)."""

    mode: Literal["protect", "retain", "none"] | None = None
    """protect: Pulumi refuses to delete or replace the resource; retain: Pulumi may replace/delete
    it in its state but leaves the object in the cluster; none: lab use. Default: protect in prod,
    none elsewhere."""


DeliveryMode = Literal["pulumi", "argocd"]

__all__ = [
    "Acme",
    "ArgoCd",
    "CertificateAuthority",
    "DeliveryMode",
    "GitOpsApp",
    "GitOpsConfig",
    "KubernetesConfig",
    "Protection",
    "TlsConfig",
]
