"""NCA as an independent oracle for NetworkPolicy reachability (tests/policies/rules/test_netpol_nca.py).

NCA is IBM np-guard's Network Config Analyzer (network-config-analyzer 2.1.0 on PyPI, Apache-2.0,
https://github.com/np-guard/network-config-analyzer): given Namespaces, Pods and NetworkPolicies it computes
which connections the policies allow, with its own implementation of the NetworkPolicy API. It runs as a
program from its own virtualenv (.venv/nca, requirements-nca.txt; `make install`), the way a user runs it:
`nca --connectivity POLICIES --ns_list NAMESPACES --pod_list PODS --output_format txt_no_fw_rules`.

That output has one line per pair of endpoints that may talk, `SRC => DST : CONNECTIONS`, where an endpoint is
`namespace/name[Pod]` or an address range `A-B` (ipBlocks are cut into ranges that every rule treats alike), and
CONNECTIONS is NCA's ConnectivityProperties text (nca/CoreDS/ConnectivityProperties.py, 2.1.0):
`All connections`, `All but <cubes>`, or cubes `{protocols:TCP, UDP,dst_ports:53,6817-6818}` joined by `,`; a
cube without `dst_ports` covers every port, one without `protocols` every protocol. Pairs that may not talk have no
line. NCA never lets an ipBlock select a pod (pods are not in its address space): its verdicts are compared with
the evaluator's reading `Cluster.of(..., ip_blocks_select_pods=False)`.
"""

from __future__ import annotations

import ipaddress
import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from policies.rules.access import get, items, mapping
from policies.rules.netpol import NAME_LABEL, Cluster, Endpoint, Host, Pod, connection_allowed
from policies.rules.podtemplates import pod_templates

from .helpers import REPO, skip_or_fail

NCA_ENV = "HPCFORGE_NCA"
PROTOCOLS = ("TCP", "UDP", "SCTP")


def require_nca() -> Path:
    """$HPCFORGE_NCA, or .venv/nca/bin/nca (made by `make install`); skip (fail in CI) without it."""
    path = Path(os.environ.get(NCA_ENV, REPO / ".venv" / "nca" / "bin" / "nca"))
    if not path.is_file():
        skip_or_fail(f"NCA is not installed at {path} (`make install` puts it in .venv/nca; requirements-nca.txt)")
    return path


@dataclass
class World:
    """What NCA and the evaluator are both given: Namespaces, NetworkPolicies and named pods."""

    namespaces: list[dict[str, Any]] = field(default_factory=list)
    policies: list[dict[str, Any]] = field(default_factory=list)
    pods: dict[str, Pod] = field(default_factory=dict)
    """By NCA's name for it, `namespace/name`."""

    def add_pod(self, pod: Pod) -> None:
        self.pods[f"{pod.namespace}/p{len(self.pods)}"] = pod

    @classmethod
    def of(cls, objects: Iterable[Mapping[str, Any]], extra_pods: Sequence[Pod] = ()) -> World:
        """The Namespaces and NetworkPolicies among `objects`, one pod per pod template an object makes
        (policies/rules/podtemplates.py: labels and container ports), and `extra_pods`."""
        world = cls()
        for obj in objects:
            kind = obj.get("kind")
            if kind == "Namespace":
                world.namespaces.append(dict(obj))
            elif kind == "NetworkPolicy":
                world.policies.append(dict(obj))
            for template in pod_templates(obj):
                world.add_pod(
                    Pod(template.namespace, dict(template.labels), None, tuple(template.container_ports()), template.where)
                )
        for pod in extra_pods:
            world.add_pod(pod)
        return world

    def namespace_objects(self) -> list[dict[str, Any]]:
        """The Namespaces, plus one for each namespace that only a pod or a policy names."""
        named = {str(get(ns, "metadata", "name")) for ns in self.namespaces}
        used = {pod.namespace for pod in self.pods.values()} | {str(get(p, "metadata", "namespace")) for p in self.policies}
        extra = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {NAME_LABEL: name}}}
            for name in sorted(used - named)
        ]
        return [*self.namespaces, *extra]

    def pod_objects(self) -> list[dict[str, Any]]:
        found = []
        for key, pod in self.pods.items():
            namespace, name = key.split("/")
            ports = [{"containerPort": number, "protocol": proto, **({"name": n} if n else {})} for n, number, proto in pod.ports]
            found.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name, "namespace": namespace, "labels": dict(pod.labels)},
                    "spec": {"containers": [{"name": "main", "image": "example", "ports": ports}]},
                }
            )
        return found

    def cluster(self) -> Cluster:
        return Cluster.of([*self.namespace_objects(), *self.policies], ip_blocks_select_pods=False)


