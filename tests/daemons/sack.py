"""auth/slurm for the real-daemon tier: a slurm.key per test and a private ``sackd`` for the clients.

Slinky's images run ``AuthType=auth/slurm`` and ``CredType=cred/slurm`` with one shared ``slurm.key``
(slurm-operator 1.2.1, internal/builder/common/const.go), so the harness does too.  How auth/slurm works
in 26.05.3 (src/plugins/auth/slurm, src/common/sack_api.c):

* Daemons (slurmctld, slurmd, slurmdbd, sackd) sign and verify with the key themselves.  They read it
  from ``$SLURM_SACK_KEY`` when set, else ``slurm.key`` beside slurm.conf; it must not be readable by
  others (``fatal: key file is insecure``).  The harness writes 1024 random bytes, mode 0600, and sets
  ``SLURM_SACK_KEY`` for every process it starts.
* Clients (scontrol, sbatch, sacctmgr, slurmstepd ...) never read the key: they ask a *sack* unix socket
  for a token, ``$SLURM_SACK_SOCKET`` when set, else ``/run/slurm-<cluster>/sack.socket``, then the
  fixed ``/run/slurm``, ``/run/slurmctld``, ``/run/slurmdbd`` sockets, which every slurmctld/slurmd/
  slurmdbd on the host binds (unlinking the previous owner's).  Several test clusters on one machine
  would take each other's sockets, so the daemons here run with ``AuthInfo=disable_sack`` and each
  cluster (or lone slurmdbd) gets its own ``sackd -D -f slurm.conf`` with ``RUNTIME_DIRECTORY=/run/<unique>``
  (sackd accepts only a directory under /run/); its socket goes into ``SLURM_SACK_SOCKET`` for the
  clients, and slurmd hands its environment on to slurmstepd.
* No replay cache: one token is accepted by every slurmd on the host, which cred/munge refuses (munge's
  replay check; ``_verify_signature: failed decode`` on the second slurmd of a two-node step), unless
  Slurm is built with ``--enable-multiple-slurmd``, which ../shared/slurm/README.md's build is not.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from .common import HarnessError, ManagedProcess, WaitAbort, env_with, wait_until
from .slurm_prefix import missing_reason, slurm_binary

#: slurm.conf / slurmdbd.conf lines the harness writes for auth/slurm (the key comes from SLURM_SACK_KEY).
AUTH_LINES = {"AuthType": "auth/slurm", "CredType": "cred/slurm", "AuthInfo": "disable_sack"}


class SlurmAuth:
    """One slurm.key under ``tmp_dir`` and, once :meth:`start_sackd` ran, a private sackd for clients."""

    def __init__(self, tmp_dir: Path, *, key: Path | None = None) -> None:
        self.tmp_dir = Path(tmp_dir).resolve()
        self.key_path = Path(key) if key is not None else self.tmp_dir / "slurm.key"
        tag = hashlib.sha256(str(self.tmp_dir).encode()).hexdigest()[:12]
        self.run_dir = Path("/run") / f"hpcforge-sack-{tag}"
        self.socket = self.run_dir / "sack.socket"
        self.sackd: ManagedProcess | None = None
        self.name = "sackd"

    def ensure_key(self) -> Path:
        """The key file (1024 random bytes, mode 0600), written once."""
        if not self.key_path.exists():
            self.key_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(1024))
        self.key_path.chmod(0o600)
        return self.key_path

    def env(self) -> dict[str, str]:
        """What every Slurm process started for this key needs in its environment."""
        return {"SLURM_SACK_KEY": str(self.key_path), "SLURM_SACK_SOCKET": str(self.socket)}

    def start_sackd(self, conf: Path, *, log: Path, extra_env: dict[str, str | None] | None = None, timeout: float = 30) -> None:
        """Run ``sackd -D -f CONF`` serving tokens signed with this key on :attr:`socket`; wait for the socket."""
        if self.sackd is not None and self.sackd.alive():
            return
        binary = slurm_binary("sackd")
        if binary is None:
            raise HarnessError(missing_reason() or "sackd is missing from the Slurm prefix")
        self.ensure_key()
        shutil.rmtree(self.run_dir, ignore_errors=True)
        env = env_with({**self.env(), "SLURM_CONF": str(conf), "RUNTIME_DIRECTORY": str(self.run_dir), **(extra_env or {})})
        self.sackd = ManagedProcess([binary, "-D", "-f", str(conf)], name="sackd", log_path=log, env=env, cwd=self.tmp_dir)

        def listening() -> bool:
            if self.sackd is not None and not self.sackd.alive():
                raise WaitAbort(f"sackd exited with code {self.sackd.returncode}")
            return self.socket.exists()

        try:
            wait_until(listening, timeout, f"sackd to listen on {self.socket}", log=log)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self.sackd is not None:
            self.sackd.stop()
            self.sackd = None
        shutil.rmtree(self.run_dir, ignore_errors=True)


__all__ = ["AUTH_LINES", "SlurmAuth"]
