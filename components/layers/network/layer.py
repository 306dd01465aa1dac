"""Network layer: MetalLB (pools, L2/BGP adverts), Traefik, Multus thick + IPVLAN attachments, site DNS."""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...k8s.addresses import metallb_service_annotations
from ...k8s.chunks import chunked_file
from ...k8s.resources import (
    ANYWHERE,
    RESTRICTED_CONTAINER_SECURITY,
    Allow,
    Namespace,
    Port,
    config_map,
    container_resources,
    egress_to_apiserver,
    ingress_from_anywhere,
)
from ...versions import Charts, Images
from .config import NetworkAttachment, NetworkConfig
from .dns import render_corefile, render_hosts_file

METALLB_NAMESPACE = "metallb-system"
TRAEFIK_NAMESPACE = "traefik"
DNS_NAMESPACE = "site-dns"
MULTUS_NAMESPACE = "kube-system"
INGRESS_CLASS = "traefik"

CHARTS = (
    ChartUse("metallb", Charts.METALLB, METALLB_NAMESPACE),
    ChartUse("traefik", Charts.TRAEFIK, TRAEFIK_NAMESPACE),
)


@dataclass(frozen=True)
class TcpEntryPoint:
    """An extra Traefik TCP entry point (e.g. LDAPS for the directory)."""

    name: str
    port: int
    exposed_port: int


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
    (offline/owners.py): with a chart owning it, the attachments wait for that chart (`add_attachments`)."""


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
        namespace = Namespace(
            ctx,
            METALLB_NAMESPACE,
            component="load-balancer",
            parent=self,
            # The speaker needs host networking and NET_RAW to answer ARP/BGP for service addresses.
            pod_security="privileged",
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-webhook", Port(9443)),
                Allow("allow-ingress-memberlist", "ingress", (Port(7946), Port(7946, "UDP"))),
                Allow("allow-ingress-metrics", "ingress", (Port(7472),)),
            ],
        )
        bgp = cfg.advertisement.mode == "bgp"
        values: dict[str, Any] = {
            # L2 needs no routing daemon; BGP uses the bundled frr-k8s backend.
            "frrk8s": {"enabled": bgp},
            "controller": {"resources": container_resources("50m", "64Mi", "256Mi")},
            "speaker": {"resources": container_resources("50m", "64Mi", "256Mi")},
            "crds": {"enabled": True},
        }
        chart = charts.deploy("metallb", Charts.METALLB, METALLB_NAMESPACE, values, parent=self, depends_on=namespace.ready)
        objects: list[pulumi.Resource] = [*namespace.ready, chart]
        for pool in cfg.pools:
            objects.append(
                k8s.apiextensions.CustomResource(
                    f"{METALLB_NAMESPACE}/{pool.name}",
                    api_version="metallb.io/v1beta1",
                    kind="IPAddressPool",
                    metadata=ctx.meta(pool.name, "load-balancer", METALLB_NAMESPACE, app="metallb"),
                    spec={"addresses": pool.metallb_addresses(), "autoAssign": pool.auto_assign},
                    opts=ctx.opts(self, depends_on=[chart]),
                )
            )
        pool_names = [pool.name for pool in cfg.pools]
        if bgp:
            for peer in cfg.advertisement.peers:
                objects.append(
                    k8s.apiextensions.CustomResource(
                        f"{METALLB_NAMESPACE}/{peer.name}",
                        api_version="metallb.io/v1beta2",
                        kind="BGPPeer",
                        metadata=ctx.meta(peer.name, "load-balancer", METALLB_NAMESPACE, app="metallb"),
                        spec={
                            "myASN": peer.my_asn,
                            "peerASN": peer.peer_asn,
                            "peerAddress": peer.address,
                            "holdTime": peer.hold_time,
                        },
                        opts=ctx.opts(self, depends_on=[chart]),
                    )
                )
            objects.append(
                k8s.apiextensions.CustomResource(
                    f"{METALLB_NAMESPACE}/site-bgp",
                    api_version="metallb.io/v1beta1",
                    kind="BGPAdvertisement",
                    metadata=ctx.meta("site-bgp", "load-balancer", METALLB_NAMESPACE, app="metallb"),
                    spec={"ipAddressPools": pool_names},
                    opts=ctx.opts(self, depends_on=[chart]),
                )
            )
        else:
            spec: dict[str, Any] = {"ipAddressPools": pool_names}
            if cfg.advertisement.interfaces:
                spec["interfaces"] = list(cfg.advertisement.interfaces)
            objects.append(
                k8s.apiextensions.CustomResource(
                    f"{METALLB_NAMESPACE}/site-l2",
                    api_version="metallb.io/v1beta1",
                    kind="L2Advertisement",
                    metadata=ctx.meta("site-l2", "load-balancer", METALLB_NAMESPACE, app="metallb"),
                    spec=spec,
                    opts=ctx.opts(self, depends_on=[chart]),
                )
            )
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
        namespace = Namespace(
            ctx,
            TRAEFIK_NAMESPACE,
            component="ingress",
            parent=self,
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-entrypoints", Port(8000), Port(8443), *extra_ports),
                # Traefik forwards to backends in any namespace; their own policies decide.
                Allow("allow-egress-backends", "egress"),
            ],
        )
        ports: dict[str, Any] = {
            "web": {
                "http": {"redirections": {"entryPoint": {"to": "websecure", "scheme": "https", "permanent": True}}},
            },
            "websecure": {"http": {"tls": {"enabled": True}}},
        }
        for ep in tcp_entrypoints:
            ports[ep.name] = {"port": ep.port, "exposedPort": ep.exposed_port, "protocol": "TCP", "expose": {"default": True}}
        values: dict[str, Any] = {
            "deployment": {"replicas": cfg.ingress.replicas},
            "ingressClass": {"enabled": True, "isDefaultClass": True, "name": INGRESS_CLASS},
            "api": {"dashboard": False},
            "ingressRoute": {"dashboard": {"enabled": False}},
            "providers": {
                "kubernetesCRD": {"enabled": True, "allowCrossNamespace": False},
                "kubernetesIngress": {"enabled": True, "publishedService": {"enabled": True}},
            },
            "ports": ports,
            "service": {
                "annotations": metallb_service_annotations(cfg.ingress.pool, cfg.ingress.address),
                "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local"},
            },
            "podDisruptionBudget": {"enabled": cfg.ingress.replicas > 1, "minAvailable": 1}
            if cfg.ingress.replicas > 1
            else {"enabled": False},
            "resources": container_resources("100m", "128Mi", "512Mi"),
            "commonLabels": {"app.kubernetes.io/part-of": "hpcforge"},
        }
        return charts.deploy(
            "traefik",
            Charts.TRAEFIK,
            TRAEFIK_NAMESPACE,
            values,
            parent=self,
            depends_on=[*namespace.ready, *metallb],
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
        namespace = Namespace(
            ctx,
            DNS_NAMESPACE,
            component="dns",
            parent=self,
            allows=[
                ingress_from_anywhere("allow-ingress-dns", Port(1053, "UDP"), Port(1053, "TCP")),
                Allow("allow-ingress-health", "ingress", (Port(8080), Port(8181))),
                Allow("allow-egress-upstream-dns", "egress", (Port(53, "UDP"), Port(53)), cidrs=(ANYWHERE,)),
            ],
        )
        zones: dict[str, dict[str, str]] = {}
        for zone in cfg.dns.zones:
            zones[zone.name] = {**dict(dns_records.get(zone.name, {})), **dict(zone.hosts)}
        for zone_name, records in dns_records.items():
            zones.setdefault(zone_name, dict(records))
        corefile = render_corefile(sorted(zones), list(cfg.dns.upstreams), listen_port=1053)
        files = {f"{zone}.hosts": render_hosts_file(zone, records) for zone, records in sorted(zones.items())}
        labels = ctx.labels("site-dns", "dns")
        selector = {"app.kubernetes.io/name": "site-dns", "app.kubernetes.io/component": "dns"}
        corefile_map = config_map(
            ctx,
            "site-dns-corefile",
            DNS_NAMESPACE,
            {"Corefile": corefile},
            component="dns",
            parent=self,
            app="site-dns",
            depends_on=namespace.ready,
        )
        zone_maps, assemble = chunked_file(
            ctx,
            self,
            DNS_NAMESPACE,
            "site-dns-zones",
            files,
            component="dns",
            app="site-dns",
            target_dir="/etc/coredns/zones",
            depends_on=namespace.ready,
            annotations=dict(inventory_annotations),
        )
        checksum = hashlib.sha256((corefile + json.dumps(files, sort_keys=True)).encode()).hexdigest()[:16]
        deployment = k8s.apps.v1.Deployment(
            f"{DNS_NAMESPACE}/site-dns",
            metadata=ctx.meta("site-dns", "dns", DNS_NAMESPACE),
            spec={
                "replicas": cfg.dns.replicas,
                "selector": {"matchLabels": selector},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
                "template": {
                    # The checksum rolls the pods when a zone changes (the assembled files are copies).
                    "metadata": {"labels": labels, "annotations": {"hpcforge.io/config-checksum": checksum}},
                    "spec": {
                        "automountServiceAccountToken": False,
                        "securityContext": {
                            "runAsNonRoot": True,
                            "runAsUser": 65532,
                            "runAsGroup": 65532,
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "initContainers": [assemble.container],
                        "containers": [
                            {
                                "name": "coredns",
                                "image": Images.COREDNS.ref,
                                "args": ["-conf", "/etc/coredns/Corefile"],
                                "ports": [
                                    {"name": "dns", "containerPort": 1053, "protocol": "UDP"},
                                    {"name": "dns-tcp", "containerPort": 1053, "protocol": "TCP"},
                                    {"name": "health", "containerPort": 8080, "protocol": "TCP"},
                                ],
                                "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}, "initialDelaySeconds": 10},
                                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181}},
                                "resources": container_resources("50m", "64Mi", "256Mi"),
                                "securityContext": {**RESTRICTED_CONTAINER_SECURITY, "readOnlyRootFilesystem": True},
                                "volumeMounts": [
                                    {
                                        "name": "corefile",
                                        "mountPath": "/etc/coredns/Corefile",
                                        "subPath": "Corefile",
                                        "readOnly": True,
                                    },
                                    *assemble.mounts,
                                ],
                            }
                        ],
                        "volumes": [
                            {"name": "corefile", "configMap": {"name": "site-dns-corefile"}},
                            *assemble.volumes,
                        ],
                    },
                },
            },
            opts=ctx.opts(self, depends_on=[corefile_map, *zone_maps]),
        )
        service = k8s.core.v1.Service(
            f"{DNS_NAMESPACE}/site-dns",
            metadata=ctx.meta(
                "site-dns",
                "dns",
                DNS_NAMESPACE,
                annotations=metallb_service_annotations(cfg.dns.pool or cfg.ingress.pool, cfg.dns.address),
            ),
            spec={
                "type": "LoadBalancer",
                "selector": selector,
                "ports": [
                    {"name": "dns", "port": 53, "targetPort": 1053, "protocol": "UDP"},
                    {"name": "dns-tcp", "port": 53, "targetPort": 1053, "protocol": "TCP"},
                ],
            },
            opts=ctx.opts(self, depends_on=[*metallb, deployment]),
        )
        pdb = k8s.policy.v1.PodDisruptionBudget(
            f"{DNS_NAMESPACE}/site-dns",
            metadata=ctx.meta("site-dns", "dns", DNS_NAMESPACE),
            spec={"maxUnavailable": 1, "selector": {"matchLabels": selector}},
            opts=ctx.opts(self, depends_on=[deployment]),
        )
        return [*namespace.ready, corefile_map, *zone_maps, deployment, service, pdb]


def ipvlan_cni_config(att: NetworkAttachment) -> str:
    """The CNI config of an IPVLAN attachment (JSON text, as NetworkAttachmentDefinition wants it)."""
    config: dict[str, Any] = {
        "cniVersion": "0.3.1",
        "name": att.name,
        "type": "ipvlan",
        "master": att.master,
        "mode": att.mode,
    }
    if att.mtu is not None:
        config["mtu"] = att.mtu
    if att.ipam.type == "static":
        # Static addresses come from the pod's network-selection annotation (`ips`).
        config["capabilities"] = {"ips": True}
        config["ipam"] = {"type": "static"}
    else:
        ipam: dict[str, Any] = {"type": "whereabouts", "range": att.ipam.range}
        exclude = list(att.ipam.exclude)
        gateway = att.ipam.gateway
        if gateway:
            ipam["gateway"] = gateway
            # whereabouts hands out `range` from its first address on, gateway or not (k8snetworkplumbingwg/whereabouts
            # v0.9.4 pkg/allocate/allocate.go `IterateForAssignment` skips only `exclude`): keep the gateway's address.
            address = ipaddress.IPv4Address(gateway)
            excluded = any(address in ipaddress.IPv4Network(net) for net in exclude)
            if address in ipaddress.IPv4Network(att.ipam.range) and not excluded:
                exclude.append(f"{gateway}/32")
        if exclude:
            ipam["exclude"] = exclude
        config["ipam"] = ipam
    return json.dumps(config, sort_keys=True)
