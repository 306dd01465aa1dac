"""Provisioning layer: Grendel (DHCP, PXE, TFTP, DNS, HTTP) on the provisioning network.

Grendel runs on the Kubernetes node that has the provisioning NIC, with an IPVLAN interface and
a static address on that network (Multus), `NET_ADMIN` as its only capability, and a volume for
its images and database. grendel.toml (with its API secret and the root password hash) is a
Secret; the host inventory and boot images are gzip-chunked ConfigMaps, so a 10,000-host site
never produces an object over the API server's 1 MiB limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ...context import DeployContext, Stateful
from ...ground.inventory_ref import digest_annotations
from ...k8s.generated import generated_password
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.scope import Scope
from ...versions import Images
from ..slurm.config import SlurmConfig
from ..storage.config import NfsExport
from .config import ProvisioningConfig
from .grendel import GrendelSecrets, render_grendel_toml, render_inventory
from .objects import (
    APP,
    COMPONENT,
    CONFIG_SECRET,
    DATA_CLAIM,
    HTTP_SERVICE,
    JOIN_SCRIPTS_MAP,
    TLS_SECRET,
    config_checksum,
    data_claim_spec,
    deployment_spec,
    grendel_namespace_allows,
    http_service_spec,
    ingress_spec,
    join_base_url,
    join_scripts,
)


@dataclass(frozen=True)
class ProvisioningArgs:
    ctx: DeployContext
    config: ProvisioningConfig
    slurm: SlurmConfig
    domain: str
    controller_address: str | None
    """slurmctld's LoadBalancer address, for bare-metal hosts joining Slurm."""
    ingress_class: str
    issuer: str
    certificate_duration: str
    renew_before: str
    host_mounts: Sequence[NfsExport] = ()
    """NFS exports the joining hosts mount before slurmd starts (the same trees as the pods)."""
    depends_on: Sequence[pulumi.Resource] = ()
    issuer_ready: Sequence[pulumi.Resource] = ()
    """cert-manager and the ClusterIssuer `issuer` (Certificates.ready): the API certificate waits for them."""


class Provisioning(pulumi.ComponentResource):
    address: str
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: ProvisioningArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:provisioning:Provisioning", name, None, opts)
        ctx, cfg = args.ctx, args.config
        ns = cfg.namespace
        namespace = LayerNamespace(
            ctx,
            self,
            ns,
            component=COMPONENT,
            app=APP,
            # NET_ADMIN is outside `baseline`'s capability set; the pod adds nothing else.
            pod_security="privileged",
            allows=grendel_namespace_allows(cfg),
            depends_on=args.depends_on,
        )
        scope = namespace.scope
        api_secret = generated_password(ctx, "grendel-api", length=48, parent=self)
        root_password = generated_password(ctx, "grendel-root", length=24, parent=self)
        toml = pulumi.Output.all(api_secret.result, root_password.bcrypt_hash).apply(
            lambda values: render_grendel_toml(
                cfg, args.domain, GrendelSecrets(api_secret=values[0], root_password_hash=values[1])
            )
        )
        config_secret = scope.secret(CONFIG_SECRET, {"grendel.toml": toml})
        hosts_json, images_json = render_inventory(cfg, args.domain, join_base_url(cfg, args.controller_address))
        inventory_maps, assemble = scope.chunked_file(
            "grendel-inventory",
            {"hosts.json": hosts_json, "images.json": images_json},
            target_dir="/config",
            annotations=digest_annotations(cfg.inventory),
        )
        scripts = join_scripts(cfg, args.slurm, args.controller_address, args.host_mounts)
        join_map = scope.config_map(JOIN_SCRIPTS_MAP, scripts) if scripts else None
        volume = k8s.core.v1.PersistentVolumeClaim(
            f"{ns}/{DATA_CLAIM}",
            metadata=ctx.meta(DATA_CLAIM, COMPONENT, ns, app=APP, stateful=Stateful.VOLUME),
            spec=data_claim_spec(cfg, ctx.storage_class_for(cfg.storage.storage_class)),
            opts=ctx.opts(self, depends_on=namespace.ready, stateful=Stateful.VOLUME),
        )
        deployment = k8s.apps.v1.Deployment(
            f"{ns}/{APP}",
            metadata=ctx.meta(APP, COMPONENT, ns),
            spec=deployment_spec(
                cfg,
                image=Images.GRENDEL.ref,
                labels=ctx.labels(APP, COMPONENT),
                checksum=toml.apply(lambda text: config_checksum(hosts_json, images_json, scripts, text)),
                assemble=assemble,
                with_join_scripts=join_map is not None,
            ),
            opts=ctx.opts(self, depends_on=[config_secret, volume, *inventory_maps, *([join_map] if join_map else [])]),
        )
        self.address = cfg.grendel_ip
        self.ready = [deployment, volume, config_secret]
        if cfg.api.expose and cfg.api.hostname:
            self.ready += self._expose(ctx, args, scope, deployment)
        self.register_outputs({"address": self.address, "hosts": len(cfg.hosts), "joinScripts": sorted(scripts)})

    def _expose(
        self, ctx: DeployContext, args: ProvisioningArgs, scope: Scope, deployment: pulumi.Resource
    ) -> list[pulumi.Resource]:
        """Grendel's HTTP API through Traefik, with a certificate from the site's issuer."""
        hostname = args.config.api.hostname
        assert hostname is not None
        ns = scope.namespace
        service = k8s.core.v1.Service(
            f"{ns}/{HTTP_SERVICE}",
            metadata=ctx.meta(HTTP_SERVICE, COMPONENT, ns, app=APP),
            spec=http_service_spec(),
            opts=ctx.opts(self, depends_on=[deployment]),
        )
        # The issuer must exist (cert-manager and its ClusterIssuer) and so must the namespace.
        tls = scope.but(depends_on=(*scope.depends_on, *args.issuer_ready)).certificate(
            TLS_SECRET,
            dns_names=[hostname],
            issuer=args.issuer,
            duration=args.certificate_duration,
            renew_before=args.renew_before,
        )
        ingress = k8s.networking.v1.Ingress(
            f"{ns}/{APP}",
            metadata=ctx.meta(APP, COMPONENT, ns, annotations={"traefik.ingress.kubernetes.io/router.entrypoints": "websecure"}),
            spec=ingress_spec(hostname, args.ingress_class),
            opts=ctx.opts(self, depends_on=[service, tls]),
        )
        return [service, tls, ingress]
