"""The DevOps lane's config: Argo Workflows pipelines, the shared software volume, the registry."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from ...ground.base import MULTILINE, DnsName, HostOrIPv4, K8sName, Quantity, StrictModel, duplicates
from ..storage.config import Storage

_IMAGE = re.compile(r"^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$")


def _pinned_image(value: str) -> str:
    """An image reference pinned by tag or digest, never `latest` and never bare."""
    if not _IMAGE.match(value):
        raise ValueError(f"{value!r} is not an image reference (registry/repository:tag or @sha256:digest)")
    name = value.split("@", maxsplit=1)[0]
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else None
    if "@sha256:" not in value and tag is None:
        raise ValueError(f"{value!r} has no tag: pin it (e.g. {value}:1.2.3) so builds are reproducible")
    if tag == "latest":
        raise ValueError(f"{value!r} uses the moving tag 'latest': pin a version")
    return value


PinnedImage = Annotated[str, AfterValidator(_pinned_image)]


class NfsShare(StrictModel):
    """The site's shared software storage, mounted read-only by tests and read-write by builds."""

    server: HostOrIPv4
    """NFS server: a lowercase DNS name or an IPv4 address."""
    path: str = Field(pattern=r"^/")
    """Exported path."""
    size: Quantity = "1Ti"
    """Capacity written on the PersistentVolumes (NFS does not enforce it)."""


class PipelineStep(StrictModel):
    name: K8sName
    """Step name, unique in the pipeline."""
    image: PinnedImage
    """Container image, pinned by tag or digest."""
    command: tuple[str, ...] = Field(min_length=1, json_schema_extra=MULTILINE)
    """Command of the step (arguments may span lines); the software share is mounted at `/software`."""
    cpu: Quantity = "1"
    """CPU request of the step."""
    memory: Quantity = "2Gi"
    """Memory request and limit of the step."""


class Pipeline(StrictModel):
    """A WorkflowTemplate: one build step, then test steps that run in parallel."""

    name: K8sName = "software-build"
    """Name of the WorkflowTemplate."""
    build: PipelineStep
    """The build step (software share mounted read-write)."""
    tests: tuple[PipelineStep, ...] = Field(min_length=1)
    """Test steps, run in parallel once the build succeeded (software share mounted read-only)."""

    @model_validator(mode="after")
    def _unique_steps(self) -> Pipeline:
        names = [self.build.name, *(t.name for t in self.tests)]
        if dup := duplicates(names):
            raise ValueError(f"duplicate step name {dup[0]!r}")
        return self


class Registry(StrictModel):
    enabled: bool = True
    """Run the registry (namespace `registry`, TLS from the internal CA)."""
    storage: Storage = Field(default_factory=lambda: Storage(size="100Gi"))
    """Volume of the registry's data."""
    hostname: DnsName | None = None
    """Also publish the registry through Traefik under this name (TLS from the internal CA)."""


class WorkflowsUi(StrictModel):
    enabled: bool = False
    """Run the Argo Workflows server (UI) behind Traefik."""
    hostname: DnsName | None = None
    """Host name of the UI (required with `enabled`)."""


class DevOpsConfig(StrictModel):
    enabled: bool = True
    """Deploy the DevOps lane."""
    namespace: K8sName = "devops"
    """Namespace in which the workflows run; no other layer's or site app's namespace."""
    software: NfsShare
    """The shared software storage."""
    pipeline: Pipeline
    """The build-and-test WorkflowTemplate."""
    registry: Registry = Field(default_factory=Registry)
    """The in-cluster container registry."""
    ui: WorkflowsUi = Field(default_factory=WorkflowsUi)
    """The Argo Workflows UI."""

    @model_validator(mode="after")
    def _ui_hostname(self) -> DevOpsConfig:
        if self.ui.enabled and self.ui.hostname is None:
            raise ValueError("ui.hostname is required when ui.enabled is true")
        return self
