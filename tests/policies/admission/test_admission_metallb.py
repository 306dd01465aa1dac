"""MetalLB's validating webhooks (policies/admission/metallb/) against MetalLB v0.16.1's own table tests,
transcribed from Go structs into the JSON objects the API server sends (same names and values):

- internal/config/config_test.go `TestParse` (`For(crs, DontValidate)`; `want: nil` means the parse must
  fail): every scenario on the fields reproduced (peers, pools, addresses, advertisements);
- internal/config/validation_test.go `TestValidate` (`DiscardFRROnly`, the native backend) and
  `TestValidateFRR` (`DiscardNativeOnly`, frr and frr-k8s): every scenario on the fields reproduced.

Upstream's tables assert failure or success only, not the message; the messages asserted in the
webhook-level tests below are upstream's format strings (config.go, validation.go) filled in.

Left out, with the reason: scenarios on BFD profiles, label-selector duplicates, service allocation,
communities, local preference (not reproduced: hpcforge sets none of them), and "duplicate peers" (two peers
equal to the last field, names included: two objects of one name cannot exist, so no webhook sees it).
"""

from __future__ import annotations

from typing import Any

import pytest

from policies.admission import metallb as mlb


def pool(name: str, *addresses: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": mlb.NAMESPACE}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool", "metadata": meta, "spec": {"addresses": list(addresses)}}


def peer(name: str = "", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "metallb.io/v1beta2",
        "kind": "BGPPeer",
        "metadata": {"name": name, "namespace": mlb.NAMESPACE},
        "spec": spec,
    }


def bgp_adv(name: str = "", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "metallb.io/v1beta1",
        "kind": "BGPAdvertisement",
        "metadata": {"name": name, "namespace": mlb.NAMESPACE},
        "spec": spec,
    }


def l2_adv(name: str = "", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "metallb.io/v1beta1",
        "kind": "L2Advertisement",
        "metadata": {"name": name, "namespace": mlb.NAMESPACE},
        "spec": spec,
    }


TEST_POOL = pool("testPool", "10.20.0.0/16")

