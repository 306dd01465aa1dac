"""The restore runbook in docs/operations.md, run block by block (tests/components/layers/backups/runbook.py reads the blocks from the
doc): every numbered step is either run here or marked cluster-only, and a new unmarked step fails.

The backups restored are made the way the CronJobs make them: the key export and the directory export run
the CronJob's own container command (from `key_export_spec`/`directory_backup_spec`) through the kubectl
stand-in, with the CronJob's env, mounts and S3 settings, uploading to a real S3-compatible server (moto)
with the jobs' own client; the accounting dump is the operator's command line (`dump_argv`). moto stands
in for the bucket: it does not check SigV4 signatures (tests/scripts/backup/test_s3put.py checks ours against botocore's).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from components.layers.backups.config import BackupsConfig
from components.layers.backups.objects import (
    BACKUP_VOLUME,
    DUMP_OPTIONS,
    KEYS_SCRIPT,
    LDIF_SCRIPT,
    S3_SECRET,
    S3PUT_SCRIPT,
    directory_backup_spec,
    dump_argv,
    key_export_spec,
)
from components.versions import Images
from policies.admission import pss
from tests.components.layers.backups.runbook import DOC, FIRST, Cluster, S3Server, ScaleHook, blocks, heredoc, steps
from tests.helpers import config_values, require_binaries, skip_or_fail
from tests.scripts.backup.test_key_export import CA, SEALED, api, make_recipient  # noqa: F401  (api: the Kubernetes API stand-in fixture)

pytestmark = [pytest.mark.timeout(600)]

# Which test runs each runnable block; the doc's runnable markers must be exactly these.
EXERCISED = {
    "keys-find-volume": "test_keys_runbook_restores_both_secrets_from_the_volume_and_from_s3",
    "keys-find-s3": "test_keys_runbook_restores_both_secrets_from_the_volume_and_from_s3",
    "keys-decrypt": "test_keys_runbook_restores_both_secrets_from_the_volume_and_from_s3",
    "keys-apply": "test_keys_runbook_restores_both_secrets_from_the_volume_and_from_s3",
    "db-stop": "test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it",
    "db-find-volume": "test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it",
    "db-find-s3": "test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it",
    "db-restore": "test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it",
    "db-check": "test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it",
    "db-start": "test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it",
    "db-ctld-restart": "test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it",
    "dir-find-volume": "test_directory_runbook_restores_a_wiped_directory_from_the_volume_and_from_s3",
    "dir-find-s3": "test_directory_runbook_restores_a_wiped_directory_from_the_volume_and_from_s3",
    "dir-import": "test_directory_runbook_restores_a_wiped_directory_from_the_volume_and_from_s3",
}
DIRECTORY_URI = "ldaps://dirsrv.directory.svc.cluster.local:3636"


def test_every_restore_step_is_run_by_a_test_or_marked_cluster_only() -> None:
    found = steps()
    sections = {step.section for step in found}
    assert {"Restore the accounting database", "Restore the directory", "Restore the sealed-secrets and CA keys"} <= sections
    unmarked = [f"{s.section} step {s.number} ({s.title})" for s in found if not s.markers]
    assert not unmarked, (
        f"restore steps with no runbook marker (run it in tests/components/layers/backups/test_runbook.py or mark it cluster-only): {unmarked}"
    )
    runnable = {marker for step in found for marker, cluster_only in step.markers if not cluster_only}
    assert runnable == set(blocks()) == set(EXERCISED)
    # each runnable step's number, in order: a step added in between needs a marker too
    for section in sections:
        numbers = [s.number for s in found if s.section == section]
        assert numbers == list(range(1, len(numbers) + 1)), section


def test_restore_pods_use_the_pinned_images_and_the_backup_claim() -> None:
    text = blocks()
    images = {"db-find-volume": Images.MARIADB.ref, "dir-find-volume": Images.DIRSRV.ref, "keys-find-volume": Images.MARIADB.ref}
    for block, image in images.items():
        pod = yaml.safe_load(heredoc(text[block]))
        assert pod["spec"]["containers"][0]["image"] == image
        assert {"persistentVolumeClaim": {"claimName": BACKUP_VOLUME}, "name": "backup"} in pod["spec"]["volumes"]
        assert pod["metadata"]["labels"] == {"app.kubernetes.io/name": "hpcforge-restore"}
        # a valid Pod that the `restricted` Pod Security level admits (the strictest of these namespaces)
        kubernetes_validate.validate(pod, "1.33", strict=True)
        assert pss.evaluate_pod(pod["metadata"], pod["spec"], "restricted") == [], block


def test_runbook_preamble_sets_what_the_s3_client_reads_and_the_tests_set() -> None:
    from components.layers.backups.objects import s3_env

    text = DOC.read_text()
    preamble = text[text.index("```sh", text.index(FIRST)) : text.index("## Restore the accounting database")]
    names = set(re.findall(r"(?:export |\s)([A-Z0-9_]+)=", preamble)) | set(re.findall(r"^([A-Z0-9_]+)=", preamble, re.M))
    cfg = BackupsConfig.model_validate({"s3": {"bucket": "b-1", "endpoint": "e", "accessKeyId": "a", "secretAccessKey": "s"}})
    assert names - {"PREFIX"} == {item["name"] for item in s3_env(cfg, "keys")} - {"S3_PREFIX"}
    assert names == set(S3Server(Path("unused")).env())


def cronjob_pod(cluster: Cluster, namespace: str, name: str, spec: dict[str, Any]) -> None:
    """The CronJob's pod template as a pod the stand-in can exec into."""
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    cluster.put("pods", {"kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": pod})


