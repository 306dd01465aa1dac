"""A throw-away 389 Directory Server 2.3 instance on 127.0.0.1, for tests.

Usage::

    with DirectoryServer(tmp_path, suffix="dc=hpc,dc=test") as ds:
        ds.ldapadd(generated_ldif, continue_on_error=False).check_returncode()
        [alice] = ds.ldapsearch(ds.suffix, "(uid=alice)", ["uidNumber"])

How it runs without systemd
---------------------------
``dscreate from-file`` (``[general] start = False``, ``systemd = False``) still calls ``systemctl``
to start/stop the instance.  The harness writes a POSIX-sh stand-in ``<tmp>/bin/systemctl`` and puts
``<tmp>/bin`` first on PATH for dscreate/dsctl only: ``start dirsrv@NAME`` runs ``ns-slapd -D
/etc/dirsrv/slapd-NAME -i /run/dirsrv/slapd-NAME.pid`` (after creating /run/dirsrv owned by dirsrv),
``stop`` kills that pid, ``is-active`` checks it; everything else succeeds silently.  The instance
lives in the usual system places (/etc/dirsrv/slapd-NAME, /var/lib/dirsrv/slapd-NAME,
/var/log/dirsrv/slapd-NAME): names are ``hpcft<pid>x<random>`` so runs never collide, an owner
record (/run/hpcforge-tests/dirsrv/NAME.owner: pid and start time of the creating process) is written
*before* dscreate, and :func:`cleanup_leftover_instances` (run before each start) removes instances
with the prefix whose owner is gone (crashed earlier runs) - never one a live run owns.
``stop()`` kills ns-slapd by pid and runs ``dsctl NAME remove --do-it`` (then deletes whatever is
left), also when start failed half-way, and from the atexit registry.  ``nsslapd-listenhost`` is set
to 127.0.0.1 in dse.ldif before the first start.

Schema facts of 389-ds-base 2.3 (Debian 12), asserted by tests/test_daemon_harness.py
--------------------------------------------------------------------------------------
* The OpenSSH-LPK schema is **not** shipped: objectClass ``ldapPublicKey`` is unknown ("Object class
  violation: unknown object class 'ldapPublicKey'") and there is no ``sshPublicKey`` attribute.  389ds
  has its own ``nsSshPublicKey`` attribute, allowed by the AUXILIARY class ``nsAccount``
  (30ns-common.ldif; lib389's sssd config uses ``ldap_user_ssh_public_key = nsSshPublicKey``).
  :meth:`DirectoryServer.add_openssh_lpk_schema` adds the standard LPK definitions over LDAP
  (``cn=schema``, stored in 99user.ldif); afterwards ``inetOrgPerson`` + ``posixAccount`` +
  ``ldapPublicKey`` entries with ``sshPublicKey`` are accepted.
* In the default ``10rfc2307compat.ldif`` schema ``posixGroup`` and ``posixAccount`` are
  **AUXILIARY**, not structural.  389ds does not enforce a structural class, so an entry with only
  ``objectClass: top`` + ``posixGroup`` (``cn``, ``gidNumber``, ``memberUid``) is still accepted.
  (A stricter server such as OpenLDAP with rfc2307bis would refuse it: real LDIF should add a
  structural class, e.g. ``groupOfNames``/``nsMemberOf`` or ``extensibleObject``.)
* ``inetOrgPerson`` + ``posixAccount`` (+ ``nsAccount`` for ``nsSshPublicKey``) works out of the box.
* A fresh suffix only lets anonymous users read the suffix entry itself (the default ACI "Enable
  anyone domain read"); give a bind account read access with :meth:`DirectoryServer.grant_read`.
"""

from __future__ import annotations

import base64
import contextlib
import grp
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

from .common import (
    REGISTRY,
    HarnessError,
    describe_failure,
    env_with,
    free_ports,
    log_tails,
    pid_alive,
    pid_start_time,
    port_open,
    read_pidfile,
    run,
    stop_pid,
    wait_until,
    write_file,
    write_script,
)

