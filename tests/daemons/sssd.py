"""sssd.conf checks for tests: ``sssctl config-check``, and the LDAP lookups an sssd.conf implies.

* :func:`sssctl_config_check` writes the text as ``<tmp>/sssd.conf`` (mode 0600, as sssd demands) with
  an (optionally filled) ``conf.d/`` beside it - without it sssctl exits 1 with "Directory .../conf.d
  does not exist" and 0 issues - and parses "Issues identified by validators: N".  Unknown options
  and sections are issues, e.g. ``[rule/allowed_domain_options]: Attribute 'bogus_option' is not
  allowed in section 'domain/hpc'. Check for typos.``  ``sssctl`` exits 0 only when clean.
* :func:`lookup_with_sssd_settings` reads the ``[domain/...]`` section with configparser and runs
  the searches sssd's LDAP provider would run for users and groups, with the configured bind DN and
  password (``ldap_default_bind_dn``/``ldap_default_authtok``), search bases (``ldap_search_base``,
  ``ldap_user_search_base``/``ldap_group_search_base`` including sssd's ``base?scope?filter``
  syntax), the legacy ``ldap_*_search_filter``/``_scope`` options, object classes and attribute
  maps (rfc2307: members in ``memberUid``; rfc2307bis: ``member`` DNs).  The searches go to the
  test :class:`~tests.daemons.dirsrv.DirectoryServer` (``ldap_uri`` of a rendered config names the
  real site; it is reported, not used, unless ``use_configured_uri=True``).

Running the real sssd instead (checked feasible, not wired in): ``sssd -i -c <tmp>/sssd.conf
--logger=stderr`` works with a private config file, but sssd's state paths are compiled in
(/var/lib/sss/db for config.ldb and the cache, /var/lib/sss/pipes for the responder sockets,
/var/lib/sss/mc for the memory cache, /run/sssd.pid), so only one such sssd can run per machine
and it replaces the machine's config.ldb.  With ``[nss] memcache_timeout = 0`` (nothing left in
/var/lib/sss/mc afterwards), ``getent -s sss passwd alice`` and ``getent -s sss group hpc`` answer
from the test directory without touching /etc/nsswitch.conf; stop sssd by pid, delete what it created
under /var/lib/sss (cache_<domain>.ldb, timestamps_<domain>.ldb, sssd.ldb, the sockets in pipes/)
and put the machine's config.ldb back.  :func:`run_real_sssd_lookup` does exactly that (it refuses
when an sssd already runs) and takes well under a second against a local DirectoryServer.
"""

from __future__ import annotations

import configparser
import contextlib
import re
import shutil
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import (
    TAG_VAR,
    HarnessError,
    ManagedProcess,
    WaitAbort,
    env_with,
    kill_tagged,
    make_tag,
    pid_alive,
    read_pidfile,
    run,
    wait_until,
    write_file,
)
from .dirsrv import DirectoryServer, LdapEntry

#: Binaries a test needs for :func:`sssctl_config_check` (pass to ``require_binaries``).
REQUIRED_BINARIES = ("sssctl",)

_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class ConfigCheckResult:
    """What ``sssctl config-check`` said about a config."""

    returncode: int
    issues: int
    output: str
    merge_messages: int = 0
    snippet_files: int = 0
    messages: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.issues == 0 and self.merge_messages == 0


def _count(pattern: str, text: str) -> int | None:
    match = re.search(pattern, text)
    return int(match.group(1)) if match else None


def sssctl_config_check(
    conf_text: str,
    tmp_dir: Path,
    *,
    snippets: Mapping[str, str] | None = None,
    timeout: float = 30,
) -> ConfigCheckResult:
    """Write ``conf_text`` to ``<tmp_dir>/sssd.conf`` (0600) + ``conf.d/`` and run ``sssctl config-check -c``.

    ``snippets`` (file name -> text) go to conf.d/ (mode 0600; only ``*.conf`` files are read by
    sssd).  Raises :class:`HarnessError` when the output has no "Issues identified by validators"
    line (sssctl missing or crashed).
    """
    sssctl = shutil.which("sssctl", path=_SYSTEM_PATH)
    if sssctl is None:
        raise HarnessError("sssctl is not installed (Debian package sssd-tools)")
    tmp_dir = Path(tmp_dir).resolve()
    conf = write_file(tmp_dir / "sssd.conf", conf_text, 0o600)
    snippet_dir = tmp_dir / "conf.d"
    snippet_dir.mkdir(parents=True, exist_ok=True)
    snippet_dir.chmod(0o700)
    for name, text in (snippets or {}).items():
        write_file(snippet_dir / name, text, 0o600)
    result = run([sssctl, "config-check", "-c", str(conf)], timeout=timeout)
    output = result.stdout + result.stderr
    issues = _count(r"Issues identified by validators:\s*(\d+)", output)
    if issues is None:
        raise HarnessError(f"unexpected sssctl config-check output (exit {result.returncode}):\n{output}")
    messages = [line.strip() for line in output.splitlines() if line.strip().startswith("[rule/")]
    return ConfigCheckResult(
        returncode=result.returncode,
        issues=issues,
        output=output,
        merge_messages=_count(r"Messages generated during configuration merging:\s*(\d+)", output) or 0,
        snippet_files=_count(r"Used configuration snippet files:\s*(\d+)", output) or 0,
        messages=messages,
    )


