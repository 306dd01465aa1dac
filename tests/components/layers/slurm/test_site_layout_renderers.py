"""Tier 1/2: the site-layout renderers (topology, reservations, per-host slurmd parameters) and the
objects the prod stack gets from them. Loading into the real slurmctld is in test_real_slurm_layout.py."""

from __future__ import annotations

import re

import pytest
import yaml

from components.layers.slurm.face import render_join_script
from components.layers.slurm.objects import nodeset_spec
from components.layers.slurm.reservation_script import reservation_commands, reservation_script
from components.layers.slurm.site import SLURM_UID, reservation_job_spec
from components.layers.slurm.topology import TopologyConfig, expand_hostlist
from components.layers.slurm.topology_files import TOPOLOGY_ANNOTATION, hostlist, node_annotations, topology_conf, topology_yaml
from components.site.loader import load_config
from components.site.root import PlatformConfig
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def test_hostlist_compresses_what_expand_hostlist_expands() -> None:
    names = [*expand_hostlist("cn[001-024,030]"), "gpu-a100-0", "gpu-a100-1", "login"]
    assert hostlist(names) == "cn[001-024,030],gpu-a100-[0-1],login"
    assert hostlist(["n9", "n10"]) == "n10,n9"  # different widths are not one range
    assert sorted(expand_hostlist("cn[001-024,030]")) == sorted(n for n in names if n.startswith("cn"))
    with pytest.raises(ValueError, match="runs backwards"):
        expand_hostlist("cn[9-1]")


def _conf_switches(text: str) -> dict[str, dict[str, str]]:
    return {
        fields["SwitchName"]: fields
        for line in text.splitlines()
        if line.startswith("SwitchName=")
        for fields in [dict(token.split("=", 1) for token in line.split())]
    }


def test_topology_yaml_and_topology_conf_describe_the_same_tree(prod: PlatformConfig) -> None:
    topology = prod.slurm.topology
    assert topology is not None and prod.provisioning is not None
    placed = {"cpu1": ["cpu-0"], "gpu1": ["gpu-a100-0"], "gpu2": ["gpu-h100-0"]}
    conf = _conf_switches(topology_conf(topology, prod.provisioning.hosts, placed))
    document = yaml.safe_load(topology_yaml(topology, prod.provisioning.hosts))
    tree, block = document
    assert tree["topology"] == "fabric" and tree["cluster_default"] is True
    assert block == {
        "topology": "fabric-block",
        "cluster_default": False,
        "block": {"block_sizes": [4], "blocks": [{"block": "a100-a"}, {"block": "a100-b"}, {"block": "h100-a"}]},
    }
    for switch in tree["tree"]["switches"]:
        line = conf[switch["switch"]]
        if "children" in switch:
            assert expand_hostlist(switch["children"]) == expand_hostlist(line["Switches"]) or sorted(
                switch["children"].split(",")
            ) == sorted(line["Switches"].split(","))
        elif "nodes" in switch:
            assert switch["nodes"] == line["Nodes"]
        else:  # only Kubernetes nodes: dynamic topology fills it (topology.conf got the stand-in pods)
            assert line["Nodes"] == placed[switch["switch"]][0]
    assert set(conf) == {s["switch"] for s in tree["tree"]["switches"]}


def test_topology_conf_refuses_a_leaf_it_cannot_hold(prod: PlatformConfig) -> None:
    assert prod.slurm.topology is not None
    with pytest.raises(ValueError, match="switch 'cpu1' has no static nodes"):
        topology_conf(prod.slurm.topology)


def test_tagged_hosts_land_on_their_leaf_and_block() -> None:
    topology = TopologyConfig.model_validate(
        {"switches": [{"name": "top", "switches": ["r1"]}, {"name": "r1"}], "blocks": [{"name": "b1"}]}
    )
    from components.ground.hosts import Host

    hosts = [
        Host.model_validate(
            {
                "name": f"cn{i:03d}",
                "mac": f"0c:c4:7a:00:00:0{i}",
                "ip": f"10.0.0.{i}",
                "nodeset": "cpu",
                "switch": "r1",
                "block": "b1",
            }
        )
        for i in range(1, 4)
    ]
    assert "SwitchName=r1 Nodes=cn[001-003]" in topology_conf(topology, hosts)
    _tree, blocks = yaml.safe_load(topology_yaml(topology, hosts))
    assert blocks["block"]["blocks"] == [{"block": "b1", "nodes": "cn[001-003]"}]


def test_node_annotations_are_slinky_topology_specs(prod: PlatformConfig) -> None:
    assert prod.slurm.topology is not None
    annotations = node_annotations(prod.slurm.topology)
    assert len(annotations) == 16 + 8 + 4
    assert annotations["k8s-a100-05"] == {TOPOLOGY_ANNOTATION: "fabric:gpu1,fabric-block:a100-b"}
    assert annotations["k8s-cpu-16"] == {TOPOLOGY_ANNOTATION: "fabric:cpu1"}