#: Binaries a test needs before building a :class:`DirectoryServer` (pass to ``require_binaries``).
REQUIRED_BINARIES = ("dscreate", "dsctl", "ns-slapd", "ldapsearch", "ldapadd", "ldapmodify", "ldapwhoami")

INSTANCE_PREFIX = "hpcft"
OWNER_DIR = Path("/run/hpcforge-tests/dirsrv")
#: dscreate's self-signed CA, shared by every instance created with self_sign_cert (ldaps=True)
SSCA_DIR = Path("/etc/dirsrv/ssca")
#: present while SSCA_DIR is one a harness instance created (so the last harness instance removes it)
SSCA_MARKER = OWNER_DIR / "ssca.created-by-harness"
_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#: The OpenSSH-LPK schema (openssh-lpk_openldap.schema), in cn=schema modify form.
OPENSSH_LPK_SCHEMA_LDIF = """\
dn: cn=schema
changetype: modify
add: attributeTypes
attributeTypes: ( 1.3.6.1.4.1.24552.500.1.1.1.13 NAME 'sshPublicKey' DESC 'MANDATORY: OpenSSH Public key' EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 X-ORIGIN 'OpenSSH-LPK' )
-
add: objectClasses
objectClasses: ( 1.3.6.1.4.1.24552.500.1.1.2.0 NAME 'ldapPublicKey' DESC 'MANDATORY: OpenSSH LPK objectclass' SUP top AUXILIARY MUST ( sshPublicKey $ uid ) X-ORIGIN 'OpenSSH-LPK' )
"""

SYSTEMCTL_STUB = r"""#!/bin/sh
# systemctl stand-in for dscreate/dsctl on a machine without systemd (written by the hpcforge test harness).
# Handles: start|stop|restart|is-active dirsrv@NAME[.service]; every other verb succeeds silently.
action=""
unit=""
quiet=0
for arg in "$@"; do
    case "$arg" in
        --quiet|-q) quiet=1 ;;
        -*) ;;
        *) if [ -z "$action" ]; then action=$arg; elif [ -z "$unit" ]; then unit=$arg; fi ;;
    esac
done
echo "systemctl $*" >> "${HPCFT_SYSTEMCTL_LOG:-/dev/null}"
case "$unit" in
    dirsrv@*) ;;
    *) exit 0 ;;
esac
name=${unit#dirsrv@}
name=${name%.service}
pidfile=/run/dirsrv/slapd-$name.pid

running() {
    [ -f "$pidfile" ] || return 1
    pid=$(cat "$pidfile")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

do_start() {
    mkdir -p /run/dirsrv /run/lock/dirsrv
    chown dirsrv:dirsrv /run/dirsrv /run/lock/dirsrv
    if running; then return 0; fi
    rm -f "$pidfile"
    /usr/sbin/ns-slapd -D "/etc/dirsrv/slapd-$name" -i "$pidfile" || return 1
    i=0
    while [ "$i" -lt 300 ]; do
        if running; then return 0; fi
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

do_stop() {
    running || { rm -f "$pidfile"; return 0; }
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null
    i=0
    while [ "$i" -lt 300 ]; do
        if ! kill -0 "$pid" 2>/dev/null; then rm -f "$pidfile"; return 0; fi
        sleep 0.1
        i=$((i + 1))
    done
    kill -9 "$pid" 2>/dev/null
    rm -f "$pidfile"
    return 0
}

case "$action" in
    start) do_start ;;
    stop) do_stop ;;
    restart) do_stop && do_start ;;
    is-active)
        if running; then
            [ "$quiet" -eq 1 ] || echo active
            exit 0
        fi
        [ "$quiet" -eq 1 ] || echo inactive
        exit 3
        ;;
    *) exit 0 ;;
esac
"""


class LdapError(HarnessError):
    """An LDAP client command failed; ``returncode`` is the LDAP result code (49 bad credentials...)."""

    def __init__(self, message: str, returncode: int) -> None:
        super().__init__(message)
        self.returncode = returncode