# TestParse: (desc, resources, must fail)
PARSE: list[tuple[str, mlb.ClusterResources, bool]] = [
    ("invalid peer-address", mlb.ClusterResources(peers=(peer(myASN=42, peerASN=42, peerAddress="1.2.3.400"),)), True),
    ("invalid my-asn", mlb.ClusterResources(peers=(peer(peerASN=42, peerAddress="1.2.3.4"),)), True),
    ("invalid peer-asn", mlb.ClusterResources(peers=(peer(myASN=42, peerAddress="1.2.3.4"),)), True),
    (
        "invalid ebgp-multihop",
        mlb.ClusterResources(peers=(peer(myASN=42, peerASN=42, peerAddress="1.2.3.4", ebgpMultiHop=True),)),
        True,
    ),
    (
        "invalid keepalivetime larger than holdtime",
        mlb.ClusterResources(peers=(peer(myASN=42, peerASN=42, peerAddress="1.2.3.4", holdTime="30s", keepaliveTime="90s"),)),
        True,
    ),
    (
        "invalid hold time (too short)",
        mlb.ClusterResources(peers=(peer(myASN=42, peerASN=42, peerAddress="1.2.3.4", holdTime="1s"),)),
        True,
    ),
    (
        "peer with holdtime only",
        mlb.ClusterResources(peers=(peer("peer1", myASN=42, peerASN=42, peerAddress="1.2.3.4", holdTime="180s"),)),
        False,
    ),
    (
        "peer with keepalive only",
        mlb.ClusterResources(peers=(peer("peer1", myASN=42, peerASN=42, peerAddress="1.2.3.4", keepaliveTime="60s"),)),
        False,
    ),
    (
        "peer with zero hold/keepalive timers",
        mlb.ClusterResources(
            peers=(peer("peer1", myASN=42, peerASN=42, peerAddress="1.2.3.4", holdTime="0s", keepaliveTime="0s"),)
        ),
        False,
    ),
    (
        "peer without hold/keepalive timers",
        mlb.ClusterResources(peers=(peer("peer1", myASN=42, peerASN=42, peerAddress="1.2.3.4"),)),
        False,
    ),
    (
        "invalid RouterID",
        mlb.ClusterResources(peers=(peer(myASN=42, peerASN=42, peerAddress="1.2.3.4", routerID="400.500.600.700"),)),
        True,
    ),
    ("no pool name", mlb.ClusterResources(pools=({"metadata": {}, "spec": {}},)), True),
    ("address pool with no address", mlb.ClusterResources(pools=({"metadata": {"name": "pool1"}, "spec": {}},)), True),
    ("address pool with no protocol", mlb.ClusterResources(pools=({"metadata": {"name": "pool1"}},)), True),
    ("invalid pool CIDR", mlb.ClusterResources(pools=(pool("pool1", "100.200.300.400/24"),)), True),
    ("invalid pool CIDR prefix length", mlb.ClusterResources(pools=(pool("pool1", "1.2.3.0/33"),)), True),
    (
        "invalid pool CIDR, first address of the range is after the second",
        mlb.ClusterResources(pools=(pool("pool1", "1.2.3.10-1.2.3.1"),)),
        True,
    ),
    ("simple advertisement", mlb.ClusterResources(pools=(pool("pool1", "1.2.3.0/24"),), bgp_advs=(bgp_adv("adv3"),)), False),
    (
        "bad aggregation length (too long)",
        mlb.ClusterResources(pools=(pool("pool1", "1.2.3.10-1.2.3.1"),), bgp_advs=(bgp_adv(aggregationLength=34),)),
        True,
    ),
    (
        "bad aggregation length (incompatible with CIDR)",
        mlb.ClusterResources(pools=(pool("pool1", "10.20.30.40/24", "1.2.3.0/28"),), bgp_advs=(bgp_adv(aggregationLength=26),)),
        True,
    ),
    (
        "aggregation length by range",
        mlb.ClusterResources(pools=(pool("pool1", "3.3.3.2-3.3.3.254"),), bgp_advs=(bgp_adv(aggregationLength=26),)),
        False,
    ),
    (
        "aggregation length by range, too wide",
        mlb.ClusterResources(pools=(pool("pool1", "3.3.3.2-3.3.3.254"),), bgp_advs=(bgp_adv(aggregationLength=24),)),
        True,
    ),
    (
        "duplicate ip address pools - in L2 adv",
        mlb.ClusterResources(pools=(TEST_POOL,), l2_advs=(l2_adv("testAdv", ipAddressPools=["testPool", "testPool"]),)),
        True,
    ),
    (
        "duplicate ip address pools - in BGP adv",
        mlb.ClusterResources(pools=(TEST_POOL,), bgp_advs=(bgp_adv("testAdv", ipAddressPools=["testPool", "testPool"]),)),
        True,
    ),
    (
        "duplicate peers - in BGP adv",
        mlb.ClusterResources(
            pools=(TEST_POOL,),
            peers=(peer("peer1", myASN=42, peerASN=42, peerAddress="1.2.3.4"),),
            bgp_advs=(bgp_adv("testAdv", ipAddressPools=["testPool"], peers=["peer1", "peer1"]),),
        ),
        True,
    ),
    ("duplicate pool definition", mlb.ClusterResources(pools=(pool("pool1"), pool("pool2"), pool("pool1"))), True),
    ("duplicate CIDRs", mlb.ClusterResources(pools=(pool("pool1", " 10.0.0.0/8"), pool("pool2", " 10.0.0.0/8"))), True),
    ("overlapping CIDRs", mlb.ClusterResources(pools=(pool("pool1", " 10.0.0.0/8"), pool("pool2", "10.0.0.0/16"))), True),
    (
        "peer with dynamic asn",
        mlb.ClusterResources(peers=(peer("peer1", myASN=42, dynamicASN="internal", peerAddress="1.2.3.4"),)),
        False,
    ),
    (
        "peer without asn or dynamic asn",
        mlb.ClusterResources(peers=(peer(myASN=42, peerASN=0, dynamicASN="", peerAddress="1.2.3.4"),)),
        True,
    ),
    (
        "peer with both asn and dynamic asn",
        mlb.ClusterResources(peers=(peer(myASN=42, peerASN=42, dynamicASN="internal", peerAddress="1.2.3.4"),)),
        True,
    ),
    (
        "unnumbered peer without address with interface ok",
        mlb.ClusterResources(peers=(peer("peer1", myASN=42, dynamicASN="internal", interface="net0"),)),
        False,
    ),
    (
        "unnumbered peer without address without interface nok",
        mlb.ClusterResources(peers=(peer("invalid", myASN=42, dynamicASN="internal"),)),
        True,
    ),
    (
        "unnumbered peer with address with interface nok",
        mlb.ClusterResources(peers=(peer("invalid", peerAddress="1.2.3.4", interface="net0", myASN=42, dynamicASN="internal"),)),
        True,
    ),
    (
        "BGP advertisement - serviceSelectors with non-default aggregationLength is mutually exclusive",
        mlb.ClusterResources(
            pools=(TEST_POOL,),
            bgp_advs=(
                bgp_adv(
                    "adv1", ipAddressPools=["testPool"], aggregationLength=24, serviceSelectors=[{"matchLabels": {"a": "b"}}]
                ),
            ),
        ),
        True,
    ),
    (
        "BGP advertisement - serviceSelectors with non-default aggregationLengthV6 is mutually exclusive",
        mlb.ClusterResources(
            pools=(TEST_POOL,),
            bgp_advs=(
                bgp_adv(
                    "adv1", ipAddressPools=["testPool"], aggregationLengthV6=64, serviceSelectors=[{"matchLabels": {"a": "b"}}]
                ),
            ),
        ),
        True,
    ),
    (
        "BGP advertisement - serviceSelectors with default aggregationLengthV4 is allowed",
        mlb.ClusterResources(
            pools=(TEST_POOL,),
            bgp_advs=(
                bgp_adv(
                    "adv1", ipAddressPools=["testPool"], aggregationLength=32, serviceSelectors=[{"matchLabels": {"a": "b"}}]
                ),
            ),
        ),
        False,
    ),
]


