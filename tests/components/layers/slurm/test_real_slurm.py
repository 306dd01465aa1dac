"""Tier 4 (real daemons): what hpcforge renders for Slurm, loaded into a real Slurm 26.05.3 (the Slinky images' release).

Slinky writes slurm.conf itself and appends the Controller's `extraConf`; here the test plays the operator: it writes
what the operator would (a `NodeSet=<name> Feature=<name>` line per NodeSet, the accounting lines for the Accounting,
static nodes standing in for NodeSet pods, one Prolog=/Epilog= line per script of the referenced ConfigMaps) around
hpcforge's rendered extraConf and cgroup.conf, and starts a real slurmdbd, slurmctld and slurmd on 127.0.0.1 with
auth/slurm. The extraConf is loaded verbatim, partition QOS and AccountingStorageEnforce included; where jobs run the
harness keeps its HARNESS_OWNED keys, and cgroup.conf's CgroupPlugin is autodetect on this hybrid-cgroup host
(CGROUP_UNSUPPORTED). gres.conf is loaded by tests/components/layers/slurm/test_gpu_gres.py with stand-in device files.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from components.layers.slurm.face import render_join_script
from components.layers.slurm.slurm_conf import (
    JOB_NAMESPACE_BASE,
    cgroup_conf,
    controller_extra_conf,
    gres_conf,
    job_container_conf,
    node_parameters,
)
from components.site.loader import load_config
from components.site.root import PlatformConfig
from offline.program.engine import RecordedStack
from tests.daemons import mariadb as mariadb_harness
from tests.daemons import slurm
from tests.daemons import slurmdbd as slurmdbd_harness
from tests.daemons.common import run, wait_until, write_script
from tests.daemons.mariadb import MariaDBServer
from tests.daemons.slurm import SlurmCluster, node_line
from tests.daemons.slurmdbd import SlurmDBD
from tests.helpers import config_values, raw_config, require_binaries, skip_or_fail

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

# The slurm.conf keys the harness owns (tests/daemons/slurm.py OWNED_KEYS) that hpcforge's extraConf also sets: the
# harness comments them out and lists them in SlurmCluster.overridden, and a test that runs jobs may not take them back.
# Every other rendered line is loaded verbatim, slurmdbd and the partition QOS included (accounting_site).
HARNESS_OWNED = {
    "ProctrackType": "proctrack/cgroup cannot start a job step here (no usable freezer cgroup, ../shared/slurm/README.md); "
    "where jobs run the harness uses proctrack/linuxproc",
    "TaskPlugin": "task/cgroup needs the same cgroup tree; where jobs run the harness uses task/affinity",
    "JobAcctGatherType": "jobacct_gather/cgroup needs the same cgroup tree; where jobs run the harness uses jobacct_gather/none",
}


def require_root() -> None:
    if os.geteuid() != 0:
        skip_or_fail("the real-daemon tier runs slurmctld/slurmd as root (SlurmUser=root)")


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def loadable_extra_conf(config: PlatformConfig) -> tuple[str, list[str], list[str]]:
    """The rendered extraConf, all of it: (parameters, partition lines, []) - nothing is dropped any more (the
    harness overrides its own keys, HARNESS_OWNED; AccountingStorage* and QOS need accounting_site)."""
    kept: list[str] = []
    partitions: list[str] = []
    for line in controller_extra_conf(config.slurm, accounting=True).splitlines():
        (partitions if line.startswith("PartitionName=") else kept).append(line)
    return "\n".join(kept) + "\n", partitions, []


@contextlib.contextmanager
def accounting_site(
    config: PlatformConfig, tmp: Path, users: Sequence[str] = (), dbd_conf: str = ""
) -> Iterator[tuple[SlurmDBD, str]]:
    """MariaDB + slurmdbd 26.05.3 with the cluster and every QOS the rendered partitions name (as the accounts
    reconcile would create them); yields the slurmdbd and the slurm.conf lines the operator writes for it
    (`accountingRef`: AccountingStorageType/Host/Port), for SlurmCluster(allow_override=SlurmDBD.OVERRIDES)."""
    require_binaries(*slurmdbd_harness.REQUIRED_BINARIES, *mariadb_harness.REQUIRED_BINARIES)
    with MariaDBServer(tmp / "db") as db, SlurmDBD(tmp / "dbd", db, extra_conf=dbd_conf) as dbd:
        env = dbd.client_env(config.slurm.cluster_name)
        qos = sorted({p.qos for p in config.slurm.partitions if p.qos})
        for args in (
            ["add", "cluster", config.slurm.cluster_name],
            *(["add", "qos", name] for name in qos),
            *([["add", "account", "tests"]] if users else []),
            *(["add", "user", user, "account=tests"] for user in users),
        ):
            run(["sacctmgr", "-i", *args], env=env, timeout=60, check=True)
        lines = "".join(
            line + "\n" for line in dbd.slurm_conf_lines().splitlines() if not line.startswith("AccountingStorageEnforce=")
        )
        yield dbd, lines


CGROUP_UNSUPPORTED = {
    "CgroupPlugin": "cgroup/v2 needs a pure cgroup v2 host (the Slinky nodes); this machine mounts hybrid cgroups, where "
    "26.05.3's slurmd stops with 'fatal: Hybrid mode is not supported' (at /sys/fs/cgroup/unified too). The test lets "
    "slurmd autodetect (cgroup/v1); every other cgroup.conf key is loaded as rendered",
}


@contextlib.contextmanager
def rendered_cluster(
    config: PlatformConfig, tmp: Path, *, nodes: Sequence[str], more_conf: str = "", users: Sequence[str] = (), **kwargs: Any
) -> Iterator[SlurmCluster]:
    """rendered_site's cluster."""
    with rendered_site(config, tmp, nodes=nodes, more_conf=more_conf, users=users, **kwargs) as (cluster, _):
        yield cluster