@dataclass
class LdapEntry:
    """One entry from ``ldapsearch -LLL``: its DN and attribute values (attribute names as returned)."""

    dn: str
    attrs: dict[str, list[str]] = field(default_factory=dict)

    def get(self, name: str) -> list[str]:
        """All values of attribute ``name`` (case-insensitive; [] when absent)."""
        for key, values in self.attrs.items():
            if key.lower() == name.lower():
                return values
        return []

    @overload
    def first(self, name: str) -> str | None: ...
    @overload
    def first(self, name: str, default: str) -> str: ...
    def first(self, name: str, default: str | None = None) -> str | None:
        """The first value of ``name``, else ``default``."""
        values = self.get(name)
        return values[0] if values else default

    @property
    def object_classes(self) -> set[str]:
        return {value.lower() for value in self.get("objectClass")}


def parse_ldif(text: str) -> list[LdapEntry]:
    """Parse LDIF content records (folded lines, ``attr:: base64``, ``attr:< url`` kept as text)."""
    entries: list[LdapEntry] = []
    lines: list[str] = []
    for raw in text.splitlines():
        if raw.startswith(" ") and lines:
            lines[-1] += raw[1:]
        else:
            lines.append(raw)
    current: LdapEntry | None = None
    for line in [*lines, ""]:
        if not line.strip():
            if current is not None:
                entries.append(current)
                current = None
            continue
        if line.startswith("#") or ":" not in line:
            continue
        name, _, rest = line.partition(":")
        if rest.startswith(":"):
            value = base64.b64decode(rest[1:].strip()).decode("utf-8", errors="replace")
        elif rest.startswith("<"):
            value = rest[1:].strip()
        else:
            value = rest[1:] if rest.startswith(" ") else rest
        if name.lower() == "dn":
            current = LdapEntry(dn=value)
        elif current is not None:
            current.attrs.setdefault(name, []).append(value)
    return entries


def _owner_record() -> str:
    return f"{os.getpid()} {pid_start_time(os.getpid())}"


def _owner_alive(record: str) -> bool:
    parts = record.split()
    if len(parts) != 2 or not parts[0].isdigit():
        return False
    pid = int(parts[0])
    return pid_alive(pid) and pid_start_time(pid) == parts[1]


def _slapd_pid(name: str) -> int | None:
    """The pid of ns-slapd serving instance ``name`` (from its pid file, checked against /proc cmdline)."""
    pid = read_pidfile(f"/run/dirsrv/slapd-{name}.pid")
    if pid is None or not pid_alive(pid):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return pid if f"/etc/dirsrv/slapd-{name}".encode() in cmdline else None


def _instance_paths(name: str) -> list[Path]:
    return [
        Path(f"/etc/dirsrv/slapd-{name}"),
        Path(f"/var/lib/dirsrv/slapd-{name}"),
        Path(f"/var/log/dirsrv/slapd-{name}"),
        Path(f"/run/lock/dirsrv/slapd-{name}"),
        Path(f"/run/dirsrv/slapd-{name}.pid"),
        Path(f"/run/slapd-{name}.socket"),
        Path(f"/var/run/slapd-{name}.socket"),
    ]


def remove_instance(name: str, *, stub_dir: Path | None = None, timeout: float = 120) -> list[str]:
    """Stop ns-slapd of ``name`` (by pid), ``dsctl NAME remove --do-it``, delete leftovers; problems seen."""
    problems: list[str] = []
    pid = _slapd_pid(name)
    if pid is not None and not stop_pid(pid, grace=30):
        problems.append(f"ns-slapd {pid} of {name} did not stop")
    if Path(f"/etc/dirsrv/slapd-{name}/dse.ldif").exists():  # else dscreate never got far: just delete
        env = env_with({})
        if stub_dir is not None:
            env["PATH"] = f"{stub_dir}:{_SYSTEM_PATH}"
        dsctl = shutil.which("dsctl", path=_SYSTEM_PATH)
        if dsctl is not None:
            try:
                result = run([dsctl, name, "remove", "--do-it"], env=env, timeout=timeout)
                if result.returncode != 0:
                    problems.append(describe_failure(result))
            except HarnessError as error:
                problems.append(str(error))
        # dsctl remove may start the instance once more (through the stand-in): make sure it is down
        pid = _slapd_pid(name)
        if pid is not None:
            stop_pid(pid, grace=30)
    for path in _instance_paths(name):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    with contextlib.suppress(FileNotFoundError):
        (OWNER_DIR / f"{name}.owner").unlink()
    return problems


