"""Tier 4 (real daemons): the directory's backup and restore against a real 389 Directory Server.

The prod directory is loaded by the bootstrap script (ldap_sync.py), exported by
scripts/directory/ldif_backup.py exactly as the backup CronJob runs it, wiped (every entry of the
suffix deleted), imported by the same script as the restore runbook says, and then the SSSD
account binds again and the searches SSSD would run (the rendered sssd.conf) find every user and
group with the same attributes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from components.layers.directory.ldif import render_directory_ldif, sssd_bind_dn
from components.layers.slurm.sssd import SssdSettings, render_sssd_conf
from components.site.loader import load_config
from components.site.root import PlatformConfig
from tests.daemons import dirsrv
from tests.daemons.common import run
from tests.daemons.dirsrv import DirectoryServer
from tests.daemons.sssd import lookup_with_sssd_settings
from tests.helpers import REPO, config_values, raw_config, require_binaries, skip_or_fail

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

SYNC = REPO / "scripts" / "directory" / "ldap_sync.py"
BACKUP = REPO / "scripts" / "directory" / "ldif_backup.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # python-ldap, as in the 389ds image
DM_PASSWORD = "Directory-Manager-pw-2"
SSSD_PASSWORD = "Sssd-generated-pw-9"


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DirectoryServer]:
    if os.geteuid() != 0:
        skip_or_fail("the real-daemon tier runs 389ds as root (dscreate)")
    require_binaries(*dirsrv.REQUIRED_BINARIES)
    if not Path(SYSTEM_PYTHON).exists() or run([SYSTEM_PYTHON, "-c", "import ldap"], check=False).returncode != 0:
        skip_or_fail("python3-ldap is not installed (Debian package python3-ldap, pulled in by 389-ds-base)")
    with DirectoryServer(tmp_path_factory.mktemp("dirsrv"), suffix="dc=unrelated,dc=test", dm_password=DM_PASSWORD) as server:
        yield server


def script(*args: str) -> dict[str, Any]:
    result = run(
        [SYSTEM_PYTHON, *args],
        env={**os.environ, "LDAP_BIND_PASSWORD": DM_PASSWORD, "SSSD_BIND_PASSWORD": SSSD_PASSWORD},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return summary


def snapshot(server: DirectoryServer, suffix: str) -> dict[str, dict[str, list[str]]]:
    entries = server.ldapsearch(suffix, "(objectClass=*)", ["*", "aci"])
    return {entry.dn.lower(): {k.lower(): sorted(v) for k, v in entry.attrs.items()} for entry in entries}


def test_export_wipe_import_and_sssd_finds_every_user_again(
    directory: DirectoryServer, prod: PlatformConfig, tmp_path: Path
) -> None:
    suffix = prod.directory.suffix
    ldif = tmp_path / "bootstrap.ldif"
    ldif.write_text(render_directory_ldif(prod.directory))
    script(str(SYNC), "--uri", directory.uri, "--ldif", str(ldif), "--wait", "30")
    before = snapshot(directory, suffix)
    backups = tmp_path / "backups"
    backups.mkdir()
    stale = backups / "directory-20000101T000000Z.ldif"
    stale.write_text("old\n")
    os.utime(stale, (0, 0))

    exported = script(
        str(BACKUP), "export", "--uri", directory.uri, "--suffix", suffix, "--dir", str(backups), "--keep-days", "30"
    )
    assert exported["entries"] == len(before)
    assert exported["removed"] == [stale.name] and not stale.exists()

    # wipe: every entry of the suffix, children first
    for dn in sorted(before, key=lambda d: -d.count(",")):
        deleted = run(["ldapdelete", "-x", "-H", directory.uri, "-D", "cn=Directory Manager", "-w", DM_PASSWORD, dn], timeout=60)
        assert deleted.returncode == 0, deleted.stderr
    assert not directory.can_bind(sssd_bind_dn(suffix), SSSD_PASSWORD)

    restored = script(str(BACKUP), "import", "--uri", directory.uri, "--file", exported["file"])
    assert restored["added"] == len(before) and restored["replaced"] == 0
    assert snapshot(directory, suffix) == before

    assert directory.can_bind(sssd_bind_dn(suffix), SSSD_PASSWORD)
    settings = SssdSettings(domain=prod.slurm.cluster_name, ldap_uri=directory.uri, suffix=suffix, bind_dn=sssd_bind_dn(suffix))
    found = lookup_with_sssd_settings(render_sssd_conf(settings, SSSD_PASSWORD), directory, domain=prod.slurm.cluster_name)
    assert set(found["users"]) == {u.name for u in prod.directory.users}
    assert set(found["groups"]) == {g.name for g in prod.directory.groups}
    assert found["users"]["alice"]["uid"] == 10001


def test_import_repairs_a_damaged_entry(directory: DirectoryServer, prod: PlatformConfig, tmp_path: Path) -> None:
    suffix = prod.directory.suffix
    ldif = tmp_path / "bootstrap.ldif"
    ldif.write_text(render_directory_ldif(prod.directory))
    script(str(SYNC), "--uri", directory.uri, "--ldif", str(ldif), "--wait", "30")
    exported = script(str(BACKUP), "export", "--uri", directory.uri, "--suffix", suffix, "--dir", str(tmp_path))
    change = f"dn: uid=bob,ou=People,{suffix}\nchangetype: modify\nreplace: loginShell\nloginShell: /bin/false\n"
    directory.check(directory.ldapmodify(change))
    restored = script(str(BACKUP), "import", "--uri", directory.uri, "--file", exported["file"])
    assert restored["added"] == 0 and restored["replaced"] == exported["entries"]
    bob = directory.ldapsearch(f"uid=bob,ou=People,{suffix}", "(objectClass=*)", ["loginShell"], scope="base")
    assert bob[0].first("loginShell") == "/bin/bash"


def test_backup_cronjob_runs_the_tested_export() -> None:
    from components.layers.backups.config import BackupsConfig
    from components.layers.backups.objects import directory_backup_spec

    cfg = BackupsConfig.model_validate({"schedule": "0 3 * * *", "maxRetention": "168h", "volume": {"size": "5Gi"}})
    spec = directory_backup_spec(cfg, suffix="dc=hpc,dc=example,dc=org", uri="ldaps://dirsrv:3636", labels={})
    assert spec["schedule"] == "0 3 * * *"
    container = spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    command = container["command"]
    assert command[:3] == ["python3", "/scripts/ldif_backup.py", "export"]
    assert command[command.index("--keep-days") + 1] == "7" and command[command.index("--dir") + 1] == "/backup"
