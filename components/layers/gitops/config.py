"""The GitOps layer's config: Argo CD and the site's own applications."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from ...ground.base import DnsName, K8sName, ProblemCollector, StrictModel, duplicates

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
