"""A private slurmdbd (Slurm 26.05.3, auth/slurm) on 127.0.0.1, storing into a test MariaDB, for tests.

Usage::

    with MariaDBServer(tmp_path / "db") as db, SlurmDBD(tmp_path / "dbd", db) as dbd:
        with SlurmCluster(tmp_path / "slurm", "hpcforge", nodes=[node_line("n1")],
                          extra_conf=dbd.slurm_conf_lines(enforce="associations,limits,qos"),
                          allow_override=dbd.OVERRIDES) as cluster:
            cluster.run("sacctmgr", "-P", "-n", "show", "assoc")

The harness creates the database user (``slurm``, a random password, ``ALL`` on ``slurm_acct_db.*``
only, connecting over TCP 127.0.0.1 like slurmdbd in the cluster), writes ``slurmdbd.conf`` (mode 0600,
owned by root, which is ``SlurmUser`` here) into ``tmp_dir`` with ``StorageType=accounting_storage/mysql``,
``StorageHost=127.0.0.1``, the server's ``StoragePort``, ``AuthType=auth/munge`` and a private
``DbdPort``, and runs ``slurmdbd -D`` as a :class:`~tests.daemons.common.ManagedProcess`.

slurmdbd has no ``-f`` option in 22.05: it reads ``slurmdbd.conf`` from the directory of ``SLURM_CONF``
(``get_extra_conf_path``), so the harness sets ``SLURM_CONF=<tmp_dir>/slurm.conf`` in its environment (a
file that need not exist for slurmdbd itself).  Ready means the DbdPort accepts connections.

Observed on Slurm 22.05.8 with MariaDB 10.11: slurmdbd creates its tables on first start (a few
seconds); a slurmctld with ``AccountingStorageType=accounting_storage/slurmdbd`` registers its cluster
only if the cluster exists in slurmdbd (``sacctmgr -i add cluster NAME``): otherwise it logs
"Cluster ... not registered" and jobs of every user are refused under ``AccountingStorageEnforce=associations``.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from .common import (
    TAG_VAR,
    HarnessError,
    ManagedProcess,
    WaitAbort,
    env_with,
    free_port,
    kill_orphans,
    make_tag,
    port_open,
    wait_until,
    write_file,
)
from .mariadb import MariaDBServer, sql_quote
from .sack import AUTH_LINES, SlurmAuth
from .slurm_prefix import missing_reason, slurm_binary, slurm_path

#: Binaries a test needs before building a :class:`SlurmDBD`.
REQUIRED_BINARIES = ("slurmdbd", "sacctmgr")

_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

DATABASE = "slurm_acct_db"
DB_USER = "slurm"


class SlurmDBD:
    """slurmdbd on 127.0.0.1:``port`` with its config, pid and log under ``tmp_dir``."""

    #: slurm.conf keys the cluster harness owns that a test with accounting must let through.
    OVERRIDES = frozenset({"AccountingStorageType", "AccountingStorageHost", "AccountingStoragePort", "AccountingStorageEnforce"})

    def __init__(self, tmp_dir: Path, database: MariaDBServer, *, start_timeout: float = 90.0) -> None:
        self.tmp_dir = Path(tmp_dir).resolve()
        self.database = database
        self.port = free_port()
        self.password = secrets.token_hex(16)
        self.conf_path = self.tmp_dir / "slurmdbd.conf"
        self.log_path = self.tmp_dir / "slurmdbd.log"
        self.pid_path = self.tmp_dir / "slurmdbd.pid"
        self.start_timeout = start_timeout
        self.process: ManagedProcess | None = None
        #: auth/slurm: the key a SlurmCluster must share (``SlurmCluster(..., slurm_key=dbd.slurm_key)``) and the
        #: sackd that :meth:`client_env` starts for sacctmgr run without a cluster
        self.auth = SlurmAuth(self.tmp_dir)
        self.slurm_key = self.auth.key_path

    def render_conf(self) -> str:
        return "\n".join(
            [
                f"# slurmdbd.conf written by the hpcforge test harness under {self.tmp_dir}",
                *(f"{key}={value}" for key, value in AUTH_LINES.items() if key != "CredType"),
                "DbdHost=localhost",
                "DbdAddr=127.0.0.1",
                f"DbdPort={self.port}",
                "SlurmUser=root",
                "DebugLevel=info",
                f"LogFile={self.log_path}",
                f"PidFile={self.pid_path}",
                "StorageType=accounting_storage/mysql",
                f"StorageHost={self.database.host}",
                f"StoragePort={self.database.port}",
                f"StorageUser={DB_USER}",
                f"StoragePass={self.password}",
                f"StorageLoc={DATABASE}",
                "",
            ]
        )

    def slurm_conf_lines(self, enforce: str = "associations,limits,qos") -> str:
        """The slurm.conf lines that point a controller at this slurmdbd."""
        return (
            "AccountingStorageType=accounting_storage/slurmdbd\n"
            "AccountingStorageHost=localhost\n"
            f"AccountingStoragePort={self.port}\n"
            f"AccountingStorageEnforce={enforce}\n"
        )

    def start(self) -> SlurmDBD:
        binary = slurm_binary("slurmdbd")
        if binary is None:
            raise HarnessError(missing_reason() or "slurmdbd is missing from the Slurm 26.05.3 prefix")
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        kill_orphans("slurmdbd")
        self.database.sql_root(
            f"CREATE DATABASE IF NOT EXISTS {DATABASE};"
            f"CREATE USER IF NOT EXISTS '{DB_USER}'@'%' IDENTIFIED BY {sql_quote(self.password)};"
            f"GRANT ALL ON {DATABASE}.* TO '{DB_USER}'@'%'; FLUSH PRIVILEGES;"
        )
        write_file(self.conf_path, self.render_conf(), 0o600)
        self.auth.ensure_key()
        try:
            self.process = ManagedProcess(
                [binary, "-D"],
                name="slurmdbd",
                log_path=self.tmp_dir / "slurmdbd.out",
                env=env_with(
                    {
                        "SLURM_CONF": str(self.tmp_dir / "slurm.conf"),
                        TAG_VAR: make_tag("slurmdbd", self.tmp_dir),
                        **self.auth.env(),
                    }
                ),
                cwd=self.tmp_dir,
                grace=20,
            )

            def ready() -> bool:
                if self.process is not None and not self.process.alive():
                    raise WaitAbort(f"slurmdbd exited with code {self.process.returncode}")
                return port_open(self.port)

            wait_until(ready, self.start_timeout, f"slurmdbd on port {self.port}", log=self.log_paths())
        except BaseException:
            self.stop()
            raise
        return self

    def log_paths(self) -> list[Path]:
        return [self.log_path, self.tmp_dir / "slurmdbd.out"]

    def client_env(self, cluster_name: str) -> dict[str, str]:
        """An environment in which ``sacctmgr``/``sacct`` talk to this slurmdbd without a slurmctld.

        Writes ``<tmp>/client/slurm.conf`` (the cluster name, this slurmdbd as accounting storage,
        auth/slurm) and starts a sackd for it (once; it survives :meth:`stop`/:meth:`start`, so clients
        work again after a restart).  The Slurm 26.05.3 prefix comes first on PATH.
        """
        conf = self.tmp_dir / "client" / "slurm.conf"
        write_file(
            conf,
            f"ClusterName={cluster_name}\nSlurmctldHost=localhost\n{self.slurm_conf_lines()}"
            + "".join(f"{key}={value}\n" for key, value in AUTH_LINES.items()),
        )
        self.auth.start_sackd(conf, log=self.tmp_dir / "sackd.log")
        env = env_with({"SLURM_CONF": str(conf), **self.auth.env()})
        env["PATH"] = ":".join(part for part in (slurm_path(), env.get("PATH", ""), _SYSTEM_PATH) if part)
        return env

    def stop(self) -> None:
        """Stop slurmdbd (by pid); the clients' sackd keeps running (see :meth:`close`)."""
        if self.process is not None:
            self.process.stop()
            self.process = None

    def close(self) -> None:
        """Stop slurmdbd and the clients' sackd."""
        self.stop()
        self.auth.stop()

    def __enter__(self) -> SlurmDBD:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["DATABASE", "REQUIRED_BINARIES", "SlurmDBD"]
