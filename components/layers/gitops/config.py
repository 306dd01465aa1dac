"""The GitOps layer's config: Argo CD and the site's own applications."""

from __future__ import annotations

import re

from pydantic import Field, SecretStr, field_validator, model_validator

from ...ground.base import DnsName, K8sName, ProblemCollector, StrictModel, duplicates

REVISION_PINNED = re.compile(r"^(v?[0-9]+(\.[0-9]+){0,2}([-+][0-9A-Za-z.-]+)?|[0-9a-f]{40})$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
"""A full commit SHA: the only revision nobody can move (a tag can be deleted and pushed again)."""


class GitOpsApp(StrictModel):
    """A user application that the app-of-apps root syncs from Git."""

    name: K8sName
    """Name of the Argo CD Application (in namespace `argocd`)."""
    repo_url: str = Field(alias="repoURL")
    """Git repository of the application (`https://`, `ssh://` or `git@`)."""
    path: str = "."
    """Directory in the repository that holds the manifests."""
    target_revision: str
    """A full commit SHA in production (a tag can be moved: whoever moves it would deploy); outside production also a
    tag (`v1.4.0`) or a branch."""
    namespace: K8sName
    """Namespace the application deploys into. hpcforge creates it (Pod Security `restricted`, default deny, DNS, its
    own pods, and Traefik in); never one of the platform's own namespaces (`argocd`, `slurm`, `monitoring`, ...)."""

    @field_validator("repo_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not re.match(r"^(https://|ssh://|git@)", value):
            raise ValueError(f"{value!r} is not a Git URL (https://, ssh:// or git@)")
        return value

    def revision_is_pinned(self) -> bool:
        return bool(REVISION_PINNED.match(self.target_revision))


class ArgoCdSso(StrictModel):
    """OIDC single sign-on for Argo CD (Argo CD's `oidc.config`)."""

    issuer: str = Field(pattern=r"^https://[^\s]+$")
    """The OIDC issuer URL (`https://...`)."""
    client_id: str = Field(min_length=1, pattern=r"^[^\s]+$")
    """The client ID registered at the issuer for Argo CD."""
    client_secret: SecretStr
    """The client secret (set it as a secret: `pulumi config set --secret --path hpcforge:gitops.argocd.sso.clientSecret`);
    it goes into `argocd-secret` as `oidc.clientSecret`."""
    admin_groups: tuple[str, ...] = Field(min_length=1)
    """Groups (the ID token's `groups` claim) whose members get Argo CD's `role:admin`; everyone else gets no access."""


class ArgoCd(StrictModel):
    hostname: DnsName | None = None
    """Host name of the Argo CD UI through Traefik (default: `argocd.<domain>`); published only with `sso`."""
    sso: ArgoCdSso | None = None
    """OIDC single sign-on. Only with it is the UI published through Traefik, and then the local admin account is
    switched off. Without it Argo CD is not exposed: reach it with
    `kubectl -n argocd port-forward svc/argocd-server 8080:80` and the `argocdAdminPassword` output."""
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
    """Revision of the app-of-apps root: a full commit SHA in production (the default branch is refused there)."""
    apps: tuple[GitOpsApp, ...] = ()
    """Applications synced from Git into AppProject `site-apps` (the namespaced kinds of `siteAppKinds` only, in the
    apps' own namespaces), automated with prune and self-heal."""
    site_app_kinds: tuple[str, ...] = (
        "apps/Deployment",
        "apps/StatefulSet",
        "batch/Job",
        "batch/CronJob",
        "/Service",
        "/ConfigMap",
        "/Secret",
        "/PersistentVolumeClaim",
        "/ServiceAccount",
        "networking.k8s.io/Ingress",
        "networking.k8s.io/NetworkPolicy",
        "policy/PodDisruptionBudget",
        "autoscaling/HorizontalPodAutoscaler",
        "bitnami.com/SealedSecret",
    )
    """The kinds (`group/Kind`, the core group empty) the site's applications may deploy (AppProject `site-apps`
    `namespaceResourceWhitelist`): no RBAC, no Argo CD kinds, nothing cluster-scoped."""
    sync_retry_limit: int = Field(default=5, ge=0, le=20)
    """Sync retries of the site's applications (backoff 5s, doubling, at most 3m)."""

    @field_validator("site_app_kinds")
    @classmethod
    def _kinds(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for kind in value:
            if not re.fullmatch(r"([a-z0-9.-]*)/[A-Z][A-Za-z0-9]*", kind):
                raise ValueError(f"{kind!r} is not `group/Kind` (the core group empty: `/ConfigMap`)")
            if kind.split("/")[0] in {"rbac.authorization.k8s.io", "argoproj.io"}:
                raise ValueError(f"{kind!r}: RBAC and Argo CD kinds would give the site's repositories Argo CD's own rights")
        return value

    @model_validator(mode="after")
    def _unique(self) -> GitOpsConfig:
        problems = ProblemCollector()
        for name in duplicates(app.name for app in self.apps):
            problems.add(["apps"], f"duplicate app name {name!r}")
        problems.raise_if_any()
        return self