def remove_harness_ssca() -> bool:
    """Remove dscreate's shared self-signed CA dir if a harness created it and no instance is left."""
    if SSCA_MARKER.exists() and not any(Path("/etc/dirsrv").glob("slapd-*")):
        shutil.rmtree(SSCA_DIR, ignore_errors=True)
        SSCA_MARKER.unlink(missing_ok=True)
        return True
    return False


def cleanup_leftover_instances(prefix: str = INSTANCE_PREFIX) -> list[str]:
    """Remove instances named ``<prefix>...`` whose owning process is gone; their names.

    An instance without an owner record, or whose owner (pid + start time) is no longer running, is
    a leftover of a crashed run.  Instances of live runs (parallel pytest workers) are left alone.
    """
    removed = []
    candidates: set[str] = set()
    for directory, pattern in ((Path("/etc/dirsrv"), "slapd-"), (Path("/var/lib/dirsrv"), "slapd-"), (OWNER_DIR, "")):
        if not directory.is_dir():
            continue
        for path in directory.iterdir():
            stem = path.name.removesuffix(".owner")
            if stem.startswith(pattern + prefix):
                candidates.add(stem[len(pattern) :])
    for name in sorted(candidates):
        owner = OWNER_DIR / f"{name}.owner"
        try:
            record = owner.read_text()
        except OSError:
            record = ""
        if _owner_alive(record):
            continue
        remove_instance(name)
        removed.append(name)
    remove_harness_ssca()
    return removed