# --------------------------------------------------------------------------------------------------
# the LDAP searches an sssd.conf implies

_SCOPES = {"": "sub", "subtree": "sub", "sub": "sub", "onelevel": "one", "one": "one", "base": "base"}


def parse_sssd_conf(conf_text: str) -> configparser.RawConfigParser:
    """sssd.conf as a (raw: no ``%`` interpolation) configparser; option names are case-insensitive."""
    parser = configparser.RawConfigParser(strict=True, comment_prefixes=("#", ";"), inline_comment_prefixes=None)
    parser.read_string(conf_text)
    return parser


def domain_section(parser: configparser.RawConfigParser, domain: str | None = None) -> tuple[str, configparser.SectionProxy]:
    """The ``[domain/NAME]`` section: ``domain``, else the first of ``[sssd] domains``, else the first one."""
    names = [section[len("domain/") :] for section in parser.sections() if section.startswith("domain/")]
    if not names:
        raise ValueError("the sssd.conf has no [domain/...] section")
    if domain is None and parser.has_option("sssd", "domains"):
        listed = [name.strip() for name in parser.get("sssd", "domains").split(",") if name.strip()]
        domain = next((name for name in listed if name in names), None)
    domain = domain or names[0]
    if domain not in names:
        raise ValueError(f"no [domain/{domain}] section (have {names})")
    return domain, parser[f"domain/{domain}"]


def _wrap_filter(text: str) -> str:
    text = text.strip()
    return text if text.startswith("(") else f"({text})"


def parse_search_bases(value: str, default_scope: str = "sub") -> list[tuple[str, str, str | None]]:
    """sssd's search base syntax ``base[?scope?[filter][?base?scope?[filter]...]]`` -> (base, scope, filter)."""
    parts = value.split("?")
    if len(parts) == 1:
        return [(value.strip(), default_scope, None)]
    if len(parts) % 3 != 0:
        raise ValueError(f"malformed sssd search base {value!r} (expected base?scope?filter)")
    bases = []
    for index in range(0, len(parts), 3):
        base, scope, search_filter = (part.strip() for part in parts[index : index + 3])
        if scope.lower() not in _SCOPES:
            raise ValueError(f"unknown scope {scope!r} in sssd search base {value!r}")
        bases.append(
            (base, _SCOPES[scope.lower()] if scope else default_scope, _wrap_filter(search_filter) if search_filter else None)
        )
    return bases


def _to_int(value: str | None) -> int | None:
    return int(value) if value is not None and value.lstrip("-").isdigit() else None