def kubectl_exec(cluster: Cluster, namespace: str, pod: str, command: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [str(cluster.bin / "kubectl"), "-n", namespace, "exec", pod, "--", *command],
        env={"PATH": f"{cluster.bin}:/usr/bin:/bin", "KUBE_CLUSTER": str(cluster.root)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


@pytest.fixture
def s3(tmp_path: Path) -> Iterator[S3Server]:
    with S3Server(tmp_path / "moto.log") as server:
        yield server


def s3_config(s3: S3Server, **extra: Any) -> BackupsConfig:
    target = {"bucket": s3.BUCKET, "endpoint": s3.endpoint, "tls": False, "accessKeyId": s3.ACCESS, "secretAccessKey": s3.SECRET}
    return BackupsConfig.model_validate({"s3": target, **extra})


# --- the keys ------------------------------------------------------------------------------------


def test_keys_runbook_restores_both_secrets_from_the_volume_and_from_s3(
    tmp_path: Path,
    s3: S3Server,
    api: tuple[str, list[tuple[str, str]]],  # noqa: F811 (the fixture imported above)
) -> None:
    openssl = require_binaries("openssl", "jq")["openssl"]
    url, _ = api
    cluster = Cluster(tmp_path / "cluster", tmp_path / "work")
    key, cert = make_recipient(cluster.workdir, openssl, "recipient")
    token = tmp_path / "token"
    token.write_text("service-account-token")
    cluster.config_map(
        "backups",
        "key-export",
        {"export_keys.py": KEYS_SCRIPT.read_text(), "s3put.py": S3PUT_SCRIPT.read_text(), "recipient.pem": cert.read_text()},
    )
    cluster.secret("backups", S3_SECRET, {"access-key-id": s3.ACCESS, "secret-access-key": s3.SECRET})
    volume = cluster.volume("backups", BACKUP_VOLUME)
    (volume / "keys-20000101T000000Z.cms").write_bytes(b"an older export, not the newest")
    s3.client.put_object(Bucket=s3.BUCKET, Key="hpcforge/keys/keys-20000101T000000Z.cms", Body=b"older")
    cluster.data["workloads"]["kube-system/deployment/sealed-secrets-controller"] = {"replicas": 1}
    cluster.save()
    api_args = ["--api", url, "--token-file", str(token), "--api-ca-file", ""]
    for name, cfg in (
        ("volume", BackupsConfig.model_validate({"volume": {}, "keyRecipient": cert.read_text()})),
        ("s3", s3_config(s3, keyRecipient=cert.read_text())),
    ):
        spec = key_export_spec(cfg, labels={})
        cronjob_pod(cluster, "backups", f"key-export-{name}", spec)
        command = spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"]
        summary = kubectl_exec(cluster, "backups", f"key-export-{name}", [*command, *api_args])
        assert summary["secrets"] == ["kube-system/sealed-secrets-keyabcde", "cert-manager/hpcforge-ca"]
        assert (summary["uploaded"] is not None) == (name == "s3")
    assert len(list(volume.glob("keys-2*.cms"))) == 2  # the older one and tonight's
    assert len(s3.keys("hpcforge/keys/")) == 2

    for find in ("keys-find-volume", "keys-find-s3"):
        before = len(cluster.applied())
        cluster.run(find, "keys-decrypt", "keys-apply", env=s3.env())
        applied = [obj for obj in cluster.applied()[before:] if obj["kind"] == "Secret"]
        assert {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in applied}.keys() == {
            ("kube-system", "sealed-secrets-keyabcde"),
            ("cert-manager", "hpcforge-ca"),
        }
        originals: tuple[dict[str, Any], ...] = (SEALED, CA)
        for original in originals:
            secret = next(s for s in applied if s["metadata"]["name"] == original["metadata"]["name"])
            assert secret["kind"] == "Secret" and secret["type"] == original["type"]
            assert secret["data"] == original["data"]  # the same base64, so the same key bytes
            assert secret["metadata"]["labels"] == original["metadata"].get("labels", {})
        assert not (cluster.workdir / "keys.json").exists() and not (cluster.workdir / "keys.cms").exists()
    assert cluster.load()["workloads"]["kube-system/deployment/sealed-secrets-controller"]["restarts"] == 2
    assert key.exists()


# --- the accounting database ---------------------------------------------------------------------


def _upgrade_dump_block() -> str:
    """The shell block of "Back up the accounting database" in the upgrade section (outside the restore runbook)."""
    from tests.docblocks import block

    return block("upgrade-dump")


def test_db_check_names_the_prod_clusters_association_table() -> None:
    """Restore step 4 queries `<clusterName>_assoc_table` spelled out for prod (issue 27, item 4)."""
    cluster_name = config_values("prod")["hpcforge:slurm"]["clusterName"]
    assert f"FROM slurm_acct_db.{cluster_name}_assoc_table" in blocks()["db-check"]
    restore = DOC.read_text()[DOC.read_text().index("## Restore the accounting database") :]
    assert "replace `slurm`" not in restore.split("## Restore the directory")[0]


def test_upgrade_sections_dump_is_one_the_restore_steps_restore() -> None:
    """The upgrade section's hand dump has the scheduled backup's options, `--databases` and `--routines` among them
    (issue 27, item 3); test_accounting_runbook_... restores that very dump."""
    dump_line = next(line for line in _upgrade_dump_block().splitlines() if "mariadb-dump" in line)
    assert " ".join(DUMP_OPTIONS) in dump_line and "--databases slurm_acct_db" in dump_line


@pytest.mark.real_daemon
def test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it(tmp_path: Path, s3: S3Server) -> None:  # noqa: PLR0915 (one runbook, step by step)
    """The restore runbook against real MariaDB, slurmdbd and slurmctld/slurmd 26.05.3 (cluster `hpc`, as prod): the
    restore, slurmctld still enforcing the pre-restore associations and QOS until the runbook restarts it, and the job
    records the doc says a restore loses (issue 27, items 1 to 4)."""
    from tests.components.layers.backups.test_real_backup import table_rows
    from tests.daemons import mariadb as mariadb_harness
    from tests.daemons import slurm as slurm_harness
    from tests.daemons import slurmdbd as slurmdbd_harness
    from tests.daemons.common import wait_until
    from tests.daemons.mariadb import MariaDBServer
    from tests.daemons.slurm import SlurmCluster, node_line
    from tests.daemons.slurmdbd import SlurmDBD

    if os.geteuid() != 0:
        skip_or_fail("slurmdbd runs as root here (SlurmUser=root)")
    require_binaries(
        *slurm_harness.REQUIRED_BINARIES, *mariadb_harness.REQUIRED_BINARIES, *slurmdbd_harness.REQUIRED_BINARIES, "mariadb-dump"
    )
    assert "**What a restore loses**" in DOC.read_text()
    name = config_values("prod")["hpcforge:slurm"]["clusterName"]  # hpc: the table db-check names
    cluster = Cluster(tmp_path / "cluster", tmp_path / "work")
    root_pw = "Root-pw-for-the-runbook-7"
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - 120))
    with MariaDBServer(tmp_path / "db") as db, SlurmDBD(tmp_path / "dbd", db) as dbd:
        env = dbd.client_env(name)
        for args in (
            ["add", "cluster", name],
            ["add", "account", "science", f"cluster={name}", "fairshare=10"],
            ["add", "user", "root", "account=science", f"cluster={name}"],
        ):
            done = subprocess.run(["sacctmgr", "-i", *args], env=env, capture_output=True, text=True, timeout=60, check=False)
            assert done.returncode == 0, done.stderr
        with SlurmCluster(
            tmp_path / "slurm",
            name,
            nodes=[node_line("n1", cpus=2), node_line("n2", cpus=2)],
            extra_conf=dbd.slurm_conf_lines("associations,limits,qos"),
            allow_override=SlurmDBD.OVERRIDES,
            slurm_key=dbd.slurm_key,
        ) as slurm:

            def sacct_state(job: int) -> str:
                return str(slurm.run("sacct", "-n", "-P", "-X", "-j", str(job), "-o", "state").stdout.strip())

            def listed() -> set[int]:
                out = slurm.run("sacct", "-n", "-P", "-X", "-a", "-S", since, "-o", "jobid").stdout.split()
                return {int(job) for job in out}

            def science_job() -> subprocess.CompletedProcess[str]:
                return slurm.run("sbatch", "-A", "science", "-o", "/dev/null", "--wrap", "true")

            wait_until(lambda: name in slurm.run("sacctmgr", "-P", "-n", "show", "cluster").stdout, 60, "the cluster to register")
            kept = slurm.sbatch("true\n", args=["-A", "science"])
            assert slurm.wait_job(kept, 60) == "COMPLETED"
            wait_until(lambda: sacct_state(kept) == "COMPLETED", 60, "the finished job's record")
            before = table_rows(db)
            assocs = db.query_root(f"SELECT COUNT(*) FROM {name}_assoc_table", "slurm_acct_db")[0][0]
            # the operator's dump (its command line), tonight's and an older one, on the volume and in the bucket; the
            # test writes the files and objects itself, standing in for the operator's upload, under the names the
            # operator gives them (`backup.<RFC 3339>.sql`, mariadb-operator v26.6.0 pkg/backup/processor.go lines
            # 95-97, 157-162)
            dump = subprocess.run(
                dump_argv(["--no-defaults", f"--socket={db.socket}", "-uroot"]), capture_output=True, timeout=120, check=True
            ).stdout
            volume = cluster.volume("database", BACKUP_VOLUME)
            (volume / "backup.2026-11-23T02:15:00Z.sql").write_bytes(dump)
            (volume / "backup.2026-11-22T02:15:00Z.sql").write_bytes(b"SELECT 'an older dump, not the newest';\n")
            for key, body in (("backup.2026-11-23T02:15:00Z.sql", dump), ("backup.2026-11-22T02:15:00Z.sql", b"older")):
                s3.client.put_object(Bucket=s3.BUCKET, Key=f"hpcforge/slurm_acct_db/{key}", Body=body)

            # After the dump, slurmdbd still running: two jobs whose records the restore loses, and changes the
            # restore undoes (science's user association removed, a QOS added), which slurmctld applies at once.
            lost_done = slurm.sbatch("true\n", args=["-A", "root"])
            assert slurm.wait_job(lost_done, 60) == "COMPLETED"
            lost_running = slurm.sbatch("sleep 45\n", args=["-A", "root"])
            slurm.wait_job(lost_running, 30, states={"RUNNING"})
            for args in (["delete", "user", "root", "account=science"], ["add", "qos", "postdump"]):
                slurm.run("sacctmgr", "-i", *args, check=True)
            wait_until(lambda: science_job().returncode != 0, 30, "slurmctld to refuse account science")

            # mariadb-0 runs `mariadb` as root with the password of the Secret mariadb-root (TCP, so the password counts)
            db.sql_root(
                f"CREATE OR REPLACE USER 'root'@'127.0.0.1' IDENTIFIED BY '{root_pw}'; "
                "GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;"
            )
            cluster.secret("database", "mariadb-root", {"password": root_pw})
            tcp = ["--no-defaults", "--protocol=tcp", "-h", db.host, "-P", str(db.port)]
            cluster.data["pods"]["database/mariadb-0"] = {
                "programs": {"mariadb": ["mariadb", *tcp], "mariadb-dump": ["mariadb-dump", *tcp]}
            }
            controller = {
                "programs": {tool: [require_binaries(tool)[tool]] for tool in ("sacctmgr", "scontrol")},
                "env": {key: slurm.env()[key] for key in ("SLURM_CONF", "SLURM_SACK_KEY", "SLURM_SACK_SOCKET")},
            }
            cluster.data["pods"]["slurm/statefulset/slurm-controller"] = controller
            cluster.data["pods"]["slurm/slurm-controller-0"] = controller
            cluster.data["workloads"] = {
                "slinky/deployment/slurm-operator": {"replicas": 1},
                "slurm/statefulset/slurm-accounting": {"replicas": 1},
            }
            cluster.save()

            operator = {"replicas": 1}

            def accounting(replicas: int) -> None:
                # the operator would scale slurmdbd back up while it runs (the runbook stops it first)
                assert replicas == 1 or operator["replicas"] == 0, "slurmdbd stopped while the operator still runs"
                if replicas == 0:
                    dbd.stop()
                else:
                    dbd.start()

            hook = ScaleHook(
                {
                    "slinky/deployment/slurm-operator": lambda n: operator.update(replicas=n),
                    "slurm/statefulset/slurm-accounting": accounting,
                    "slurm/pod/slurm-controller-0": lambda n: slurm.restart_controller(),
                }
            )
            try:
                db.sql_root(f"DROP TABLE {name}_assoc_table", "slurm_acct_db")  # the damage
                cluster.run("db-stop", hook=hook)
                assert dbd.process is None and not slurmdbd_harness.port_open(dbd.port)
                during = slurm.sbatch("true\n", args=["-A", "root"])  # runs while slurmdbd is stopped
                assert slurm.wait_job(during, 60) == "COMPLETED"
                done = cluster.run("db-find-volume", "db-restore", "db-check", "db-start", hook=hook)
                assert "restoring backup.2026-11-23T02:15:00Z.sql" in done.stdout
                assert assocs in done.stdout.splitlines()  # db-check's count, from hpc_assoc_table
                assert f"{name}|science|root" in done.stdout  # sacctmgr through the restarted slurmdbd
                assert slurm.job_state(lost_running) == "RUNNING"  # it runs across the restore

                # slurmdbd serves the restored database; slurmctld still enforces what it had before (issue 27, item 1)
                refused = science_job()
                assert refused.returncode != 0 and "Invalid account" in refused.stderr
                assert "QOS=postdump" in slurm.scontrol("show", "assoc_mgr", "flags=qos")
                restarted = cluster.run("db-ctld-restart", hook=hook)
                assert f"ClusterName={name} Account=science UserName=root(0)" in restarted.stdout
                assert science_job().returncode == 0
                assert "QOS=postdump" not in slurm.scontrol("show", "assoc_mgr", "flags=qos")

                # every row of the accounts, users, associations and QOS is back as dumped (cluster_table: slurmctld's
                # registration since has changed its mod_time)
                kept_tables = (f"{name}_assoc_table", "acct_table", "user_table", "qos_table")
                after = table_rows(db)
                assert {t: after[t] for t in kept_tables} == {t: before[t] for t in kept_tables}
                assert hook.seen == [
                    ("slinky/deployment/slurm-operator", 0),
                    ("slurm/statefulset/slurm-accounting", 0),
                    ("slurm/statefulset/slurm-accounting", 1),
                    ("slinky/deployment/slurm-operator", 1),
                    ("slurm/pod/slurm-controller-0", 1),
                ]
                assert not (cluster.root / "pods" / "database" / "hpcforge-restore.json").exists()

                # What a restore loses (the doc's list): the jobs that started after the dump while slurmdbd ran have
                # rows again once they end, without account and eligible time, so `sacct -a -S` lists only the others.
                assert slurm.wait_job(lost_running, 90) == "COMPLETED"
                for job in (lost_done, lost_running):
                    wait_until(lambda job=job: sacct_state(job) == "COMPLETED", 90, f"`sacct -j {job}` to find job {job}")
                wait_until(lambda: {kept, during} <= listed(), 60, "the kept jobs in `sacct -a`")
                assert not {lost_done, lost_running} & listed()
                rows = dict(db.query_root(f"SELECT id_job, account FROM {name}_job_table", "slurm_acct_db"))
                assert rows[str(lost_done)] == rows[str(lost_running)] == "NULL" and rows[str(during)] == "root"

                found = cluster.run("db-find-s3", env=s3.env())
                assert "restoring hpcforge/slurm_acct_db/backup.2026-11-23T02:15:00Z.sql" in found.stdout
                assert (cluster.workdir / "slurm_acct_db.sql").read_bytes() == dump

                # the upgrade section's hand dump (its block, as written) is restored by the restore step (item 3)
                upgrade = cluster.workdir / "upgrade"
                upgrade.mkdir()
                wanted = table_rows(db)
                subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", _upgrade_dump_block()],
                    cwd=upgrade,
                    env={"PATH": f"{cluster.bin}:/usr/bin:/bin", "KUBE_CLUSTER": str(cluster.root)},
                    check=True,
                    timeout=120,
                )
                (cluster.workdir / "slurm_acct_db.sql").write_bytes((upgrade / "slurm_acct_db.sql").read_bytes())
                cluster.run("db-stop", "db-restore", "db-start", hook=hook)
                assert {t: table_rows(db)[t] for t in kept_tables} == {t: wanted[t] for t in kept_tables}
            finally:
                hook.close()


