"""Tier 4 (real daemons): what hpcforge renders for Slurm, loaded into a real Slurm 22.05.

Slinky (Slurm 26.05) writes slurm.conf itself and appends the Controller's `extraConf`; here the
test plays the operator: it writes what the operator would (a `NodeSet=<name> Feature=<name>`
line per NodeSet, static nodes standing in for NodeSet pods, the prolog/epilog scripts of the
referenced ConfigMaps) around hpcforge's rendered extraConf, gres.conf and cgroup.conf, and starts
a real slurmctld and slurmd on 127.0.0.1. Whatever 22.05 or this sandbox cannot take is listed in
UNSUPPORTED with the reason; everything else is loaded verbatim.
"""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from components.config import PlatformConfig, load_config
from components.layers.provisioning.grendel import render_join_script
from components.layers.slurm.slurm_conf import cgroup_conf, controller_extra_conf, gres_conf, node_parameters
from offline.engine import RecordedStack

from .daemons import slurm
from .daemons.common import wait_until, write_script
from .daemons.slurm import SlurmCluster, node_line
from .helpers import config_values, raw_config, require_binaries, skip_or_fail

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

# Parameters the rendered extraConf sets that this test cannot load into Slurm 22.05 as-is, and why.
UNSUPPORTED = {
    "ProctrackType": "proctrack/cgroup needs a delegated cgroup v2 tree, which the test sandbox (no systemd) lacks; the harness uses proctrack/linuxproc",
    "TaskPlugin": "task/cgroup needs the same cgroup tree; the harness uses task/none",
    "JobAcctGatherType": "jobacct_gather/cgroup needs the cgroup tree; the harness uses jobacct_gather/none",
    "PrologFlags": "Contain creates an extern step in a job cgroup (proctrack/cgroup)",
    "AccountingStorageEnforce": "enforcing associations needs slurmdbd, which this test does not run (the harness sets accounting_storage/none)",
    "AccountingStorageTRES": "needs slurmdbd as above",
    "GresTypes": "GPU nodes are stood in for by CPU-only static nodes here; tests/test_gpu_gres.py loads the GRES with stand-in device files",
}
CGROUP_UNSUPPORTED = {
    "CgroupPlugin": "cgroup/v2 needs a pure cgroup v2 host; this sandbox mounts hybrid cgroups (slurmd: 'Hybrid mode is "
    "not supported'), so the test lets slurmd autodetect; every other cgroup.conf key is loaded as rendered",
}
PARTITION_FIELDS_UNSUPPORTED = {
    "QOS": "a partition QOS must exist in slurmdbd's database; without accounting slurmctld cannot resolve it",
}


def require_root() -> None:
    if os.geteuid() != 0:
        skip_or_fail("the real-daemon tier runs slurmctld/slurmd as root (SlurmUser=root)")


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def loadable_extra_conf(config: PlatformConfig) -> tuple[str, list[str], list[str]]:
    """The rendered extraConf minus what UNSUPPORTED lists: (parameters, partition lines, dropped lines)."""
    kept: list[str] = []
    partitions: list[str] = []
    dropped: list[str] = []
    for line in controller_extra_conf(config.slurm, accounting=True).splitlines():
        key = line.split("=", 1)[0]
        if key in UNSUPPORTED:
            dropped.append(line)
            continue
        if line.startswith("PartitionName="):
            fields = [field for field in line.split() if field.split("=", 1)[0] not in PARTITION_FIELDS_UNSUPPORTED]
            if len(fields) != len(line.split()):
                dropped.append(line)
            partitions.append(" ".join(fields))
            continue
        kept.append(line)
    return "\n".join(kept) + "\n", partitions, dropped


def loadable_cgroup_conf(config: PlatformConfig) -> str:
    lines = cgroup_conf(config.slurm).splitlines()
    assert any(line.startswith("CgroupPlugin=cgroup/v2") for line in lines)
    return "\n".join("CgroupPlugin=autodetect" if line.startswith("CgroupPlugin=") else line for line in lines) + "\n"