def lookup_with_sssd_settings(  # noqa: PLR0915 (sets a real sssd up and tears it down in one place)
    conf_text: str,
    server: DirectoryServer,
    *,
    domain: str | None = None,
    use_configured_uri: bool = False,
    timeout: float = 30,
) -> dict[str, Any]:
    """Run the user and group searches the sssd.conf's LDAP domain implies against ``server``.

    Returns ``{"domain", "configured_uri", "uri", "bind_dn", "schema", "user_searches",
    "group_searches", "users": {name: {"dn", "uid", "gid", "home", "shell", "gecos", "ssh_keys"}},
    "groups": {name: {"dn", "gid", "members"}}}`` where ``*_searches`` are the (base, scope, filter)
    triples used and group ``members`` are user names (rfc2307bis member DNs are mapped to the
    users found, others kept as DNs).  A wrong bind DN/password raises
    :class:`~tests.daemons.dirsrv.LdapError` (returncode 49), like sssd would fail to go online.
    """
    parser = parse_sssd_conf(conf_text)
    name, section = domain_section(parser, domain)
    if section.get("id_provider", "").strip() != "ldap":
        raise ValueError(f"[domain/{name}] has id_provider={section.get('id_provider')!r}, not ldap")
    configured_uri = section.get("ldap_uri", "").split(",")[0].strip() or None
    uri = configured_uri if use_configured_uri and configured_uri else server.uri
    authtok_type = section.get("ldap_default_authtok_type", "password").strip()
    if authtok_type != "password":
        raise ValueError(f"ldap_default_authtok_type={authtok_type} cannot be used here (only password)")
    bind_dn = section.get("ldap_default_bind_dn", "").strip()
    password = section.get("ldap_default_authtok", "")
    schema = section.get("ldap_schema", "rfc2307").strip().lower()
    search_base = section.get("ldap_search_base", "").strip()

    def bases(kind: str) -> list[tuple[str, str, str | None]]:
        value = section.get(f"ldap_{kind}_search_base", "").strip() or search_base
        if not value:
            raise ValueError(f"[domain/{name}] sets neither ldap_{kind}_search_base nor ldap_search_base")
        scope = _SCOPES.get(section.get(f"ldap_{kind}_search_scope", "sub").strip().lower(), "sub")
        return parse_search_bases(value, scope)

    def option(key: str, default: str) -> str:
        return section.get(key, default).strip() or default

    user_oc = option("ldap_user_object_class", "posixAccount")
    user_name = option("ldap_user_name", "uid")
    user_uid = option("ldap_user_uid_number", "uidNumber")
    user_gid = option("ldap_user_gid_number", "gidNumber")
    user_home = option("ldap_user_home_directory", "homeDirectory")
    user_shell = option("ldap_user_shell", "loginShell")
    user_gecos = option("ldap_user_gecos", "gecos")
    user_ssh = option("ldap_user_ssh_public_key", "sshPublicKey")
    group_oc = option("ldap_group_object_class", "posixGroup")
    group_name = option("ldap_group_name", "cn")
    group_gid = option("ldap_group_gid_number", "gidNumber")
    group_member = option("ldap_group_member", "member" if schema in {"rfc2307bis", "ipa", "ad"} else "memberUid")
    user_extra = section.get("ldap_user_search_filter", "").strip()
    group_extra = section.get("ldap_group_search_filter", "").strip()

    def user_filter(per_base: str | None) -> str:
        parts = [f"(objectClass={user_oc})", f"({user_name}=*)", f"(&({user_uid}=*)(!({user_uid}=0)))"]
        parts += [_wrap_filter(extra) for extra in (user_extra, per_base) if extra]
        return "(&" + "".join(parts) + ")"

    def group_filter(per_base: str | None) -> str:
        parts = [f"(objectClass={group_oc})", f"({group_name}=*)", f"(&({group_gid}=*)(!({group_gid}=0)))"]
        parts += [_wrap_filter(extra) for extra in (group_extra, per_base) if extra]
        return "(&" + "".join(parts) + ")"

    def search(base: str, scope: str, search_filter: str, attrs: list[str]) -> list[LdapEntry]:
        return server.ldapsearch(
            base, search_filter, attrs, bind_dn=bind_dn, password=password, scope=scope, uri=uri, timeout=timeout
        )

    user_searches = [(base, scope, user_filter(extra)) for base, scope, extra in bases("user")]
    group_searches = [(base, scope, group_filter(extra)) for base, scope, extra in bases("group")]

    users: dict[str, dict[str, Any]] = {}
    dn_to_user: dict[str, str] = {}
    for base, scope, search_filter in user_searches:
        for entry in search(
            base, scope, search_filter, [user_name, user_uid, user_gid, user_home, user_shell, user_gecos, user_ssh]
        ):
            login = entry.first(user_name)
            if login is None or login in users:
                continue
            users[login] = {
                "dn": entry.dn,
                "uid": _to_int(entry.first(user_uid)),
                "gid": _to_int(entry.first(user_gid)),
                "home": entry.first(user_home),
                "shell": entry.first(user_shell),
                "gecos": entry.first(user_gecos),
                "ssh_keys": entry.get(user_ssh),
            }
            dn_to_user[entry.dn.lower()] = login
    groups: dict[str, dict[str, Any]] = {}
    for base, scope, search_filter in group_searches:
        for entry in search(base, scope, search_filter, [group_name, group_gid, group_member]):
            group = entry.first(group_name)
            if group is None or group in groups:
                continue
            members = entry.get(group_member)
            if group_member.lower() != "memberuid":
                members = [dn_to_user.get(member.lower(), member) for member in members]
            groups[group] = {"dn": entry.dn, "gid": _to_int(entry.first(group_gid)), "members": members}
    return {
        "domain": name,
        "configured_uri": configured_uri,
        "uri": uri,
        "bind_dn": bind_dn or None,
        "schema": schema,
        "user_searches": user_searches,
        "group_searches": group_searches,
        "users": users,
        "groups": groups,
    }


# --------------------------------------------------------------------------------------------------
# the real sssd (opt-in)

