"""Tier 4 (real daemons): Slurm accounting as code against real slurmdbd + MariaDB + slurmctld 26.05.3.

The desired state is rendered from typed config (`desired_state`), written to a file as the
ConfigMap would hold it, and scripts/slurm/sacct_sync.py runs against a private slurmdbd (storing in
a private MariaDB) and a slurmctld with `AccountingStorageEnforce=associations,limits,qos`, exactly as
the Job runs it (python3 + sacctmgr/squeue on PATH, SLURM_CONF pointing at the cluster).

A directory user is stood in for by a local system user created for the test (unique name and uid,
removed at the end): slurmctld resolves users through NSS, which is where SSSD puts LDAP users too.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from components.layers.directory.config import DirectoryConfig
from components.layers.slurm.accounts import SlurmAccountsConfig
from components.layers.slurm.accounts_job import job_command, sync_command
from components.layers.slurm.sacct import render_desired_state
from tests.daemons import mariadb as mariadb_harness
from tests.daemons import slurm as slurm_harness
from tests.daemons import slurmdbd as slurmdbd_harness
from tests.daemons.common import kill_tagged, run, wait_until
from tests.daemons.mariadb import MariaDBServer
from tests.daemons.slurm import SlurmCluster, node_line
from tests.daemons.slurm_prefix import slurm_path
from tests.daemons.slurmdbd import SlurmDBD
from tests.helpers import REPO, require_binaries, skip_or_fail

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(600)]

SYNC = REPO / "scripts" / "slurm" / "sacct_sync.py"
CLUSTER = "acctest"


def directory_for(users: list[tuple[str, int]]) -> DirectoryConfig:
    return DirectoryConfig.model_validate(
        {
            "suffix": "dc=test,dc=org",
            "groups": [{"name": "hpc-users", "gidNumber": 5000}, {"name": "proj-a", "gidNumber": 5001}],
            "users": [
                {"name": name, "uidNumber": uid, "primaryGroup": "hpc-users", "groups": ["proj-a"] if index == 0 else []}
                for index, (name, uid) in enumerate(users)
            ],
        }
    )


def accounts_config(extra_users: list[dict[str, Any]] | None = None) -> SlurmAccountsConfig:
    return SlurmAccountsConfig.model_validate(
        {
            "qos": [
                {"name": "debug", "priority": 10, "maxTresPerUser": {"cpu": 1}, "maxWall": "1:00:00", "maxJobsPerUser": 1},
                {"name": "long", "maxWall": "2-00:00:00", "preempt": ["debug"], "preemptMode": "requeue"},
            ],
            "accounts": [
                {"name": "science", "description": "Research", "fairshare": 50},
                {
                    "name": "proja",
                    "parent": "science",
                    "fairshare": 20,
                    "groups": ["proj-a"],
                    "qos": ["debug", "long"],
                    "defaultQos": "debug",
                },
                {"name": "ops", "fairshare": 5, "qos": ["normal", "debug"], "defaultQos": "debug"},
            ],
            "users": extra_users or [],
            "defaultAccount": "ops",
        }
    )


class Site:
    def __init__(self, cluster: SlurmCluster, tmp: Path, users: list[tuple[str, int]]) -> None:
        self.cluster = cluster
        self.tmp = tmp
        self.users = users

    def desired(self, accounts: SlurmAccountsConfig, users: list[tuple[str, int]]) -> Path:
        path = self.tmp / f"desired-{secrets.token_hex(4)}.json"
        path.write_text(render_desired_state(CLUSTER, accounts, directory_for(users)))
        return path

    def sync(self, desired: Path, *args: str) -> tuple[int, str, dict[str, Any]]:
        """The Job's command (job_command: sackd, then the reconciler) with this test's paths: slurm.conf with slurm.key
        beside it, as the Job's /etc/slurm has them, and no SLURM_SACK_* variables: sackd finds the key by itself and
        the clients find sackd's socket by themselves. One difference: sackd's directory is /run/slurm-<ClusterName>
        (RUNTIME_DIRECTORY; the clients look there first), not the Job's /run/slurm, which other tests' slurmd share."""
        command = job_command()
        assert command[-len(sync_command()) :] == sync_command()
        argv = [*command[: -len(sync_command())], sys.executable, str(SYNC), "--desired", str(desired), *args]
        key = self.cluster.conf_path.parent / "slurm.key"
        if not key.exists():
            shutil.copyfile(self.cluster.auth.key_path, key)
            key.chmod(0o600)
        run_dir = f"/run/slurm-{CLUSTER}"
        env = self.cluster.env({"SLURM_SACK_KEY": None, "SLURM_SACK_SOCKET": None, "RUNTIME_DIRECTORY": run_dir})
        env["PATH"] = f"{slurm_path()}:{env['PATH']}"
        out, err = self.tmp / "sync.out", self.tmp / "sync.err"
        # the reconciler's exit ends the Job's container and sackd with it; here sackd outlives it: wait for the
        # process (not for its output, which sackd keeps open), then stop sackd
        with out.open("w") as stdout, err.open("w") as stderr:
            proc = subprocess.Popen(argv, env=env, stdout=stdout, stderr=stderr, text=True, cwd=self.cluster.tmp_dir)
            try:
                code = proc.wait(timeout=180)
            finally:
                if proc.poll() is None:
                    proc.kill()
                kill_tagged([f"RUNTIME_DIRECTORY={run_dir}"])
                shutil.rmtree(run_dir, ignore_errors=True)
        result = subprocess.CompletedProcess(argv, code, out.read_text(), err.read_text())
        output = result.stdout + result.stderr
        summary = json.loads(result.stdout.strip().splitlines()[-1])
        return result.returncode, output, summary

    def assocs(self) -> set[tuple[str, str, str]]:
        rows = self.cluster.run(
            "sacctmgr", "-P", "-n", "show", "assoc", f"cluster={CLUSTER}", "format=account,user,parentname", check=True
        )
        return {tuple(line.split("|")) for line in rows.stdout.splitlines() if line}  # type: ignore[misc]

    def sbatch_as(self, user: str, *args: str) -> subprocess.CompletedProcess[str]:
        return run(
            ["sbatch", "--parsable", "-D", "/tmp", "-o", "/dev/null", *args],
            env=self.cluster.env(),
            user=user,
            timeout=30,
            cwd="/tmp",
        )


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    if os.geteuid() != 0:
        skip_or_fail("the real-daemon tier runs slurmctld/slurmdbd as root")
    require_binaries(*slurm_harness.REQUIRED_BINARIES, *slurmdbd_harness.REQUIRED_BINARIES, *mariadb_harness.REQUIRED_BINARIES)
    # the users' sbatch reads slurm.conf: pytest's own temporary tree is root-only (0700), so use /tmp
    tmp = Path(tempfile.mkdtemp(prefix="hpcforge-accounting-"))
    tmp.chmod(0o755)
    # two local users standing in for directory users: unique names and uids per run
    suffix = secrets.token_hex(3)
    base_uid = 40000 + secrets.randbelow(20000) * 2
    users = [(f"hpcf{suffix}a", base_uid), (f"hpcf{suffix}b", base_uid + 1)]
    created = []
    try:
        for name, uid in users:
            run(["useradd", "-M", "-N", "-u", str(uid), "-s", "/bin/sh", name], timeout=30, check=True)
            created.append(name)
        with MariaDBServer(tmp / "db") as db, SlurmDBD(tmp / "dbd", db) as dbd:
            cluster = SlurmCluster(
                tmp / "slurm",
                CLUSTER,
                nodes=[node_line("n1", cpus=2)],
                extra_conf=dbd.slurm_conf_lines("associations,limits,qos"),
                allow_override=SlurmDBD.OVERRIDES,
                slurm_key=dbd.slurm_key,
            )
            with cluster:
                # slurmctld registers its cluster with slurmdbd on start
                wait_until(
                    lambda: CLUSTER in cluster.run("sacctmgr", "-P", "-n", "show", "cluster", "format=cluster").stdout,
                    60,
                    "the cluster to register with slurmdbd",
                )
                yield Site(cluster, tmp, users)
    finally:
        for name in created:
            run(["userdel", name], timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


def test_directory_user_is_refused_before_reconciliation_and_runs_after(site: Site) -> None:
    user = site.users[1][0]
    refused = site.sbatch_as(user, "--wrap", "true")
    assert refused.returncode != 0
    assert "Invalid account" in refused.stderr
    code, output, summary = site.sync(site.desired(accounts_config(), site.users))
    assert code == 0, output
    assert summary["changes"] > 0 and summary["failed"] == 0
    accepted = site.sbatch_as(user, "--wrap", "true")
    assert accepted.returncode == 0, accepted.stderr
    job = int(accepted.stdout.strip().split(";")[0])
    assert site.cluster.wait_job(job, 60) == "COMPLETED"
    assert site.cluster.job_info(job)["Account"] == "ops"


def test_associations_match_config_and_second_run_writes_nothing(site: Site) -> None:
    a, b = site.users[0][0], site.users[1][0]
    desired = site.desired(accounts_config(), site.users)
    code, output, _ = site.sync(desired)
    assert code == 0, output
    assert {(acct, user, parent) for acct, user, parent in site.assocs() if "root" not in (user, acct)} == {
        ("science", "", "root"),
        ("proja", "", "science"),
        ("ops", "", "root"),
        ("proja", a, ""),  # member of group proj-a
        ("ops", b, ""),  # defaultAccount
    }
    qos = site.cluster.run(
        "sacctmgr", "-P", "-n", "show", "qos", "format=name,priority,maxtrespu,maxwall,maxjobspu,preempt,preemptmode", check=True
    )
    rows = {line.split("|")[0]: line.split("|") for line in qos.stdout.splitlines()}
    assert rows["debug"][1:6] == ["10", "cpu=1", "01:00:00", "1", ""]
    assert rows["long"][3] == "2-00:00:00" and rows["long"][5] == "debug" and rows["long"][6] == "requeue"
    code, output, summary = site.sync(desired)
    assert code == 0, output
    assert summary["changes"] == 0 and summary["writes"] == 0, output
    code, output, summary = site.sync(desired, "--check")
    assert code == 0 and summary["changes"] == 0, output


def test_check_reports_drift_and_changes_nothing(site: Site) -> None:
    desired = site.desired(accounts_config(), site.users)
    assert site.sync(desired)[0] == 0
    site.cluster.run("sacctmgr", "-i", "modify", "account", "where", "name=science", "set", "fairshare=7", check=True)
    code, output, summary = site.sync(desired, "--check")
    assert code == 1
    assert "account science: fairshare 7 -> 50" in output
    assert summary["writes"] == 0
    share = site.cluster.run("sacctmgr", "-P", "-n", "show", "assoc", "account=science", "user=", "format=share", check=True)
    assert share.stdout.split()[0] == "7"
    assert site.sync(desired)[0] == 0
    assert site.sync(desired, "--check")[0] == 0


def test_job_over_qos_limit_stays_pending_with_qos_reason(site: Site) -> None:
    user = site.users[1][0]
    assert site.sync(site.desired(accounts_config(), site.users))[0] == 0
    first = site.sbatch_as(user, "--qos=debug", "--wrap", "sleep 60")
    assert first.returncode == 0, first.stderr
    first_id = int(first.stdout.strip().split(";")[0])
    second = site.sbatch_as(user, "--qos=debug", "--wrap", "sleep 60")
    assert second.returncode == 0, second.stderr
    second_id = int(second.stdout.strip().split(";")[0])
    try:
        site.cluster.wait_job(first_id, 30, states={"RUNNING"})

        def pending_reason() -> str | None:
            info = site.cluster.job_info(second_id)
            return info["Reason"] if info["JobState"] == "PENDING" and info["Reason"].startswith("QOS") else None

        reason = wait_until(pending_reason, 30, "the second job to wait on its QOS")
        assert reason in {"QOSMaxJobsPerUserLimit", "QOSMaxCpuPerUserLimit"}
        assert site.cluster.job_state(second_id) == "PENDING"
    finally:
        site.cluster.run("scancel", str(first_id), str(second_id))


def test_removed_user_loses_association_but_not_while_a_job_runs(site: Site) -> None:
    a, b = site.users[0][0], site.users[1][0]
    assert site.sync(site.desired(accounts_config(), site.users))[0] == 0
    running = site.sbatch_as(b, "--wrap", "sleep 120")
    assert running.returncode == 0, running.stderr
    job = int(running.stdout.strip().split(";")[0])
    without_b = site.desired(accounts_config(), [site.users[0]])
    try:
        site.cluster.wait_job(job, 30, states={"RUNNING"})
        code, output, _ = site.sync(without_b)
        assert code == 0, output
        assert f"! user {b}: not declared, kept while 1 job(s) are active" in output
        assert ("ops", b, "") in site.assocs()
        assert site.sync(without_b, "--check")[0] == 1
    finally:
        site.cluster.run("scancel", str(job))
    wait_until(lambda: not site.cluster.run("squeue", "-h", "-u", b, "-o", "%i").stdout.strip(), 30, "the job to leave the queue")
    code, output, _ = site.sync(without_b)
    assert code == 0, output
    assert f"- user {b}" in output
    assert not any(user == b for _, user, _ in site.assocs())
    assert ("proja", a, "") in site.assocs()
    assert site.sync(without_b, "--check")[0] == 0
    assert pwd.getpwnam(b)  # the system user is untouched: only its Slurm association went


def test_changed_limits_and_parent_are_applied_then_stable(site: Site) -> None:
    assert site.sync(site.desired(accounts_config(), site.users))[0] == 0
    changed = accounts_config().model_dump(by_alias=True)
    debug = changed["qos"][0]
    debug.update(maxJobsPerUser=3, maxTresPerUser={}, maxWall=None, grpTres={"cpu": 8})
    changed["accounts"][1]["parent"] = "root"  # proja moves out of science
    changed_config = SlurmAccountsConfig.model_validate(changed)
    desired = site.desired(changed_config, site.users)
    code, output, summary = site.sync(desired)
    assert code == 0, output
    assert "account proja: parent science -> root" in output
    rows = site.cluster.run(
        "sacctmgr", "-P", "-n", "show", "qos", "where", "name=debug", "format=maxjobspu,maxtrespu,maxwall,grptres", check=True
    )
    assert rows.stdout.strip().split("|") == ["3", "", "", "cpu=8"]  # per-user CPU limit and MaxWall cleared
    assert ("proja", "", "root") in site.assocs()
    code, output, summary = site.sync(desired)
    assert code == 0 and summary["writes"] == 0, output
    assert site.sync(site.desired(accounts_config(), site.users))[0] == 0  # back to the original


def test_partition_qos_must_be_a_qos_the_reconciler_created(site: Site) -> None:
    """Why partitions' `qos` is checked against slurm.accounts.qos: slurmctld takes only a QOS slurmdbd has."""
    assert site.sync(site.desired(accounts_config(), site.users))[0] == 0
    refused = site.cluster.run("scontrol", "update", "PartitionName=debug", "QOS=undeclared")
    assert refused.returncode != 0
    site.cluster.scontrol("update", "PartitionName=debug", "QOS=long")
    try:
        assert site.cluster.partition_info("debug")["QoS"] == "long"
    finally:
        site.cluster.scontrol("update", "PartitionName=debug", "QOS=")


def test_coordinators_are_added_and_removed(site: Site) -> None:
    a = site.users[0][0]
    with_coordinator = accounts_config().model_dump(by_alias=True)
    with_coordinator["accounts"][1]["coordinators"] = [a]
    desired = site.desired(SlurmAccountsConfig.model_validate(with_coordinator), site.users)

    def coordinators() -> str:
        shown = site.cluster.run(
            "sacctmgr", "-P", "-n", "show", "account", "proja", "withcoord", "format=account,coordinators", check=True
        )
        return shown.stdout.strip()

    code, output, _ = site.sync(desired)
    assert code == 0 and f"+ coordinator {a} of proja" in output, output
    assert coordinators() == f"proja|{a}"
    assert site.sync(desired)[2]["writes"] == 0
    code, output, _ = site.sync(site.desired(accounts_config(), site.users))
    assert code == 0 and f"- coordinator {a} of proja" in output, output
    assert coordinators() == "proja|"
