"""Tier 4 (real daemons): the directory and the accounting database, proven against the real
servers from Debian packages.

- The LDIF rendered from the prod config is loaded into a real 389 Directory Server by the very
  bootstrap script the directory's Job runs (scripts/directory/ldap_sync.py): the backend is
  created, entries added; a second run changes nothing; the SSSD account finds every user and
  group with the attributes SSSD needs, and cannot write.
- The rendered sssd.conf passes `sssctl config-check`, and its bind account, bases and filters find
  the configured users in that directory, also through a real sssd over LDAPS with the CA.
- The Database/User/Grant specs the program declares, as SQL, on a real MariaDB: the slurm user
  creates tables in slurm_acct_db and nothing else.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from components.layers.database.sql import database_sql, grant_sql, user_sql
from components.layers.directory.face import SSH_KEY_ATTRIBUTE
from components.layers.directory.ldif import render_directory_ldif, sssd_bind_dn
from components.layers.slurm.sssd import SssdSettings, render_sssd_conf
from components.site.loader import load_config
from components.site.root import PlatformConfig
from offline.program.engine import RecordedStack
from tests.daemons import dirsrv, sssd
from tests.daemons.common import HarnessError, run
from tests.daemons.dirsrv import DirectoryServer, LdapEntry
from tests.daemons.mariadb import MariaDBServer, error_code
from tests.daemons.sssd import lookup_with_sssd_settings, run_real_sssd_lookup, sssctl_config_check
from tests.helpers import REPO, config_values, inline_inventories, outline_inventories, raw_config, require_binaries, skip_or_fail

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

SYNC = REPO / "scripts" / "directory" / "ldap_sync.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # python-ldap, as in the 389ds image
DM_PASSWORD = "Directory-Manager-pw-1"
SSSD_PASSWORD = "Sssd-generated-pw-7"


def require_root() -> None:
    if os.geteuid() != 0:
        skip_or_fail("the real-daemon tier runs daemons as root (dscreate, mariadbd, sssd)")


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DirectoryServer]:
    require_root()
    require_binaries(*dirsrv.REQUIRED_BINARIES)
    if not Path(SYSTEM_PYTHON).exists() or run([SYSTEM_PYTHON, "-c", "import ldap"], check=False).returncode != 0:
        skip_or_fail("python3-ldap is not installed (Debian package python3-ldap, pulled in by 389-ds-base)")
    # The instance starts with a backend for another suffix only: the bootstrap must create the
    # backend for the site's suffix itself, as it must in the 389ds container.
    with DirectoryServer(
        tmp_path_factory.mktemp("dirsrv"), suffix="dc=unrelated,dc=test", dm_password=DM_PASSWORD, ldaps=True
    ) as server:
        yield server


def sync(server: DirectoryServer, ldif: str, tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "bootstrap.ldif"
    path.write_text(ldif)
    result = run(
        [SYSTEM_PYTHON, str(SYNC), "--uri", server.uri, "--ldif", str(path), "--wait", "30"],
        env={**os.environ, "LDAP_BIND_PASSWORD": server.dm_password, "SSSD_BIND_PASSWORD": SSSD_PASSWORD},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return summary


def _snapshot(server: DirectoryServer, suffix: str) -> dict[str, dict[str, list[str]]]:
    entries = server.ldapsearch(suffix, "(objectClass=*)", ["*", "+"])
    return {entry.dn.lower(): {k: sorted(v) for k, v in entry.attrs.items()} for entry in entries}


@pytest.fixture(scope="module")
def loaded(directory: DirectoryServer, prod: PlatformConfig, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return sync(directory, render_directory_ldif(prod.directory), tmp_path_factory.mktemp("ldif"))


def test_bootstrap_creates_backend_and_loads_everything(loaded: dict[str, Any], prod: PlatformConfig) -> None:
    directory = prod.directory
    assert loaded["backendCreated"] is True
    expected = 5 + len(directory.groups) + len(directory.users)  # suffix, 3 OUs, bind account
    assert loaded["added"] == expected and loaded["modified"] == 0


def test_sssd_account_finds_users_and_groups_with_what_sssd_needs(
    directory: DirectoryServer, loaded: dict[str, Any], prod: PlatformConfig
) -> None:
    suffix = prod.directory.suffix
    bind = sssd_bind_dn(suffix)
    users = {
        e.first("uid"): e
        for e in directory.ldapsearch(
            f"ou=People,{suffix}", "(objectClass=posixAccount)", ["*"], bind_dn=bind, password=SSSD_PASSWORD
        )
    }
    assert set(users) == {u.name for u in prod.directory.users}
    for user in prod.directory.users:
        entry: LdapEntry = users[user.name]
        assert entry.first("uidNumber") == str(user.uid_number)
        assert entry.first("homeDirectory") == user.home and entry.first("loginShell") == user.login_shell
        assert entry.first("gidNumber") == str(prod.directory.group(user.primary_group).gid_number)  # type: ignore[union-attr]
        assert entry.get(SSH_KEY_ATTRIBUTE) == list(user.ssh_public_keys)
    groups = {
        e.first("cn"): e
        for e in directory.ldapsearch(
            f"ou=Groups,{suffix}", "(objectClass=posixGroup)", ["*"], bind_dn=bind, password=SSSD_PASSWORD
        )
    }
    assert set(groups) == {g.name for g in prod.directory.groups}
    assert sorted(groups["proj-genomics"].get("memberUid")) == ["bob", "erin"]


def test_sssd_account_cannot_write(directory: DirectoryServer, loaded: dict[str, Any], prod: PlatformConfig) -> None:
    suffix = prod.directory.suffix
    change = f"dn: uid=alice,ou=People,{suffix}\nchangetype: modify\nreplace: loginShell\nloginShell: /bin/evil\n"
    result = directory.ldapmodify(change, bind_dn=sssd_bind_dn(suffix), password=SSSD_PASSWORD)
    assert result.returncode == 50, result.stdout + result.stderr  # insufficient access
    add = f"dn: uid=mallory,ou=People,{suffix}\nobjectClass: top\nobjectClass: account\nuid: mallory\n"
    assert directory.ldapadd(add, bind_dn=sssd_bind_dn(suffix), password=SSSD_PASSWORD).returncode == 50


def test_anonymous_cannot_read_users(directory: DirectoryServer, loaded: dict[str, Any], prod: PlatformConfig) -> None:
    result = run(
        ["ldapsearch", "-x", "-H", directory.uri, "-b", f"ou=People,{prod.directory.suffix}", "(uid=*)", "uid"], check=False
    )
    assert "uid: alice" not in result.stdout


def test_loading_the_same_ldif_twice_changes_nothing(
    directory: DirectoryServer, loaded: dict[str, Any], prod: PlatformConfig, tmp_path: Path
) -> None:
    before = _snapshot(directory, prod.directory.suffix)
    again = sync(directory, render_directory_ldif(prod.directory), tmp_path)
    assert again["added"] == 0 and again["modified"] == 0 and again["passwordsSet"] == 0 and again["backendCreated"] is False
    assert _snapshot(directory, prod.directory.suffix) == before  # not even modifyTimestamp moved


def test_a_config_change_modifies_only_that_entry(directory: DirectoryServer, loaded: dict[str, Any], tmp_path: Path) -> None:
    values = inline_inventories(config_values("prod"))
    [frank_entry] = [user for user in values["hpcforge:directory"]["users"] if user["name"] == "frank"]
    assert frank_entry["loginShell"] == "/bin/zsh"
    frank_entry["loginShell"] = "/bin/bash"
    (tmp_path / "inventory").mkdir()
    changed = load_config(raw_config(outline_inventories(values, tmp_path / "inventory")))
    summary = sync(directory, render_directory_ldif(changed.directory), tmp_path)
    assert summary["modified"] == 1 and summary["added"] == 0
    [frank] = directory.ldapsearch(changed.directory.suffix, "(uid=frank)", ["loginShell"])
    assert frank.first("loginShell") == "/bin/bash"


def test_rendered_sssd_conf_passes_sssctl(prod: PlatformConfig, tmp_path: Path) -> None:
    require_binaries(*sssd.REQUIRED_BINARIES)
    settings = SssdSettings(
        domain=prod.slurm.cluster_name,
        ldap_uri="ldaps://dirsrv.directory.svc.cluster.local:3636",
        suffix=prod.directory.suffix,
        bind_dn=sssd_bind_dn(prod.directory.suffix),
    )
    result = sssctl_config_check(render_sssd_conf(settings, SSSD_PASSWORD), tmp_path)
    assert result.ok and result.issues == 0, result.output
    bogus = render_sssd_conf(settings, SSSD_PASSWORD) + "ldap_bogus_option = 1\n"
    assert sssctl_config_check(bogus, tmp_path / "bogus").issues == 1


def _settings_for(server: DirectoryServer, prod: PlatformConfig) -> SssdSettings:
    return SssdSettings(
        domain=prod.slurm.cluster_name,
        ldap_uri=server.ldaps_uri or server.uri,
        suffix=prod.directory.suffix,
        bind_dn=sssd_bind_dn(prod.directory.suffix),
        ca_file=str(server.ca_cert),
    )


def test_sssd_settings_find_the_configured_users(
    directory: DirectoryServer, loaded: dict[str, Any], prod: PlatformConfig
) -> None:
    conf = render_sssd_conf(_settings_for(directory, prod), SSSD_PASSWORD)
    found = lookup_with_sssd_settings(conf, directory, domain=prod.slurm.cluster_name)
    assert set(found["users"]) == {u.name for u in prod.directory.users}
    assert found["users"]["alice"]["uid"] == 10001 and found["users"]["alice"]["ssh_keys"] == list(
        prod.directory.users[0].ssh_public_keys
    )
    assert set(found["groups"]["proj-llm"]["members"]) == {"dave", "erin"}


def test_real_sssd_resolves_users_over_ldaps(
    directory: DirectoryServer, loaded: dict[str, Any], prod: PlatformConfig, tmp_path: Path
) -> None:
    require_binaries("sssd", "getent")
    conf = render_sssd_conf(_settings_for(directory, prod), SSSD_PASSWORD).replace("[nss]\n", "[nss]\nmemcache_timeout = 0\n")
    try:
        answers = run_real_sssd_lookup(conf, tmp_path, ["alice", "frank"], ["hpc-admins"], timeout=45)
    except HarnessError as error:
        if "runs already" in str(error):
            skip_or_fail(str(error))
        raise
    assert answers["passwd"]["alice"] is not None and answers["passwd"]["alice"].split(":")[2] == "10001", answers
    assert answers["group"]["hpc-admins"] is not None and "alice" in answers["group"]["hpc-admins"], answers


# --- MariaDB ---------------------------------------------------------------------------------------------


def _spec(stack: RecordedStack, kind: str, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = next(
        r.inputs["spec"] for r in stack.kubernetes_objects() if r.inputs["kind"] == kind and r.inputs["metadata"]["name"] == name
    )
    return spec


def test_the_declared_grant_is_limited_to_the_accounting_database(prod_stack: RecordedStack, tmp_path: Path) -> None:
    require_root()
    require_binaries("mariadbd", "mariadb-install-db", "mariadb")
    database = _spec(prod_stack, "Database", "slurm-acct-db")
    user = _spec(prod_stack, "User", "slurm")
    grant = _spec(prod_stack, "Grant", "slurm-acct-db")
    password = "Slurm-db-pw-3"
    with MariaDBServer(tmp_path / "mariadb") as server:
        server.sql_root("\n".join([database_sql(database), user_sql(user, password), grant_sql(grant)]))
        created = server.sql_as(
            "slurm",
            password,
            "CREATE TABLE job_table (id INT PRIMARY KEY); INSERT INTO job_table VALUES (1);",
            database="slurm_acct_db",
        )
        assert created.returncode == 0, created.stderr
        other = server.sql_as("slurm", password, "CREATE DATABASE other_db;")
        assert other.returncode != 0 and error_code(other) == 1044, other.stderr
        peek = server.sql_as("slurm", password, "SELECT user FROM mysql.user;")
        assert peek.returncode != 0 and error_code(peek) in (1142, 1044), peek.stderr
        grants = server.query_root("SHOW GRANTS FOR 'slurm'@'%'")
        assert any("`slurm_acct_db`.*" in row[0] for row in grants) and not any(
            "ON *.*" in row[0] and "ALL" in row[0] for row in grants
        )


def test_removed_users_and_keys_lose_access(directory: DirectoryServer, loaded: dict[str, Any], tmp_path: Path) -> None:
    sync(directory, render_directory_ldif(load_config(raw_config(config_values("prod"))).directory), tmp_path)  # the prod state
    values = inline_inventories(config_values("prod"))
    users = values["hpcforge:directory"]["users"]
    values["hpcforge:directory"]["users"] = [u for u in users if u["name"] != "erin"]  # erin leaves
    values["hpcforge:directory"]["users"][0].pop("sshPublicKeys")  # alice's key is revoked
    (tmp_path / "inventory").mkdir()
    changed = load_config(raw_config(outline_inventories(values, tmp_path / "inventory")))
    suffix = changed.directory.suffix
    summary = sync(directory, render_directory_ldif(changed.directory), tmp_path)
    # erin's entry goes; proj-llm and proj-genomics drop her; alice loses the key (and nsAccount)
    assert summary["deleted"] == 1 and summary["modified"] == 3 and summary["added"] == 0, summary
    assert directory.ldapsearch(suffix, "(uid=erin)", ["uid"]) == []
    [llm] = directory.ldapsearch(f"ou=Groups,{suffix}", "(cn=proj-llm)", ["memberUid"])
    assert llm.get("memberUid") == ["dave"]
    [alice] = directory.ldapsearch(suffix, "(uid=alice)", ["objectClass", SSH_KEY_ATTRIBUTE])
    assert alice.get(SSH_KEY_ATTRIBUTE) == [] and "nsaccount" not in {c.lower() for c in alice.get("objectClass")}
    # and loading the original config again brings everything back
    restored = sync(directory, render_directory_ldif(load_config(raw_config(config_values("prod"))).directory), tmp_path)
    assert restored["added"] == 1 and restored["deleted"] == 0
