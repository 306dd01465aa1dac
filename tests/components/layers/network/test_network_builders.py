"""components/layers/network/objects.py and multus.py's builders: MetalLB's custom resources and values, Traefik's
values, the site DNS objects, Multus' DaemonSet (plain config models in, dicts out)."""

from __future__ import annotations

import json

from components.k8s.chunks import Assembly
from components.layers.network.config import AddressPool, Advertisement, BgpPeer, DnsZone, Ingress
from components.layers.network.multus import cluster_role_rules, daemonset_spec
from components.layers.network.objects import (
    DNS_SELECTOR,
    TcpEntryPoint,
    bgp_advertisement_spec,
    bgp_peer_spec,
    ip_address_pool_spec,
    l2_advertisement_spec,
    metallb_values,
    site_dns_checksum,
    site_dns_deployment_spec,
    site_dns_pdb_spec,
    site_dns_service_spec,
    site_dns_zones,
    traefik_values,
)


def test_a_single_address_becomes_a_host_route_in_its_pool() -> None:
    pool = AddressPool.model_validate(
        {"name": "services", "addresses": ["10.0.0.5", "10.0.1.0/28", "10.0.2.1-10.0.2.9"], "autoAssign": True}
    )
    assert ip_address_pool_spec(pool) == {
        "addresses": ["10.0.0.5/32", "10.0.1.0/28", "10.0.2.1-10.0.2.9"],
        "autoAssign": True,
    }


def test_bgp_switches_on_frr_and_peers_carry_their_asns() -> None:
    peer = BgpPeer.model_validate({"name": "tor-a", "address": "10.0.0.1", "peerAsn": 65000, "myAsn": 65100, "holdTime": "30s"})
    bgp = Advertisement(mode="bgp", peers=(peer,))
    assert metallb_values(bgp)["frrk8s"] == {"enabled": True}
    assert metallb_values(Advertisement())["frrk8s"] == {"enabled": False}
    assert bgp_peer_spec(peer) == {"myASN": 65100, "peerASN": 65000, "peerAddress": "10.0.0.1", "holdTime": "30s"}
    assert bgp_advertisement_spec(("a", "b")) == {"ipAddressPools": ["a", "b"]}


def test_l2_advertises_from_all_interfaces_unless_some_are_named() -> None:
    assert l2_advertisement_spec(["services"], ()) == {"ipAddressPools": ["services"]}
    assert l2_advertisement_spec(["services"], ("bond0",))["interfaces"] == ["bond0"]


def test_traefik_exposes_extra_tcp_entrypoints_and_keeps_one_replica_without_a_budget() -> None:
    one = traefik_values(Ingress(pool="services"), (), ("10.0.0.0/8",))
    assert one["podDisruptionBudget"] == {"enabled": False}
    assert set(one["ports"]) == {"web", "websecure"}
    assert one["service"]["annotations"] == {"metallb.io/address-pool": "services"}
    ldaps = TcpEntryPoint("ldaps", 8636, 636)
    two = traefik_values(Ingress(pool="services", address="10.0.0.100", replicas=2), (ldaps,), ("10.0.0.0/8",))
    assert two["podDisruptionBudget"] == {"enabled": True, "minAvailable": 1}
    assert two["ports"]["ldaps"] == {"port": 8636, "exposedPort": 636, "protocol": "TCP", "expose": {"default": True}}
    assert two["service"]["annotations"]["metallb.io/loadBalancerIPs"] == "10.0.0.100"
    assert two["deployment"] == {"replicas": 2}


def test_traefik_takes_the_site_ranges_unless_its_exposure_names_others_or_says_public() -> None:
    site = ("10.10.0.0/16",)
    default = traefik_values(Ingress(pool="services"), (), site)["service"]
    assert default["spec"] == {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "loadBalancerSourceRanges": list(site)}
    named = traefik_values(Ingress(pool="services", exposure={"sourceRanges": ["192.168.5.0/24"]}), (), site)["service"]
    assert named["spec"]["loadBalancerSourceRanges"] == ["192.168.5.0/24"]
    public = traefik_values(Ingress(pool="services", exposure={"public": True}), (), site)["service"]
    assert "loadBalancerSourceRanges" not in public["spec"]
    assert public["annotations"]["hpcforge.io/exposure"] == "public"


