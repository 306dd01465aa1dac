"""A private MariaDB 10.11 server on 127.0.0.1, for tests (e.g. loading slurmdbd's SQL grants).

Usage::

    with MariaDBServer(tmp_path) as db:
        db.sql_root("CREATE DATABASE slurm_acct_db; CREATE USER 'slurm'@'%' IDENTIFIED BY 'pw'; "
                    "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'%';")
        result = db.sql_as("slurm", "pw", "CREATE DATABASE other")
        assert error_code(result) == 1044

``mariadb-install-db --no-defaults --datadir=<tmp>/data --user=root
--auth-root-authentication-method=normal`` creates the datadir; ``mariadbd --no-defaults`` runs in
the foreground as a :class:`~tests.daemons.common.ManagedProcess` with its own socket, pid file, error
log and a free port on 127.0.0.1 (``--no-defaults`` everywhere: /etc/mysql/my.cnf is never read).
Root connects through the socket (``sql_root``); other users over TCP 127.0.0.1 (``sql_as``), which is
what a '%' grant is about.

Anonymous users: a datadir made *with* the test database has ``''@'localhost'`` and
``''@'<hostname>'``, and they shadow a ``'%'`` user connecting over 127.0.0.1 (a correct grant still
gets "Access denied").  10.11's ``--skip-test-db`` already leaves them out; the harness drops any
anonymous account after start anyway (:meth:`MariaDBServer.drop_anonymous_users`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from .common import (
    TAG_VAR,
    HarnessError,
    ManagedProcess,
    WaitAbort,
    describe_failure,
    env_with,
    free_port,
    kill_orphans,
    log_tails,
    make_tag,
    run,
    wait_until,
)

#: Binaries a test needs before building a :class:`MariaDBServer` (pass to ``require_binaries``).
REQUIRED_BINARIES = ("mariadb-install-db", "mariadbd", "mariadb", "mariadb-admin")

_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def error_code(result: subprocess.CompletedProcess[str]) -> int | None:
    """The MariaDB error number in a failed client run ("ERROR 1044 (42000) ..." -> 1044), else None."""
    match = re.search(r"ERROR (\d+)", result.stderr or "")
    return int(match.group(1)) if match else None


def sql_quote(value: str) -> str:
    """A single-quoted SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


