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
LOGIN_POD = Pod(
    "slurm", {"app.kubernetes.io/name": "login", "app.kubernetes.io/instance": "login"}, "10.244.1.5", name="login pod"
)
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


# --- component by component: users' code beside the daemons (issue 39) --------------------------------------------

SLURMDBD = Pod("slurm", {"app.kubernetes.io/name": "slurmdbd"}, "10.244.0.3", name="slurmdbd")
SLURMRESTD = Pod("slurm", {"app.kubernetes.io/name": "slurmrestd"}, "10.244.0.4", name="slurmrestd")
ACCOUNTS_JOB = Pod("slurm", {"app.kubernetes.io/name": "slurm", "app.kubernetes.io/component": "slurm-accounts"}, "10.244.0.5")
OPERATOR = Pod("slinky", {"app.kubernetes.io/name": "slurm-operator"}, "10.244.5.1", name="slurm-operator")
PROMETHEUS = Pod("monitoring", {"app.kubernetes.io/name": "prometheus"}, "10.244.6.1", name="prometheus")
MARIADB = Pod("database", {"app.kubernetes.io/name": "mariadb"}, "10.244.7.1", name="mariadb")
DIRSRV = Pod(
    "directory", {"app.kubernetes.io/name": "dirsrv", "app.kubernetes.io/component": "directory"}, "10.244.8.1", name="dirsrv"
)
SITE_HOST = Host("a workstation on the site network", "10.10.7.7")
API = Host("an API server", "10.10.0.10")
REGISTRY_SOMEWHERE = Host("a container registry", "104.16.0.1")


def test_each_slurm_component_is_reached_by_what_slurm_needs(cluster: Cluster) -> None:
    """The flows of Slurm's network guide (doc/html/network.shtml, 26.05.3), pod to pod in the namespace."""
    srun = _srun()
    flows: dict[str, tuple[Endpoint, Endpoint, int]] = {
        "login client -> slurmctld": (LOGIN_POD, SLURMCTLD, 6817),
        "slurmd -> slurmctld": (POD_SLURMD, SLURMCTLD, 6817),
        "slurmdbd -> slurmctld": (SLURMDBD, SLURMCTLD, 6817),
        "slurmrestd -> slurmctld": (SLURMRESTD, SLURMCTLD, 6817),
        "accounts job (sacctmgr) -> slurmctld": (ACCOUNTS_JOB, SLURMCTLD, 6817),
        "slurmctld -> slurmdbd": (SLURMCTLD, SLURMDBD, 6819),
        "login sacct -> slurmdbd": (LOGIN_POD, SLURMDBD, 6819),
        "accounts job (sacctmgr) -> slurmdbd": (ACCOUNTS_JOB, SLURMDBD, 6819),
        "slurmctld -> slurmd": (SLURMCTLD, POD_SLURMD, 6818),
        "login srun -> slurmd": (LOGIN_POD, POD_SLURMD, 6818),
        "slurmstepd -> srun on a login pod": (POD_SLURMD, LOGIN_POD, srun[0]),
        "rank -> rank on another compute pod": (POD_SLURMD, POD_SLURMD, 40000),
        "operator -> slurmrestd": (OPERATOR, SLURMRESTD, 6820),
        "prometheus -> slurmctld metrics": (PROMETHEUS, SLURMCTLD, 6817),
        "slurmdbd -> the database": (SLURMDBD, MARIADB, 3306),
        "login SSSD -> the directory (LDAPS)": (LOGIN_POD, DIRSRV, 3636),
        "a site workstation -> ssh on a login pod": (SITE_HOST, LOGIN_POD, 22),
        "bare metal -> slurmctld": (BARE_METAL, SLURMCTLD, 6817),
        "Pyxis on a compute pod -> a registry": (POD_SLURMD, REGISTRY_SOMEWHERE, 443),
    }
    blocked = {
        name: connection_allowed(cluster, src, dst, port).reason
        for name, (src, dst, port) in flows.items()
        if not connection_allowed(cluster, src, dst, port)
    }
    assert blocked == {}


def test_users_code_reaches_no_daemon_port_that_slurm_does_not_need(cluster: Cluster) -> None:
    """A login or compute pod runs users' code: it gets the Slurm flows, not the database, plain LDAP, slurmrestd,
    the daemons' other ports, or the API server; and ssh and slurmctld take only the configured ranges."""
    flows: dict[str, tuple[Endpoint, Endpoint, int]] = {
        "login -> the database": (LOGIN_POD, MARIADB, 3306),
        "compute pod -> the database": (POD_SLURMD, MARIADB, 3306),
        "slurmctld -> the database": (SLURMCTLD, MARIADB, 3306),
        "login -> plain LDAP": (LOGIN_POD, DIRSRV, 3389),
        "compute pod -> LDAPS": (POD_SLURMD, DIRSRV, 3636),
        "login -> slurmrestd": (LOGIN_POD, SLURMRESTD, 6820),
        "compute pod -> slurmctld's other ports": (POD_SLURMD, SLURMCTLD, 22),
        "login -> slurmdbd's other ports": (LOGIN_POD, SLURMDBD, 3306),
        "login -> another login pod's ssh": (LOGIN_POD, LOGIN_POD, 22),
        "compute pod -> the API server": (POD_SLURMD, API, 6443),
        "compute pod -> the API server on 443": (POD_SLURMD, API, 443),
        "login -> the API server": (LOGIN_POD, API, 6443),
        "slurmctld -> the API server": (SLURMCTLD, API, 6443),
        "an outsider -> ssh": (OUTSIDER, LOGIN_POD, 22),
        "a site workstation -> slurmctld": (SITE_HOST, SLURMCTLD, 6817),
        "a site workstation -> ssh on slurmctld": (SITE_HOST, SLURMCTLD, 22),
        "another namespace's pod -> slurmctld": (OTHER_NAMESPACE_POD, SLURMCTLD, 6817),
        "another namespace's pod -> ssh": (OTHER_NAMESPACE_POD, LOGIN_POD, 22),
        "slurmctld -> a registry": (SLURMCTLD, REGISTRY_SOMEWHERE, 443),
    }
    opened = [name for name, (src, dst, port) in flows.items() if connection_allowed(cluster, src, dst, port)]
    assert opened == []
