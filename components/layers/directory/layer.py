"""Directory layer: 389 Directory Server with LDAPS from the internal CA, the site's POSIX users
and groups loaded by an idempotent bootstrap Job, and a read-only bind account for SSSD."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ...context import DeployContext, Stateful
from ...ground.inventory_ref import digest_annotations
from ...k8s.generated import GeneratedSecret
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.resources import TRAEFIK_API
from ...k8s.scope import Scope
from ...paths import SCRIPTS
from ...versions import Images
from .config import DirectoryConfig
from .face import DirectoryEndpoint
from .ldif import render_directory_ldif, sssd_bind_dn
from .objects import (
    APP,
    BIND_SECRET,
    BOOTSTRAP_MAP,
    COMPONENT,
    DM_SECRET,
    LDAPS_URI,
    NAMESPACE,
    TLS_SECRET,
    bind_checksum,
    bootstrap_job_name,
    bootstrap_job_spec,
    directory_namespace_allows,
    dns_names,
    ldaps_route_spec,
    server_spec,
    service_spec,
)

SYNC_SCRIPT = SCRIPTS / "directory" / "ldap_sync.py"


@dataclass(frozen=True)
class DirectoryArgs:
    ctx: DeployContext
    config: DirectoryConfig
    issuer: str
    certificate_duration: str
    renew_before: str
    client_namespaces: Sequence[str]
    """Namespaces whose pods may query the directory (login and compute nodes)."""
    expose_hostname: str | None = None
    """When set, LDAPS is published through Traefik's `ldaps` entry point for this name."""
    depends_on: Sequence[pulumi.Resource] = ()


class Directory(pulumi.ComponentResource):
    endpoint: DirectoryEndpoint
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: DirectoryArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:directory:Directory", name, None, opts)
        ctx, cfg = args.ctx, args.config
        clients = [*args.client_namespaces, *(["traefik"] if args.expose_hostname else [])]
        namespace = LayerNamespace(
            ctx,
            self,
            NAMESPACE,
            component=COMPONENT,
            app=APP,
            # The 389ds image starts as root to fix up /data before dropping to the dirsrv user.
            pod_security="baseline",
            allows=directory_namespace_allows(clients),
            depends_on=args.depends_on,
        )
        scope = namespace.scope
        dm = scope.generated_secret("dirsrv-dm", DM_SECRET, "password", length=32)
        bind = scope.generated_secret("dirsrv-sssd-bind", BIND_SECRET, "password", length=32)
        tls = scope.certificate(
            TLS_SECRET,
            dns_names=dns_names(args.expose_hostname),
            issuer=args.issuer,
            duration=args.certificate_duration,
            renew_before=args.renew_before,
        )
        service = k8s.core.v1.Service(
            f"{NAMESPACE}/{APP}",
            metadata=ctx.meta(APP, COMPONENT, NAMESPACE),
            spec=service_spec(),
            opts=ctx.opts(self, depends_on=namespace.ready),
        )
        server = k8s.apps.v1.StatefulSet(
            f"{NAMESPACE}/{APP}",
            metadata=ctx.meta(APP, COMPONENT, NAMESPACE, stateful=Stateful.DIRECTORY),
            spec=server_spec(
                cfg,
                image=Images.DIRSRV.ref,
                labels=ctx.labels(APP, COMPONENT),
                storage_class=ctx.storage_class_for(cfg.storage.storage_class),
                volume_annotations=ctx.protection_annotations(Stateful.VOLUME),
            ),
            opts=ctx.opts(self, depends_on=[dm.secret, tls, service], stateful=Stateful.DIRECTORY),
        )
        job = self._bootstrap(ctx, cfg, scope, server=server, bind=bind)
        self.ready = [server, service, job]
        if args.expose_hostname:
            route = scope.custom(
                TRAEFIK_API, "IngressRouteTCP", "dirsrv-ldaps", ldaps_route_spec(args.expose_hostname), depends_on=[service, tls]
            )
            self.ready.append(route)
        self.endpoint = DirectoryEndpoint(
            ldap_uri=LDAPS_URI,
            base_dn=cfg.suffix,
            bind_dn=sssd_bind_dn(cfg.suffix),
            bind_password=bind.value,
            bind_password_secret=BIND_SECRET,
            ca_issuer=args.issuer,
        )
        self.register_outputs({"ldapUri": self.endpoint.ldap_uri, "baseDn": cfg.suffix, "bindDn": self.endpoint.bind_dn})

    def _bootstrap(
        self,
        ctx: DeployContext,
        cfg: DirectoryConfig,
        scope: Scope,
        *,
        server: pulumi.Resource,
        bind: GeneratedSecret,
    ) -> pulumi.Resource:
        """The Job that loads the site's users and groups, with its script and the LDIF (gzip-chunked: 10,000
        users is ~4 MB, over the 1 MiB limit of one ConfigMap)."""
        ldif = render_directory_ldif(cfg)
        script = SYNC_SCRIPT.read_text()
        sync_script = scope.config_map(BOOTSTRAP_MAP, {"ldap_sync.py": script})
        ldif_maps, assemble = scope.chunked_file(
            "dirsrv-ldif", {"bootstrap.ldif": ldif}, target_dir="/ldif", annotations=digest_annotations(cfg.inventory)
        )
        return k8s.batch.v1.Job(
            f"{NAMESPACE}/{BOOTSTRAP_MAP}",
            metadata=ctx.meta(bootstrap_job_name(ldif, script), COMPONENT, NAMESPACE, app=APP),
            spec=bootstrap_job_spec(
                image=Images.DIRSRV.ref,
                labels=ctx.labels(APP, "directory-bootstrap"),
                bind_checksum=bind.value.apply(bind_checksum),
                assemble=assemble,
            ),
            opts=ctx.opts(self, depends_on=[server, sync_script, *ldif_maps, bind.secret], delete_before_replace=True),
        )


__all__ = ["Directory", "DirectoryArgs"]