class MariaDBServer:
    """mariadbd with its own datadir/socket/pid/log under ``tmp_dir`` on 127.0.0.1:``port``."""

    def __init__(self, tmp_dir: Path, *, start_timeout: float = 60.0, extra_args: tuple[str, ...] = ()) -> None:
        self.tmp_dir = Path(tmp_dir).resolve()
        self.datadir = self.tmp_dir / "data"
        self.socket = self.tmp_dir / "mysqld.sock"
        self.pidfile = self.tmp_dir / "mysqld.pid"
        self.error_log = self.tmp_dir / "mysqld.err"
        self.install_log = self.tmp_dir / "install-db.log"
        self.host = "127.0.0.1"
        self.port = free_port(self.host)
        self.start_timeout = start_timeout
        self.extra_args = extra_args
        self.process: ManagedProcess | None = None

    def _binary(self, name: str) -> str:
        path = shutil.which(name, path=_SYSTEM_PATH)
        if path is None:
            raise HarnessError(f"{name} is not installed (Debian packages mariadb-server, mariadb-client)")
        return path

    def log_paths(self) -> list[Path]:
        return [self.install_log, self.error_log, self.tmp_dir / "mariadbd.out"]

    # ----------------------------------------------------------------------------------------------
    # lifecycle

    def start(self) -> MariaDBServer:
        """Install the datadir, start mariadbd, wait until root can query, drop anonymous users."""
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        kill_orphans("mariadb")  # servers of an earlier run that was killed before it could stop them
        try:
            installed = run(
                [
                    self._binary("mariadb-install-db"),
                    "--no-defaults",
                    f"--datadir={self.datadir}",
                    "--user=root",
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                ],
                timeout=self.start_timeout,
                cwd=self.tmp_dir,
            )
            self.install_log.write_text(installed.stdout + installed.stderr)
            if installed.returncode != 0:
                raise HarnessError(f"mariadb-install-db failed (exit {installed.returncode})\n{log_tails(self.log_paths())}")
            self.process = ManagedProcess(
                [
                    self._binary("mariadbd"),
                    "--no-defaults",
                    f"--datadir={self.datadir}",
                    f"--socket={self.socket}",
                    f"--port={self.port}",
                    f"--bind-address={self.host}",
                    "--user=root",
                    f"--pid-file={self.pidfile}",
                    f"--log-error={self.error_log}",
                    "--skip-name-resolve",
                    *self.extra_args,
                ],
                name="mariadbd",
                log_path=self.tmp_dir / "mariadbd.out",
                env=env_with({TAG_VAR: make_tag("mariadb", self.tmp_dir)}),
                cwd=self.tmp_dir,
                grace=30,
            )

            def ready() -> bool:
                if self.process is not None and not self.process.alive():
                    raise WaitAbort(f"mariadbd exited with code {self.process.returncode}")
                return self._client_root("SELECT 1", timeout=10).returncode == 0

            wait_until(ready, self.start_timeout, f"mariadbd on {self.socket} to answer", log=self.log_paths())
            self.drop_anonymous_users()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """``mariadb-admin shutdown`` (bounded), then stop the process group; idempotent."""
        if self.process is None:
            return
        try:
            if self.process.alive():
                try:
                    run(
                        [self._binary("mariadb-admin"), "--no-defaults", f"--socket={self.socket}", "-uroot", "shutdown"],
                        timeout=30,
                    )
                    self.process.wait_exit(30)
                except HarnessError:
                    pass
        finally:
            self.process.stop()
            self.process = None

    def __enter__(self) -> MariaDBServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def alive(self) -> bool:
        return self.process is not None and self.process.alive()

    # ----------------------------------------------------------------------------------------------
    # SQL

    def _client_root(
        self, sql: str, *, database: str | None = None, timeout: float = 30, extra: tuple[str, ...] = ()
    ) -> subprocess.CompletedProcess[str]:
        argv = [self._binary("mariadb"), "--no-defaults", f"--socket={self.socket}", "-uroot", "--batch", *extra]
        if database:
            argv.append(database)
        return run(argv, input=sql, timeout=timeout)

    def sql_root(self, sql: str, database: str | None = None, *, timeout: float = 30) -> str:
        """Run ``sql`` as root over the socket (must succeed; raises :class:`HarnessError`); stdout (batch, tab-separated)."""
        result = self._client_root(sql, database=database, timeout=timeout)
        if result.returncode != 0:
            raise HarnessError(describe_failure(result))
        return result.stdout

    def query_root(self, sql: str, database: str | None = None, *, timeout: float = 30) -> list[tuple[str, ...]]:
        """Rows of a root query (no header), each a tuple of strings."""
        result = self._client_root(sql, database=database, timeout=timeout, extra=("--skip-column-names",))
        if result.returncode != 0:
            raise HarnessError(describe_failure(result))
        return [tuple(line.split("\t")) for line in result.stdout.splitlines()]

    def sql_as(
        self, user: str, password: str, sql: str, database: str | None = None, *, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        """Run ``sql`` as ``user`` over TCP 127.0.0.1:port; the CompletedProcess (see :func:`error_code`)."""
        argv = [
            self._binary("mariadb"),
            "--no-defaults",
            "--protocol=TCP",
            f"--host={self.host}",
            f"--port={self.port}",
            f"--user={user}",
            f"--password={password}",
            "--batch",
            "--connect-timeout=10",
        ]
        if database:
            argv.append(database)
        return run(argv, input=sql, timeout=timeout)

    def drop_anonymous_users(self) -> list[str]:
        """Drop every ``''@host`` account (they shadow '%' users on 127.0.0.1); the hosts dropped."""
        hosts = [row[0] for row in self.query_root("SELECT Host FROM mysql.user WHERE User=''")]
        if hosts:
            self.sql_root("".join(f"DROP USER ''@{sql_quote(host)};" for host in hosts) + "FLUSH PRIVILEGES;")
        return hosts

    def __repr__(self) -> str:
        return f"MariaDBServer({self.host}:{self.port}, socket={self.socket})"


__all__ = ["REQUIRED_BINARIES", "MariaDBServer", "error_code", "sql_quote"]
