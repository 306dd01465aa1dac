"""Slurm traffic between pods and bare-metal hosts is allowed by prod's NetworkPolicies, and only it.

The flows a job spanning the `cpu` nodeset's pods and the `cpu-bm` bare-metal hosts needs are evaluated
against every object the prod stack declares (Namespaces and NetworkPolicies) with the project's
NetworkPolicy evaluator, policies/rules/netpol.py (issue 15).
"""

from __future__ import annotations

import pytest

from components.layers.slurm.face import render_join_script
from components.layers.slurm.objects import slurm_bare_metal_allows
from components.site.loader import ConfigError, load_config
from offline.program.engine import RecordedStack
from policies.admission.pss import check_sysctls
from policies.rules.netpol import Cluster, Endpoint, Host, Pod, connection_allowed, workload_pod
from tests.helpers import config_values, raw_config

pytestmark = pytest.mark.program

POD_SLURMD = Pod("slurm", {"app.kubernetes.io/name": "slurmd"}, "10.244.3.17", name="pod slurmd")
LOGIN_POD = Pod("slurm", {"app.kubernetes.io/name": "login"}, "10.244.1.5", name="login pod")
SLURMCTLD = Pod("slurm", {"app.kubernetes.io/name": "slurmctld"}, "10.244.0.2", name="slurmctld")
BARE_METAL = Host("cn001", "10.20.0.51")  # in prod's provisioning subnet 10.20.0.0/22
OUTSIDER = Host("a client elsewhere", "192.168.77.9")
OTHER_NAMESPACE_POD = Pod("team-llm", {}, "10.244.9.9", name="team pod")


@pytest.fixture(scope="module", params=[True, False], ids=["ipBlocks select pods", "ipBlocks never select pods"])
def cluster(prod_stack: RecordedStack, request: pytest.FixtureRequest) -> Cluster:
    """Under both readings of whether an ipBlock can select a pod (the API leaves it to the network plugin;
    Cluster.ip_blocks_select_pods): what a job needs must not depend on the plugin."""
    return Cluster.of((r.inputs for r in prod_stack.kubernetes_objects()), ip_blocks_select_pods=request.param)


def test_the_endpoints_here_carry_the_labels_the_operator_gives_those_pods(prod_stack: RecordedStack) -> None:
    objects = [r.inputs for r in prod_stack.kubernetes_objects()]
    made = {
        "pod slurmd": workload_pod(objects, "NodeSet", "slurm", "cpu"),
        "login pod": workload_pod(objects, "LoginSet", "slurm", "login"),
        "slurmctld": workload_pod(objects, "Controller", "slurm", "slurm"),
    }
    for name, pod in made.items():
        here = next(p for p in (POD_SLURMD, LOGIN_POD, SLURMCTLD) if p.name == name)
        assert pod.namespace == here.namespace
        assert dict(here.labels).items() <= dict(pod.labels).items(), name


def _srun() -> tuple[int, int]:
    return load_config(raw_config(config_values("prod"))).slurm.controller.srun_port_range


def test_a_job_spanning_pods_and_bare_metal_has_every_slurm_flow(cluster: Cluster) -> None:
    srun = _srun()
    flows: dict[str, tuple[Endpoint, Endpoint, int]] = {
        "bare-metal slurmd -> pod slurmd (launch fan-out)": (BARE_METAL, POD_SLURMD, 6818),
        "pod slurmd -> bare-metal slurmd (launch fan-out)": (POD_SLURMD, BARE_METAL, 6818),
        "bare-metal slurmstepd -> srun on a login pod (first port)": (BARE_METAL, LOGIN_POD, srun[0]),
        "bare-metal slurmstepd -> srun on a login pod (last port)": (BARE_METAL, LOGIN_POD, srun[1]),
        "pod slurmstepd -> srun on a bare-metal host": (POD_SLURMD, BARE_METAL, srun[0] + 7),
        "bare-metal slurmd -> slurmctld": (BARE_METAL, SLURMCTLD, 6817),
        "login pod srun -> pod slurmd": (LOGIN_POD, POD_SLURMD, 6818),
        "login pod srun -> bare-metal slurmd (step launch)": (LOGIN_POD, BARE_METAL, 6818),
        "slurmctld -> bare-metal slurmd": (SLURMCTLD, BARE_METAL, 6818),
    }
    blocked = {
        name: connection_allowed(cluster, src, dst, port).reason
        for name, (src, dst, port) in flows.items()
        if not connection_allowed(cluster, src, dst, port)
    }
    assert blocked == {}


def test_nothing_else_is_opened(cluster: Cluster) -> None:
    srun = _srun()
    flows: dict[str, tuple[Endpoint, Endpoint, int, str]] = {
        "outsider -> pod slurmd": (OUTSIDER, POD_SLURMD, 6818, "TCP"),
        "outsider -> srun ports": (OUTSIDER, LOGIN_POD, srun[0], "TCP"),
        "bare-metal -> a pod port outside Slurm's": (BARE_METAL, POD_SLURMD, 9999, "TCP"),
        "bare-metal -> just above the srun range": (BARE_METAL, LOGIN_POD, srun[1] + 1, "TCP"),
        "pod -> bare-metal ssh": (POD_SLURMD, BARE_METAL, 22, "TCP"),
        "pod -> bare-metal slurmd over UDP": (POD_SLURMD, BARE_METAL, 6818, "UDP"),
        "another namespace's pod -> pod slurmd": (OTHER_NAMESPACE_POD, POD_SLURMD, 6818, "TCP"),
    }
    opened = [name for name, (src, dst, port, proto) in flows.items() if connection_allowed(cluster, src, dst, port, proto)]
    assert opened == []


