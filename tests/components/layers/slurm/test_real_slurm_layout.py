"""Tier 4 (real daemons): the site layout hpcforge renders for Slurm, loaded into a real Slurm 26.05.3.

Partitions as admins write them (group and account limits, MaxNodes, default memory per CPU and
GPU, preemption, node weights, partitions over the nodes of a feature), the topology tree, and the
reservation script. As in test_real_slurm.py the test plays the Slinky operator: `NodeSet=` lines
for the NodeSets and static stand-in nodes for their pods and for a few bare-metal hosts; hpcforge's
rendered lines are loaded verbatim, with a slurmdbd behind slurmctld (test_real_slurm.rendered_cluster); the
harness keeps only its HARNESS_OWNED keys, and cgroup.conf's CgroupPlugin is autodetect on this hybrid-cgroup host.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from components.layers.slurm.face import render_join_script
from components.layers.slurm.reservation_script import reservation_script
from components.layers.slurm.slurm_conf import SLURMCTLD_PORT, node_parameters
from components.layers.slurm.topology import expand_all
from components.layers.slurm.topology_files import TOPOLOGY_ANNOTATION, members, node_annotations, topology_yaml
from components.site.loader import load_config
from components.site.root import PlatformConfig
from tests.components.layers.slurm.test_real_slurm import operator_lines, rendered_cluster, require_root
from tests.daemons import slurm
from tests.daemons.common import run, write_script
from tests.daemons.slurm import SlurmCluster, node_line, parse_key_values
from tests.helpers import config_values, raw_config, require_binaries
from tests.site_helpers import load_edited

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

# Bare-metal hosts stood in for by static nodes: one plain, one with the host feature `bigmem`.
HOST_STAND_INS = ("cn001", "cn095")
# NodeSet pods stood in for, and the leaf switch the annotation of their Kubernetes node puts them on.
POD_LEAVES = {"cpu-0": "cpu1", "gpu-a100-0": "gpu1", "gpu-h100-0": "gpu2"}


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def stand_ins(config: PlatformConfig, topology: dict[str, str] | None = None) -> list[str]:
    """Static nodes with the features and weight their pods or hosts register with (slurmd --conf); `topology`:
    node -> the `Topology=` a pod registers with (its Kubernetes node's topology.slinky.slurm.net/spec)."""
    lines = []
    for nodeset in config.slurm.nodesets:
        if nodeset.replicas == 0:
            continue
        params = dict(node_parameters(nodeset))
        features = [nodeset.name, *params.get("Features", "").split(",")]
        extra = [f"Weight={params['Weight']}"] if "Weight" in params else []
        if topology and f"{nodeset.name}-0" in topology:
            extra.append(f"Topology={topology[f'{nodeset.name}-0']}")
        lines.append(node_line(f"{nodeset.name}-0", features=[f for f in features if f], extra=" ".join(extra)))
    assert config.provisioning is not None
    hosts = {host.name: host for host in config.provisioning.hosts}
    for name in HOST_STAND_INS:
        host = hosts[name]
        assert host.nodeset is not None
        nodeset = config.slurm.nodeset(host.nodeset)
        assert nodeset is not None
        params = dict(node_parameters(nodeset, include_feature=True))
        features = params["Features"].split(",") + list(host.features)
        lines.append(node_line(name, features=features, extra=f"Weight={params['Weight']}" if "Weight" in params else ""))
    return lines


def start(
    config: PlatformConfig,
    tmp_path: Path,
    *,
    pod_topology: dict[str, str] | None = None,
    users: tuple[str, ...] = (),
    **kwargs: Any,
) -> contextlib.AbstractContextManager[SlurmCluster]:
    """The rendered cluster (test_real_slurm.rendered_cluster: slurmdbd behind it) with the stand-ins."""
    return rendered_cluster(config, tmp_path, nodes=stand_ins(config, pod_topology), users=users, **kwargs)


def test_partition_options_from_prod_take_effect_in_slurmctld(prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    with start(prod, tmp_path) as cluster:
        info = {p.name: cluster.partition_info(p.name) for p in prod.slurm.partitions}
        for partition in prod.slurm.partitions:
            shown = info[partition.name]
            assert shown["MaxNodes"] == (str(partition.max_nodes) if partition.max_nodes else "UNLIMITED"), partition.name
            assert shown["AllowGroups"] == (",".join(partition.allow_groups) or "ALL"), partition.name
            assert shown["AllowAccounts"] == (",".join(partition.allow_accounts) or "ALL"), partition.name
            assert shown["PriorityTier"] == str(partition.priority_tier)
            assert shown["PreemptMode"] == (partition.preempt_mode or "REQUEUE")  # else the cluster-wide mode
        # Memory defaults in MiB, as written.
        assert info["cpu"]["DefMemPerCPU"] == "3900"
        assert info["bigmem"]["DefMemPerCPU"] == "15360"
        assert info["gpu"]["JobDefaults"] == "DefMemPerGPU=122880"
        # The partition over a feature has exactly the hosts that carry it, out of nodeset cpu-bm.
        assert cluster.hostnames(info["bigmem"]["Nodes"]) == ["cn095"]
        assert info["bigmem"]["NodeSets"] == "bigmem_bigmem"
        assert set(cluster.hostnames(info["cpu"]["Nodes"])) == {"cpu-0", "cn001", "cn095"}
        # Node weights from the nodesets.
        assert cluster.node_info("gpu-h100-0")["Weight"] == "200"
        assert cluster.node_info("gpu-a100-0")["Weight"] == "100"
        assert cluster.node_info("cn095")["Weight"] == "10"
        config = cluster.scontrol("show", "config")
        assert re.search(r"^PreemptType\s+= preempt/partition_prio$", config, re.M)
        assert re.search(r"^PreemptMode\s+= REQUEUE$", config, re.M)


def test_a_scavenger_job_is_requeued_when_a_higher_tier_partition_needs_the_node(prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    with start(prod, tmp_path) as cluster:
        low = cluster.sbatch("sleep 300\n", partition="scavenger", args=["-w", "cn001", "--requeue", "--mem=50"])
        cluster.wait_job(low, 30, states=["RUNNING"])
        high = cluster.sbatch("true\n", partition="cpu", args=["-w", "cn001", "--mem=50"])
        assert cluster.wait_job(high, 90) == "COMPLETED"
        # Preempted with PreemptMode=REQUEUE: back in the queue, not cancelled.
        assert int(cluster.job_info(low).get("Restarts", "0")) >= 1
        assert cluster.job_state(low) in {"PENDING", "REQUEUED", "RUNNING", "CONFIGURING"}


def parse_topology(cluster: SlurmCluster) -> dict[str, dict[str, str]]:
    return {
        match.group(1): dict(re.findall(r"(\w+)=(\S+)", line))
        for line in cluster.scontrol("show", "topology").splitlines()
        if (match := re.match(r"SwitchName=(\S+)", line))
    }


# The Kubernetes node each stand-in pod runs on (its annotation places the pod in the topology).
POD_K8S_NODES = {"cpu-0": "k8s-cpu-01", "gpu-a100-0": "k8s-a100-01", "gpu-h100-0": "k8s-h100-01"}


def test_rendered_topology_yaml_loads_its_tree_and_block_topologies(prod: PlatformConfig, tmp_path: Path) -> None:
    """topology.yaml as the Controller gets it (configFileRefs, components/layers/slurm/site.py), verbatim; the pods
    register with `Topology=` from their Kubernetes node's annotation (node_annotations), as Slinky's NodeSet pods do."""
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    topology = prod.slurm.topology
    assert topology is not None and prod.provisioning is not None
    annotations = node_annotations(topology)
    pod_topology = {pod: annotations[node][TOPOLOGY_ANNOTATION] for pod, node in POD_K8S_NODES.items()}
    assert pod_topology["gpu-a100-0"] == "fabric:gpu1,fabric-block:a100-a"
    text = topology_yaml(topology, prod.provisioning.hosts)
    with start(prod, tmp_path, topology_yaml=text, pod_topology=pod_topology) as cluster:
        known = set(cluster.static_nodes)
        shown = parse_topology(cluster)  # the cluster default: the tree
        assert set(shown) == {sw.name for sw in topology.switches}
        placed = {leaf: [pod for pod, at in POD_LEAVES.items() if at == leaf] for leaf in set(POD_LEAVES.values())}
        expected = members(topology, prod.provisioning.hosts, placed).switches
        for sw in topology.switches:
            if sw.switches:
                assert set(cluster.hostnames(shown[sw.name]["Switches"])) == set(sw.switches)
                assert shown[sw.name]["Level"] != "0"
            else:
                assert shown[sw.name]["Level"] == "0"
                # 26.05 lists the nodes slurmctld knows (22.05 echoed the configured hostlist)
                assert sorted(cluster.hostnames(shown[sw.name].get("Nodes", ""))) == sorted(set(expected[sw.name]) & known)
        assert cluster.hostnames(shown["rack1"]["Nodes"]) == ["cn001"] and expand_all(("cn[001-024]",))[0] == "cn001"
        blocks = {
            match.group(1): dict(re.findall(r"(\w+)=(\S*)", line))
            for line in cluster.scontrol("show", "topology", topology.block_name).splitlines()
            if (match := re.match(r"BlockName=(\S+)", line))
        }
        assert set(blocks) == {"a100-a", "a100-b", "h100-a"} and {b["BlockSize"] for b in blocks.values()} == {"4"}
        # A job that must stay under one leaf switch runs there.
        job = cluster.sbatch("hostname\n", partition="cpu", args=["--switches=1", "-w", "cn095", "--mem=50"])
        assert cluster.wait_job(job, 60) == "COMPLETED"


def run_script(cluster: SlurmCluster, script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = write_script(tmp_path / "reservations.sh", script.split("\n", 1)[1])
    return cluster.run("/bin/sh", str(path), timeout=60)


def test_reservation_script_creates_then_updates_the_maintenance_window(prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    values = config_values("prod")
    reservations = values["hpcforge:slurm"]["reservations"]
    reservations.append({"name": "gpu-burnin", "startTime": "2027-02-01T08:00", "duration": "2-00:00:00", "partitions": ["gpu"]})
    config = load_config(raw_config(values))
    with start(config, tmp_path) as cluster:
        first = run_script(cluster, reservation_script(config.slurm.reservations), tmp_path)
        assert first.returncode == 0, first.stderr
        maint = parse_key_values(cluster.scontrol("show", "reservation", "maint-2027-01", "-o"))
        assert maint["StartTime"] == "2027-01-12T06:00:00" and maint["Duration"] == "08:00:00"
        assert set(maint["Flags"].split(",")) >= {"MAINT", "IGNORE_JOBS"}
        assert maint["Users"] == "root"
        assert set(cluster.hostnames(maint["Nodes"])) == set(cluster.static_nodes)  # every node
        gpu = parse_key_values(cluster.scontrol("show", "reservation", "gpu-burnin", "-o"))
        assert gpu["PartitionName"] == "gpu"
        assert set(cluster.hostnames(gpu["Nodes"])) == {"gpu-a100-0", "gpu-h100-0"}
        # Moving the window in config and running again updates the reservation in place.
        reservations[0]["startTime"] = "2027-01-19T06:00:00"
        moved = load_config(raw_config(values))
        again = run_script(cluster, reservation_script(moved.slurm.reservations), tmp_path)
        assert again.returncode == 0, again.stderr
        maint = parse_key_values(cluster.scontrol("show", "reservation", "maint-2027-01", "-o"))
        assert maint["StartTime"] == "2027-01-19T06:00:00"
        assert len(re.findall(r"ReservationName=", cluster.scontrol("show", "reservation"))) == 2


def test_join_script_registers_a_host_with_its_own_features_and_the_nodeset_weight(prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    assert prod.provisioning is not None
    with SlurmCluster(
        tmp_path / "cluster",
        prod.slurm.cluster_name,
        nodes=[node_line("cpu-0", features=["cpu", "avx512"])],
        partitions=["PartitionName=cpu Nodes=ALL Default=YES State=UP"],
        extra_conf="\n".join(operator_lines(prod)) + "\n",
        dynamic=True,
    ) as cluster:
        host, port = cluster.conf_server.rsplit(":", 1)
        assert int(port) != SLURMCTLD_PORT
        script = render_join_script(prod.slurm, "cpu-bm", host, port=int(port), hosts=prod.provisioning.hosts)
        assert 'case "$(hostname -s)" in' in script
        # The script picks the host's --conf by its short host name. Run it with a stand-in `hostname`
        # that says cn095 and a stand-in `slurmd` that prints the argv it was given; then start the
        # real slurmd with exactly that argv.
        bin_dir = tmp_path / "bin"
        write_script(bin_dir / "hostname", "echo cn095\n")
        write_script(bin_dir / "slurmd", 'for arg in "$@"; do printf "%s\\n" "$arg"; done\n')
        write_script(bin_dir / "sysctl", "exit 0\n")  # not this machine's port range
        joined = write_script(tmp_path / "join.sh", script.split("\n", 1)[1])
        key = tmp_path / "slurm.key"  # delivered after boot: the script waits for it (tests/components/layers/test_renderers.py)
        key.write_text("k" * 32)
        key.chmod(0o600)
        printed = subprocess.run(
            ["/bin/sh", str(joined)],
            env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HPCFORGE_SLURM_KEY": str(key), "HPCFORGE_KEY_WAIT_SECONDS": "0"},
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        argv = ["slurmd", *printed.stdout.splitlines()]
        cluster.start_slurmd_command([*argv, "-N", "cn095", "-D"])
        cluster.wait_node_idle("cn095", 60)
        info = cluster.node_info("cn095")
        assert info["AvailableFeatures"].split(",") == ["cpu-bm", "baremetal", "avx512", "bigmem"]
        assert info["Weight"] == "10"


def test_group_limits_decide_who_may_submit(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)

    def open_debug_to_nogroup(values: dict[str, Any]) -> None:
        # This host resolves groups from /etc/group: the test's user is in nogroup (gid 65534); give the
        # directory the same group and open `debug` to it only.
        values["hpcforge:directory"]["groups"].append({"name": "nogroup", "gidNumber": 65534})
        values["hpcforge:slurm"]["partitions"][3]["allowGroups"] = ["nogroup"]

    config = load_edited(tmp_path / "inventory", open_debug_to_nogroup)
    # the user's sbatch reads slurm.conf: pytest's own temporary tree is root-only (0700), so use /tmp. A local user
    # for the test (26.05's assoc_mgr does not resolve `nobody`: "User 65534 not found"), primary group nogroup.
    shared = Path(tempfile.mkdtemp(prefix="hpcforge-groups-"))
    shared.chmod(0o755)
    user, uid = f"hpcg{secrets.token_hex(3)}", 40000 + secrets.randbelow(20000) * 2 + 1
    run(["useradd", "-M", "-N", "-g", "nogroup", "-u", str(uid), "-s", "/bin/sh", user], timeout=30, check=True)
    try:
        with start(config, shared, users=(user,)) as cluster:

            def submit(partition: str, *extra: str) -> subprocess.CompletedProcess[str]:
                # Slurm 26.05 has no `sbatch --uid` (22.05 let root submit as another user): submit as the user
                argv = ["sbatch", "-p", partition, "-D", "/tmp", "--mem=10", *extra, "--wrap", "true"]
                return run(argv, env=cluster.env(), user=user, group="nogroup", timeout=30, cwd="/tmp")

            # AllowGroups=hpc-users: the user is not a member. With the rendered EnforcePartLimits=ALL (typed,
            # slurm.controller.enforcePartLimits) Slurm 26.05 refuses the job at submission; with its default NO it takes
            # the job and never starts it (tests/components/layers/slurm/test_day2_real.py shows both for AllowAccounts).
            refused = submit("cpu")
            assert refused.returncode != 0, refused.stdout
            assert "not permitted" in refused.stderr.lower() or "group" in refused.stderr.lower(), refused.stderr
            assert submit("debug").returncode == 0  # AllowGroups=nogroup
            # AllowAccounts is checked against the job's association, which needs slurmdbd: without
            # accounting this harness can only show that it is loaded (test_partition_options_...).

    finally:
        run(["userdel", user], timeout=30)
        shutil.rmtree(shared, ignore_errors=True)