@contextlib.contextmanager
def rendered_site(
    config: PlatformConfig,
    tmp: Path,
    *,
    nodes: Sequence[str],
    more_conf: str = "",
    users: Sequence[str] = (),
    dbd_conf: str = "",
    **kwargs: Any,
) -> Iterator[tuple[SlurmCluster, SlurmDBD]]:
    """A SlurmCluster with hpcforge's rendered extraConf and cgroup.conf (loadable_*), the operator's NodeSet and
    accounting lines and an accounting_site behind it (root, and `users` under account `tests`); `kwargs` go to
    SlurmCluster.  Jobs run: the harness keeps HARNESS_OWNED's keys (SlurmCluster.overridden says which)."""
    extra, partition_lines, _ = loadable_extra_conf(config)
    with (
        accounting_site(config, tmp, users, dbd_conf) as (dbd, accounting),
        SlurmCluster(
            tmp / "cluster",
            config.slurm.cluster_name,
            nodes=nodes,
            partitions=partition_lines,
            extra_conf="\n".join(operator_lines(config)) + "\n" + accounting + extra + more_conf,
            cgroup_conf=loadable_cgroup_conf(config),
            job_container_conf=loadable_job_container_conf(tmp / "namespace"),
            allow_override=SlurmDBD.OVERRIDES,
            slurm_key=dbd.slurm_key,
            **kwargs,
        ) as cluster,
    ):
        assert {line.split("=", 1)[0] for line in cluster.overridden} <= set(HARNESS_OWNED)
        yield cluster, dbd


def loadable_cgroup_conf(config: PlatformConfig) -> str:
    """The rendered cgroup.conf with CGROUP_UNSUPPORTED's one key changed (and why, in the file)."""
    lines = cgroup_conf(config.slurm).splitlines()
    assert any(line.startswith("CgroupPlugin=cgroup/v2") for line in lines)
    return (
        "\n".join(
            "# [test harness] hybrid cgroup host (CGROUP_UNSUPPORTED)\nCgroupPlugin=autodetect"
            if line.startswith("CgroupPlugin=")
            else line
            for line in lines
        )
        + "\n"
    )