class DirectoryServer:
    """A 389ds instance (plain LDAP on 127.0.0.1:free port, LDAPS optional) with one suffix and backend.

    ``uri``, ``dm_dn``, ``dm_password``, ``suffix`` are what a client needs.  Client helpers bind as
    Directory Manager unless given ``bind_dn``/``password`` (``bind_dn=""`` binds anonymously).
    """

    def __init__(
        self,
        tmp_dir: Path,
        suffix: str = "dc=hpcforge,dc=test",
        *,
        dm_password: str | None = None,
        instance_prefix: str = INSTANCE_PREFIX,
        ldaps: bool = False,
        start_timeout: float = 120.0,
    ) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9]{0,15}", instance_prefix):
            raise ValueError("instance_prefix: lower-case letters and digits, starting with a letter")
        self.tmp_dir = Path(tmp_dir).resolve()
        self.suffix = suffix
        self.dm_dn = "cn=Directory Manager"
        self.dm_password = dm_password or "Dm-" + secrets.token_hex(8)
        self.prefix = instance_prefix
        self.name = f"{instance_prefix}{os.getpid()}x{secrets.token_hex(3)}"
        self.ldaps = ldaps
        self.start_timeout = start_timeout
        self.host = "127.0.0.1"
        self.port, self.secure_port = free_ports(2)
        self.stub_dir = self.tmp_dir / "bin"
        self.inf_path = self.tmp_dir / f"{self.name}.inf"
        self.dscreate_log = self.tmp_dir / "dscreate.log"
        self.systemctl_log = self.tmp_dir / "systemctl.log"
        self._created = False
        self._stopped = False

    # ----------------------------------------------------------------------------------------------

    @property
    def uri(self) -> str:
        return f"ldap://{self.host}:{self.port}"

    @property
    def ldaps_uri(self) -> str:
        """``ldaps://localhost:PORT``: libldap verifies it against this host's name, which the certificate carries."""
        if not self.ldaps:
            raise HarnessError("this DirectoryServer was created without ldaps=True")
        return f"ldaps://localhost:{self.secure_port}"

    @property
    def ca_cert(self) -> Path:
        """The self-signed CA of the instance (``LDAPTLS_CACERT`` for the OpenLDAP tools)."""
        return Path(f"/etc/dirsrv/slapd-{self.name}/ca.crt")

    @property
    def config_dir(self) -> Path:
        return Path(f"/etc/dirsrv/slapd-{self.name}")

    @property
    def errors_log(self) -> Path:
        return Path(f"/var/log/dirsrv/slapd-{self.name}/errors")

    def log_paths(self) -> list[Path]:
        return [self.dscreate_log, self.errors_log, self.systemctl_log]

    def _stub_env(self) -> dict[str, str]:
        env = env_with({"HPCFT_SYSTEMCTL_LOG": str(self.systemctl_log)})
        env["PATH"] = f"{self.stub_dir}:{_SYSTEM_PATH}"
        return env

    def render_inf(self) -> str:
        return "\n".join(
            [
                "[general]",
                # libldap checks a certificate for ldaps://localhost against the *host name* (it
                # canonicalises "localhost"), so the self-signed certificate is issued for that name
                f"full_machine_name = {socket.gethostname()}",
                "start = False",
                "strict_host_checking = False",
                "systemd = False",
                "",
                "[slapd]",
                f"instance_name = {self.name}",
                f"port = {self.port}",
                f"secure_port = {self.secure_port}",
                f"root_password = {self.dm_password}",
                f"self_sign_cert = {self.ldaps}",
                "",
                "[backend-userroot]",
                f"suffix = {self.suffix}",
                "create_suffix_entry = True",
                "sample_entries = no",
                "",
            ]
        )

    # ----------------------------------------------------------------------------------------------
    # lifecycle

    def start(self) -> DirectoryServer:
        """Create the instance with dscreate, listen on 127.0.0.1 only, start it and wait until it answers."""
        for binary in REQUIRED_BINARIES:
            if shutil.which(binary, path=_SYSTEM_PATH) is None:
                raise HarnessError(f"{binary} is not installed (Debian packages 389-ds-base, ldap-utils)")
        try:
            pwd.getpwnam("dirsrv")
            grp.getgrnam("dirsrv")
        except KeyError:
            raise HarnessError("there is no dirsrv user/group (install 389-ds-base)") from None
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        cleanup_leftover_instances(self.prefix)
        if self.ldaps and not SSCA_DIR.exists():
            OWNER_DIR.mkdir(parents=True, exist_ok=True)
            write_file(SSCA_MARKER, f"{SSCA_DIR} was created by the hpcforge test harness\n")
        OWNER_DIR.mkdir(parents=True, exist_ok=True)
        write_file(OWNER_DIR / f"{self.name}.owner", _owner_record())
        self._created = True
        REGISTRY.add(self)
        try:
            write_script(self.stub_dir / "systemctl", SYSTEMCTL_STUB)
            write_file(self.inf_path, self.render_inf(), 0o600)
            created = run(
                [shutil.which("dscreate", path=_SYSTEM_PATH) or "dscreate", "-v", "from-file", str(self.inf_path)],
                env=self._stub_env(),
                timeout=self.start_timeout,
                cwd=self.tmp_dir,
            )
            self.dscreate_log.write_text(created.stdout + created.stderr)
            if created.returncode != 0:
                raise HarnessError(f"dscreate failed (exit {created.returncode})\n{log_tails(self.log_paths())}")
            self._listen_on_loopback()
            self._systemctl("start")
            wait_until(
                self._answers, self.start_timeout, f"389ds instance {self.name} to answer on {self.uri}", log=self.log_paths()
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _listen_on_loopback(self) -> None:
        dse = self.config_dir / "dse.ldif"
        text = dse.read_text()
        if "nsslapd-listenhost:" not in text:
            text = re.sub(r"(?m)^(nsslapd-port: \d+)$", r"\1\nnsslapd-listenhost: 127.0.0.1", text, count=1)
        if self.ldaps and "nsslapd-securelistenhost:" not in text:
            text = re.sub(r"(?m)^(nsslapd-port: \d+)$", r"\1\nnsslapd-securelistenhost: 127.0.0.1", text, count=1)
        dse.write_text(text)

    def _systemctl(self, action: str) -> None:
        result = run([str(self.stub_dir / "systemctl"), action, f"dirsrv@{self.name}"], env=self._stub_env(), timeout=60)
        if result.returncode != 0:
            raise HarnessError(f"systemctl stand-in could not {action} {self.name}\n{log_tails(self.log_paths())}")

    def _answers(self) -> bool:
        if not port_open(self.port, self.host):
            return False
        result = self._client("ldapwhoami", [], bind_dn=None, password=None, timeout=10)
        return result.returncode == 0

    @property
    def pid(self) -> int | None:
        return _slapd_pid(self.name)

    def alive(self) -> bool:
        return self.pid is not None

    def stop(self) -> None:
        """Stop ns-slapd and remove the instance (dsctl remove --do-it, then any leftovers); idempotent."""
        if self._stopped or not self._created:
            return
        self._stopped = True
        try:
            problems = remove_instance(self.name, stub_dir=self.stub_dir)
            if problems:
                print(f"[dirsrv harness] while removing {self.name}: {problems}")
            remove_harness_ssca()
        finally:
            REGISTRY.discard(self)

    def restart(self) -> None:
        """Restart ns-slapd (e.g. after editing dse.ldif or schema files)."""
        self._systemctl("stop")
        self._systemctl("start")
        wait_until(self._answers, self.start_timeout, f"389ds instance {self.name} to answer after restart", log=self.log_paths())

    def __enter__(self) -> DirectoryServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------------------------------------
    # clients

    def _client(
        self,
        tool: str,
        args: Sequence[str],
        *,
        bind_dn: str | None,
        password: str | None,
        uri: str | None = None,
        input: str | None = None,
        timeout: float = 30,
    ) -> subprocess.CompletedProcess[str]:
        argv = [tool, "-x", "-H", uri or self.uri, "-o", "nettimeout=10"]
        if bind_dn is None:
            argv += ["-D", self.dm_dn, "-w", self.dm_password]
        elif bind_dn:
            argv += ["-D", bind_dn, "-w", password or ""]
        env = env_with({"LDAPTLS_CACERT": str(self.ca_cert)} if self.ldaps else {})
        env["PATH"] = env.get("PATH", "") + ":" + _SYSTEM_PATH
        if not argv[3].startswith("ldaps:"):
            env["LDAPNOINIT"] = "1"  # ignore ~/.ldaprc and /etc/ldap/ldap.conf (it would also drop LDAPTLS_CACERT)
        return run([*argv, *args], env=env, input=input, timeout=timeout)

    def ldapsearch(
        self,
        base: str | None = None,
        filter: str = "(objectClass=*)",
        attrs: Iterable[str] = (),
        bind_dn: str | None = None,
        password: str | None = None,
        *,
        scope: str = "sub",
        uri: str | None = None,
        timeout: float = 30,
    ) -> list[LdapEntry]:
        """Search (``-LLL``) and parse the entries; an absent base (error 32) gives []; other errors raise :class:`LdapError`."""
        args = [
            "-LLL",
            "-o",
            "ldif-wrap=no",
            "-l",
            str(int(timeout)),
            "-b",
            base if base is not None else self.suffix,
            "-s",
            scope,
            filter,
            *attrs,
        ]
        result = self._client("ldapsearch", args, bind_dn=bind_dn, password=password, uri=uri, timeout=timeout + 5)
        if result.returncode == 32:
            return []
        if result.returncode != 0:
            raise LdapError(describe_failure(result), result.returncode)
        return parse_ldif(result.stdout)

    def ldapadd(
        self,
        ldif_text: str,
        bind_dn: str | None = None,
        password: str | None = None,
        continue_on_error: bool = False,
        *,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """``ldapadd`` the LDIF (from stdin); the CompletedProcess (``returncode`` is the LDAP result code)."""
        args = ["-c"] if continue_on_error else []
        return self._client("ldapadd", args, bind_dn=bind_dn, password=password, input=ldif_text, timeout=timeout)

    def ldapmodify(
        self,
        ldif_text: str,
        bind_dn: str | None = None,
        password: str | None = None,
        continue_on_error: bool = False,
        *,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """``ldapmodify`` with the LDIF (changetype records; plain records need ``changetype: add``)."""
        args = ["-c"] if continue_on_error else []
        return self._client("ldapmodify", args, bind_dn=bind_dn, password=password, input=ldif_text, timeout=timeout)

    def can_bind(self, bind_dn: str, password: str) -> bool:
        """Whether a simple bind with these credentials succeeds (``ldapwhoami``)."""
        return self._client("ldapwhoami", [], bind_dn=bind_dn, password=password, timeout=15).returncode == 0

    def check(self, result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
        """Raise :class:`LdapError` (with output) when an ldapadd/ldapmodify result failed."""
        if result.returncode != 0:
            raise LdapError(describe_failure(result), result.returncode)
        return result

    # ----------------------------------------------------------------------------------------------
    # conveniences

    def schema_definition(self, kind: str, name: str) -> str | None:
        """The definition of objectClass/attributeType ``name`` from cn=schema (``kind``: objectClasses|attributeTypes)."""
        entries = self.ldapsearch("cn=schema", "(objectClass=*)", [kind], scope="base")
        pattern = re.compile(rf"NAME\s+(?:'{re.escape(name)}'|\([^)]*'{re.escape(name)}'[^)]*\))", re.IGNORECASE)
        for entry in entries:
            for value in entry.get(kind):
                if pattern.search(value):
                    return value
        return None

    def add_openssh_lpk_schema(self) -> None:
        """Add objectClass ``ldapPublicKey`` / attribute ``sshPublicKey`` (not shipped with 389ds 2.3)."""
        if self.schema_definition("objectClasses", "ldapPublicKey") is None:
            self.check(self.ldapmodify(OPENSSH_LPK_SCHEMA_LDIF))

    def grant_read(self, who: str = "ldap:///all", base: str | None = None, name: str | None = None) -> None:
        """Let ``who`` (a bind DN, or an ldap:/// URL such as ldap:///all, ldap:///anyone) read/search below ``base``."""
        userdn = who if who.startswith("ldap:///") else f"ldap:///{who}"
        label = name or f"hpcforge test read for {who}"
        aci = f'(targetattr="*")(version 3.0; acl "{label}"; allow (read, search, compare) userdn="{userdn}";)'
        ldif = f"dn: {base or self.suffix}\nchangetype: modify\nadd: aci\naci: {aci}\n"
        self.check(self.ldapmodify(ldif))

    def add_service_account(self, dn: str, password: str, *, read_access: bool = True) -> None:
        """Create a bind account (``applicationProcess`` + ``simpleSecurityObject``) able to read the suffix."""
        rdn = dn.split(",", 1)[0].split("=", 1)[1]
        ldif = f"dn: {dn}\nobjectClass: top\nobjectClass: applicationProcess\nobjectClass: simpleSecurityObject\ncn: {rdn}\nuserPassword: {password}\n"
        self.check(self.ldapadd(ldif))
        if read_access:
            self.grant_read(dn)

    def ensure_ou(self, *names: str) -> None:
        """Create ``ou=NAME,<suffix>`` containers that do not exist yet."""
        ldif = "".join(
            f"dn: ou={name},{self.suffix}\nobjectClass: top\nobjectClass: organizationalUnit\nou: {name}\n\n" for name in names
        )
        result = self.ldapadd(ldif, continue_on_error=True)
        if result.returncode not in (0, 68):  # 68: already exists
            self.check(result)

    def __repr__(self) -> str:
        return f"DirectoryServer({self.name!r}, uri={self.uri!r}, suffix={self.suffix!r})"


__all__ = [
    "INSTANCE_PREFIX",
    "OPENSSH_LPK_SCHEMA_LDIF",
    "REQUIRED_BINARIES",
    "DirectoryServer",
    "LdapEntry",
    "LdapError",
    "cleanup_leftover_instances",
    "parse_ldif",
    "remove_instance",
]
