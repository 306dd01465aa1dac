"""The evidence layer's config: the checks run against the live site after a deploy; and what the checks read of
the whole site's config (`SiteConfig`)."""

from __future__ import annotations

from typing import Protocol

from pydantic import Field

from ...ground.base import StrictModel
from ...ground.platform_core import DeliveryMode
from ...ground.pools import NodePool
from ..directory.config import DirectoryConfig
from ..gitops.config import GitOpsConfig
from ..gpu.config import GpuConfig
from ..provisioning.config import ProvisioningConfig
from ..rdma.config import RdmaConfig
from ..slurm.config import SlurmConfig


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


class SiteConfig(Protocol):
    """What the evidence checks read of the site's config: the layers' configs they test, and how the site delivers
    its charts. The site's root config (components/site/root.py `PlatformConfig`) is one; the evidence layer, which
    stands below the site, names only what it reads."""

    @property
    def delivery(self) -> DeliveryMode: ...
    @property
    def evidence(self) -> EvidenceConfig: ...
    @property
    def slurm(self) -> SlurmConfig: ...
    @property
    def gitops(self) -> GitOpsConfig: ...
    @property
    def directory(self) -> DirectoryConfig: ...
    @property
    def provisioning(self) -> ProvisioningConfig | None: ...
    @property
    def gpu(self) -> GpuConfig: ...
    @property
    def active_rdma(self) -> RdmaConfig | None: ...
    def node_pool(self, name: str) -> NodePool | None: ...