# --- NCA's answer ---------------------------------------------------------------------------------

Range = tuple[int, int]
Cube = tuple[frozenset[str] | None, tuple[Range, ...] | None]
"""(protocols or None for all, destination port ranges or None for all)."""

_LINE = re.compile(r"^(?P<src>\S+) => (?P<dst>\S+) : (?P<conns>.+)$")
_CUBE = re.compile(r"\{([^}]*)\}")
_PROTOCOLS = re.compile(r"protocols:([A-Za-z0-9]+(?:, [A-Za-z0-9]+)*)")
_PORTS = re.compile(r"dst_ports:([0-9,-]+)")


def _cubes(text: str) -> tuple[Cube, ...]:
    cubes: list[Cube] = []
    for body in _CUBE.findall(text):
        unknown = re.sub(r"protocols:[A-Za-z0-9, ]+?(?=,dst_ports:|$)|dst_ports:[0-9,-]+|,", "", body)
        if unknown:
            raise ValueError(f"NCA printed a connection dimension this parser does not know: {{{body}}}")
        protocols = _PROTOCOLS.search(body)
        ports = _PORTS.search(body)
        ranges: tuple[Range, ...] | None = None
        if ports:
            ranges = tuple(
                (int(a), int(b or a)) for a, _, b in (part.partition("-") for part in ports.group(1).split(",") if part)
            )
        cubes.append((frozenset(p.strip() for p in protocols.group(1).split(",")) if protocols else None, ranges))
    if not cubes:
        raise ValueError(f"NCA printed connections this parser cannot read: {text!r}")
    return tuple(cubes)


def _in_cubes(cubes: Sequence[Cube], port: int, protocol: str) -> bool:
    return any(
        (protocols is None or protocol in protocols) and (ranges is None or any(a <= port <= b for a, b in ranges))
        for protocols, ranges in cubes
    )


@dataclass(frozen=True)
class Connections:
    """One line's CONNECTIONS: everything, everything but some cubes, or some cubes."""

    everything: bool
    but: bool
    cubes: tuple[Cube, ...]

    @classmethod
    def parse(cls, text: str) -> Connections:
        if text == "All connections":
            return cls(True, False, ())
        if text.startswith("All but "):
            return cls(False, True, _cubes(text[len("All but ") :]))
        return cls(False, False, _cubes(text))

    def allows(self, port: int, protocol: str) -> bool:
        if self.everything:
            return True
        return _in_cubes(self.cubes, port, protocol) != self.but


def _endpoint(text: str) -> str | Range:
    if text.endswith("[Pod]"):
        return text[: -len("[Pod]")]
    if "/" in text and text[0].isdigit():
        network = ipaddress.ip_network(text, strict=False)
        return int(network.network_address), int(network.broadcast_address)
    first, _, last = text.partition("-")
    return int(ipaddress.ip_address(first)), int(ipaddress.ip_address(last or first))


@dataclass(frozen=True)
class Connectivity:
    """NCA's connectivity map, asked one connection at a time."""

    lines: Mapping[tuple[str, str], tuple[tuple[Range | None, Range | None, Connections], ...]]
    """By (source pod or "ip", destination pod or "ip"): (source range, destination range, connections)."""

    @classmethod
    def parse(cls, output: str) -> Connectivity:
        found: dict[tuple[str, str], list[tuple[Range | None, Range | None, Connections]]] = {}
        for line in output.splitlines():
            match = _LINE.match(line.strip())
            if match:
                src, dst = _endpoint(match["src"]), _endpoint(match["dst"])
                key = (src if isinstance(src, str) else "ip", dst if isinstance(dst, str) else "ip")
                entry = (None if isinstance(src, str) else src, None if isinstance(dst, str) else dst)
                found.setdefault(key, []).append((*entry, Connections.parse(match["conns"])))
        return cls({key: tuple(value) for key, value in found.items()})

    def allows(self, src: str | int, dst: str | int, port: int, protocol: str) -> bool:
        """`src`/`dst`: a pod's `namespace/name`, or an IPv4 address as an int."""
        key = (src if isinstance(src, str) else "ip", dst if isinstance(dst, str) else "ip")
        return any(
            _within(src, a) and _within(dst, b) and connections.allows(port, protocol)
            for a, b, connections in self.lines.get(key, ())
        )