def loadable_job_container_conf(base: Path) -> str:
    """The rendered job_container.conf with BasePath under the test's directory (the slurmd pod's spool directory is
    not this host's); every other line as rendered."""
    lines = job_container_conf().splitlines()
    assert f"BasePath={JOB_NAMESPACE_BASE}" in lines
    return "\n".join(f"BasePath={base}/%n" if line.startswith("BasePath=") else line for line in lines) + "\n"


def operator_lines(config: PlatformConfig) -> list[str]:
    """The NodeSet lines the Slinky operator writes for the NodeSets."""
    return [f"NodeSet={ns.name} Feature={ns.name}" for ns in config.slurm.nodesets]


def stand_in_nodes(config: PlatformConfig) -> list[str]:
    """One static node per nodeset, with the features its pods register with (GRES: tests/components/layers/slurm/test_gpu_gres.py)."""
    lines = []
    for nodeset in config.slurm.nodesets:
        features = [nodeset.name] + [v for k, v in node_parameters(nodeset) if k == "Features"]
        lines.append(node_line(f"{nodeset.name}-0", features=",".join(features).split(",")))
    return lines


def test_rendered_slurm_config_loads_and_every_partition_comes_up(prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    extra, partition_lines, dropped = loadable_extra_conf(prod)
    assert dropped == []
    with (
        accounting_site(prod, tmp_path) as (dbd, accounting),
        SlurmCluster(
            tmp_path / "cluster",
            prod.slurm.cluster_name,
            nodes=stand_in_nodes(prod),
            partitions=partition_lines,
            extra_conf="\n".join(operator_lines(prod)) + "\n" + accounting + extra,
            cgroup_conf=loadable_cgroup_conf(prod),
            job_container_conf=loadable_job_container_conf(tmp_path / "namespace"),
            # nothing runs a job here: the rendered proctrack/task/jobacct plugins are loaded as they are
            allow_override={*SlurmDBD.OVERRIDES, *HARNESS_OWNED},
            slurm_key=dbd.slurm_key,
        ) as cluster,
    ):
        assert cluster.overridden == []
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
    # Loaded into a real slurmd with stand-in device files in tests/components/layers/slurm/test_gpu_gres.py.
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
        # Slinky writes one Prolog=/Epilog= line per script of the referenced ConfigMaps; 26.05 runs them all, in order.
        extra_conf="".join(f"Prolog={path}\n" for path in sorted(prolog.iterdir()))
        + "".join(f"Epilog={path}\n" for path in sorted(epilog.iterdir()))
        + f"FirstJobId={first_job}\n",
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
    # The rendered partitions as they are: `cpu` is Nodes=cpu,cpu-bm, and the operator's `NodeSet=cpu-bm Feature=cpu-bm`
    # line puts a dynamic node that registers with that feature into it (26.05 resolves NodeSet features at registration).
    with rendered_cluster(prod, tmp_path, nodes=[node_line("cpu-0", features=["cpu", "avx512"])], dynamic=True) as cluster:
        host, port = cluster.conf_server.rsplit(":", 1)
        script = render_join_script(prod.slurm, "cpu-bm", host, port=int(port))
        command = script.strip().splitlines()[-1].removeprefix("exec ").replace(' "$@"', "")
        # The exact rendered command, plus the host's name (Grendel gives each host its own).
        cluster.start_slurmd_command(f"{command} -N cn001 -D")
        cluster.wait_node_idle("cn001", 60)
        info: dict[str, Any] = cluster.node_info("cn001")
        assert info["AvailableFeatures"].split(",") == ["cpu-bm", "baremetal", "avx512"]
        assert "DYNAMIC_NORM" in info["State"]
        partitions = cluster.sinfo_partitions()
        assert "cn001" in partitions["cpu"] and "cn001" in partitions["scavenger"] and "cn001" not in partitions["gpu"]
        assert cluster.hostnames(cluster.partition_info("cpu")["Nodes"]) == ["cn001", "cpu-0"]
        job = cluster.sbatch("hostname > where.txt\n", partition="cpu", args=["--constraint=cpu-bm"])
        assert cluster.wait_job(job, 60) == "COMPLETED"
        assert (cluster.jobs_dir / "where.txt").read_text().strip()
        assert time.time()
