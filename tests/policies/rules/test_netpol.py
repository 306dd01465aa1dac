"""The NetworkPolicy evaluator (policies/rules/netpol.py): each rule of the NetworkPolicy API, and
the API server's calls to webhooks and APIServices (judged in policies/admission/reachability/)."""

from __future__ import annotations

from typing import Any

from policies.admission.reachability import judge_api_server_calls
from policies.rules.netpol import (
    API_SERVER,
    Cluster,
    Host,
    Pod,
    api_server_calls,
    can_reach,
    connection_allowed,
    selector_matches,
    workload_pod,
)


def ns(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def netpol(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


DENY_ALL = {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
WEB = {"app": "web"}


def test_pod_not_selected_by_any_policy_accepts_everything() -> None:
    assert can_reach([ns("a")], API_SERVER, WEB, "a", 443)


def test_default_deny_refuses_ingress_and_names_the_policy() -> None:
    verdict = can_reach([ns("a"), netpol("a", "default-deny", DENY_ALL)], API_SERVER, WEB, "a", 443)
    assert not verdict
    assert "default-deny" in verdict.reason


def test_policy_selecting_other_pods_does_not_isolate() -> None:
    only_db = netpol("a", "db", {"podSelector": {"matchLabels": {"app": "db"}}, "policyTypes": ["Ingress"]})
    assert can_reach([only_db], API_SERVER, WEB, "a", 80)


def test_rule_without_peers_or_ports_allows_everything() -> None:
    objects = [netpol("a", "deny", DENY_ALL), netpol("a", "open", {"podSelector": {}, "ingress": [{}]})]
    assert can_reach(objects, API_SERVER, WEB, "a", 12345)


def test_port_restriction_bites_on_other_port_and_protocol() -> None:
    objects = [
        netpol("a", "deny", DENY_ALL),
        netpol("a", "web", {"podSelector": {}, "ingress": [{"ports": [{"port": 9443}]}]}),
    ]
    assert can_reach(objects, API_SERVER, WEB, "a", 9443)
    assert not can_reach(objects, API_SERVER, WEB, "a", 8082)
    assert not can_reach(objects, API_SERVER, WEB, "a", 9443, "UDP")


def test_end_port_range() -> None:
    objects = [netpol("a", "r", {"podSelector": {}, "ingress": [{"ports": [{"port": 8000, "endPort": 8100}]}]})]
    assert can_reach(objects, API_SERVER, WEB, "a", 8082)
    assert not can_reach(objects, API_SERVER, WEB, "a", 8101)


def test_named_port_resolves_against_destination_container_ports() -> None:
    objects = [netpol("a", "r", {"podSelector": {}, "ingress": [{"ports": [{"port": "https"}]}]})]
    ports = [("https", 8443, "TCP")]
    assert can_reach(objects, API_SERVER, WEB, "a", 8443, dst_ports=ports)
    assert not can_reach(objects, API_SERVER, WEB, "a", 9443, dst_ports=ports)
    assert not can_reach(objects, API_SERVER, WEB, "a", 8443)  # the pod has no such named port


def test_ip_block_with_except() -> None:
    rule: dict[str, Any] = {"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]}
    objects = [netpol("a", "r", {"podSelector": {}, "ingress": [rule]})]
    assert can_reach(objects, Host("node", "10.2.3.4"), WEB, "a", 443)
    assert not can_reach(objects, Host("node", "10.1.3.4"), WEB, "a", 443)
    assert not can_reach(objects, Host("node", "192.168.1.1"), WEB, "a", 443)


def test_host_with_unknown_address_needs_a_block_covering_every_address() -> None:
    partial = [netpol("a", "r", {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}]})]
    everything = [netpol("a", "r", {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}]})]
    assert not can_reach(partial, API_SERVER, WEB, "a", 443)
    assert can_reach(everything, API_SERVER, WEB, "a", 443)


def test_selectors_do_not_select_hosts() -> None:
    rule: dict[str, Any] = {"from": [{"namespaceSelector": {}}]}
    objects = [netpol("a", "r", {"podSelector": {}, "ingress": [rule]})]
    assert not can_reach(objects, API_SERVER, WEB, "a", 443)
    assert can_reach(objects, Pod("b", {"app": "x"}), WEB, "a", 443)


def test_namespace_and_pod_selector_in_one_peer_is_and_in_two_peers_is_or() -> None:
    both = {"namespaceSelector": {"matchLabels": {"team": "x"}}, "podSelector": {"matchLabels": {"role": "client"}}}
    either = [{"namespaceSelector": {"matchLabels": {"team": "x"}}}, {"podSelector": {"matchLabels": {"role": "client"}}}]
    base = [ns("a"), ns("b", team="x")]
    and_objects = [*base, netpol("a", "r", {"podSelector": {}, "ingress": [{"from": [both]}]})]
    or_objects = [*base, netpol("a", "r", {"podSelector": {}, "ingress": [{"from": either}]})]
    other_pod_in_b = Pod("b", {"role": "server"})
    client_in_a = Pod("a", {"role": "client"})
    assert can_reach(and_objects, Pod("b", {"role": "client"}), WEB, "a", 80)
    assert not can_reach(and_objects, other_pod_in_b, WEB, "a", 80)
    assert not can_reach(and_objects, client_in_a, WEB, "a", 80)
    assert can_reach(or_objects, other_pod_in_b, WEB, "a", 80)
    assert can_reach(or_objects, client_in_a, WEB, "a", 80)


def test_pod_selector_alone_means_the_policys_own_namespace() -> None:
    objects = [netpol("a", "r", {"podSelector": {}, "ingress": [{"from": [{"podSelector": {}}]}]})]
    assert can_reach(objects, Pod("a", {}), WEB, "a", 80)
    assert not can_reach(objects, Pod("b", {}), WEB, "a", 80)


