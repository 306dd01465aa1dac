"""Network layer builders (pure): the allows of its namespaces, the MetalLB custom resources and chart values,
Traefik's values, the site DNS (zones, Deployment, Service, PodDisruptionBudget) and the IPVLAN CNI config of an
attachment. Multus' objects are built in multus.py."""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...chart_security import RESTRICTED_CONTAINER_SECURITY
from ...k8s.addresses import metallb_service_annotations
from ...k8s.chunks import Assembly
from ...k8s.resources import (
    ANYWHERE,
    Allow,
    Port,
    container_resources,
    egress_to_apiserver,
    ingress_from_anywhere,
)
from ...versions import Images
from .config import AddressPool, Advertisement, BgpPeer, DnsZone, Ingress, NetworkAttachment

METALLB_NAMESPACE = "metallb-system"
TRAEFIK_NAMESPACE = "traefik"
DNS_NAMESPACE = "site-dns"
METALLB_API = "metallb.io/v1beta1"
METALLB_BGP_PEER_API = "metallb.io/v1beta2"
NAD_API = "k8s.cni.cncf.io/v1"
"""The API version of Multus' NetworkAttachmentDefinition."""
INGRESS_CLASS = "traefik"
DNS_PORT = 1053
"""The port CoreDNS listens on in its pod (unprivileged); the Service maps 53 to it."""
DNS_SELECTOR = {"app.kubernetes.io/name": "site-dns", "app.kubernetes.io/component": "dns"}


@dataclass(frozen=True)
class TcpEntryPoint:
    """An extra Traefik TCP entry point (e.g. LDAPS for the directory)."""

    name: str
    port: int
    exposed_port: int


# --- NetworkPolicy allows ----------------------------------------------------------------------------------------


def metallb_namespace_allows() -> list[Allow]:
    """MetalLB's namespace: the API server, its webhook, the speakers' memberlist and their metrics."""
    return [
        egress_to_apiserver(),
        ingress_from_anywhere("allow-ingress-webhook", Port(9443)),
        Allow("allow-ingress-memberlist", "ingress", (Port(7946), Port(7946, "UDP"))),
        Allow("allow-ingress-metrics", "ingress", (Port(7472),)),
    ]


def traefik_namespace_allows(tcp_entrypoints: Sequence[TcpEntryPoint]) -> list[Allow]:
    """Traefik's namespace: the API server, its entry points (the web ones and `tcp_entrypoints`) from anywhere, and
    every backend in any namespace (their own policies decide)."""
    extra_ports = tuple(Port(ep.port) for ep in tcp_entrypoints)
    return [
        egress_to_apiserver(),
        ingress_from_anywhere("allow-ingress-entrypoints", Port(8000), Port(8443), *extra_ports),
        Allow("allow-egress-backends", "egress"),
    ]


def site_dns_namespace_allows() -> list[Allow]:
    """The site DNS' namespace: queries from anywhere, the kubelet's health probes, and the upstream resolvers."""
    return [
        ingress_from_anywhere("allow-ingress-dns", Port(DNS_PORT, "UDP"), Port(DNS_PORT, "TCP")),
        Allow("allow-ingress-health", "ingress", (Port(8080), Port(8181))),
        Allow("allow-egress-upstream-dns", "egress", (Port(53, "UDP"), Port(53)), cidrs=(ANYWHERE,)),
    ]


# --- MetalLB -----------------------------------------------------------------------------------------------------


def metallb_values(advertisement: Advertisement) -> dict[str, Any]:
    """The MetalLB chart's values: L2 needs no routing daemon; BGP uses the bundled frr-k8s backend."""
    return {
        "frrk8s": {"enabled": advertisement.mode == "bgp"},
        "controller": {"resources": container_resources("50m", "64Mi", "256Mi")},
        "speaker": {"resources": container_resources("50m", "64Mi", "256Mi")},
        "crds": {"enabled": True},
    }


def ip_address_pool_spec(pool: AddressPool) -> dict[str, Any]:
    """`spec` of the IPAddressPool of `pool`."""
    return {"addresses": pool.metallb_addresses(), "autoAssign": pool.auto_assign}


def bgp_peer_spec(peer: BgpPeer) -> dict[str, Any]:
    """`spec` of the BGPPeer of `peer`."""
    return {"myASN": peer.my_asn, "peerASN": peer.peer_asn, "peerAddress": peer.address, "holdTime": peer.hold_time}


def bgp_advertisement_spec(pool_names: Sequence[str]) -> dict[str, Any]:
    """`spec` of the BGPAdvertisement `site-bgp`: every pool."""
    return {"ipAddressPools": list(pool_names)}


def l2_advertisement_spec(pool_names: Sequence[str], interfaces: Sequence[str]) -> dict[str, Any]:
    """`spec` of the L2Advertisement `site-l2`: every pool, from the given node interfaces only (none: all)."""
    spec: dict[str, Any] = {"ipAddressPools": list(pool_names)}
    if interfaces:
        spec["interfaces"] = list(interfaces)
    return spec


# --- Traefik -----------------------------------------------------------------------------------------------------


