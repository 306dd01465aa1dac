"""Operations configuration: deployment evidence checks and the optional k0s cluster bootstrap."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from .base import StrictModel


class EvidenceConfig(StrictModel):
    """Checks `pulumi up` runs after the platform is up (results: `pulumi stack output evidence`)."""

    enabled: bool = False
    """Run the checks of scripts/evidence once the platform is up (they need kubectl where `pulumi up` runs)."""
    timeout_seconds: int = Field(default=900, ge=30, le=7200)
    """How long each check waits for the platform to converge before it fails the update."""
    test_partition: str | None = None
    """Partition of the test job (default: the default partition)."""
    lookup_user: str | None = None
    """Directory user looked up through SSSD on a login node (default: the first configured user)."""


class SshHost(StrictModel):
    host: str = Field(min_length=1)
    """Address or DNS name reachable over SSH from where `pulumi up` runs."""
    user: str = "root"
    """SSH user; it needs root rights (k0s installs system services)."""
    port: int = Field(default=22, ge=1, le=65535)
    """SSH port."""
    name: str | None = None
    """Names the host's Pulumi resources (`k0s-<name>`; default: the host). Changing it deletes the old resource, which
    resets k0s on the host. k0s itself names the Kubernetes node after the host's hostname."""


class K0sBootstrap(StrictModel):
    """Install k0s on bare hosts over SSH and build the Kubernetes provider from its kubeconfig."""

    version: str = "v1.33.4+k0s.0"
    """k0s release installed on every host. A change is an in-place update that re-runs the install on
    every host (never a reset); a k0s that is already running keeps the old release until it is restarted."""
    controllers: tuple[SshHost, ...] = Field(min_length=1)
    """Controller hosts. The first one issues the join tokens and yields the kubeconfig; alone and without workers it also
    runs workloads."""
    workers: tuple[SshHost, ...] = ()
    """Worker hosts, joined with a worker token."""

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not re.fullmatch(r"v1\.[0-9]+\.[0-9]+\+k0s\.[0-9]+", value):
            raise ValueError(f"{value!r} is not a k0s release (e.g. v1.33.4+k0s.0)")
        return value


class ClusterConfig(StrictModel):
    bootstrap: K0sBootstrap | None = None
    """Null (default): use an existing cluster from the kubeconfig context."""