def operator_lines(config: PlatformConfig) -> list[str]:
    """The NodeSet lines the Slinky operator writes for the NodeSets."""
    return [f"NodeSet={ns.name} Feature={ns.name}" for ns in config.slurm.nodesets]


def stand_in_nodes(config: PlatformConfig) -> list[str]:
    """One static node per nodeset, with the features its pods register with (GRES left out: UNSUPPORTED)."""
    lines = []
    for nodeset in config.slurm.nodesets:
        features = [nodeset.name] + [v for k, v in node_parameters(nodeset) if k == "Features"]
        lines.append(node_line(f"{nodeset.name}-0", features=",".join(features).split(",")))
    return lines


def test_rendered_slurm_config_loads_and_every_partition_comes_up(prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    extra, partition_lines, dropped = loadable_extra_conf(prod)
    assert {line.split("=", 1)[0] for line in dropped if not line.startswith("PartitionName=")} <= set(UNSUPPORTED)
    with SlurmCluster(
        tmp_path / "cluster",
        prod.slurm.cluster_name,
        nodes=stand_in_nodes(prod),
        partitions=partition_lines,
        extra_conf="\n".join(operator_lines(prod)) + "\n" + extra,
        cgroup_conf=loadable_cgroup_conf(prod),
    ) as cluster:
        partitions = cluster.sinfo_partitions()
        assert set(partitions) == {p.name for p in prod.slurm.partitions}
        assert partitions["cpu"] == ["cpu-0", "cpu-bm-0"]
        assert partitions["gpu"] == ["gpu-a100-0", "gpu-h100-0"]
        assert partitions["h100"] == ["gpu-h100-0"]
        assert cluster.default_partition() == "cpu"
        for nodeset in prod.slurm.nodesets:
            cluster.wait_node_idle(f"{nodeset.name}-0", 60)
        # The typed settings really are in force.
        config = cluster.scontrol("show", "config")
        assert re.search(r"^SchedulerType\s+= sched/backfill$", config, re.M)
        assert re.search(r"^PriorityType\s+= priority/multifactor$", config, re.M)
        assert re.search(
            r"^SchedulerParameters\s+= bf_continue,bf_interval=30,bf_max_job_test=1000,bf_window=10080$", config, re.M
        )
        assert re.search(r"^SelectTypeParameters\s+= CR_CORE_MEMORY$", config, re.M)
        assert re.search(r"^SlurmdTimeout\s+= 600 sec$", config, re.M)
        debug = cluster.run("scontrol", "show", "partition", "debug").stdout
        assert "OverSubscribe=FORCE:2" in debug and "MaxTime=00:30:00" in debug


def test_gres_conf_is_what_slurm_reads(prod: PlatformConfig) -> None:
    text = gres_conf(prod.slurm)
    assert text is not None
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    # Loaded into a real slurmd with stand-in device files in tests/test_gpu_gres.py (UNSUPPORTED["GresTypes"] here).
    assert lines and all(line.startswith(("NodeName=gpu-a100-", "NodeName=gpu-h100-")) for line in lines)


def _script_dir(stack: RecordedStack, name: str, target: Path) -> Path:
    data = next(
        r.inputs["data"]
        for r in stack.kubernetes_objects()
        if r.inputs["kind"] == "ConfigMap" and r.inputs["metadata"]["name"] == name
    )
    target.mkdir(parents=True)
    for key, text in data.items():
        (target / key).write_text(text)  # exactly the ConfigMap's content, shebang included
        (target / key).chmod(0o755)
    return target


def test_rendered_prolog_and_epilog_run_around_a_real_job(prod_stack: RecordedStack, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    prolog = _script_dir(prod_stack, "slurm-prolog-scripts", tmp_path / "prolog.d")
    epilog = _script_dir(prod_stack, "slurm-epilog-scripts", tmp_path / "epilog.d")
    first_job = random.randint(200_000, 900_000)  # scratch dirs live in /tmp: avoid other runs' job ids
    with SlurmCluster(
        tmp_path / "cluster",
        "prolog",
        nodes=[node_line("n1")],
        partitions=["PartitionName=batch Nodes=n1 Default=YES State=UP"],
        # Slinky writes one Prolog=/Epilog= line per script (Slurm 26.05); 22.05 keeps only the last
        # such line but accepts a glob, which runs every script of the ConfigMap.
        extra_conf=f"Prolog={prolog}/*\nEpilog={epilog}/*\nFirstJobId={first_job}\n",
    ) as cluster:
        job = cluster.sbatch('if [ -d "/tmp/slurm-$SLURM_JOB_ID" ]; then echo scratch-ready; fi > scratch.txt\n')
        assert cluster.wait_job(job, 60) == "COMPLETED", cluster.job_info(job)
        assert (cluster.jobs_dir / "scratch.txt").read_text().strip() == "scratch-ready"  # 05-scratch.sh ran
        wait_until(lambda: not Path(f"/tmp/slurm-{job}").exists(), 30, "the epilog to remove the job's scratch directory")
        assert cluster.node_state("n1") == "IDLE"  # 00-health.sh and 10-gpu-check.sh passed


def test_a_failing_prolog_from_config_drains_the_node(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    values = config_values("prod")
    values["hpcforge:slurm"]["prolog"] = [{"name": "00-refuse.sh", "inline": "#!/bin/sh\necho 'node not fit' >&2\nexit 1\n"}]
    config = load_config(raw_config(values))
    from components.layers.slurm.objects import script_text

    script = write_script(tmp_path / "00-refuse.sh", script_text(config.slurm.prolog[0]).split("\n", 1)[1])
    with SlurmCluster(
        tmp_path / "cluster",
        "drain",
        nodes=[node_line("n1")],
        partitions=["PartitionName=batch Nodes=n1 Default=YES State=UP"],
        extra_conf=f"Prolog={script}\n",
    ) as cluster:
        cluster.sbatch("echo never\n")
        state = cluster.wait_node_state("n1", "DRAIN", 60)
        assert "DRAIN" in state.split("+") and cluster.node_reason("n1") == "Prolog error"


def test_bare_metal_join_command_registers_a_dynamic_node_that_runs_jobs(prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    with SlurmCluster(
        tmp_path / "cluster",
        prod.slurm.cluster_name,
        nodes=[node_line("cpu-0", features=["cpu", "avx512"])],
        # 22.05 puts dynamic nodes only into Nodes=ALL partitions (26.05 also resolves NodeSet
        # features for them, which is how Slinky's cpu-bm nodeset picks bare-metal nodes up).
        partitions=["PartitionName=cpu Nodes=ALL Default=YES State=UP"],
        extra_conf="\n".join(operator_lines(prod)) + "\n",
        dynamic=True,
    ) as cluster:
        host, port = cluster.conf_server.rsplit(":", 1)
        script = render_join_script(prod.slurm, "cpu-bm", host, port=int(port))
        command = script.strip().splitlines()[-1].removeprefix("exec ").replace(' "$@"', "")
        # The exact rendered command, plus the host's name (Grendel gives each host its own).
        cluster.start_slurmd_command(f"{command} -N cn001 -D")
        cluster.wait_node_idle("cn001", 60)
        info: dict[str, Any] = cluster.node_info("cn001")
        assert info["AvailableFeatures"].split(",") == ["cpu-bm", "baremetal", "avx512"]
        assert "DYNAMIC_NORM" in info["State"]
        job = cluster.sbatch("hostname > where.txt\n", partition="cpu", args=["--constraint=cpu-bm"])
        assert cluster.wait_job(job, 60) == "COMPLETED"
        assert (cluster.jobs_dir / "where.txt").read_text().strip()
        assert time.time()
