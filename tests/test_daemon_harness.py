"""Real-daemon tier: smoke tests proving each harness in tests/daemons works (and pinning what we learnt).

Each test starts the real programs (slurmctld/slurmd/sackd with auth/slurm, 389ds, MariaDB, sssd/sssctl) on
127.0.0.1 with private ports and temporary directories, and stops them again; every wait is bounded.
The facts asserted here are documented in the harness modules' docstrings.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemons import dirsrv, mariadb, slurm, sssd
from tests.daemons.common import (
    HarnessError,
    HarnessTimeoutError,
    ManagedProcess,
    PidfileDaemon,
    free_ports,
    kill_orphans,
    kill_tagged,
    pid_alive,
    processes_in,
    run,
    wait_until,
    write_script,
)
from tests.daemons.dirsrv import DirectoryServer, LdapError, cleanup_leftover_instances
from tests.daemons.mariadb import MariaDBServer, error_code
from tests.daemons.slurm import SlurmCluster, leftover_slurm_pids, node_line
from tests.daemons.sssd import lookup_with_sssd_settings, run_real_sssd_lookup, sssctl_config_check
from tests.helpers import REPO, require_binaries, skip_or_fail

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(240)]

SUFFIX = "dc=hpcforge,dc=test"
SSSD_DN = f"cn=sssd,ou=services,{SUFFIX}"
SSSD_PW = "Sssd-bind-pw-1"


def require_root() -> None:
    if os.geteuid() != 0:
        skip_or_fail("the real-daemon tier runs daemons as root (SlurmUser=root, dscreate, munged as munge)")


# --------------------------------------------------------------------------------------------------
# common


def test_common_wait_until_reports_what_and_log_tail(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    log.write_text("starting\nfatal: could not bind port 1234\n")
    with pytest.raises(HarnessTimeoutError) as raised:
        wait_until(lambda: False, 0.3, "the thing to be ready", log=log)
    message = str(raised.value)
    assert "the thing to be ready" in message and "0.3s" in message
    assert "fatal: could not bind port 1234" in message


def test_common_run_is_bounded_and_processes_stop_with_their_group(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(HarnessTimeoutError):
        run(["sleep", "30"], timeout=0.5)
    assert time.monotonic() - started < 10
    ports = free_ports(3)
    assert len(set(ports)) == 3 and all(1024 < port < 65536 for port in ports)

    script = write_script(tmp_path / "forks.sh", 'sleep 300 &\necho "$!" > "$1"\nexec sleep 300\n')
    child_file = tmp_path / "child.pid"
    proc = ManagedProcess([str(script), str(child_file)], name="forks", log_path=tmp_path / "forks.log")
    child = wait_until(
        lambda: int(child_file.read_text()) if child_file.exists() and child_file.read_text().strip() else None, 10, "child pid"
    )
    assert proc.alive() and pid_alive(child)
    proc.stop()
    assert not proc.alive()
    wait_until(lambda: not pid_alive(child), 10, "the background child of the group to die")
    proc.stop()  # idempotent


# --------------------------------------------------------------------------------------------------
# slurm


def test_slurm_conf_rendering_owns_the_keys_it_needs(tmp_path: Path) -> None:
    cluster = SlurmCluster(
        tmp_path,
        "render",
        nodes=[node_line("n1"), node_line("n2", features=["bm"])],
        partitions=["PartitionName=batch Nodes=n1,n2 Default=YES State=UP"],
        extra_conf="SchedulerType=sched/builtin\nProctrackType=proctrack/cgroup\nSlurmctldParameters=cloud_dns\nPriorityType=priority/multifactor\n",
        dynamic=True,
    )
    text = cluster.render_conf()
    assert "ProctrackType=proctrack/linuxproc" in text
    assert "# [test harness] overridden: ProctrackType=proctrack/cgroup" in text
    assert cluster.overridden == ["ProctrackType=proctrack/cgroup"]
    assert "SlurmctldParameters=enable_configless,cloud_dns" in text
    assert "MaxNodeCount=" in text and "TreeWidth=65533" in text and "SelectType=select/cons_tres" in text
    assert f"SlurmdSpoolDir={tmp_path.resolve()}/spool/%n" in text
    for name in ("n1", "n2"):
        assert f"NodeName={name} NodeHostname={name} NodeAddr=127.0.0.1 Port={cluster.node_ports[name]}" in text
    assert len({cluster.ctld_port, cluster.slurmd_port, *cluster.node_ports.values()}) == 4
    assert "PartitionName=dynamic Nodes=ALL State=UP" in text
    with pytest.raises(ValueError, match="nodes="):
        SlurmCluster(tmp_path, "bad", extra_conf="NodeName=x CPUs=1\n").render_conf()
    with pytest.raises(ValueError, match="one NodeName per line"):
        SlurmCluster(tmp_path, "bad", nodes=["NodeName=n[1-2] CPUs=1"])


def test_slurm_static_cluster_runs_a_batch_job(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    marker = tmp_path / "job-output.txt"
    with SlurmCluster(
        tmp_path / "cluster",
        "smoke",
        nodes=[node_line("n1"), node_line("n2")],
        partitions=["PartitionName=batch Nodes=n1,n2 Default=YES MaxTime=10 State=UP"],
    ) as cluster:
        config = cluster.scontrol("show", "config")
        # auth/slurm with the harness's key, as Slinky's images (tests/daemons/sack.py)
        assert re.search(r"^AuthType\s+= auth/slurm$", config, re.M) and re.search(r"^CredType\s+= cred/slurm$", config, re.M)
        assert re.search(r"^SLURM_VERSION\s+= 26\.05\.3$", config, re.M)
        assert cluster.sinfo_partitions() == {"batch": ["n1", "n2"]}
        assert cluster.default_partition() == "batch"
        assert cluster.node_state("n1") == "IDLE" and cluster.node_state("n2") == "IDLE"

        job = cluster.sbatch(f'echo "ran on $SLURMD_NODENAME" > {marker}\n', partition="batch")
        assert cluster.wait_job(job, 60) == "COMPLETED"
        assert marker.read_text().startswith("ran on n")

        both = cluster.sbatch("srun -l hostname > both.txt\n", partition="batch", args=["-N", "2"])
        assert cluster.wait_job(both, 60) == "COMPLETED", cluster.job_info(both)
        assert cluster.job_info(both)["NodeList"] == "n[1-2]"
        assert len((cluster.jobs_dir / "both.txt").read_text().splitlines()) == 2
    assert leftover_slurm_pids(tmp_path / "cluster") == []


def test_slurm_failing_prolog_drains_the_node(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    prolog = write_script(tmp_path / "prolog.sh", "echo 'prolog says no' >&2\nexit 1\n")
    with SlurmCluster(
        tmp_path / "cluster",
        "prolog",
        nodes=[node_line("n1")],
        partitions=["PartitionName=batch Nodes=n1 Default=YES State=UP"],
        extra_conf=f"Prolog={prolog}\n",
    ) as cluster:
        job = cluster.sbatch("echo never\n")
        state = cluster.wait_node_state("n1", "DRAIN", 60)
        assert "DRAIN" in state.split("+")
        assert cluster.node_reason("n1") == "Prolog error"
        held = cluster.wait_job(job, 30, states={"PENDING"})
        assert held == "PENDING"
        wait_until(lambda: "held" in cluster.job_info(job).get("Reason", ""), 30, "the job to be requeued held")


def test_slurm_dynamic_node_registers_with_features_and_runs_a_job(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    with SlurmCluster(
        tmp_path / "cluster",
        "dynamic",
        nodes=[node_line("n1")],
        partitions=["PartitionName=static Nodes=n1 Default=YES State=UP", "PartitionName=all Nodes=ALL State=UP"],
        extra_conf="GresTypes=gpu\n",
        gres_conf="NodeName=gpu1 Name=gpu File=/dev/zero,/dev/null\n",
        dynamic=True,
    ) as cluster:
        cluster.start_dynamic_slurmd(
            "dyn1", conf_server=f"127.0.0.1:{cluster.ctld_port}", conf="Feature=bm CPUs=1 RealMemory=100"
        )
        cluster.wait_node_idle("dyn1", 30)
        info = cluster.node_info("dyn1")
        assert info["AvailableFeatures"] == "bm" and info["ActiveFeatures"] == "bm"
        assert info["State"] == "IDLE+DYNAMIC_NORM"
        assert (cluster.spool_root / "dyn1" / "conf-cache" / "slurm.conf").exists()  # configless fetch happened
        assert cluster.sinfo_partitions()["all"] == ["dyn1", "n1"]  # Nodes=ALL picks the dynamic node up

        job = cluster.sbatch("echo $SLURMD_NODENAME > where.txt\n", partition="all", args=["--constraint=bm"])
        assert cluster.wait_job(job, 60) == "COMPLETED"
        assert (cluster.jobs_dir / "where.txt").read_text().strip() == "dyn1"

        # a second -Z slurmd on this host needs its own port: without Port= in --conf the harness refuses it, with it
        # (26.05 accepts Port= there; 22.05 refused it) it registers on that port
        with pytest.raises(HarnessError, match="only one -Z slurmd"):
            cluster.start_dynamic_slurmd("dyn2", conf="Feature=bm")
        port = free_ports(1)[0]
        cluster.start_dynamic_slurmd("dyn2", conf=f"Feature=bm CPUs=1 RealMemory=100 Port={port}")
        cluster.wait_node_idle("dyn2", 30)
        assert cluster.node_info("dyn2")["Port"] == str(port)
        cluster.stop_slurmd("dyn2", delete=True)
        cluster.stop_slurmd("dyn1", delete=True)

        # GRES gpu without device files: registers, but drained as INVALID_REG (0 < 2)
        cluster.start_slurmd_command(
            f"slurmd -D -Z --conf-server {cluster.conf_server} --conf 'Feature=gpu CPUs=1 RealMemory=100 Gres=gpu:2' -N gpu0"
        )
        state = cluster.wait_node_state("gpu0", "INVALID_REG", 30)
        assert "DRAIN" in state.split("+")
        assert cluster.node_reason("gpu0") == "gres/gpu count reported lower than configured (0 < 2)"
        cluster.stop_slurmd("gpu0", delete=True)

        # with one device file per GPU in gres.conf it is usable; this slurmd daemonizes (no -D): tracked by pid file
        proc = cluster.start_slurmd_command(
            [
                "slurmd",
                "-Z",
                "--conf-server",
                cluster.conf_server,
                "--conf",
                "Feature=gpu CPUs=1 RealMemory=100 Gres=gpu:2",
                "-N",
                "gpu1",
            ]
        )
        assert isinstance(proc, PidfileDaemon)
        cluster.wait_node_idle("gpu1", 30)
        assert cluster.node_info("gpu1")["Gres"] == "gpu:2"
        gpu_job = cluster.sbatch("echo $CUDA_VISIBLE_DEVICES > gpus.txt\n", partition="all", args=["--gres=gpu:1"])
        assert cluster.wait_job(gpu_job, 60) == "COMPLETED"
        assert (cluster.jobs_dir / "gpus.txt").read_text().strip() == "0"
        daemon_pid = proc.pid
    assert not pid_alive(daemon_pid)
    assert leftover_slurm_pids(tmp_path / "cluster") == []


def test_slurm_dynamic_node_needs_max_node_count(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    # configless only: enable_configless but no MaxNodeCount -> "node table is full", never registers
    with SlurmCluster(tmp_path / "cluster", "nomax", nodes=[node_line("n1")], configless=True) as cluster:
        assert "MaxNodeCount" not in cluster.conf_path.read_text()
        with pytest.raises(HarnessError, match="MaxNodeCount"):
            cluster.start_dynamic_slurmd("dyn1", conf="Feature=bm", timeout=30)
        assert "node table is full" in cluster.ctld_log.read_text()


CRASHING_RUN = """
import os, sys
from pathlib import Path
from tests.daemons.slurm import SlurmCluster, node_line
tmp = Path(sys.argv[1])
cluster = SlurmCluster(tmp, "crashed", nodes=[node_line("n1")]).start()
assert cluster.slurmctld is not None
assert cluster.auth.sackd is not None
Path(tmp / "pids").write_text(" ".join(str(p.pid) for p in [cluster.slurmctld, cluster.auth.sackd, *cluster.slurmds.values()]))
os._exit(0)  # dies without stop() and without atexit hooks, like a SIGKILLed test run
"""


def test_slurm_daemons_of_a_crashed_run_are_stopped_by_the_next_one(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    crashed = run([sys.executable, "-c", CRASHING_RUN, str(tmp_path / "crashed")], cwd=REPO, timeout=120)
    assert crashed.returncode == 0, crashed.stderr
    pids = [int(pid) for pid in (tmp_path / "crashed" / "pids").read_text().split()]
    assert len(pids) == 3 and all(pid_alive(pid) for pid in pids)
    stopped = kill_orphans("slurm")  # what SlurmCluster.start() does first
    assert set(pids) <= set(stopped)
    assert not any(pid_alive(pid) for pid in pids)


# --------------------------------------------------------------------------------------------------
# 389 Directory Server

PEOPLE_LDIF = f"""\
dn: uid=alice,ou=people,{SUFFIX}
objectClass: top
objectClass: inetOrgPerson
objectClass: posixAccount
uid: alice
cn: Alice Admin
sn: Admin
uidNumber: 20001
gidNumber: 20000
homeDirectory: /home/alice
loginShell: /bin/bash

