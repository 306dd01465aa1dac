"""The evidence layer's config: the checks run against the live site after a deploy."""

from __future__ import annotations

from pydantic import Field

from ...config.base import StrictModel


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
