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
from ...k8s.scope import Scope
from ...versions import Charts
from .config import NetworkAttachment, NetworkConfig
from .dns import render_corefile, render_hosts_file
from .multus import (
    MULTUS_APP,
    MULTUS_NAMESPACE,
    MULTUS_VERSION,
    NAD_CRD,
    cluster_role_rules,
    daemon_config_data,
    daemonset_spec,
    nad_crd_spec,
)
from .objects import (
    DNS_NAMESPACE,
    DNS_PORT,
    INGRESS_CLASS,
    METALLB_API,
    METALLB_BGP_PEER_API,
    METALLB_NAMESPACE,
    NAD_API,
    TRAEFIK_NAMESPACE,
    TcpEntryPoint,
    bgp_advertisement_spec,
    bgp_peer_spec,
    ip_address_pool_spec,
    ipvlan_cni_config,
    l2_advertisement_spec,
    metallb_namespace_allows,
    metallb_values,
    site_dns_checksum,
    site_dns_deployment_spec,
    site_dns_namespace_allows,
    site_dns_pdb_spec,
    site_dns_service_spec,
    site_dns_zones,
    traefik_namespace_allows,
    traefik_values,
)

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
    attachments: dict[str, pulumi.Resource]
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
            allows=metallb_namespace_allows(),
            charts=charts,
        )
        chart = namespace.chart("metallb", Charts.METALLB, metallb_values(cfg.advertisement))
        scope = namespace.scope.but(app="metallb", depends_on=(chart,))
        objects: list[pulumi.Resource] = [*namespace.ready, chart]
        objects += [scope.custom(METALLB_API, "IPAddressPool", p.name, ip_address_pool_spec(p)) for p in cfg.pools]
        pool_names = [pool.name for pool in cfg.pools]
        if cfg.advertisement.mode == "bgp":
            peers = cfg.advertisement.peers
            objects += [scope.custom(METALLB_BGP_PEER_API, "BGPPeer", peer.name, bgp_peer_spec(peer)) for peer in peers]
            objects.append(scope.custom(METALLB_API, "BGPAdvertisement", "site-bgp", bgp_advertisement_spec(pool_names)))
        else:
            spec = l2_advertisement_spec(pool_names, cfg.advertisement.interfaces)
            objects.append(scope.custom(METALLB_API, "L2Advertisement", "site-l2", spec))
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
        namespace = LayerNamespace(
            ctx, self, TRAEFIK_NAMESPACE, component="ingress", allows=traefik_namespace_allows(tcp_entrypoints), charts=charts
        )
        return namespace.chart(
            "traefik", Charts.TRAEFIK, traefik_values(cfg.ingress, tcp_entrypoints), depends_on=[*namespace.ready, *metallb]
        )

    # --- Multus (thick plugin) ---------------------------------------------------------------

    def _multus(self, ctx: DeployContext, *, crd: bool) -> list[pulumi.Resource]:
        """Multus CNI v4.3.0, thick plugin (multus.py: no maintained chart exists); `crd`: with its
        NetworkAttachmentDefinition CRD (False when a chart of the stack ships it: one owner per object)."""
        labels = {"app.kubernetes.io/version": MULTUS_VERSION}
        scope = Scope(ctx, self, MULTUS_NAMESPACE, "cni", app=MULTUS_APP)

        def meta(name: str, namespace: str | None = MULTUS_NAMESPACE) -> dict[str, Any]:
            return ctx.meta(name, "cni", namespace, app=MULTUS_APP, extra_labels=labels)

        crds: list[pulumi.Resource] = []
        if crd:
            crds.append(
                k8s.apiextensions.v1.CustomResourceDefinition(
                    NAD_CRD, metadata=meta(NAD_CRD, None), spec=nad_crd_spec(), opts=ctx.opts(self)
                )
            )
        role = k8s.rbac.v1.ClusterRole("multus", metadata=meta("multus", None), rules=cluster_role_rules(), opts=ctx.opts(self))
        account = k8s.core.v1.ServiceAccount(f"{MULTUS_NAMESPACE}/multus", metadata=meta("multus"), opts=ctx.opts(self))
        binding = k8s.rbac.v1.ClusterRoleBinding(
            "multus",
            metadata=meta("multus", None),
            role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "multus"},
            subjects=[{"kind": "ServiceAccount", "name": "multus", "namespace": MULTUS_NAMESPACE}],
            opts=ctx.opts(self, depends_on=[role, account]),
        )
        daemon_config = scope.config_map("multus-daemon-config", daemon_config_data(), labels=labels)
        daemonset = k8s.apps.v1.DaemonSet(
            f"{MULTUS_NAMESPACE}/kube-multus-ds",
            metadata=meta("kube-multus-ds"),
            spec=daemonset_spec(ctx.labels(MULTUS_APP, "cni")),
            opts=ctx.opts(self, depends_on=[*crds, binding, daemon_config]),
        )
        return [*crds, role, account, binding, daemon_config, daemonset]

    def add_attachments(self, crd_ready: Sequence[pulumi.Resource]) -> None:
        """The attachments, once `crd_ready` (the chart of `attachment_crd_chart`) has installed their CRD; they join
        `ready`. Only with `attachment_crd_chart`: otherwise the constructor made them."""
        assert not self.attachments, "attachments already created"
        depends_on = [*self._multus_objects, *crd_ready]
        self.attachments = {att.name: self._attachment(self._ctx, att, depends_on) for att in self._cfg.attachments}
        self.ready = [*self.ready, *self.attachments.values()]

    def _attachment(self, ctx: DeployContext, att: NetworkAttachment, multus: Sequence[pulumi.Resource]) -> pulumi.Resource:
        scope = Scope(ctx, self, att.namespace, "network-attachment", app="multus", depends_on=tuple(multus))
        return scope.custom(NAD_API, "NetworkAttachmentDefinition", att.name, {"config": ipvlan_cni_config(att)})

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
            allows=site_dns_namespace_allows(),
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