dn: uid=bob,ou=people,{SUFFIX}
objectClass: top
objectClass: inetOrgPerson
objectClass: posixAccount
objectClass: nsAccount
uid: bob
cn: Bob Builder
sn: Builder
uidNumber: 20002
gidNumber: 20000
homeDirectory: /home/bob
nsSshPublicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBob bob@hpc

dn: cn=hpc,ou=groups,{SUFFIX}
objectClass: top
objectClass: posixGroup
cn: hpc
gidNumber: 20000
memberUid: alice
memberUid: bob
"""


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DirectoryServer]:
    require_root()
    require_binaries(*dirsrv.REQUIRED_BINARIES)
    with DirectoryServer(tmp_path_factory.mktemp("dirsrv"), SUFFIX) as server:
        server.ensure_ou("people", "groups", "services")
        server.check(server.ldapadd(PEOPLE_LDIF))
        server.add_service_account(SSSD_DN, SSSD_PW)
        yield server


def test_dirsrv_instance_answers_and_entries_can_be_added(directory: DirectoryServer) -> None:
    assert directory.uri.startswith("ldap://127.0.0.1:") and directory.dm_dn == "cn=Directory Manager"
    assert directory.name.startswith(dirsrv.INSTANCE_PREFIX) and directory.alive()
    [suffix] = directory.ldapsearch(SUFFIX, scope="base")
    assert suffix.dn == SUFFIX and "domain" in suffix.object_classes

    people = directory.ldapsearch(f"ou=people,{SUFFIX}", "(objectClass=posixAccount)", ["uid", "uidNumber"], scope="one")
    assert sorted(entry.first("uid") or "" for entry in people) == ["alice", "bob"]
    assert {entry.first("uidNumber") for entry in people} == {"20001", "20002"}
    assert directory.ldapsearch(f"ou=nowhere,{SUFFIX}") == []  # no such base: empty, not an error

    # a second add of the same entries fails (68) unless continue_on_error is set; both return the code
    again = directory.ldapadd(PEOPLE_LDIF)
    assert again.returncode == 68
    assert directory.ldapadd(PEOPLE_LDIF, continue_on_error=True).returncode == 68

    modified = directory.ldapmodify(
        f"dn: uid=alice,ou=people,{SUFFIX}\nchangetype: modify\nreplace: loginShell\nloginShell: /bin/zsh\n"
    )
    assert modified.returncode == 0, modified.stderr
    assert (
        directory.ldapsearch(f"uid=alice,ou=people,{SUFFIX}", attrs=["loginShell"], scope="base")[0].first("loginShell")
        == "/bin/zsh"
    )

    # anonymous users only see the suffix entry (default ACI); the service account sees people
    assert directory.ldapsearch(SUFFIX, "(uid=*)", bind_dn="") == []
    assert len(directory.ldapsearch(SUFFIX, "(uid=*)", bind_dn=SSSD_DN, password=SSSD_PW)) == 2
    assert directory.can_bind(SSSD_DN, SSSD_PW) and not directory.can_bind(SSSD_DN, "wrong")
    with pytest.raises(LdapError) as bad_bind:
        directory.ldapsearch(SUFFIX, bind_dn=SSSD_DN, password="wrong")
    assert bad_bind.value.returncode == 49


def test_dirsrv_schema_facts(directory: DirectoryServer) -> None:
    # 1. no OpenSSH-LPK schema shipped; 389ds's own nsSshPublicKey (nsAccount, auxiliary) exists instead
    assert directory.schema_definition("objectClasses", "ldapPublicKey") is None
    assert directory.schema_definition("attributeTypes", "sshPublicKey") is None
    ns_account = directory.schema_definition("objectClasses", "nsAccount")
    assert ns_account is not None and "AUXILIARY" in ns_account and "nsSshPublicKey" in ns_account
    lpk_user = f"""\
