"""Slurm traffic between pods and bare-metal hosts is allowed by prod's NetworkPolicies, and only it.

The flows a job spanning the `cpu` nodeset's pods and the `cpu-bm` bare-metal hosts needs are evaluated
against every NetworkPolicy the prod stack declares, with a minimal evaluator of the Kubernetes
NetworkPolicy semantics (networking.k8s.io/v1, as documented for the API: a pod is isolated for a
direction when a policy selecting it lists that policyType; traffic is then allowed when some rule of
such a policy matches the peer and the port; `endPort` makes a range). It covers what hpcforge's
policies use: podSelector `{}`/matchLabels, ipBlock (with except), namespaceSelector matchLabels on
`kubernetes.io/metadata.name`, and ports with protocol and endPort. (Issue 15's NetworkPolicy evaluator
was not on main when this was written.)
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from components.config import load_config
from components.layers.slurm import slurm_bare_metal_allows
from offline.engine import RecordedStack

from .helpers import config_values, raw_config

pytestmark = pytest.mark.program


@dataclass(frozen=True)
class Endpoint:
    """A pod (namespace + labels + address) or a host outside the cluster (address only)."""

    ip: str
    namespace: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)


def _selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    if not selector:
        return True
    assert set(selector) <= {"matchLabels"}, f"unsupported selector {selector}"
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def _peer_matches(peer: Mapping[str, Any], other: Endpoint, policy_namespace: str) -> bool:
    if "ipBlock" in peer:
        block = peer["ipBlock"]
        address = ipaddress.ip_address(other.ip)
        inside = address in ipaddress.ip_network(block["cidr"])
        return inside and not any(address in ipaddress.ip_network(e) for e in block.get("except", []))
    if other.namespace is None:
        return False  # namespace/pod selectors only match pods
    ns_selector = peer.get("namespaceSelector")
    namespace_ok = (
        _selects(ns_selector, {"kubernetes.io/metadata.name": other.namespace})
        if ns_selector is not None
        else other.namespace == policy_namespace
    )
    return namespace_ok and _selects(peer.get("podSelector"), other.labels)


def _port_matches(ports: list[Mapping[str, Any]] | None, port: int, protocol: str) -> bool:
    if not ports:
        return True
    for spec in ports:
        if spec.get("protocol", "TCP") != protocol:
            continue
        first = spec.get("port")
        if first is None or first <= port <= spec.get("endPort", first):
            return True
    return False


def _allowed_one_side(
    policies: list[Mapping[str, Any]], pod: Endpoint, other: Endpoint, port: int, protocol: str, direction: str
) -> bool:
    """Whether `pod`'s policies allow this direction (ingress from / egress to `other`)."""
    kind = "Ingress" if direction == "ingress" else "Egress"
    peer_key = "from" if direction == "ingress" else "to"
    selecting = [
        p
        for p in policies
        if p["metadata"]["namespace"] == pod.namespace
        and _selects(p["spec"].get("podSelector"), pod.labels)
        and kind in p["spec"].get("policyTypes", ["Ingress"])
    ]
    if not selecting:
        return True  # not isolated
    for policy in selecting:
        for rule in policy["spec"].get(direction, []) or []:
            peers = rule.get(peer_key)
            if (not peers or any(_peer_matches(p, other, pod.namespace or "") for p in peers)) and _port_matches(
                rule.get("ports"), port, protocol
            ):
                return True
    return False


def allowed(policies: list[Mapping[str, Any]], src: Endpoint, dst: Endpoint, port: int, protocol: str = "TCP") -> bool:
    """A connection src -> dst:port is allowed when src's egress (if src is a pod) and dst's ingress (if a pod) allow it."""
    egress = src.namespace is None or _allowed_one_side(policies, src, dst, port, protocol, "egress")
    ingress = dst.namespace is None or _allowed_one_side(policies, dst, src, port, protocol, "ingress")
    return egress and ingress


# --- the flows --------------------------------------------------------------------------------------------------------

POD_SLURMD = Endpoint("10.244.3.17", "slurm", {"app.kubernetes.io/name": "slurmd"})
LOGIN_POD = Endpoint("10.244.1.5", "slurm", {"app.kubernetes.io/name": "login"})
BARE_METAL = Endpoint("10.20.0.51")  # cn001 in prod's provisioning subnet 10.20.0.0/22
OUTSIDER = Endpoint("192.168.77.9")
OTHER_NAMESPACE_POD = Endpoint("10.244.9.9", "team-llm", {})