@pytest.mark.parametrize(("desc", "resources", "must_fail"), PARSE, ids=[c[0] for c in PARSE])
def test_parse_table(desc: str, resources: mlb.ClusterResources, must_fail: bool) -> None:
    if must_fail:
        with pytest.raises(mlb.RefusedError):
            mlb.validate(resources, "none")  # For(crs, DontValidate)
    else:
        mlb.validate(resources, "none")


V6 = "2001:db8::/64"
# TestValidate (DiscardFRROnly): (desc, resources, must fail)
NATIVE: list[tuple[str, mlb.ClusterResources, bool]] = [
    ("v6 address", mlb.ClusterResources(pools=(pool("", V6),), bgp_advs=(bgp_adv("foo"),)), True),
    (
        "v6 address but pool not selected",
        mlb.ClusterResources(pools=(pool("foo", V6),), bgp_advs=(bgp_adv("foo", ipAddressPools=["bar"]),)),
        False,
    ),
    (
        "v6 address and selected",
        mlb.ClusterResources(
            pools=(pool("foo", V6),), bgp_advs=(bgp_adv("bar", ipAddressPools=["foo1"]), bgp_adv("bar", ipAddressPools=["foo"]))
        ),
        True,
    ),
    (
        "v6 address and selected by labels",
        mlb.ClusterResources(
            pools=(pool("foo", V6, labels={"key": "value"}),),
            bgp_advs=(
                bgp_adv("bar", ipAddressPools=["foo1"]),
                bgp_adv("bar", ipAddressPoolSelectors=[{"matchLabels": {"key": "value"}}]),
            ),
        ),
        True,
    ),
    ("enable BGP GracefulRestart", mlb.ClusterResources(peers=(peer(enableGracefulRestart=True),)), True),
    ("disable BGP MP", mlb.ClusterResources(peers=(peer(disableMP=True),)), True),
    ("dynamic ASN", mlb.ClusterResources(peers=(peer(dynamicASN="internal"),)), True),
    ("interface", mlb.ClusterResources(peers=(peer(interface="eth0"),)), True),
    ("localASN", mlb.ClusterResources(peers=(peer(localASN=65410),)), True),
    ("keepalive time", mlb.ClusterResources(peers=(peer(keepaliveTime="1s"),)), True),
    ("connect time", mlb.ClusterResources(peers=(peer(connectTime="1s"),)), True),
    ("should pass", mlb.ClusterResources(peers=(peer(peerAddress="1.2.3.4"),)), False),
]


