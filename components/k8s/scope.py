"""`Scope`: what the objects of one part of a layer share (the deploy context, the parent component, the
namespace, the component and app labels, what they wait for), so that a layer names it once instead of
passing the same keyword arguments (`ctx, ..., component=..., parent=self, app=..., depends_on=...`) to
every helper of resources.py, generated.py and chunks.py.

`Scope.custom` and `Scope.network_policy` are the one way a layer makes a custom resource or a NetworkPolicy
(tests/test_layout.py holds every module to it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s

from ..context import DeployContext, Stateful
from ..custom_resources import custom_resource
from .certificates import CERT_MANAGER_API, certificate_spec
from .chunks import Assembly, chunked_file
from .generated import GeneratedSecret, generated_secret
from .resources import config_map, network_policy, secret


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
        self,
        name: str,
        data: Mapping[str, pulumi.Input[str]],
        *,
        annotations: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
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
            labels=labels,
            annotations=annotations,
        )

    def custom(
        self,
        api_version: str,
        kind: str,
        name: str,
        spec: Mapping[str, Any] | None,
        *,
        cluster_scoped: bool = False,
        resource_name: str | None = None,
        depends_on: Sequence[pulumi.Resource] | None = None,
        stateful: Stateful | None = None,
        annotations: Mapping[str, str] | None = None,
        extra_labels: Mapping[str, str] | None = None,
        fields: Mapping[str, Any] | None = None,
        immutable: Sequence[str] = (),
    ) -> pulumi.CustomResource:
        """An object of `kind` (a custom resource) in the scope's namespace, or cluster-scoped, with the scope's
        component and app labels, after `depends_on` (by default what the scope waits for); registered as
        `resource_name`, by default `<namespace>/<name>` (`name` when cluster-scoped). See
        resources.custom_resource for `stateful`, `fields` and `immutable`."""
        return custom_resource(
            self.ctx,
            self.parent,
            api_version,
            kind,
            name,
            spec,
            namespace=None if cluster_scoped else self.namespace,
            component=self.component,
            app=self.app,
            resource_name=resource_name,
            depends_on=self.depends_on if depends_on is None else depends_on,
            stateful=stateful,
            annotations=annotations,
            extra_labels=extra_labels,
            fields=fields,
            immutable=immutable,
        )

    def network_policy(
        self, name: str, spec: Mapping[str, Any], *, depends_on: Sequence[pulumi.Resource] | None = None
    ) -> k8s.networking.v1.NetworkPolicy:
        """A NetworkPolicy in the scope's namespace (component `network-policy`, the scope's app label), after
        `depends_on` (by default what the scope waits for). A namespace's own default deny and allows come with it
        (LayerNamespace); this is for a policy a layer adds to a namespace it does not own."""
        return network_policy(
            self.ctx,
            self.parent,
            self.namespace,
            name,
            spec,
            app=self.app,
            depends_on=self.depends_on if depends_on is None else depends_on,
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
    ) -> pulumi.CustomResource:
        """A cert-manager Certificate from the ClusterIssuer `issuer`; its Secret `name` has tls.crt, tls.key and ca.crt
        (certificates.certificate_spec)."""
        spec = certificate_spec(name, dns_names, issuer, duration, renew_before, usages)
        return self.but(app=self.app or name).custom(CERT_MANAGER_API, "Certificate", name, spec)