def test_a_zone_s_own_hosts_win_over_generated_records_and_generated_zones_are_served() -> None:
    zones = (DnsZone(name="hpc.example.org", hosts={"nas": "10.0.0.9", "cn001": "10.9.9.9"}), DnsZone(name="lab.example.org"))
    generated = {"hpc.example.org": {"cn001": "10.0.1.1", "grendel": "10.0.0.2"}, "bmc.example.org": {"cn001": "10.0.2.1"}}
    merged = site_dns_zones(zones, generated)
    assert merged["hpc.example.org"] == {"cn001": "10.9.9.9", "grendel": "10.0.0.2", "nas": "10.0.0.9"}
    assert merged["lab.example.org"] == {}
    assert merged["bmc.example.org"] == {"cn001": "10.0.2.1"}
    assert generated["hpc.example.org"]["cn001"] == "10.0.1.1"  # the input is not changed


def test_the_checksum_follows_the_corefile_and_every_zone() -> None:
    base = site_dns_checksum("corefile", {"a.hosts": "1"})
    assert len(base) == 16
    assert site_dns_checksum("corefile2", {"a.hosts": "1"}) != base
    assert site_dns_checksum("corefile", {"a.hosts": "2"}) != base
    assert site_dns_checksum("corefile", {"a.hosts": "1"}) == base


def test_site_dns_pods_are_selected_by_service_and_budget_and_roll_one_at_a_time() -> None:
    assemble = Assembly(
        container={"name": "assemble"},
        mounts=[{"name": "zones-assembled", "mountPath": "/etc/coredns/zones", "readOnly": True}],
        volumes=[{"name": "zones-assembled", "emptyDir": {}}],
    )
    labels = {**DNS_SELECTOR, "hpcforge.io/environment": "dev"}
    spec = site_dns_deployment_spec(3, labels, "abc", assemble)
    template = spec["template"]
    assert spec["replicas"] == 3 and spec["strategy"]["rollingUpdate"] == {"maxUnavailable": 0, "maxSurge": 1}
    assert template["metadata"]["annotations"] == {"hpcforge.io/config-checksum": "abc"}
    selector = spec["selector"]["matchLabels"]
    assert selector.items() <= template["metadata"]["labels"].items()
    assert site_dns_service_spec()["selector"] == selector == site_dns_pdb_spec()["selector"]["matchLabels"]
    pod = template["spec"]
    assert pod["initContainers"] == [{"name": "assemble"}]
    (coredns,) = pod["containers"]
    assert coredns["volumeMounts"][1:] == assemble.mounts and pod["volumes"][1:] == assemble.volumes
    port = {p["protocol"]: p["containerPort"] for p in coredns["ports"] if p["name"].startswith("dns")}
    assert {p["protocol"]: p["targetPort"] for p in site_dns_service_spec()["ports"]} == port
    assert all(p["port"] == 53 for p in site_dns_service_spec()["ports"])


def test_multus_runs_on_every_node_with_its_config_mounted() -> None:
    spec = daemonset_spec({"app.kubernetes.io/name": "multus", "app.kubernetes.io/component": "cni", "x": "y"})
    pod = spec["template"]["spec"]
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    assert {t["effect"] for t in pod["tolerations"]} == {"NoSchedule", "NoExecute"}
    volumes = {v["name"] for v in pod["volumes"]}
    mounted = {m["name"] for c in [*pod["initContainers"], *pod["containers"]] for m in c["volumeMounts"]}
    assert mounted <= volumes
    assert all(c["securityContext"] == {"privileged": True} for c in [*pod["initContainers"], *pod["containers"]])
    nad_rules = [rule for rule in cluster_role_rules() if rule["apiGroups"] == ["k8s.cni.cncf.io"]]
    assert nad_rules == [
        {"apiGroups": ["k8s.cni.cncf.io"], "resources": ["network-attachment-definitions"], "verbs": ["get", "list", "watch"]}
    ]
    json.dumps(spec)  # plain data