def test_reservation_commands_per_partition_and_the_idempotent_script(prod: PlatformConfig) -> None:
    values = config_values("prod")
    values["hpcforge:slurm"]["reservations"].append(
        {
            "name": "burnin",
            "startTime": "2027-02-01T08:00",
            "duration": "1-0",
            "partitions": ["gpu", "h100"],
            "users": [],
            "accounts": ["ops"],
        }
    )
    config = load_config(raw_config(values))
    ((name, create, update),) = reservation_commands(config.slurm.reservations[0])
    assert name == "maint-2027-01"
    assert create == [
        "scontrol",
        "create",
        "reservation",
        "ReservationName=maint-2027-01",
        "StartTime=2027-01-12T06:00:00",
        "Duration=8:00:00",
        "Nodes=ALL",
        "Flags=MAINT,IGNORE_JOBS",
        "Users=root",
    ]
    assert update == [
        "scontrol",
        "update",
        "ReservationName=maint-2027-01",
        "StartTime=2027-01-12T06:00:00",
        "Duration=8:00:00",
        "Users=root",
    ]
    per_partition = reservation_commands(config.slurm.reservations[1])
    assert [n for n, _, _ in per_partition] == ["burnin-gpu", "burnin-h100"]
    assert "PartitionName=h100" in per_partition[1][1] and "Accounts=ops" in per_partition[1][1]
    script = reservation_script(config.slurm.reservations)
    assert script.startswith("#!/bin/sh\n") and "set -eu" in script
    assert script.count("if scontrol show reservation ") == 3


def test_reservation_job_runs_scontrol_as_the_slurm_user_with_the_operators_conf() -> None:
    spec = reservation_job_spec(controller="slurm", key_secret="slurm-auth-slurm", script_map="m", labels={"a": "b"})
    pod = spec["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == SLURM_UID == 401
    sources = pod["volumes"][0]["projected"]["sources"]
    assert sources[0]["configMap"]["name"] == "slurm-config"
    assert sources[1]["secret"] == {"name": "slurm-auth-slurm", "items": [{"key": "slurm.key", "path": "slurm.key"}]}
    assert "ttlSecondsAfterFinished" not in spec


def test_nodeset_weight_goes_into_slurmd_conf(prod: PlatformConfig) -> None:
    gpu = prod.slurm.nodeset("gpu-h100")
    assert gpu is not None
    spec = nodeset_spec(gpu, node_selector={})
    assert "Weight=200" in spec["extraConf"].split()


def test_join_script_gives_hosts_with_own_features_their_own_conf(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    script = render_join_script(prod.slurm, "cpu-bm", "10.10.0.102", hosts=prod.provisioning.hosts)
    assert re.search(r"^  cn095\) conf='Features=cpu-bm,baremetal,avx512,bigmem Weight=10' ;;$", script, re.M)
    assert re.search(r"^conf='Features=cpu-bm,baremetal,avx512 Weight=10'$", script, re.M)
    assert "cn001)" not in script  # same as its nodeset: no case of its own
    plain = render_join_script(prod.slurm, "cpu-bm", "10.10.0.102")
    assert "case" not in plain and plain.rstrip().endswith('"$@"')


def test_prod_stack_ships_topology_annotations_and_the_reservation_job(prod_stack: RecordedStack) -> None:
    objects = {(r.inputs["kind"], r.inputs["metadata"]["name"]): r.inputs for r in prod_stack.kubernetes_objects()}
    extra = objects[("ConfigMap", "slurm-config-extra")]
    assert yaml.safe_load(extra["data"]["topology.yaml"])[0]["topology"] == "fabric"
    node = objects[("Node", "k8s-h100-02")]
    assert node["metadata"]["annotations"] == {TOPOLOGY_ANNOTATION: "fabric:gpu2,fabric-block:h100-a"}
    jobs = [name for kind, name in objects if kind == "Job" and name.startswith("slurm-reservations-")]
    assert len(jobs) == 1
    assert "maint-2027-01" in objects[("ConfigMap", "slurm-reservations")]["data"]["reservations.sh"]


def test_host_parameters_add_features_and_replace_gres(prod: PlatformConfig) -> None:
    from components.ground.hosts import Host
    from components.layers.slurm.slurm_conf import host_parameters

    gpu = prod.slurm.nodeset("gpu-a100")
    cpu = prod.slurm.nodeset("cpu-bm")
    assert gpu is not None and cpu is not None
    small = Host.model_validate(
        {"name": "g01", "mac": "0c:c4:7a:00:00:01", "ip": "10.0.0.1", "nodeset": "gpu-a100", "gres": ["gpu:a100:4"],
         "features": ["nvlink"]}
    )  # fmt: skip
    params = dict(host_parameters(gpu, small))
    assert params["Gres"] == "gpu:a100:4" and params["Features"] == "gpu-a100,nvlink"
    plain = Host.model_validate({"name": "c01", "mac": "0c:c4:7a:00:00:02", "ip": "10.0.0.2", "nodeset": "cpu-bm"})
    assert host_parameters(cpu, plain) == [("Features", "cpu-bm,baremetal,avx512"), ("Weight", "10")]