def test_namespace_name_label_is_implicit() -> None:
    rule = {"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "b"}}}]}
    objects = [netpol("a", "r", {"podSelector": {}, "ingress": [rule]})]  # no Namespace object for b at all
    assert can_reach(objects, Pod("b", {}), WEB, "a", 80)


def test_source_egress_is_checked_for_pods() -> None:
    objects = [
        netpol("b", "deny", DENY_ALL),
        netpol(
            "b", "dns", {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"port": 53, "protocol": "UDP"}]}]}
        ),
    ]
    verdict = can_reach(objects, Pod("b", {}), WEB, "a", 80)
    assert not verdict and "egress" in verdict.reason
    assert can_reach(objects, Pod("b", {}), WEB, "a", 53, "UDP")


def test_policy_types_default_includes_egress_only_when_egress_is_set() -> None:
    ingress_only = netpol("b", "i", {"podSelector": {}, "ingress": []})
    with_egress = netpol("b", "e", {"podSelector": {}, "egress": []})
    assert can_reach([ingress_only], Pod("b", {}), WEB, "a", 80)
    assert not can_reach([with_egress], Pod("b", {}), WEB, "a", 80)


def test_match_expressions() -> None:
    labels = {"tier": "web", "env": "prod"}
    assert selector_matches({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}, labels)
    assert not selector_matches({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}, labels)
    assert selector_matches({"matchExpressions": [{"key": "env", "operator": "Exists"}]}, labels)
    assert not selector_matches({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}, labels)
    assert selector_matches({}, labels)


# --- API server calls ------------------------------------------------------------------------------


def _deployment(namespace: str, labels: dict[str, str], ports: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "controller", "namespace": namespace},
        "spec": {"template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "manager", "ports": ports}]}}},
    }


def _service(namespace: str, name: str, port: int, target: Any, selector: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": selector, "ports": [{"port": port, "targetPort": target}]},
    }


def _apiservice(namespace: str, service: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta1.example.dev"},
        "spec": {"service": {"namespace": namespace, "name": service}},
    }


def _webhook(namespace: str, service: str, port: int | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"namespace": namespace, "name": service}
    if port:
        ref["port"] = port
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "vwc"},
        "webhooks": [{"name": "v.example.dev", "clientConfig": {"service": ref}}],
    }


def _allow(port: int) -> dict[str, Any]:
    return netpol(
        "s",
        f"allow-{port}",
        {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": port}]}]},
    )


def test_api_server_calls_found_with_default_ports() -> None:
    calls = api_server_calls([_apiservice("s", "api"), _webhook("s", "hook"), _webhook("s", "hook2", 8443)])
    assert [(c.service, c.port) for c in calls] == [("api", 443), ("hook", 443), ("hook2", 8443)]
    assert calls[1].consequence == "failurePolicy Fail: every request the webhook matches is refused"


def test_apiservice_unreachable_when_target_port_not_admitted() -> None:
    labels = {"control-plane": "controller-manager"}
    objects = [
        netpol("s", "default-deny", DENY_ALL),
        _allow(9443),
        _deployment("s", labels, [{"name": "visibility", "containerPort": 8082}]),
        _service("s", "api", 443, 8082, labels),
        _apiservice("s", "api"),
    ]
    [verdict] = judge_api_server_calls(objects)
    assert verdict.admitted is False
    assert "8082" in verdict.reasons[0]
    [fixed] = judge_api_server_calls([*objects, _allow(8082)])
    assert fixed.admitted is True


def test_named_target_port_resolves_through_the_pod() -> None:
    labels = {"app": "hook"}
    objects = [
        netpol("s", "default-deny", DENY_ALL),
        _allow(9443),
        _deployment("s", labels, [{"name": "webhook", "containerPort": 9443}]),
        _service("s", "hook", 443, "webhook", labels),
        _webhook("s", "hook"),
    ]
    [verdict] = judge_api_server_calls(objects)
    assert verdict.admitted is True


def test_call_without_backend_objects_is_not_judged() -> None:
    [verdict] = judge_api_server_calls([_webhook("s", "hook")])
    assert verdict.admitted is None


def test_cluster_is_reusable() -> None:
    cluster = Cluster.of([netpol("a", "deny", DENY_ALL)])
    assert not can_reach(cluster, API_SERVER, WEB, "a", 443)


def test_workload_pod_between_two_workloads() -> None:
    labels = {"app": "db"}
    objects = [
        netpol("s", "default-deny", DENY_ALL),
        _deployment("s", labels, [{"name": "mysql", "containerPort": 3306}]),
        netpol(
            "s", "allow-mysql", {"podSelector": {}, "ingress": [{"from": [{"podSelector": {}}], "ports": [{"port": "mysql"}]}]}
        ),
        netpol("s", "allow-egress", {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"podSelector": {}}]}]}),
    ]
    db = workload_pod(objects, "Deployment", "s", "controller")
    cluster = Cluster.of(objects)
    assert connection_allowed(cluster, Pod("s", {"app": "client"}), db, 3306)
    assert not connection_allowed(cluster, Pod("s", {"app": "client"}), db, 3307)
    assert not connection_allowed(cluster, Pod("other", {}), db, 3306)


def test_host_network_backend_is_not_isolated() -> None:
    labels = {"app": "hook"}
    deployment = _deployment("s", labels, [{"name": "webhook", "containerPort": 9443}])
    deployment["spec"]["template"]["spec"]["hostNetwork"] = True
    objects = [netpol("s", "default-deny", DENY_ALL), deployment, _service("s", "hook", 443, 9443, labels), _webhook("s", "hook")]
    [verdict] = judge_api_server_calls(objects)
    assert verdict.admitted is True and "host network" in verdict.reasons[0]