def _peers(*specs: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    return tuple(peer(**spec) for spec in specs)


def _on_nodes(*hostnames: str) -> dict[str, Any]:
    """validation_test.go peerOnNodes: a peer of 1.2.3.4 selecting nodes by hostname."""
    return {"peerAddress": "1.2.3.4", "nodeSelectors": [{"matchLabels": {"kubernetes.io/hostname": h}} for h in hostnames]}


def _nodes(*hostnames: str) -> tuple[dict[str, str], ...]:
    return tuple({"kubernetes.io/hostname": h} for h in hostnames)


A, B, C = "1.2.3.4", "1.2.3.5", "1.2.3.6"
# TestValidateFRR (DiscardNativeOnly): (desc, resources, must fail)
FRR: list[tuple[str, mlb.ClusterResources, bool]] = [
    ("peer with routerid", mlb.ClusterResources(peers=_peers({"peerAddress": A, "routerID": A})), False),
    (
        "routerid set, one different",
        mlb.ClusterResources(
            peers=_peers({"peerAddress": A, "routerID": A}, {"peerAddress": B, "routerID": A}, {"peerAddress": C, "routerID": B})
        ),
        True,
    ),
    (
        "routerid set, one not set",
        mlb.ClusterResources(
            peers=_peers({"peerAddress": A, "routerID": A}, {"peerAddress": B, "routerID": A}, {"peerAddress": C})
        ),
        True,
    ),
    (
        "myAsn set, all equals",
        mlb.ClusterResources(
            peers=_peers({"peerAddress": A, "myASN": 123}, {"peerAddress": B, "myASN": 123}, {"peerAddress": C, "myASN": 123})
        ),
        False,
    ),
    (
        "myAsn set, one different",
        mlb.ClusterResources(
            peers=_peers({"peerAddress": A, "myASN": 123}, {"peerAddress": B, "myASN": 123}, {"peerAddress": C, "myASN": 124})
        ),
        True,
    ),
    (
        "myAsn set, one different but with different vrf",
        mlb.ClusterResources(
            peers=_peers(
                {"peerAddress": A, "myASN": 123}, {"peerAddress": B, "myASN": 123}, {"peerAddress": C, "myASN": 124, "vrf": "red"}
            )
        ),
        False,
    ),
    (
        "myAsn set, two different but with different vrf",
        mlb.ClusterResources(
            peers=_peers(
                {"peerAddress": A, "myASN": 123, "vrf": "red"},
                {"peerAddress": B, "myASN": 123, "vrf": "red"},
                {"peerAddress": C, "myASN": 124},
            )
        ),
        False,
    ),
    ("duplicate bgp address", mlb.ClusterResources(peers=_peers({"peerAddress": A}, {"peerAddress": A})), True),
    (
        "duplicate bgp address, different vrfs",
        mlb.ClusterResources(
            peers=_peers({"peerAddress": A}, {"peerAddress": A, "vrf": "red"}, {"peerAddress": A, "vrf": "green"})
        ),
        False,
    ),
    (
        "duplicate bgp address, same vrf",
        mlb.ClusterResources(
            peers=_peers({"peerAddress": A}, {"peerAddress": A, "vrf": "red"}, {"peerAddress": A, "vrf": "red"})
        ),
        True,
    ),
    (
        "two peers with interface set different",
        mlb.ClusterResources(peers=_peers({"interface": "eth0", "myASN": 123}, {"interface": "eth1", "myASN": 123})),
        False,
    ),
    (
        "two peers with interface set same",
        mlb.ClusterResources(peers=_peers({"interface": "eth0", "myASN": 123}, {"interface": "eth0", "myASN": 123})),
        True,
    ),
    (
        "duplicate address, disjoint hostname selectors",
        mlb.ClusterResources(peers=_peers(_on_nodes("node1"), _on_nodes("node2")), nodes=_nodes("node1", "node2")),
        False,
    ),
    (
        "duplicate address, overlapping hostname selectors",
        mlb.ClusterResources(peers=_peers(_on_nodes("node1"), _on_nodes("node1")), nodes=_nodes("node1")),
        True,
    ),
    (
        "duplicate address, one peer without nodeSelector matches all nodes",
        mlb.ClusterResources(peers=_peers({"peerAddress": A}, _on_nodes("node1")), nodes=_nodes("node1")),
        True,
    ),
    (
        "duplicate address, disjoint selectors but no nodes known (conservative)",
        mlb.ClusterResources(peers=_peers(_on_nodes("node1"), _on_nodes("node2"))),
        True,
    ),
    (
        "three peers same address, all on distinct nodes",
        mlb.ClusterResources(
            peers=_peers(_on_nodes("node1"), _on_nodes("node2"), _on_nodes("node3")), nodes=_nodes("node1", "node2", "node3")
        ),
        False,
    ),
    (
        "three peers same address, third overlaps with first",
        mlb.ClusterResources(
            peers=_peers(_on_nodes("node1"), _on_nodes("node2"), _on_nodes("node1")), nodes=_nodes("node1", "node2")
        ),
        True,
    ),
    (
        "duplicate address, multiple nodeSelectors (OR), disjoint",
        mlb.ClusterResources(
            peers=_peers(_on_nodes("node1", "node2"), _on_nodes("node3", "node4")),
            nodes=_nodes("node1", "node2", "node3", "node4"),
        ),
        False,
    ),
    (
        "duplicate address, multiple nodeSelectors (OR), overlap via second selector",
        mlb.ClusterResources(
            peers=_peers(_on_nodes("node1", "node2"), _on_nodes("node3", "node2")), nodes=_nodes("node1", "node2", "node3")
        ),
        True,
    ),
]


@pytest.mark.parametrize(("desc", "resources", "must_fail"), NATIVE, ids=[c[0] for c in NATIVE])
def test_native_backend_table(desc: str, resources: mlb.ClusterResources, must_fail: bool) -> None:
    run = lambda: mlb.discard_frr_only(resources.peers, resources.pools, resources.bgp_advs)  # noqa: E731
    if must_fail:
        with pytest.raises(mlb.RefusedError):
            run()
    else:
        run()


@pytest.mark.parametrize(("desc", "resources", "must_fail"), FRR, ids=[c[0] for c in FRR])
def test_frr_backend_table(desc: str, resources: mlb.ClusterResources, must_fail: bool) -> None:
    run = lambda: mlb.discard_native_only(resources.peers, resources.nodes)  # noqa: E731
    if must_fail:
        with pytest.raises(mlb.RefusedError):
            run()
    else:
        run()


# --- the webhooks, object by object ----------------------------------------------------------------------


def test_pool_webhook_messages() -> None:
    services, login = pool("services", "10.10.0.100-10.10.0.149"), pool("login", "10.10.0.150-10.10.0.153")
    assert mlb.refusal(login, [services, login]) is None
    single = pool("login", "10.10.0.160")
    assert mlb.refusal(single, [services, single]) == (
        'admission webhook "ipaddresspoolvalidationwebhook.metallb.io" denied the request: parsing address pool login: '
        'invalid CIDR "10.10.0.160" in pool "login": invalid CIDR "10.10.0.160"'
    )
    inside = pool("login", "10.10.0.150-10.10.0.153", "10.10.0.152/31")
    assert mlb.refusal(inside, [services, inside]) == (
        'admission webhook "ipaddresspoolvalidationwebhook.metallb.io" denied the request: CIDR "10.10.0.152/31" in pool '
        '"login" overlaps with already defined CIDR "10.10.0.152/31"'
    )
    elsewhere = {**login, "metadata": {"name": "login", "namespace": "default"}}
    assert mlb.refusal(elsewhere, [services]) == (
        'admission webhook "ipaddresspoolvalidationwebhook.metallb.io" denied the request: resource must be created in metallb-system namespace'
    )


def test_advertisement_webhooks_see_the_pools() -> None:
    broken = pool("services", "10.10.0.1-10.10.0.0")
    adv = l2_adv("site-l2", ipAddressPools=["services"])
    message = mlb.refusal(adv, [broken, adv])
    assert message is not None and message.startswith(
        'admission webhook "l2advertisementvalidationwebhook.metallb.io" denied the request: parsing'
    )
    # A pool the advertisement names but that does not exist is skipped, not refused (v0.16.1).
    assert mlb.refusal(l2_adv("site-l2", ipAddressPools=["nowhere"]), []) is None
    narrow = bgp_adv("site-bgp", ipAddressPools=["services"], aggregationLength=24)
    assert mlb.refusal(narrow, [pool("services", "10.10.0.100-10.10.0.149"), narrow]) is not None


def test_peer_webhook_by_backend() -> None:
    r1 = peer("r1", myASN=64512, peerASN=65000, peerAddress="10.10.0.1")
    r2 = peer("r2", myASN=64513, peerASN=65000, peerAddress="10.10.0.2")
    assert mlb.refusal(r2, [r1, r2], bgp_type="native") is None
    assert mlb.refusal(r2, [r1, r2], bgp_type="frr-k8s") == (
        'admission webhook "bgppeervalidationwebhook.metallb.io" denied the request: peer 10.10.0.2 has myAsn different from '
        "10.10.0.1, in FRR mode peers selecting the same node must have the same myAsn within the same VRF"
    )
    short = peer("r1", myASN=64512, peerASN=65000, peerAddress="10.10.0.1", holdTime="2500ms")
    assert mlb.refusal(short, [short]) == (
        'admission webhook "bgppeervalidationwebhook.metallb.io" denied the request: parsing peer r1 invalid BGPPeer timers: '
        'invalid hold time "2.5s": must be 0 or >=3s'
    )
    # Under a second rounds to 0, which parseTimers accepts.
    assert mlb.refusal({**short, "spec": {**short["spec"], "holdTime": "500ms"}}, []) is None
    # validatePeerCreate: disableMP is only a warning, and nothing else is validated.
    assert mlb.refusal(peer("r3", disableMP=True), []) is None


@pytest.mark.parametrize(
    ("values", "bgp_type"),
    [
        ({}, "frr-k8s"),  # the chart's defaults: frrk8s.enabled true
        ({"frrk8s": {"enabled": False}}, "native"),
        ({"frrk8s": {"enabled": False}, "speaker": {"frr": {"enabled": True}}}, "frr"),
        ({"frrk8s": {"enabled": True}, "speaker": {"frr": {"enabled": True}}}, "frr-k8s"),  # the later env entry wins
        ({"frrk8s": {"enabled": False, "external": True}}, "frr-k8s"),
        ({"frrk8s": {"enabled": False}, "speaker": {"enabled": False, "frr": {"enabled": True}}}, "native"),
    ],
)
def test_bgp_type_from_chart_values(values: dict[str, Any], bgp_type: str) -> None:
    assert mlb.bgp_type_from_values(values) == bgp_type


def test_controller_bgp_type_from_a_rendered_deployment() -> None:
    def controller(*env: dict[str, str]) -> dict[str, Any]:
        labels = {"app.kubernetes.io/component": "controller", "app.kubernetes.io/name": "metallb"}
        containers = [{"name": "controller", "env": list(env)}]
        return {"kind": "Deployment", "metadata": {"labels": labels}, "spec": {"template": {"spec": {"containers": containers}}}}

    assert mlb.controller_bgp_type([]) is None
    assert mlb.controller_bgp_type([controller()]) == "native"
    both = controller({"name": "METALLB_BGP_TYPE", "value": "frr"}, {"name": "METALLB_BGP_TYPE", "value": "frr-k8s"})
    assert mlb.controller_bgp_type([both]) == "frr-k8s"


@pytest.mark.parametrize(
    ("entry", "networks"),
    [
        ("10.0.0.0/24", ["10.0.0.0/24"]),
        ("10.0.0.5/24", ["10.0.0.0/24"]),  # net.ParseCIDR masks the host bits
        ("10.0.0.10-10.0.0.20", ["10.0.0.10/31", "10.0.0.12/30", "10.0.0.16/30", "10.0.0.20/32"]),
        ("10.0.0.10 - 10.0.0.10", ["10.0.0.10/32"]),
        ("2001:db8::/64", ["2001:db8::/64"]),
        ("::ffff:10.0.0.10-10.0.0.11", ["10.0.0.10/31"]),  # IP.To4 in ipaddr.Summarize
    ],
)
def test_parse_cidr(entry: str, networks: list[str]) -> None:
    assert [str(n) for n in mlb.parse_cidr(entry)] == networks


@pytest.mark.parametrize(
    "entry", ["10.0.0.5", "10.0.0.0/255.255.255.0", " 10.0.0.0/8", "10.0.0.0/33", "fe80::1%eth0/64", "1.2.3.10-1.2.3.1"]
)
def test_parse_cidr_refuses(entry: str) -> None:
    with pytest.raises(mlb.RefusedError):
        mlb.parse_cidr(entry)


# --- against Go ------------------------------------------------------------------------------------------

GO_PROGRAM = """package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Go's standard library as the webhooks call it: time.ParseDuration (metav1.Duration), Duration.String
// (the values in their messages), net.ParseCIDR (MetalLB's ParseCIDR), net.ParseIP (MetalLB's peer and
// cert-manager's ipAddresses checks).
func main() {
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		kind, value, _ := strings.Cut(scanner.Text(), "\\t")
		switch kind {
		case "duration":
			d, err := time.ParseDuration(value)
			if err != nil {
				fmt.Println("error\\t" + err.Error())
			} else {
				fmt.Println(int64(d))
			}
		case "string":
			n, _ := strconv.ParseInt(value, 10, 64)
			fmt.Println(time.Duration(n).String())
		case "cidr":
			_, network, err := net.ParseCIDR(value)
			if err != nil {
				fmt.Println("error")
			} else {
				fmt.Println(network.String())
			}
		case "ip":
			fmt.Println(net.ParseIP(value) != nil)
		}
	}
}
"""
DURATIONS = [
    *["0", "5s", "-5s", "+5s", "-0", "5.6s", "5.s", ".5s", "1.004s", "10ns", "11us", "12\u00b5s", "13ms", "15m", "16h"],
    *["3h30m", "10.5s4m", "1h2m3s4ms5us6ns", "0.3333333333333333333h", "9223372036854775807ns", "-9223372036854775808ns"],
    *["9223372036854775.807us", "0.830103483285477580700h", "2160h", "360h", "87600h", "90s", "2500ms", "43800h0m0s"],
    *["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "15 days", "1 s", " 1s", "1s ", "1.5", "9223372036854775808ns"],
    *["9223372036854775810ns", "-9223372036854775809ns", "9223372036s854ms775us808ns"],
]
NANOSECONDS = [0, 1, 999, 1000, 1100, 2200000, 999999999, 10**9, 3300 * 10**6, 245 * 10**9, 5001 * 10**6 + 240 * 10**9]
NANOSECONDS += [60 * 10**9, 3600 * 10**9, 7776000 * 10**9, 8 * 60 * 10**9 + 1, (1 << 63) - 1, -(1 << 63), -1500, -90 * 10**9]
CIDRS = ["10.0.0.0/24", "10.0.0.5/24", "10.0.0.5", " 10.0.0.0/8", "10.0.0.0/8 ", "10.0.0.0/33", "10.0.0.0/08", "10.0.0.0/-1"]
CIDRS += ["10.0.0.0/255.255.255.0", "010.0.0.0/8", "2001:db8::/64", "2001:db8::1/129", "fe80::1%eth0/64", "::ffff:10.0.0.0/104"]
CIDRS += ["10.0.0.0/+8", "1.2.3.4/32", "100.200.300.400/24", "1.2.3.0/33", "10.0.0.0/", "/8", "::ffff:10.0.0.0/90"]
CIDRS += ["::ffff:10.0.0.0/64", "::ffff:10.0.0.0/128", "::ffff:10.1.2.3/120"]
IPS = ["10.0.0.1", "010.0.0.1", "10.0.0.256", "::1", "fe80::1%eth0", "1.2.3.400", "blah", " 10.0.0.1", "::ffff:1.2.3.4", ""]


def test_go_standard_library_agrees(tmp_path: Any) -> None:
    """gotime.py, parse_cidr and the IP checks against Go's own functions (Debian's golang-go)."""
    import subprocess

    from policies.admission import certmanager as cm
    from policies.rules.gotime import GoError, format_duration, parse_duration
    from tests.helpers import go_program

    program = go_program(tmp_path, GO_PROGRAM, "go-stdlib")
    lines = [f"duration\t{d}" for d in DURATIONS] + [f"string\t{n}" for n in NANOSECONDS]
    lines += [f"cidr\t{c}" for c in CIDRS] + [f"ip\t{i}" for i in IPS]
    result = subprocess.run([str(program)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60, check=True)
    answers = iter(result.stdout.splitlines())
    for value in DURATIONS:
        try:
            ours = str(parse_duration(value))
        except GoError as error:
            ours = f"error\t{error}"
        assert ours == next(answers), f"time.ParseDuration({value!r})"
    for nanoseconds in NANOSECONDS:
        assert format_duration(nanoseconds) == next(answers), f"time.Duration({nanoseconds}).String()"
    for cidr in CIDRS:
        go = next(answers)
        if "-" in cidr.strip("/-"):
            continue  # a `-` makes MetalLB's ParseCIDR read a range, not call net.ParseCIDR
        ours = str(mlb.go_cidr(cidr)) if mlb.go_cidr(cidr) is not None else "error"
        assert ours == go, f"net.ParseCIDR({cidr!r})"
    for ip in IPS:
        go = next(answers) == "true"
        assert (mlb.go_ip(ip) is not None) == go == cm.go_ip(ip), f"net.ParseIP({ip!r})"
