"""Network layer: MetalLB (pools, L2/BGP adverts), Traefik, Multus thick + IPVLAN attachments, site DNS."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...k8s.addresses import metallb_service_annotations
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.resources import ANYWHERE, Allow, Port, egress_to_apiserver, ingress_from_anywhere
from ...versions import Charts
from .config import NetworkAttachment, NetworkConfig
from .dns import render_corefile, render_hosts_file
from .objects import (
    DNS_PORT,
    INGRESS_CLASS,
    TcpEntryPoint,
    bgp_advertisement_spec,
    bgp_peer_spec,
    ip_address_pool_spec,
    ipvlan_cni_config,
    l2_advertisement_spec,
    metallb_values,
    site_dns_checksum,
    site_dns_deployment_spec,
    site_dns_pdb_spec,
    site_dns_service_spec,
    site_dns_zones,
    traefik_values,
)

METALLB_NAMESPACE = "metallb-system"
TRAEFIK_NAMESPACE = "traefik"
DNS_NAMESPACE = "site-dns"
MULTUS_NAMESPACE = "kube-system"

CHARTS = (
    ChartUse("metallb", Charts.METALLB, METALLB_NAMESPACE),
    ChartUse("traefik", Charts.TRAEFIK, TRAEFIK_NAMESPACE),
)


@dataclass(frozen=True)
class NetworkArgs:
    ctx: DeployContext
    config: NetworkConfig
    charts: ChartDeployer
    dns_records: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Extra DNS records per zone: zone -> {host label -> IPv4} (e.g. the bare-metal inventory)."""
    tcp_entrypoints: Sequence[TcpEntryPoint] = ()
    inventory_annotations: Mapping[str, str] = field(default_factory=dict)
    """Annotations naming the inventory file that the extra DNS records come from (its sha256)."""
    attachment_crd_chart: str | None = None
    """The chart release of the stack that ships the NetworkAttachmentDefinition CRD in its `crds/` (the Network
    Operator's, with `hpcforge:rdma`), or None: then Multus' objects here declare it. One owner per object
    (offline/policy/owners.py): with a chart owning it, the attachments wait for that chart (`add_attachments`)."""


