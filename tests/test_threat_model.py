"""The threat model's reachability table (docs/threat-model.md), checked by an analyzer nobody here wrote.

Three attacker positions (issue 39): an HPC user (code on a login pod or a compute pod), a compromised tenant pod (a
Kueue team's pod, a build step of the DevOps lane, a site application's pod), and a host on the site network (a
workstation in hpcforge:network.siteRanges, a bare-metal compute host, and one outside every range). For each, every
(target, port) of the table is asked of NCA (np-guard's Network Config Analyzer, tests/nca.py) over prod's Namespaces
and NetworkPolicies, and must be exactly what the design says: `DESIGN` below, which the docs' table repeats.

NCA sees NetworkPolicies, under the reading that an ipBlock never selects a pod. A LoadBalancer's source ranges are
kube-proxy's, not a NetworkPolicy's: `LOAD_BALANCERS` checks them from the rendered Services and custom resources.
Pods that charts make (Argo CD's server, Kueue's controller, Traefik, the sealed-secrets controller) are not in the
render: they are added with the labels their charts give them, as the policies select them.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest

from offline.program.engine import RecordedStack
from policies.rules.netpol import Host, Pod
from tests.nca import Connectivity, World, require_nca, run_nca

pytestmark = pytest.mark.program

# --- who attacks ---------------------------------------------------------------------------------------------------

HPC_USER = "an HPC user"
TENANT = "a compromised tenant pod"
SITE_HOST = "a host on the site network"

ATTACKERS: dict[str, tuple[str, Pod | Host]] = {
    "login pod": (HPC_USER, Pod("slurm", {"app.kubernetes.io/name": "login", "app.kubernetes.io/instance": "login"})),
    "compute pod": (HPC_USER, Pod("slurm", {"app.kubernetes.io/name": "slurmd", "app.kubernetes.io/instance": "cpu"})),
    "team pod (team-llm)": (TENANT, Pod("team-llm", {"app": "tenant"})),
    "build step (devops)": (TENANT, Pod("devops", {"workflows.argoproj.io/workflow": "build"})),
    "site app pod (portal)": (TENANT, Pod("portal", {"app": "portal"})),
    "site workstation 10.10.7.7": (SITE_HOST, Host("a site workstation", "10.10.7.7")),
    "bare-metal host 10.20.0.51": (SITE_HOST, Host("a bare-metal host", "10.20.0.51")),
    "outside host 203.0.113.9": (SITE_HOST, Host("a host outside the site's ranges", "203.0.113.9")),
}

# --- what they aim at ----------------------------------------------------------------------------------------------

CHART_PODS = {
    "argocd-server": Pod("argocd", {"app.kubernetes.io/name": "argocd-server"}, ports=(("server", 8080, "TCP"),)),
    "kueue-controller": Pod("kueue-system", {"control-plane": "controller-manager"}, ports=(("visibility", 8082, "TCP"),)),
    "traefik": Pod("traefik", {"app.kubernetes.io/name": "traefik"}, ports=(("websecure", 8443, "TCP"),)),
    "sealed-secrets": Pod("kube-system", {"app.kubernetes.io/name": "sealed-secrets"}, ports=(("http", 8080, "TCP"),)),
    "dcgm-hostengine": Pod("gpu-operator", {"app": "nvidia-dcgm"}, ports=(("dcgm", 5555, "TCP"),)),
}
API_SERVER = Host("the API server", "10.10.0.10")

TARGETS: dict[str, tuple[str, int]] = {
    "MariaDB 3306": ("database/mariadb", 3306),
    "389ds LDAP 3389": ("directory/dirsrv", 3389),
    "389ds LDAPS 3636": ("directory/dirsrv", 3636),
    "API server 6443": ("api-server", 6443),
    "API server 443": ("api-server", 443),
    "slurmctld 6817": ("slurm/slurmctld", 6817),
    "slurmdbd 6819": ("slurm/slurmdbd", 6819),
    "slurmrestd 6820": ("slurm/slurmrestd", 6820),
    "slurmd 6818": ("slurm/slurmd", 6818),
    "login ssh 22": ("slurm/login", 22),
    "Grendel HTTP 80": ("provisioning/grendel", 80),
    "registry 5000": ("registry/registry", 5000),
    "Argo CD 8080": ("argocd-server", 8080),
    "Kueue visibility 8082": ("kueue-controller", 8082),
    "Traefik 8443": ("traefik", 8443),
    "sealed-secrets 8080": ("sealed-secrets", 8080),
    "DCGM host engine 5555": ("dcgm-hostengine", 5555),
}

Y, N = True, False
COLUMNS = tuple(ATTACKERS)
DESIGN: dict[str, tuple[bool, ...]] = {
    # target:               login, compute, team, build, app, site ws, bare metal, outside
    "MariaDB 3306": (N, N, N, N, N, N, N, N),
    "389ds LDAP 3389": (N, N, N, N, N, N, N, N),
    "389ds LDAPS 3636": (Y, N, N, N, N, N, N, N),
    "API server 6443": (N, N, N, Y, N, N, N, N),
    "API server 443": (N, N, N, Y, N, N, N, N),
    "slurmctld 6817": (Y, Y, N, N, N, N, Y, N),
    "slurmdbd 6819": (Y, Y, N, N, N, N, N, N),
    "slurmrestd 6820": (N, N, N, N, N, N, N, N),
    "slurmd 6818": (Y, Y, N, N, N, N, Y, N),
    "login ssh 22": (N, N, N, N, N, Y, Y, N),
    "Grendel HTTP 80": (N, N, N, N, N, N, N, N),
    "registry 5000": (N, N, N, Y, N, N, N, N),
    "Argo CD 8080": (N, N, N, N, N, N, N, N),
    "Kueue visibility 8082": (N, N, N, N, N, N, N, N),
    "Traefik 8443": (N, N, N, N, N, Y, Y, Y),
    "sealed-secrets 8080": (N, N, N, N, N, Y, Y, Y),
    "DCGM host engine 5555": (N, Y, N, N, N, N, N, N),
}
"""Allowed by the NetworkPolicies, per attacker (COLUMNS order). Why each `Y` is there: docs/threat-model.md."""


def _ip(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def _pod_key(world: World, want: str) -> str:
    """NCA's name of the world's pod for `want` (`namespace/app` from the render, or an added pod's key)."""
    namespace, _, app = want.partition("/")
    return next(
        key
        for key, pod in world.pods.items()
        if pod.namespace == namespace and app in (pod.labels.get("app.kubernetes.io/name"), None)
    )


@pytest.fixture(scope="module")
def analyzed(prod_stack: RecordedStack, tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Connectivity, dict[str, str]]:
    nca = require_nca()
    world = World.of(r.inputs for r in prod_stack.kubernetes_objects())
    keys: dict[str, str] = {}
    for name, pod in CHART_PODS.items():
        world.add_pod(pod)
        keys[name] = list(world.pods)[-1]
    for name, (_, attacker) in ATTACKERS.items():
        if isinstance(attacker, Pod):
            world.add_pod(attacker)
            keys[name] = list(world.pods)[-1]
    return world, run_nca(nca, world, tmp_path_factory.mktemp("nca")), keys


def reachability_table(analyzed: tuple[World, Connectivity, dict[str, str]]) -> dict[str, tuple[bool, ...]]:
    world, nca, keys = analyzed
    table: dict[str, tuple[bool, ...]] = {}
    for target, (where, port) in TARGETS.items():
        destination: str | int = _ip(str(API_SERVER.ip)) if where == "api-server" else keys.get(where) or _pod_key(world, where)
        row = []
        for name in COLUMNS:
            _, attacker = ATTACKERS[name]
            source: str | int = keys[name] if isinstance(attacker, Pod) else _ip(str(attacker.ip))
            if isinstance(source, int) and isinstance(destination, int):
                row.append(False)  # host to host: no NetworkPolicy is on that path
                continue
            row.append(nca.allows(source, destination, port, "TCP"))
        table[target] = tuple(row)
    return table


def test_the_reachability_of_the_three_positions_is_the_designs(
    analyzed: tuple[World, Connectivity, dict[str, str]],
) -> None:
    table = reachability_table(analyzed)
    differences = {
        f"{name} -> {target}": "allowed" if got else "refused"
        for target, row in table.items()
        for name, got, want in zip(COLUMNS, row, DESIGN[target], strict=True)
        if got != want
    }
    assert differences == {}


def test_the_docs_table_is_the_checked_one() -> None:
    """docs/threat-model.md repeats DESIGN row by row (✓ allowed, · refused): a claim there is what NCA checked here."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "threat-model.md").read_text()
    for target, row in DESIGN.items():
        cells = " | ".join("✓" if allowed else "·" for allowed in row)
        assert f"| {target} | {cells} |" in text, target


# --- LoadBalancers: who kube-proxy lets reach the address at all ----------------------------------------------------


def _load_balancers(stack: RecordedStack) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for resource in stack.kubernetes_objects():
        obj = resource.inputs
        name = f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
        if obj["kind"] == "Service" and obj.get("spec", {}).get("type") == "LoadBalancer":
            found[name] = (obj["spec"], obj["metadata"].get("annotations", {}))
        elif (
            obj["kind"] in ("Controller", "LoginSet")
            and obj["spec"].get("service", {}).get("spec", {}).get("type") == "LoadBalancer"
        ):
            service = obj["spec"]["service"]
            found[name] = (service["spec"], service.get("metadata", {}).get("annotations", {}))
        elif obj["kind"] == "Application" and obj["metadata"]["name"] == "traefik":
            values = obj["spec"]["source"]["helm"]["valuesObject"]["service"]
            found[name] = (values["spec"], values.get("annotations", {}))
    return found


def _admits(spec: dict[str, Any], annotations: dict[str, Any], address: str) -> bool:
    if annotations.get("hpcforge.io/exposure") == "public":
        return True
    ranges = spec.get("loadBalancerSourceRanges") or []
    return any(ipaddress.IPv4Address(address) in ipaddress.IPv4Network(cidr) for cidr in ranges)


LOAD_BALANCERS = {
    # LoadBalancer: (site workstation, bare-metal host, outside host)
    "Application argocd/traefik": (Y, Y, N),
    "Service site-dns/site-dns": (Y, Y, N),
    "Controller slurm/slurm": (N, Y, N),
    "LoginSet slurm/login": (Y, Y, N),
    "LoginSet slurm/login-gpu": (Y, Y, N),
}


def test_every_load_balancer_admits_the_designs_clients_only(prod_stack: RecordedStack) -> None:
    found = _load_balancers(prod_stack)
    assert set(found) == set(LOAD_BALANCERS)
    hosts = [str(ATTACKERS[name][1].ip) for name in COLUMNS[5:]]  # type: ignore[union-attr]
    got = {name: tuple(_admits(*found[name], address) for address in hosts) for name in found}
    assert got == LOAD_BALANCERS
