"""Tier 4 (real daemons): the accounting database's backup and restore, with exactly the commands
mariadb-operator's Backup and Restore run (`dump_argv`/`restore_argv`), against a real MariaDB whose
slurm_acct_db was written by a real slurmdbd: dump, (lose the database), restore, check. The restore
runbook's own blocks in docs/operations.md are run by tests/components/layers/backups/test_runbook.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from components.layers.backups.config import BackupsConfig
from components.layers.backups.objects import DUMP_OPTIONS, dump_argv, mariadb_backup_spec, restore_argv
from tests.daemons import mariadb as mariadb_harness
from tests.daemons import slurmdbd as slurmdbd_harness
from tests.daemons.common import run
from tests.daemons.mariadb import MariaDBServer
from tests.daemons.slurmdbd import SlurmDBD
from tests.helpers import require_binaries, skip_or_fail

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]


def table_rows(db: MariaDBServer) -> dict[str, list[tuple[str, ...]]]:
    tables = [row[0] for row in db.query_root("SHOW TABLES", "slurm_acct_db")]
    return {table: sorted(db.query_root(f"SELECT * FROM `{table}`", "slurm_acct_db")) for table in tables}


def test_backup_spec_names_the_accounting_database_and_the_target() -> None:
    cfg = BackupsConfig.model_validate({"schedule": "15 2 * * *", "volume": {"size": "10Gi"}})
    spec = mariadb_backup_spec(cfg, mariadb="mariadb", volume_claim="hpcforge-backups")
    assert spec["databases"] == ["slurm_acct_db"] and spec["schedule"] == {"cron": "15 2 * * *"}
    assert spec["storage"] == {"volume": {"persistentVolumeClaim": {"claimName": "hpcforge-backups"}}}
    assert dump_argv(["-uroot"]) == ["mariadb-dump", "-uroot", *DUMP_OPTIONS, "--databases", "slurm_acct_db"]


def test_dump_drop_restore_gives_back_every_row_slurmdbd_wrote(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        skip_or_fail("slurmdbd runs as root here (SlurmUser=root)")
    require_binaries(*mariadb_harness.REQUIRED_BINARIES, *slurmdbd_harness.REQUIRED_BINARIES, "mariadb-dump")
    with MariaDBServer(tmp_path / "db") as db:
        with SlurmDBD(tmp_path / "dbd", db) as dbd:
            # real content: slurmdbd's schema, plus a cluster, accounts and a QOS written through sacctmgr
            env = dbd.client_env("backuptest")
            for args in (
                ["add", "cluster", "backuptest"],
                ["add", "qos", "gpu", "maxwall=1-00:00:00"],
                ["add", "account", "science", "cluster=backuptest", "fairshare=10"],
            ):
                done = subprocess.run(["sacctmgr", "-i", *args], env=env, capture_output=True, text=True, timeout=60, check=False)
                assert done.returncode == 0, done.stderr
        before = table_rows(db)
        assert any(rows for name, rows in before.items() if name.endswith("_assoc_table"))
        connection = ["--no-defaults", f"--socket={db.socket}", "-uroot"]
        dump = tmp_path / "backup.sql"
        with dump.open("w") as out:
            done = subprocess.run(dump_argv(connection), stdout=out, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        db.sql_root("DROP DATABASE slurm_acct_db")
        assert "slurm_acct_db" not in db.sql_root("SHOW DATABASES")
        restored = run(restore_argv(connection), input=dump.read_text(), timeout=120)
        assert restored.returncode == 0, restored.stderr
        assert table_rows(db) == before