SSS_STATE_DIRS = (
    Path("/var/lib/sss/db"),
    Path("/var/lib/sss/pipes"),
    Path("/var/lib/sss/pipes/private"),
    Path("/var/lib/sss/mc"),
)
SSS_PIPES_DIR = Path("/var/lib/sss/pipes")
SSSD_PIDFILE = Path("/run/sssd.pid")


def _sssd_running() -> bool:
    pid = read_pidfile(SSSD_PIDFILE)
    if pid is not None and pid_alive(pid):
        return True
    nss = SSS_PIPES_DIR / "nss"
    if not nss.exists():
        return False
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        sock.connect(str(nss))
        return True
    return False


def run_real_sssd_lookup(
    conf_text: str,
    tmp_dir: Path,
    users: Sequence[str],
    groups: Sequence[str] = (),
    *,
    timeout: float = 60,
) -> dict[str, Any]:
    """Start ``sssd -i -c <tmp>/sssd.conf`` and ask it through NSS (``getent -s sss``); machine-wide, so careful.

    Refuses (HarnessError) when another sssd runs: the state paths under /var/lib/sss are compiled in.
    Before starting, the files in /var/lib/sss/{db,pipes,pipes/private,mc} are snapshotted into
    ``tmp_dir``; afterwards sssd is stopped by pid, files it created there are deleted and the
    snapshotted ones (e.g. the machine's config.ldb) are put back, so the machine is left as found.
    The config should point ``ldap_uri`` at the test server and set ``[nss] memcache_timeout = 0``.
    Returns ``{"passwd": {user: getent line or None}, "group": {group: line or None}, "log": path}``;
    a name that is not found costs ``timeout`` seconds of retries (the backend may still be connecting).
    """
    sssd = shutil.which("sssd", path=_SYSTEM_PATH)
    getent = shutil.which("getent", path=_SYSTEM_PATH)
    if sssd is None or getent is None:
        raise HarnessError("sssd/getent not installed (Debian packages sssd-ldap, libc-bin)")
    if _sssd_running():
        raise HarnessError(f"an sssd runs already ({SSSD_PIDFILE}, {SSS_PIPES_DIR}/nss): refusing to start another")
    tmp_dir = Path(tmp_dir).resolve()
    conf = write_file(tmp_dir / "sssd.conf", conf_text, 0o600)
    (tmp_dir / "conf.d").mkdir(exist_ok=True)
    backup = tmp_dir / "var-lib-sss-backup"
    before: dict[Path, set[str]] = {}
    for directory in SSS_STATE_DIRS:
        names = {path.name for path in directory.iterdir() if not path.is_dir()} if directory.is_dir() else set()
        before[directory] = names
        for name in names:
            if (directory / name).is_file():
                (backup / directory.relative_to("/")).mkdir(parents=True, exist_ok=True)
                shutil.copy2(directory / name, backup / directory.relative_to("/") / name)
    log = tmp_dir / "sssd.out"
    tag = make_tag("sssd", tmp_dir)
    proc = ManagedProcess(
        [sssd, "-i", "-c", str(conf), "--logger=stderr", "-d", "2"],
        name="sssd",
        log_path=log,
        env=env_with({TAG_VAR: tag}),
        grace=10,
    )
    try:

        def nss_ready() -> bool:
            if not proc.alive():
                raise WaitAbort(f"sssd exited with code {proc.returncode}")
            return (SSS_PIPES_DIR / "nss").exists()

        wait_until(nss_ready, timeout, "sssd's nss responder socket", log=log)

        def getent_line(database: str, key: str) -> str | None:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                result = run([getent, "-s", "sss", database, key], timeout=30)
                if result.returncode == 0:
                    return result.stdout.strip()
                time.sleep(0.5)
            return None

        return {
            "passwd": {user: getent_line("passwd", user) for user in users},
            "group": {group: getent_line("group", group) for group in groups},
            "log": log,
        }
    finally:
        proc.stop()
        kill_tagged([f"{TAG_VAR}={tag}"])
        for directory, names in before.items():
            if not directory.is_dir():
                continue
            for path in directory.iterdir():
                if not path.is_dir() and path.name not in names:
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
            for name in names:
                saved = backup / directory.relative_to("/") / name
                if saved.is_file():
                    shutil.copy2(saved, directory / name)
        with contextlib.suppress(FileNotFoundError):
            SSSD_PIDFILE.unlink()


__all__ = [
    "REQUIRED_BINARIES",
    "ConfigCheckResult",
    "domain_section",
    "lookup_with_sssd_settings",
    "parse_search_bases",
    "parse_sssd_conf",
    "run_real_sssd_lookup",
    "sssctl_config_check",
]