def test_without_bare_metal_hosts_no_bare_metal_rule() -> None:
    assert slurm_bare_metal_allows([], (60001, 63000)) == []
    rules = slurm_bare_metal_allows(["10.20.0.0/22"], (60001, 63000))
    srun = next(r for r in rules if r.name == "allow-ingress-bare-metal-srun").to_spec()
    assert srun["ingress"][0]["ports"] == [{"port": 60001, "protocol": "TCP", "endPort": 63000}]


def test_without_the_bare_metal_allows_the_fan_out_is_blocked(prod_stack: RecordedStack) -> None:
    objects = [
        r.inputs
        for r in prod_stack.kubernetes_objects()
        if not (r.inputs["kind"] == "NetworkPolicy" and "bare-metal" in r.inputs["metadata"]["name"])
    ]
    assert not connection_allowed(Cluster.of(objects), BARE_METAL, POD_SLURMD, 6818)


# --- the jobs' own traffic between ranks (controller.jobPortRange) --------------------------------------------------


def _job_ports() -> tuple[int, int]:
    return load_config(raw_config(config_values("prod"))).slurm.controller.job_port_range


def test_ranks_on_pods_and_bare_metal_reach_each_other_in_the_job_port_range(cluster: Cluster) -> None:
    first, last = _job_ports()
    flows: dict[str, tuple[Endpoint, Endpoint, int]] = {
        "bare-metal rank -> pod rank (first job port)": (BARE_METAL, POD_SLURMD, first),
        "bare-metal rank -> pod rank (last job port)": (BARE_METAL, POD_SLURMD, last),
        "pod rank -> bare-metal rank (first job port)": (POD_SLURMD, BARE_METAL, first),
        "pod rank -> bare-metal rank (last job port)": (POD_SLURMD, BARE_METAL, last),
    }
    blocked = {
        name: connection_allowed(cluster, src, dst, port).reason
        for name, (src, dst, port) in flows.items()
        if not connection_allowed(cluster, src, dst, port)
    }
    assert blocked == {}


def test_only_the_job_port_range_and_only_for_compute_pods(cluster: Cluster) -> None:
    first, last = _job_ports()
    flows: dict[str, tuple[Endpoint, Endpoint, int, str]] = {
        "bare-metal -> pod slurmd just below the job range": (BARE_METAL, POD_SLURMD, first - 1, "TCP"),
        "bare-metal -> pod slurmd just above the job range": (BARE_METAL, POD_SLURMD, last + 1, "TCP"),
        "pod slurmd -> bare-metal just below the job range": (POD_SLURMD, BARE_METAL, first - 1, "TCP"),
        "bare-metal -> login pod in the job range": (BARE_METAL, LOGIN_POD, first, "TCP"),
        "bare-metal -> slurmctld in the job range": (BARE_METAL, SLURMCTLD, first, "TCP"),
        "outsider -> pod slurmd in the job range": (OUTSIDER, POD_SLURMD, first, "TCP"),
        "pod slurmd -> outsider in the job range": (POD_SLURMD, OUTSIDER, first, "TCP"),
        "bare-metal -> pod slurmd in the job range over UDP": (BARE_METAL, POD_SLURMD, first, "UDP"),
    }
    opened = [name for name, (src, dst, port, proto) in flows.items() if connection_allowed(cluster, src, dst, port, proto)]
    assert opened == []


def test_compute_pods_and_bare_metal_hosts_listen_in_the_job_port_range(prod_stack: RecordedStack) -> None:
    # What makes the opened range the one ranks use: an unrequested listening port is an ephemeral one, taken from
    # net.ipv4.ip_local_port_range, set on every NodeSet pod and by every bare-metal join script.
    first, last = _job_ports()
    nodesets = [r.inputs for r in prod_stack.kubernetes_objects() if r.inputs["kind"] == "NodeSet"]
    assert nodesets
    for nodeset in nodesets:
        pod = nodeset["spec"]["template"]["spec"]
        assert pod["securityContext"]["sysctls"] == [{"name": "net.ipv4.ip_local_port_range", "value": f"{first} {last}"}]
        assert check_sysctls({}, pod, (1, 27)).allowed  # a safe sysctl: every Pod Security level admits it
    prod = load_config(raw_config(config_values("prod")))
    script = render_join_script(prod.slurm, "cpu-bm", "10.10.0.102")
    assert f"sysctl -w net.ipv4.ip_local_port_range='{first} {last}' >/dev/null\n" in script
    assert script.index("sysctl -w") < script.index("exec slurmd")


def test_job_port_range_must_stay_clear_of_the_srun_ports() -> None:
    values = config_values("prod")
    values["hpcforge:slurm"].setdefault("controller", {})["jobPortRange"] = [50000, 60001]
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert "hpcforge:slurm.controller.jobPortRange: 50000-60001 overlaps srunPortRange 60001-63000" in str(raised.value)
