"""What every component needs to know about the deployment it is part of.

Built once by the Platform from the validated config; components receive it inside their typed
args and never read `pulumi.Config` themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .ground.meta import PROTECTION_ANNOTATION, labels, object_meta
from .ground.platform_core import DeliveryMode, ProtectionMode


class Stateful(Enum):
    """Kinds of state whose loss a config change must never cause."""

    VOLUME = "volume"
    """PersistentVolumeClaims and StatefulSets with volume claim templates."""
    DATABASE = "database"
    """The MariaDB server and the accounting database."""
    DIRECTORY = "directory"
    """The 389ds directory (users and groups)."""
    SLURM_STATE = "slurm-state"
    """slurmctld's save state (job queue, node states)."""
    KEY_MATERIAL = "key-material"
    """Generated keys and passwords that running daemons share (munge/slurm key, JWT key)."""


@dataclass(frozen=True)
class DeployContext:
    environment: str
    delivery: DeliveryMode
    domain: str
    kubernetes_version: str
    storage_class: str | None
    protection: ProtectionMode
    provider: k8s.Provider | None
    production: bool = False
    """`hpcforge:environmentKind` is `production` (never guessed from the environment's name)."""

    # --- options -----------------------------------------------------------------------------

    def opts(
        self,
        parent: pulumi.Resource,
        *,
        depends_on: Sequence[pulumi.Resource | None] | None = None,
        stateful: Stateful | None = None,
        ignore_changes: list[str] | None = None,
        delete_before_replace: bool | None = None,
        replace_on_changes: list[str] | None = None,
    ) -> pulumi.ResourceOptions:
        """Resource options for a child object; `stateful` applies the protection policy."""
        options = pulumi.ResourceOptions(
            parent=parent,
            provider=self.provider,
            depends_on=[d for d in (depends_on or []) if d is not None],
            ignore_changes=ignore_changes,
            delete_before_replace=delete_before_replace,
            replace_on_changes=replace_on_changes,
        )
        if stateful is not None:
            options = pulumi.ResourceOptions.merge(options, self.protection_options(stateful))
        return options

    def protection_options(self, stateful: Stateful) -> pulumi.ResourceOptions:
        """The one place where stateful resources get `protect` or `retainOnDelete`.

        - protect (prod default): Pulumi refuses to delete or replace volumes, the database, the
          directory and Slurm's state; a human must `pulumi state unprotect` first. Key material
          (Secrets of generated keys and passwords) is retained instead: renaming or moving such a
          Secret is a legitimate replace that protect would block, while the old Secret must stay
          in the cluster until every daemon reads the new one.
        - retain: everything stateful is left in the cluster when Pulumi deletes or replaces it.
        - none: lab use only (refused for prod by config validation).
        """
        if self.protection == "protect":
            if stateful is Stateful.KEY_MATERIAL:
                return pulumi.ResourceOptions(retain_on_delete=True)
            return pulumi.ResourceOptions(protect=True)
        if self.protection == "retain":
            return pulumi.ResourceOptions(retain_on_delete=True)
        return pulumi.ResourceOptions()

    def protection_annotations(self, stateful: Stateful) -> dict[str, str]:
        """Annotation that records the protection on the object itself.

        The Analyzer protocol carries `protect` but not `retainOnDelete`, so policies read this.
        """
        if self.protection == "none":
            return {}
        opts = self.protection_options(stateful)
        return {PROTECTION_ANNOTATION: "protect" if opts.protect else "retain"}

    # --- metadata ----------------------------------------------------------------------------

    def labels(self, name: str, component: str, **extra: str) -> dict[str, str]:
        return labels(name, component, self.environment, **extra)

    def meta(
        self,
        name: str,
        component: str,
        namespace: str | None = None,
        *,
        app: str | None = None,
        annotations: dict[str, Any] | None = None,
        extra_labels: dict[str, str] | None = None,
        stateful: Stateful | None = None,
    ) -> dict[str, Any]:
        merged = dict(annotations or {})
        if stateful is not None:
            merged.update(self.protection_annotations(stateful))
        return object_meta(
            name,
            component,
            self.environment,
            namespace,
            app=app,
            annotations=merged or None,
            extra_labels=extra_labels,
        )

    def storage_class_for(self, override: str | None) -> str | None:
        return override or self.storage_class