@pytest.fixture(scope="module")
def policies(prod_stack: RecordedStack) -> list[Mapping[str, Any]]:
    found = [r.inputs for r in prod_stack.kubernetes_objects() if r.inputs["kind"] == "NetworkPolicy"]
    assert found
    return found


def test_a_job_spanning_pods_and_bare_metal_has_every_slurm_flow(policies: list[Mapping[str, Any]]) -> None:
    srun = load_config(raw_config(config_values("prod"))).slurm.controller.srun_port_range
    flows = {
        "bare-metal slurmd -> pod slurmd (launch fan-out)": (BARE_METAL, POD_SLURMD, 6818),
        "pod slurmd -> bare-metal slurmd (launch fan-out)": (POD_SLURMD, BARE_METAL, 6818),
        "bare-metal slurmstepd -> srun on a login pod (first port)": (BARE_METAL, LOGIN_POD, srun[0]),
        "bare-metal slurmstepd -> srun on a login pod (last port)": (BARE_METAL, LOGIN_POD, srun[1]),
        "pod slurmstepd -> srun on a bare-metal host": (POD_SLURMD, BARE_METAL, srun[0] + 7),
        "bare-metal slurmd -> slurmctld": (BARE_METAL, Endpoint("10.244.0.2", "slurm", {}), 6817),
        "login pod srun -> pod slurmd": (LOGIN_POD, POD_SLURMD, 6818),
        "login pod srun -> bare-metal slurmd (step launch)": (LOGIN_POD, BARE_METAL, 6818),
        "slurmctld -> bare-metal slurmd": (Endpoint("10.244.0.2", "slurm", {}), BARE_METAL, 6818),
    }
    blocked = [name for name, (src, dst, port) in flows.items() if not allowed(policies, src, dst, port)]
    assert blocked == []


def test_nothing_else_is_opened(policies: list[Mapping[str, Any]]) -> None:
    srun = load_config(raw_config(config_values("prod"))).slurm.controller.srun_port_range
    flows = {
        "outsider -> pod slurmd": (OUTSIDER, POD_SLURMD, 6818),
        "outsider -> srun ports": (OUTSIDER, LOGIN_POD, srun[0]),
        "bare-metal -> a pod port outside Slurm's": (BARE_METAL, POD_SLURMD, 9999),
        "bare-metal -> just above the srun range": (BARE_METAL, LOGIN_POD, srun[1] + 1),
        "pod -> bare-metal ssh": (POD_SLURMD, BARE_METAL, 22),
        "pod -> bare-metal slurmd over UDP": (POD_SLURMD, BARE_METAL, 6818),
        "another namespace's pod -> pod slurmd": (OTHER_NAMESPACE_POD, POD_SLURMD, 6818),
    }
    opened = [
        name for name, (src, dst, port) in flows.items() if allowed(policies, src, dst, port, "UDP" if "UDP" in name else "TCP")
    ]
    assert opened == []


def test_without_bare_metal_hosts_no_bare_metal_rule() -> None:
    assert slurm_bare_metal_allows([], (60001, 63000)) == []
    rules = slurm_bare_metal_allows(["10.20.0.0/22"], (60001, 63000))
    srun = next(r for r in rules if r.name == "allow-ingress-bare-metal-srun").to_spec()
    assert srun["ingress"][0]["ports"] == [{"port": 60001, "protocol": "TCP", "endPort": 63000}]


def test_the_evaluator_isolates_and_matches_like_kubernetes() -> None:
    deny = {"metadata": {"namespace": "a"}, "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}}
    pod = Endpoint("10.0.0.1", "a", {})
    assert allowed([], OUTSIDER, pod, 80)  # no policy: not isolated
    assert not allowed([deny], OUTSIDER, pod, 80)
    block = {
        "metadata": {"namespace": "a"},
        "spec": {
            "podSelector": {},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.0.0/16", "except": ["192.168.77.0/24"]}}]}],
        },
    }
    assert not allowed([deny, block], OUTSIDER, pod, 80)  # in the except range
    assert allowed([deny, block], Endpoint("192.168.1.1"), pod, 80)