def _within(address: str | int, span: Range | None) -> bool:
    return span is None or (isinstance(address, int) and span[0] <= address <= span[1])


def run_nca(nca: Path, world: World, directory: Path) -> Connectivity:
    """NCA's connectivity map of `world` (its input files are written to `directory`)."""
    files = {
        "namespaces.yaml": world.namespace_objects(),
        "policies.yaml": world.policies,
        "pods.yaml": world.pod_objects(),
    }
    for name, documents in files.items():
        (directory / name).write_text(yaml.safe_dump_all(documents, sort_keys=True))
    command = [str(nca), "--connectivity", str(directory / "policies.yaml"), "--ns_list", str(directory / "namespaces.yaml")]
    command += ["--pod_list", str(directory / "pods.yaml"), "--output_format", "txt_no_fw_rules"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or "=>" not in done.stdout:
        raise AssertionError(f"nca exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return Connectivity.parse(done.stdout)


# --- what to compare --------------------------------------------------------------------------------


def _policy_numbers(policies: Iterable[Mapping[str, Any]]) -> tuple[set[int], set[str], set[str]]:
    """Port numbers (and their neighbours), CIDRs and protocols the policies name."""
    ports: set[int] = set()
    cidrs: set[str] = set()
    protocols: set[str] = set()
    for policy in policies:
        for direction in ("ingress", "egress"):
            for rule in items(get(policy, "spec", direction)):
                for entry in items(mapping(rule).get("ports")):
                    body = mapping(entry)
                    protocols.add(str(body.get("protocol", "TCP")))
                    for key in ("port", "endPort"):
                        if isinstance(body.get(key), int):
                            ports.update({body[key] - 1, body[key], body[key] + 1})
                for peer in items(mapping(rule).get("from" if direction == "ingress" else "to")):
                    block = mapping(mapping(peer).get("ipBlock"))
                    if block.get("cidr"):
                        cidrs.add(str(block["cidr"]))
                        cidrs.update(str(e) for e in items(block.get("except")))
    return {p for p in ports if 0 < p < 65536}, cidrs, protocols


def sample_hosts(world: World, extra: Iterable[Host] = ()) -> list[Host]:
    """Addresses at and just outside the edges of every CIDR the policies name (IPv4), and `extra`."""
    _, cidrs, _ = _policy_numbers(world.policies)
    addresses: set[int] = set()
    for cidr in cidrs:
        network = ipaddress.ip_network(cidr, strict=False)
        if network.version != 4:
            continue
        first, last = int(network.network_address), int(network.broadcast_address)
        addresses.update(a for a in (first - 1, first, last, last + 1) if 0 <= a < 2**32)
    hosts = [Host(f"address {ipaddress.IPv4Address(a)}", str(ipaddress.IPv4Address(a))) for a in sorted(addresses)]
    return [*hosts, *extra]


@dataclass(frozen=True)
class Comparison:
    compared: int
    allowed: int
    """How many of them the evaluator allowed."""
    disagreements: list[Disagreement]


@dataclass(frozen=True)
class Disagreement:
    src: str
    dst: str
    port: int
    protocol: str
    ours: str
    nca: bool


def compare(world: World, nca: Connectivity, hosts: Sequence[Host]) -> Comparison:
    """Every connection between the world's pods, and between them and `hosts`, on every port and protocol
    the policies name (with neighbours) or a pod listens on, asked of the evaluator and of NCA."""
    ports, _, protocols = _policy_numbers(world.policies)
    ports |= {number for pod in world.pods.values() for _, number, _ in pod.ports} | {1, 65535}
    protocols = {"TCP", "UDP"} | (protocols & set(PROTOCOLS))
    cluster = world.cluster()
    ends: list[tuple[str | int, Endpoint]] = [(key, pod) for key, pod in world.pods.items()]
    ends += [(int(ipaddress.ip_address(str(host.ip))), host) for host in hosts]
    compared = allowed = 0
    disagreements: list[Disagreement] = []
    for src_key, src in ends:
        for dst_key, dst in ends:
            if src_key == dst_key or not (isinstance(src, Pod) or isinstance(dst, Pod)):
                continue
            for protocol in sorted(protocols):
                for port in sorted(ports):
                    compared += 1
                    ours = connection_allowed(cluster, src, dst, port, protocol)
                    theirs = nca.allows(src_key, dst_key, port, protocol)
                    allowed += bool(ours)
                    if bool(ours) != theirs:
                        disagreements.append(Disagreement(str(src), str(dst), port, protocol, ours.reason, theirs))
    return Comparison(compared, allowed, disagreements)
