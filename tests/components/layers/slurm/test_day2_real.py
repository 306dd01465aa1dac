"""Tier 4 (real daemons), issue 27 item 7: a job of an account a partition does not allow is refused at submit.

The partition lines and `EnforcePartLimits` are rendered by hpcforge (`partition_line`, `controller_parameters`) and
loaded into a real slurmctld and slurmd (Debian's, tests/daemons/slurm.py). slurm.conf(5), EnforcePartLimits: with
`ALL` "Jobs which exceed ... any of its configured limits will be rejected at submission time" (the limits include
AllowAccounts); with `NO`, the default, such a job "will remain queued until the partition limits are altered".
slurmctld checks AllowAccounts against the associations it holds, so a real slurmdbd on a real MariaDB serves the
accounts `llm`, `ops` and `genomics`, each with an association for a local user of the test's, who submits (slurmctld lets root and
SlurmUser past partition limits).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from components.layers.slurm.config import SlurmConfig
from components.layers.slurm.slurm_conf import controller_parameters, partition_line
from tests.daemons import mariadb as mariadb_harness
from tests.daemons import slurm as slurm_harness
from tests.daemons import slurmdbd as slurmdbd_harness
from tests.daemons.common import run, wait_until
from tests.daemons.mariadb import MariaDBServer
from tests.daemons.slurm import SlurmCluster, node_line
from tests.daemons.slurmdbd import SlurmDBD
from tests.helpers import require_binaries, skip_or_fail

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]


def _slurm(enforce: str) -> SlurmConfig:
    return SlurmConfig.model_validate(
        {
            "clusterName": "partlimits",
            "controller": {"enforcePartLimits": enforce},
            "login": {"pool": "default"},
            "nodesets": [{"name": "cpu", "replicas": 1, "cpu": "1", "memory": "1Gi"}],
            "partitions": [
                {"name": "open", "nodesets": ["cpu"], "default": True},
                {"name": "llm", "nodesets": ["cpu"], "allowAccounts": ["llm", "ops"]},
            ],
        }
    )


@pytest.fixture(params=["ALL", "NO"])
def cluster(request: pytest.FixtureRequest) -> Iterator[tuple[str, SlurmCluster, str]]:
    if os.geteuid() != 0:
        skip_or_fail("the real-daemon tier runs slurmctld as root")
    require_binaries(*slurm_harness.REQUIRED_BINARIES, *slurmdbd_harness.REQUIRED_BINARIES, *mariadb_harness.REQUIRED_BINARIES)
    slurm = _slurm(request.param)
    enforce = [f"{k}={v}" for k, v in controller_parameters(slurm, accounting=False) if k == "EnforcePartLimits"]
    assert enforce == [f"EnforcePartLimits={request.param}"]
    # hpcforge's partitions name the nodeset; here the one static node stands in for it
    partitions = [partition_line(p).replace("Nodes=cpu", "Nodes=n1") for p in slurm.partitions]
    tmp = Path(tempfile.mkdtemp(prefix="hpcforge-partlimits-"))
    tmp.chmod(0o755)  # the user's sbatch reads slurm.conf
    # A local user of the test's own (Slurm 26.05's assoc_mgr does not resolve `nobody`: "User 65534 not found").
    user, uid = f"hpcp{secrets.token_hex(3)}", 40000 + secrets.randbelow(20000) * 2
    run(["useradd", "-M", "-N", "-u", str(uid), "-s", "/bin/sh", user], timeout=30, check=True)
    try:
        with MariaDBServer(tmp / "db") as db, SlurmDBD(tmp / "dbd", db) as dbd:
            running = SlurmCluster(
                tmp / "slurm",
                "partlimits",
                nodes=[node_line("n1", cpus=1)],
                partitions=partitions,
                extra_conf=dbd.slurm_conf_lines("associations") + "\n".join(enforce) + "\n",
                allow_override=SlurmDBD.OVERRIDES,
                slurm_key=dbd.slurm_key,  # auth/slurm: slurmctld and slurmdbd share one key
            )
            with running:
                wait_until(
                    lambda: "partlimits" in running.run("sacctmgr", "-P", "-n", "show", "cluster", "format=cluster").stdout,
                    60,
                    "the cluster to register with slurmdbd",
                )
                for account in ("llm", "ops", "genomics"):
                    running.run("sacctmgr", "-i", "add", "account", account, "cluster=partlimits", check=True)
                running.run("sacctmgr", "-i", "add", "user", user, "account=llm,ops,genomics", "cluster=partlimits", check=True)
                yield request.param, running, user
    finally:
        run(["userdel", user], timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


def test_a_job_of_an_account_the_partition_does_not_allow(cluster: tuple[str, SlurmCluster, str]) -> None:
    enforce, running, user = cluster
    assert running.partition_info("llm")["AllowAccounts"] == "llm,ops"
    submitted = run(
        ["sbatch", "--parsable", "-p", "llm", "-A", "genomics", "-D", "/tmp", "-o", "/dev/null", "--wrap", "true"],
        env=running.env(),
        user=user,
        timeout=30,
        cwd="/tmp",
    )
    if enforce == "ALL":
        assert submitted.returncode != 0
        print(f"[EnforcePartLimits=ALL] sbatch -p llm -A genomics: {submitted.stderr.strip()}")
        assert "Invalid account or account/partition combination specified" in submitted.stderr
    else:  # Slurm's default: accepted, and it waits for a partition change that never comes
        assert submitted.returncode == 0, submitted.stderr
        job = int(submitted.stdout.strip().split(";")[0])
        info = running.job_info(job)
        print(f"[EnforcePartLimits=NO] job {job}: {info['JobState']} {info['Reason']}")
        assert info["JobState"] == "PENDING"
        # Slurm 26.05.3 names the reason PartitionConfig (22.05 spelled it out: "account not permitted to use this
        # partition (llm allows llm,ops not genomics)")
        assert info["Reason"] == "PartitionConfig"
    allowed = run(
        ["sbatch", "--parsable", "-p", "llm", "-A", "ops", "-D", "/tmp", "-o", "/dev/null", "--wrap", "true"],
        env=running.env(),
        user=user,
        timeout=30,
        cwd="/tmp",
    )
    assert allowed.returncode == 0, allowed.stderr