dn: uid=carol,ou=people,{SUFFIX}
objectClass: top
objectClass: inetOrgPerson
objectClass: posixAccount
objectClass: ldapPublicKey
uid: carol
cn: Carol
sn: C
uidNumber: 20003
gidNumber: 20000
homeDirectory: /home/carol
sshPublicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICarol carol@hpc
"""
    refused = directory.ldapadd(lpk_user)
    assert refused.returncode == 65, refused.stderr  # objectClass violation
    assert "unknown object class" in refused.stderr and "ldapPublicKey" in refused.stderr

    # 2. posixGroup is AUXILIARY in rfc2307compat, yet top + posixGroup alone (with memberUid) is accepted
    posix_group = directory.schema_definition("objectClasses", "posixGroup")
    assert posix_group is not None and "AUXILIARY" in posix_group and "STRUCTURAL" not in posix_group
    [group] = directory.ldapsearch(f"cn=hpc,ou=groups,{SUFFIX}", scope="base")
    assert group.object_classes == {"top", "posixgroup"} and group.get("memberUid") == ["alice", "bob"]

    # 3. inetOrgPerson + posixAccount + nsAccount (nsSshPublicKey) works out of the box ...
    [bob] = directory.ldapsearch(f"uid=bob,ou=people,{SUFFIX}", attrs=["nsSshPublicKey"], scope="base")
    assert bob.first("nsSshPublicKey", "").startswith("ssh-ed25519 ")
    # ... and inetOrgPerson + posixAccount + ldapPublicKey once the LPK schema is added over LDAP
    directory.add_openssh_lpk_schema()
    directory.add_openssh_lpk_schema()  # idempotent
    directory.check(directory.ldapadd(lpk_user))
    [carol] = directory.ldapsearch(f"uid=carol,ou=people,{SUFFIX}", attrs=["objectClass", "sshPublicKey"], scope="base")
    assert {"inetorgperson", "posixaccount", "ldappublickey"} <= carol.object_classes
    assert carol.first("sshPublicKey", "").endswith("carol@hpc")


def test_dirsrv_leftovers_of_crashed_runs_are_removed(directory: DirectoryServer) -> None:
    fake = f"{dirsrv.INSTANCE_PREFIX}1x000000"
    fake_dir = Path(f"/etc/dirsrv/slapd-{fake}")
    fake_dir.mkdir(parents=True)
    (dirsrv.OWNER_DIR / f"{fake}.owner").write_text("1 0")  # pid 1 with another start time: owner gone
    removed = cleanup_leftover_instances()
    assert fake in removed and not fake_dir.exists()
    assert directory.name not in removed and directory.config_dir.exists() and directory.alive()


def test_dirsrv_ldaps_and_stop_removes_everything(tmp_path: Path) -> None:
    require_root()
    require_binaries(*dirsrv.REQUIRED_BINARIES, "shellcheck")
    server = DirectoryServer(tmp_path, "dc=other,dc=test", ldaps=True)
    with server:
        assert run(["shellcheck", "-s", "sh", str(server.stub_dir / "systemctl")], timeout=60).returncode == 0
        [entry] = server.ldapsearch("dc=other,dc=test", scope="base", uri=server.ldaps_uri)
        assert entry.dn == "dc=other,dc=test"
        pid = server.pid
        assert pid is not None
    assert not pid_alive(pid)
    assert not server.config_dir.exists()
    assert not Path(f"/var/lib/dirsrv/slapd-{server.name}").exists()
    assert not (dirsrv.OWNER_DIR / f"{server.name}.owner").exists()


# --------------------------------------------------------------------------------------------------
# MariaDB


def test_mariadb_grant_limited_to_one_database(tmp_path: Path) -> None:
    require_root()
    require_binaries(*mariadb.REQUIRED_BINARIES)
    with MariaDBServer(tmp_path) as db:
        db.sql_root("CREATE USER ''@'localhost';")  # what a datadir with the test db has
        assert db.drop_anonymous_users() == ["localhost"]
        db.sql_root(
            "CREATE DATABASE slurm_acct_db; CREATE USER 'slurm'@'%' IDENTIFIED BY 'Slurm-pw-1';"
            " GRANT ALL PRIVILEGES ON slurm_acct_db.* TO 'slurm'@'%';"
        )
        created = db.sql_as(
            "slurm", "Slurm-pw-1", "CREATE TABLE job_table (id INT PRIMARY KEY); SHOW TABLES;", database="slurm_acct_db"
        )
        assert created.returncode == 0, created.stderr
        assert "job_table" in created.stdout
        denied = db.sql_as("slurm", "Slurm-pw-1", "CREATE DATABASE other;")
        assert denied.returncode != 0 and error_code(denied) == 1044, denied.stderr
        assert error_code(db.sql_as("slurm", "wrong", "SELECT 1;")) == 1045
        assert ("slurm_acct_db",) in db.query_root("SHOW DATABASES")
        process = db.process
        assert process is not None
    assert not process.alive()


# --------------------------------------------------------------------------------------------------
# sssd

VALID_SSSD_CONF = """\
[sssd]
services = nss, pam
domains = hpc

