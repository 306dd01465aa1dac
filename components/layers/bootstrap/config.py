"""Operations configuration: deployment evidence checks and the optional k0s or RKE2 cluster bootstrap."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...ground.base import ConfigProblems, IPv4Network, StrictModel, duplicates
from ..directory.config import validate_ssh_public_key


class SshHost(StrictModel):
    host: str = Field(min_length=1)
    """Address or DNS name reachable over SSH from where `pulumi up` runs."""
    user: str = "root"
    """SSH user; it needs root rights (k0s and RKE2 install system services)."""
    port: int = Field(default=22, ge=1, le=65535)
    """SSH port."""
    name: str | None = None
    """Names the host's Pulumi resources (`k0s-<name>`, `rke2-<name>`; default: the host). Changing it deletes the old
    resource, which resets k0s (or uninstalls RKE2) on the host. The Kubernetes node is named after the host's hostname."""


class Rke2Settings(StrictModel):
    """RKE2 settings written into `/etc/rancher/rke2/config.yaml` and the node preparation."""

    cluster_cidr: IPv4Network = "10.42.0.0/16"
    """`cluster-cidr`: the pod network."""
    service_cidr: IPv4Network = "10.43.0.0/16"
    """`service-cidr`: the Service network."""
    tls_san: tuple[str, ...] = ()
    """`tls-san`: further names and addresses in the API server certificate (a load balancer, a DNS name);
    the servers' own addresses are always added."""
    write_kubeconfig_mode: str = Field(default="0640", pattern=r"^0[0-7]{3}$")
    """`write-kubeconfig-mode` of /etc/rancher/rke2/rke2.yaml on the servers."""
    selinux: bool = True
    """`selinux: true` (hosts run SELinux enforcing with rke2-selinux)."""
    sysadmin_user: str = Field(default="sysadmin", pattern=r"^[a-z_][a-z0-9_-]{0,31}$")
    """Administrator account created on every host by the node preparation (sudo, key login)."""
    sysadmin_ssh_keys: tuple[str, ...] = ()
    """OpenSSH public keys of the administrator account."""
    upgrade_timeout_seconds: int = Field(default=900, ge=60, le=7200)
    """How long a server upgrade waits for the server to be Ready again before the next one starts."""

    @field_validator("sysadmin_ssh_keys")
    @classmethod
    def _keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(validate_ssh_public_key(key) for key in value)

    @field_validator("tls_san")
    @classmethod
    def _sans(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for san in value:
            if not re.fullmatch(r"[A-Za-z0-9*]([A-Za-z0-9.*:-]*[A-Za-z0-9])?", san):
                raise ValueError(f"{san!r} is not a host name or address")
        return value


_VERSION = {
    "k0s": (re.compile(r"v1\.[0-9]+\.[0-9]+\+k0s\.[0-9]+"), "v1.33.4+k0s.0"),
    "rke2": (re.compile(r"v1\.[0-9]+\.[0-9]+\+rke2r[0-9]+"), "v1.33.4+rke2r1"),
}


class K0sBootstrap(StrictModel):
    """Install Kubernetes (k0s or RKE2) on bare hosts over SSH and build the Kubernetes provider from its kubeconfig."""

    distribution: Literal["k0s", "rke2"] = "k0s"
    """`k0s`, or `rke2` (servers with embedded etcd: give one or three or more, an odd number, for quorum)."""
    version: str | None = None
    """Release installed on every host (default: v1.33.4+k0s.0 or v1.33.4+rke2r1). A change is an in-place update
    that re-runs the install on every host (never a reset); RKE2 servers upgrade one at a time, each waiting until
    every server is Ready again."""
    controllers: tuple[SshHost, ...] = Field(min_length=1)
    """Controller hosts (RKE2: servers). The first one bootstraps the cluster (RKE2: the others join it through
    `https://<first>:9345`) and yields the kubeconfig; with k0s, alone and without workers it also runs workloads."""
    workers: tuple[SshHost, ...] = ()
    """Worker hosts (RKE2: agents)."""
    rke2: Rke2Settings = Field(default_factory=Rke2Settings)
    """RKE2 settings (ignored with k0s)."""

    @property
    def release(self) -> str:
        return self.version or _VERSION[self.distribution][1]

    @model_validator(mode="after")
    def _consistent(self) -> K0sBootstrap:
        pattern, example = _VERSION[self.distribution]
        if self.version is not None and not pattern.fullmatch(self.version):
            raise ConfigProblems([(["version"], f"{self.version!r} is not a {self.distribution} release (e.g. {example})")])
        if self.distribution == "rke2" and len(self.controllers) % 2 == 0:
            raise ConfigProblems(
                [(["controllers"], f"{len(self.controllers)} RKE2 servers: etcd needs an odd number (1, 3, 5) to keep quorum")]
            )
        names = [host.name or host.host for host in (*self.controllers, *self.workers)]
        duplicated = sorted(set(duplicates(names)))
        if duplicated:
            raise ConfigProblems([(["controllers"], f"host {duplicated[0]!r} is listed twice")])
        return self


class ClusterConfig(StrictModel):
    bootstrap: K0sBootstrap | None = None
    """Null (default): use an existing cluster from the kubeconfig context."""