# --- the directory -------------------------------------------------------------------------------


@pytest.mark.real_daemon
def test_directory_runbook_restores_a_wiped_directory_from_the_volume_and_from_s3(tmp_path: Path, s3: S3Server) -> None:
    from components.layers.directory.ldif import render_directory_ldif, sssd_bind_dn
    from components.site.loader import load_config
    from tests.components.layers.directory.test_real_directory_backup import DM_PASSWORD, SSSD_PASSWORD, SYSTEM_PYTHON, snapshot
    from tests.daemons import dirsrv
    from tests.daemons.common import run
    from tests.daemons.dirsrv import DirectoryServer
    from tests.helpers import REPO, config_values, raw_config

    if os.geteuid() != 0:
        skip_or_fail("the real-daemon tier runs 389ds as root (dscreate)")
    require_binaries(*dirsrv.REQUIRED_BINARIES)
    if run([SYSTEM_PYTHON, "-c", "import ldap"], check=False).returncode != 0:
        skip_or_fail("python3-ldap is not installed (Debian package python3-ldap, pulled in by 389-ds-base)")
    prod = load_config(raw_config(config_values("prod")))
    suffix = prod.directory.suffix
    cluster = Cluster(tmp_path / "cluster", tmp_path / "work")
    with DirectoryServer(tmp_path / "dirsrv", suffix="dc=unrelated,dc=test", dm_password=DM_PASSWORD) as directory:
        ldif = tmp_path / "bootstrap.ldif"
        ldif.write_text(render_directory_ldif(prod.directory))
        sync = run(
            [
                SYSTEM_PYTHON,
                str(REPO / "scripts" / "directory" / "ldap_sync.py"),
                "--uri",
                directory.uri,
                "--ldif",
                str(ldif),
                "--wait",
                "30",
            ],
            env={**os.environ, "LDAP_BIND_PASSWORD": DM_PASSWORD, "SSSD_BIND_PASSWORD": SSSD_PASSWORD},
            timeout=120,
            check=False,
        )
        assert sync.returncode == 0, sync.stdout + sync.stderr
        before = snapshot(directory, suffix)
        _, ca_cert = make_recipient(tmp_path, require_binaries("openssl")["openssl"], "site-ca")
        cluster.config_map(
            "directory", "dirsrv-backup", {"ldif_backup.py": LDIF_SCRIPT.read_text(), "s3put.py": S3PUT_SCRIPT.read_text()}
        )
        cluster.secret("directory", "dirsrv-tls", {"ca.crt": ca_cert.read_text()})
        cluster.secret("directory", "dirsrv-dm-password", {"password": DM_PASSWORD})
        cluster.secret("directory", S3_SECRET, {"access-key-id": s3.ACCESS, "secret-access-key": s3.SECRET})
        volume = cluster.volume("directory", BACKUP_VOLUME)
        # the test's 389ds answers plain LDAP: the service name is mapped onto it (the LDAPS leg is not run here)
        cluster.data["rewrite"] = {DIRECTORY_URI: directory.uri}
        cluster.save()
        for name, cfg in (("volume", BackupsConfig.model_validate({"volume": {}})), ("s3", s3_config(s3))):
            spec = directory_backup_spec(cfg, suffix=suffix, uri=DIRECTORY_URI, labels={})
            cronjob_pod(cluster, "directory", f"dirsrv-backup-{name}", spec)
            command = spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"]
            summary = kubectl_exec(cluster, "directory", f"dirsrv-backup-{name}", command)
            assert summary["entries"] == len(before) and (summary["uploaded"] is not None) == (name == "s3")
        (ldif_volume,) = volume.glob("directory-*.ldif")

        def wipe() -> None:
            for dn in sorted(before, key=lambda d: -d.count(",")):
                deleted = run(
                    ["ldapdelete", "-x", "-H", directory.uri, "-D", "cn=Directory Manager", "-w", DM_PASSWORD, dn], timeout=60
                )
                assert deleted.returncode == 0, deleted.stderr
            assert not directory.can_bind(sssd_bind_dn(suffix), SSSD_PASSWORD)

        wipe()
        done = cluster.run("dir-find-volume", "dir-import")
        assert f"restoring {ldif_volume.name}" in done.stdout
        assert json.loads(done.stdout.strip().splitlines()[-2])["added"] == len(before)
        assert snapshot(directory, suffix) == before and directory.can_bind(sssd_bind_dn(suffix), SSSD_PASSWORD)

        # S3: the volume holds only an older export; the newest comes from the bucket
        ldif_volume.unlink()
        (volume / "directory-20000101T000000Z.ldif").write_text("dn: an older export, not the newest\n")
        wipe()
        done = cluster.run("dir-find-volume", "dir-find-s3", "dir-import", env=s3.env())
        assert json.loads(done.stdout.strip().splitlines()[-2])["added"] == len(before)
        assert snapshot(directory, suffix) == before and directory.can_bind(sssd_bind_dn(suffix), SSSD_PASSWORD)