def traefik_values(ingress: Ingress, tcp_entrypoints: Sequence[TcpEntryPoint]) -> dict[str, Any]:
    """The Traefik chart's values: HTTPS with a redirect from HTTP, the extra TCP entry points, a MetalLB LoadBalancer
    that keeps client addresses (`Local`), a PodDisruptionBudget with more than one replica."""
    ports: dict[str, Any] = {
        "web": {
            "http": {"redirections": {"entryPoint": {"to": "websecure", "scheme": "https", "permanent": True}}},
        },
        "websecure": {"http": {"tls": {"enabled": True}}},
    }
    for ep in tcp_entrypoints:
        ports[ep.name] = {"port": ep.port, "exposedPort": ep.exposed_port, "protocol": "TCP", "expose": {"default": True}}
    return {
        "deployment": {"replicas": ingress.replicas},
        "ingressClass": {"enabled": True, "isDefaultClass": True, "name": INGRESS_CLASS},
        "api": {"dashboard": False},
        "ingressRoute": {"dashboard": {"enabled": False}},
        "providers": {
            "kubernetesCRD": {"enabled": True, "allowCrossNamespace": False},
            "kubernetesIngress": {"enabled": True, "publishedService": {"enabled": True}},
        },
        "ports": ports,
        "service": {
            "annotations": metallb_service_annotations(ingress.pool, ingress.address),
            "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local"},
        },
        "podDisruptionBudget": {"enabled": ingress.replicas > 1, "minAvailable": 1}
        if ingress.replicas > 1
        else {"enabled": False},
        "resources": container_resources("100m", "128Mi", "512Mi"),
        "commonLabels": {"app.kubernetes.io/part-of": "hpcforge"},
    }


# --- Site DNS ----------------------------------------------------------------------------------------------------


def site_dns_zones(zones: Sequence[DnsZone], records: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """Each zone's records: the generated ones (`records`, by zone), then the zone's own hosts over them; a zone that
    only `records` names is served too."""
    merged: dict[str, dict[str, str]] = {}
    for zone in zones:
        merged[zone.name] = {**dict(records.get(zone.name, {})), **dict(zone.hosts)}
    for zone_name, zone_records in records.items():
        merged.setdefault(zone_name, dict(zone_records))
    return merged


def site_dns_checksum(corefile: str, files: Mapping[str, str]) -> str:
    """What rolls the CoreDNS pods when the Corefile or a zone changes (the assembled files are copies)."""
    return hashlib.sha256((corefile + json.dumps(files, sort_keys=True)).encode()).hexdigest()[:16]


def _coredns_container(assemble: Assembly) -> dict[str, Any]:
    return {
        "name": "coredns",
        "image": Images.COREDNS.ref,
        "args": ["-conf", "/etc/coredns/Corefile"],
        "ports": [
            {"name": "dns", "containerPort": DNS_PORT, "protocol": "UDP"},
            {"name": "dns-tcp", "containerPort": DNS_PORT, "protocol": "TCP"},
            {"name": "health", "containerPort": 8080, "protocol": "TCP"},
        ],
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}, "initialDelaySeconds": 10},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181}},
        "resources": container_resources("50m", "64Mi", "256Mi"),
        "securityContext": {**RESTRICTED_CONTAINER_SECURITY, "readOnlyRootFilesystem": True},
        "volumeMounts": [
            {"name": "corefile", "mountPath": "/etc/coredns/Corefile", "subPath": "Corefile", "readOnly": True},
            *assemble.mounts,
        ],
    }


def site_dns_deployment_spec(replicas: int, labels: Mapping[str, str], checksum: str, assemble: Assembly) -> dict[str, Any]:
    """`spec` of the `site-dns` Deployment: CoreDNS, non-root, replaced one at a time; its zone files assembled by
    `assemble`'s init container, its Corefile from the ConfigMap `site-dns-corefile`."""
    return {
        "replicas": replicas,
        "selector": {"matchLabels": dict(DNS_SELECTOR)},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
        "template": {
            "metadata": {"labels": dict(labels), "annotations": {"hpcforge.io/config-checksum": checksum}},
            "spec": {
                "automountServiceAccountToken": False,
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 65532,
                    "runAsGroup": 65532,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "initContainers": [assemble.container],
                "containers": [_coredns_container(assemble)],
                "volumes": [{"name": "corefile", "configMap": {"name": "site-dns-corefile"}}, *assemble.volumes],
            },
        },
    }


def site_dns_service_spec() -> dict[str, Any]:
    """`spec` of the `site-dns` LoadBalancer: port 53, UDP and TCP, to CoreDNS' unprivileged port."""
    return {
        "type": "LoadBalancer",
        "selector": dict(DNS_SELECTOR),
        "ports": [
            {"name": "dns", "port": 53, "targetPort": DNS_PORT, "protocol": "UDP"},
            {"name": "dns-tcp", "port": 53, "targetPort": DNS_PORT, "protocol": "TCP"},
        ],
    }


def site_dns_pdb_spec() -> dict[str, Any]:
    """`spec` of the `site-dns` PodDisruptionBudget: one pod down at a time."""
    return {"maxUnavailable": 1, "selector": {"matchLabels": dict(DNS_SELECTOR)}}


# --- Multus attachments ------------------------------------------------------------------------------------------


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