class Network(pulumi.ComponentResource):
    ingress_class: str
    ingress_address: pulumi.Output[str] | str | None
    traefik_namespace: str
    attachments: dict[str, k8s.apiextensions.CustomResource]
    ready: list[pulumi.Resource]
    """Depend on these for anything that needs LoadBalancer addresses or attachments."""

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:network:Network", name, None, opts)
        ctx, cfg = args.ctx, args.config
        self.ingress_class = INGRESS_CLASS
        self.traefik_namespace = TRAEFIK_NAMESPACE
        self.ingress_address = cfg.ingress.address

        metallb = self._metallb(ctx, cfg, args.charts)
        traefik = self._traefik(ctx, cfg, args.charts, metallb, args.tcp_entrypoints)
        multus = self._multus(ctx, crd=args.attachment_crd_chart is None)
        self._ctx, self._cfg, self._multus_objects = ctx, cfg, multus
        self.attachments = {}
        if args.attachment_crd_chart is None:
            self.attachments = {att.name: self._attachment(ctx, att, multus) for att in cfg.attachments}
        dns: list[pulumi.Resource] = []
        if cfg.dns.enabled:
            dns = self._site_dns(ctx, cfg, metallb, args.dns_records, args.inventory_annotations)
        self.ready = [*metallb, traefik, *multus, *self.attachments.values(), *dns]
        self.register_outputs(
            {
                "ingressAddress": self.ingress_address,
                "dnsAddress": cfg.dns.address,
                "attachments": sorted(att.name for att in cfg.attachments),
            }
        )

    # --- MetalLB -----------------------------------------------------------------------------

    def _metallb(self, ctx: DeployContext, cfg: NetworkConfig, charts: ChartDeployer) -> list[pulumi.Resource]:
        namespace = LayerNamespace(
            ctx,
            self,
            METALLB_NAMESPACE,
            component="load-balancer",
            # The speaker needs host networking and NET_RAW to answer ARP/BGP for service addresses.
            pod_security="privileged",
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-webhook", Port(9443)),
                Allow("allow-ingress-memberlist", "ingress", (Port(7946), Port(7946, "UDP"))),
                Allow("allow-ingress-metrics", "ingress", (Port(7472),)),
            ],
            charts=charts,
        )
        chart = namespace.chart("metallb", Charts.METALLB, metallb_values(cfg.advertisement))

        def metallb_object(api_version: str, kind: str, name: str, spec: dict[str, Any]) -> pulumi.Resource:
            return k8s.apiextensions.CustomResource(
                f"{METALLB_NAMESPACE}/{name}",
                api_version=api_version,
                kind=kind,
                metadata=ctx.meta(name, "load-balancer", METALLB_NAMESPACE, app="metallb"),
                spec=spec,
                opts=ctx.opts(self, depends_on=[chart]),
            )

        objects: list[pulumi.Resource] = [*namespace.ready, chart]
        objects += [metallb_object("metallb.io/v1beta1", "IPAddressPool", p.name, ip_address_pool_spec(p)) for p in cfg.pools]
        pool_names = [pool.name for pool in cfg.pools]
        if cfg.advertisement.mode == "bgp":
            peers = cfg.advertisement.peers
            objects += [metallb_object("metallb.io/v1beta2", "BGPPeer", peer.name, bgp_peer_spec(peer)) for peer in peers]
            objects.append(
                metallb_object("metallb.io/v1beta1", "BGPAdvertisement", "site-bgp", bgp_advertisement_spec(pool_names))
            )
        else:
            spec = l2_advertisement_spec(pool_names, cfg.advertisement.interfaces)
            objects.append(metallb_object("metallb.io/v1beta1", "L2Advertisement", "site-l2", spec))
        return objects

    # --- Traefik -----------------------------------------------------------------------------

    def _traefik(
        self,
        ctx: DeployContext,
        cfg: NetworkConfig,
        charts: ChartDeployer,
        metallb: Sequence[pulumi.Resource],
        tcp_entrypoints: Sequence[TcpEntryPoint],
    ) -> pulumi.Resource:
        extra_ports = tuple(Port(ep.port) for ep in tcp_entrypoints)
        namespace = LayerNamespace(
            ctx,
            self,
            TRAEFIK_NAMESPACE,
            component="ingress",
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-entrypoints", Port(8000), Port(8443), *extra_ports),
                # Traefik forwards to backends in any namespace; their own policies decide.
                Allow("allow-egress-backends", "egress"),
            ],
            charts=charts,
        )
        return namespace.chart(
            "traefik", Charts.TRAEFIK, traefik_values(cfg.ingress, tcp_entrypoints), depends_on=[*namespace.ready, *metallb]
        )

    # --- Multus (thick plugin) ---------------------------------------------------------------

    def _multus(self, ctx: DeployContext, *, crd: bool) -> list[pulumi.Resource]:
        """The upstream thick daemonset (v4.3.0) as typed objects: no maintained chart exists."""
        from .multus import multus_objects

        return multus_objects(ctx, self, crd=crd)

    def add_attachments(self, crd_ready: Sequence[pulumi.Resource]) -> None:
        """The attachments, once `crd_ready` (the chart of `attachment_crd_chart`) has installed their CRD; they join
        `ready`. Only with `attachment_crd_chart`: otherwise the constructor made them."""
        assert not self.attachments, "attachments already created"
        depends_on = [*self._multus_objects, *crd_ready]
        self.attachments = {att.name: self._attachment(self._ctx, att, depends_on) for att in self._cfg.attachments}
        self.ready = [*self.ready, *self.attachments.values()]

    def _attachment(
        self, ctx: DeployContext, att: NetworkAttachment, multus: Sequence[pulumi.Resource]
    ) -> k8s.apiextensions.CustomResource:
        return k8s.apiextensions.CustomResource(
            f"{att.namespace}/{att.name}",
            api_version="k8s.cni.cncf.io/v1",
            kind="NetworkAttachmentDefinition",
            metadata=ctx.meta(att.name, "network-attachment", att.namespace, app="multus"),
            spec={"config": ipvlan_cni_config(att)},
            opts=ctx.opts(self, depends_on=list(multus)),
        )

    # --- Site DNS (CoreDNS for the compute plane) --------------------------------------------

    def _site_dns(
        self,
        ctx: DeployContext,
        cfg: NetworkConfig,
        metallb: Sequence[pulumi.Resource],
        dns_records: Mapping[str, Mapping[str, str]],
        inventory_annotations: Mapping[str, str],
    ) -> list[pulumi.Resource]:
        namespace = LayerNamespace(
            ctx,
            self,
            DNS_NAMESPACE,
            component="dns",
            app="site-dns",
            allows=[
                ingress_from_anywhere("allow-ingress-dns", Port(1053, "UDP"), Port(1053, "TCP")),
                Allow("allow-ingress-health", "ingress", (Port(8080), Port(8181))),
                Allow("allow-egress-upstream-dns", "egress", (Port(53, "UDP"), Port(53)), cidrs=(ANYWHERE,)),
            ],
        )
        zones = site_dns_zones(cfg.dns.zones, dns_records)
        corefile = render_corefile(sorted(zones), list(cfg.dns.upstreams), listen_port=DNS_PORT)
        files = {f"{zone}.hosts": render_hosts_file(zone, records) for zone, records in sorted(zones.items())}
        corefile_map = namespace.scope.config_map("site-dns-corefile", {"Corefile": corefile})
        zone_maps, assemble = namespace.scope.chunked_file(
            "site-dns-zones", files, target_dir="/etc/coredns/zones", annotations=dict(inventory_annotations)
        )
        deployment = k8s.apps.v1.Deployment(
            f"{DNS_NAMESPACE}/site-dns",
            metadata=ctx.meta("site-dns", "dns", DNS_NAMESPACE),
            spec=site_dns_deployment_spec(
                cfg.dns.replicas, ctx.labels("site-dns", "dns"), site_dns_checksum(corefile, files), assemble
            ),
            opts=ctx.opts(self, depends_on=[corefile_map, *zone_maps]),
        )
        annotations = metallb_service_annotations(cfg.dns.pool or cfg.ingress.pool, cfg.dns.address)
        service = k8s.core.v1.Service(
            f"{DNS_NAMESPACE}/site-dns",
            metadata=ctx.meta("site-dns", "dns", DNS_NAMESPACE, annotations=annotations),
            spec=site_dns_service_spec(),
            opts=ctx.opts(self, depends_on=[*metallb, deployment]),
        )
        pdb = k8s.policy.v1.PodDisruptionBudget(
            f"{DNS_NAMESPACE}/site-dns",
            metadata=ctx.meta("site-dns", "dns", DNS_NAMESPACE),
            spec=site_dns_pdb_spec(),
            opts=ctx.opts(self, depends_on=[deployment]),
        )
        return [*namespace.ready, corefile_map, *zone_maps, deployment, service, pdb]


__all__ = ["CHARTS", "Network", "NetworkArgs"]