[domain/hpc]
id_provider = ldap
auth_provider = ldap
ldap_uri = ldaps://ldap.hpc.example:636
ldap_search_base = dc=hpcforge,dc=test
ldap_tls_reqcert = demand
cache_credentials = false
"""


def test_sssctl_config_check(tmp_path: Path) -> None:
    require_binaries(*sssd.REQUIRED_BINARIES)
    clean = sssctl_config_check(VALID_SSSD_CONF, tmp_path / "clean")
    assert clean.ok and clean.returncode == 0 and clean.issues == 0, clean.output
    assert ((tmp_path / "clean" / "sssd.conf").stat().st_mode & 0o777) == 0o600

    bogus = sssctl_config_check(VALID_SSSD_CONF + "bogus_option = 1\n", tmp_path / "bogus")
    assert bogus.returncode != 0 and bogus.issues == 1 and not bogus.ok
    assert bogus.messages == [
        "[rule/allowed_domain_options]: Attribute 'bogus_option' is not allowed in section 'domain/hpc'. Check for typos."
    ]

    snippet = sssctl_config_check(
        VALID_SSSD_CONF, tmp_path / "snippet", snippets={"10-extra.conf": "[domain/hpc]\nldap_typo = 1\n"}
    )
    assert snippet.snippet_files == 1 and snippet.issues == 1


def _sssd_conf(server: DirectoryServer, *, password: str = SSSD_PW, user_base: str = f"ou=people,{SUFFIX}") -> str:
    return f"""\
