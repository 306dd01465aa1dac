"""`Scope`: what the objects of one part of a layer share (the deploy context, the parent component, the
namespace, the component and app labels, what they wait for), so that a layer names it once instead of
passing the same keyword arguments (`ctx, ..., component=..., parent=self, app=..., depends_on=...`) to
every helper of resources.py, generated.py and certificates.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_kubernetes as k8s

from ..context import DeployContext, Stateful
from .certificates import certificate
from .chunks import Assembly, chunked_file
from .generated import GeneratedSecret, generated_secret
from .resources import config_map, secret


@dataclass(frozen=True)
class Scope:
    ctx: DeployContext
    parent: pulumi.Resource
    namespace: str
    component: str
    app: str | None = None
    depends_on: Sequence[pulumi.Resource] = ()

    def but(self, **changes: object) -> Scope:
        """The same scope with some fields changed (e.g. another component label)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def config_map(
        self, name: str, data: Mapping[str, pulumi.Input[str]], *, annotations: Mapping[str, str] | None = None
    ) -> k8s.core.v1.ConfigMap:
        return config_map(
            self.ctx,
            name,
            self.namespace,
            data,
            component=self.component,
            parent=self.parent,
            app=self.app,
            depends_on=self.depends_on,
            annotations=annotations,
        )

    def secret(
        self, name: str, string_data: Mapping[str, pulumi.Input[str]], *, stateful: Stateful | None = None
    ) -> k8s.core.v1.Secret:
        return secret(
            self.ctx,
            name,
            self.namespace,
            string_data,
            component=self.component,
            parent=self.parent,
            app=self.app,
            depends_on=self.depends_on,
            stateful=stateful,
        )

    def generated_secret(
        self,
        generator_name: str,
        secret_name: str,
        key: str,
        *,
        length: int,
        kind: Literal["password", "bytes"] = "password",
        stateful: Stateful | None = Stateful.KEY_MATERIAL,
    ) -> GeneratedSecret:
        return generated_secret(
            self.ctx,
            generator_name,
            secret_name,
            self.namespace,
            key,
            length=length,
            kind=kind,
            component=self.component,
            parent=self.parent,
            app=self.app,
            depends_on=self.depends_on,
            stateful=stateful,
        )

    def chunked_file(
        self,
        name: str,
        files: Mapping[str, str],
        *,
        target_dir: str,
        annotations: Mapping[str, str] | None = None,
    ) -> tuple[list[k8s.core.v1.ConfigMap], Assembly]:
        """Files gzip-chunked into ConfigMaps under the 1 MiB limit, and how a pod puts them together (chunks.py)."""
        return chunked_file(
            self.ctx,
            self.parent,
            self.namespace,
            name,
            files,
            component=self.component,
            app=self.app or name,
            target_dir=target_dir,
            depends_on=self.depends_on,
            annotations=annotations,
        )

    def certificate(
        self,
        name: str,
        *,
        dns_names: Sequence[str],
        issuer: str,
        duration: str,
        renew_before: str,
        usages: Sequence[str] = ("server auth",),
    ) -> k8s.apiextensions.CustomResource:
        return certificate(
            self.ctx,
            self.parent,
            name=name,
            namespace=self.namespace,
            dns_names=dns_names,
            issuer=issuer,
            duration=duration,
            renew_before=renew_before,
            component=self.component,
            app=self.app or name,
            usages=usages,
            depends_on=self.depends_on,
        )