[sssd]
services = nss
domains = hpc

[nss]
memcache_timeout = 0

[domain/hpc]
id_provider = ldap
auth_provider = none
ldap_uri = {server.uri}
ldap_search_base = {SUFFIX}
ldap_user_search_base = {user_base}
ldap_group_search_base = ou=groups,{SUFFIX}
ldap_default_bind_dn = {SSSD_DN}
ldap_default_authtok = {password}
ldap_id_use_start_tls = false
cache_credentials = false
"""


def test_sssd_settings_find_users_in_the_directory(directory: DirectoryServer, tmp_path: Path) -> None:
    require_binaries(*sssd.REQUIRED_BINARIES)
    conf = _sssd_conf(directory)
    assert sssctl_config_check(conf, tmp_path).ok
    found = lookup_with_sssd_settings(conf, directory)
    assert found["domain"] == "hpc" and found["bind_dn"] == SSSD_DN
    assert found["users"]["alice"]["uid"] == 20001 and found["users"]["alice"]["home"] == "/home/alice"
    assert found["groups"]["hpc"] == {"dn": f"cn=hpc,ou=groups,{SUFFIX}", "gid": 20000, "members": ["alice", "bob"]}

    # sssd's base?scope?filter syntax narrows the users
    narrowed = lookup_with_sssd_settings(
        _sssd_conf(directory, user_base=f"ou=people,{SUFFIX}?onelevel?(uidNumber=20002)"), directory
    )
    assert list(narrowed["users"]) == ["bob"]
    assert narrowed["user_searches"][0][1] == "one"

    # a wrong bind password fails like sssd going offline would
    with pytest.raises(LdapError) as bad:
        lookup_with_sssd_settings(_sssd_conf(directory, password="wrong"), directory)
    assert bad.value.returncode == 49


def test_real_sssd_answers_nss_lookups(directory: DirectoryServer, tmp_path: Path) -> None:
    require_binaries("sssd", "getent")
    before = sorted(p.name for p in Path("/var/lib/sss/db").iterdir()) if Path("/var/lib/sss/db").is_dir() else []
    try:
        answers = run_real_sssd_lookup(_sssd_conf(directory), tmp_path, ["alice"], ["hpc"], timeout=30)
    except HarnessError as error:
        if "runs already" in str(error):
            skip_or_fail(str(error))
        raise
    assert (answers["passwd"]["alice"] or "").startswith("alice:*:20001:20000:Alice Admin:/home/alice:")
    assert answers["group"]["hpc"] == "hpc:*:20000:alice,bob"
    after = sorted(p.name for p in Path("/var/lib/sss/db").iterdir()) if Path("/var/lib/sss/db").is_dir() else []
    assert after == before  # machine state put back
    assert not Path("/var/lib/sss/pipes/nss").exists()


# --------------------------------------------------------------------------------------------------
# where Slurm comes from (tests/daemons/slurm_prefix.py, scripts/ci/build-slurm.sh)

BUILD_SLURM = REPO / "scripts" / "ci" / "build-slurm.sh"


def fake_shared(root: Path, tarball: bytes, listed_sha: str | None = None) -> Path:
    """A shared/ folder with slurm/slurm-26.05.3.tar.bz2 and a README table row listing `listed_sha` (default: its own)."""
    import hashlib

    folder = root / "shared" / "slurm"
    folder.mkdir(parents=True)
    (folder / "slurm-26.05.3.tar.bz2").write_bytes(tarball)
    sha = listed_sha or hashlib.sha256(tarball).hexdigest()
    (folder / "README.md").write_text(
        f"| file | what | sha256 |\n|---|---|---|\n| `slurm-26.05.3.tar.bz2` | the source | {sha} |\n"
    )
    return root / "shared"


def test_slurm_prefix_defaults_to_the_build_cache_of_the_tarballs_sha256(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.daemons import slurm_prefix

    shared = fake_shared(tmp_path, b"not really slurm")
    monkeypatch.setenv("HPCFORGE_SHARED", str(shared))
    monkeypatch.setenv("HPCFORGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HPCFORGE_SLURM_PREFIX", raising=False)
    slurm_prefix.tarball_sha256.cache_clear()
    try:
        import hashlib

        assert slurm_prefix.slurm_prefix() == tmp_path / "cache" / f"slurm-{hashlib.sha256(b'not really slurm').hexdigest()}"
        monkeypatch.setenv("HPCFORGE_SLURM_PREFIX", str(tmp_path / "elsewhere"))
        assert slurm_prefix.slurm_prefix() == tmp_path / "elsewhere"
    finally:
        slurm_prefix.tarball_sha256.cache_clear()


def test_a_missing_slurm_skips_with_the_reason_and_fails_in_strict_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.daemons import slurm_prefix

    monkeypatch.setenv("HPCFORGE_SLURM_PREFIX", str(tmp_path / "none"))
    reason = slurm_prefix.missing_reason()
    assert reason is not None and str(tmp_path / "none") in reason and "scripts/ci/build-slurm.sh" in reason
    assert slurm_prefix.slurm_binary("slurmctld") is None
    monkeypatch.delenv("HPCFORGE_STRICT", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not built at"):
        require_binaries("slurmctld")
    monkeypatch.setenv("HPCFORGE_STRICT", "1")
    with pytest.raises(
        pytest.fail.Exception, match=re.escape("HPCFORGE_STRICT=1 and a prerequisite is missing: Slurm 26.05.3 is not built")
    ):
        require_binaries("sacctmgr")
    # a prefix whose slurmctld is another version counts as missing too
    fake = write_script(tmp_path / "old" / "sbin" / "slurmctld", "echo 'slurm 22.05.8'\n")
    monkeypatch.setenv("HPCFORGE_SLURM_PREFIX", str(fake.parent.parent))
    assert "prints 'slurm 22.05.8', not 'slurm 26.05.3'" in (slurm_prefix.missing_reason() or "")


def test_build_script_checks_the_tarball_against_the_readme_and_reuses_a_built_prefix(tmp_path: Path) -> None:
    import hashlib

    tarball = b"a tarball"
    env = {"PATH": "/usr/bin:/bin", "HPCFORGE_CACHE": str(tmp_path / "cache")}
    wrong = fake_shared(tmp_path / "wrong", tarball, listed_sha="0" * 64)
    refused = run(["bash", str(BUILD_SLURM)], env={**env, "HPCFORGE_SHARED": str(wrong)}, timeout=60)
    assert refused.returncode == 1 and f"sha256 of {wrong}/slurm/slurm-26.05.3.tar.bz2 is" in refused.stderr
    assert not (tmp_path / "cache").exists()  # nothing unpacked, nothing built

    right = fake_shared(tmp_path / "right", tarball)
    prefix = tmp_path / "cache" / f"slurm-{hashlib.sha256(tarball).hexdigest()}"
    write_script(prefix / "sbin" / "slurmctld", "echo 'slurm 26.05.3'\n")
    reused = run(["bash", str(BUILD_SLURM)], env={**env, "HPCFORGE_SHARED": str(right)}, timeout=60)
    assert reused.returncode == 0, reused.stderr
    assert reused.stdout.strip().splitlines()[-1] == str(prefix) and "reusing" in reused.stderr


def test_kill_tagged_with_a_root_stops_an_untagged_process_working_there(tmp_path: Path) -> None:
    # slurmstepd's title overwrites its environment, so only its working directory ties it to a cluster.
    cluster = tmp_path / "cluster"
    (cluster / "spool").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    inside = subprocess.Popen(["sleep", "60"], cwd=cluster / "spool", env={"PATH": os.environ["PATH"]})
    outside = subprocess.Popen(["sleep", "60"], cwd=elsewhere, env={"PATH": os.environ["PATH"]})
    try:
        assert inside.pid in processes_in(cluster) and outside.pid not in processes_in(cluster)
        assert kill_tagged(["HPCFORGE_NO_SUCH_TAG=1"], grace=2, root=cluster) == [inside.pid]
        assert inside.wait(timeout=10) is not None and outside.poll() is None
    finally:
        for proc in (inside, outside):
            proc.kill()
            proc.wait()
