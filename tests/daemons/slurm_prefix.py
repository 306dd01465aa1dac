"""Where the real-daemon tier finds Slurm: the 26.05.3 build of ../shared/slurm, never Debian's 22.05.

hpcforge deploys Slinky's images, which ship Slurm 26.05.3; Debian's packages are 22.05.  Every Slurm
binary the tests run (daemons and clients) comes from one install prefix:

* ``$HPCFORGE_SLURM_PREFIX`` when set (CI exports it after ``scripts/ci/build-slurm.sh``);
* otherwise the cache path that script builds into,
  ``${HPCFORGE_CACHE:-/var/cache/hpcforge}/slurm-<sha256 of slurm-26.05.3.tar.bz2>``, the sha256 read
  from the table in ``../shared/slurm/README.md`` (or computed from the tarball when the README lacks it).

A prefix whose ``sbin/slurmctld -V`` does not print ``slurm 26.05.3`` counts as absent: tests skip with
the reason (under ``HPCFORGE_STRICT=1``, as in CI, they fail).  munge stays Debian's (``munged``,
``munge``, ``unmunge`` from /usr/sbin and /usr/bin); the build links libmunge from Debian too.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
from pathlib import Path

#: The Slurm release the Slinky images at hpcforge's pinned tag ship (components/versions.py).
SLURM_VERSION = "26.05.3"
TARBALL = f"slurm-{SLURM_VERSION}.tar.bz2"
PREFIX_ENV = "HPCFORGE_SLURM_PREFIX"
CACHE_ENV = "HPCFORGE_CACHE"
DEFAULT_CACHE = "/var/cache/hpcforge"

#: Binaries of a Slurm install: daemons in sbin/, clients in bin/ (the names a test may ask for).
SBIN = ("slurmctld", "slurmd", "slurmdbd", "slurmrestd", "slurmstepd", "sackd")
BIN = (
    "sacct",
    "sacctmgr",
    "salloc",
    "sattach",
    "sbatch",
    "sbcast",
    "scancel",
    "scontrol",
    "scrontab",
    "sdiag",
    "sinfo",
    "sprio",
    "squeue",
    "sreport",
    "srun",
    "sshare",
    "sstat",
    "strigger",
    "swait",
)
SLURM_BINARIES = frozenset((*SBIN, *BIN))


def _shared_dir() -> Path:
    here = Path(__file__).resolve().parents[2]
    return Path(os.environ.get("HPCFORGE_SHARED", here.parent / "shared")).resolve()


@functools.cache
def tarball_sha256() -> str | None:
    """The tarball's sha256 as ../shared/slurm/README.md lists it (else computed from the tarball; None if neither)."""
    folder = _shared_dir() / "slurm"
    readme = folder / "README.md"
    if readme.is_file():
        for line in readme.read_text().splitlines():
            if f"`{TARBALL}`" in line:
                found = re.findall(r"\b[0-9a-f]{64}\b", line)
                if found:
                    return found[0]
    tarball = folder / TARBALL
    if tarball.is_file():
        digest = hashlib.sha256()
        with tarball.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    return None


def slurm_prefix() -> Path | None:
    """The Slurm install prefix the tier uses ($HPCFORGE_SLURM_PREFIX, else the build cache path); None if unknown."""
    value = os.environ.get(PREFIX_ENV)
    if value:
        return Path(value)
    sha = tarball_sha256()
    if sha is None:
        return None
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE) / f"slurm-{sha}"


@functools.cache
def _version_of(slurmctld: str) -> str:
    try:
        done = subprocess.run([slurmctld, "-V"], capture_output=True, text=True, timeout=30, check=False)
    except OSError as error:
        return f"(cannot run: {error})"
    return done.stdout.strip() or done.stderr.strip()


def missing_reason() -> str | None:
    """Why the tier cannot run Slurm 26.05.3 here (None when it can)."""
    prefix = slurm_prefix()
    how = f"build it with scripts/ci/build-slurm.sh or set {PREFIX_ENV}"
    if prefix is None:
        return f"no Slurm {SLURM_VERSION} prefix: {PREFIX_ENV} is unset and ../shared/slurm has no {TARBALL} ({how})"
    slurmctld = prefix / "sbin" / "slurmctld"
    if not os.access(slurmctld, os.X_OK):
        return f"Slurm {SLURM_VERSION} is not built at {prefix} (no sbin/slurmctld; {how})"
    version = _version_of(str(slurmctld))
    if version != f"slurm {SLURM_VERSION}":
        return f"{slurmctld} -V prints {version!r}, not 'slurm {SLURM_VERSION}' ({how})"
    return None


def slurm_binary(name: str) -> str | None:
    """The path of Slurm binary ``name`` in the 26.05.3 prefix (None when the prefix is unusable or lacks it)."""
    if name not in SLURM_BINARIES:
        raise ValueError(f"{name} is not a Slurm binary")
    prefix = slurm_prefix()
    if prefix is None or missing_reason() is not None:
        return None
    path = prefix / ("sbin" if name in SBIN else "bin") / name
    return str(path) if os.access(path, os.X_OK) else None


def slurm_path() -> str:
    """``<prefix>/sbin:<prefix>/bin`` to put first on PATH (so scripts calling ``sacctmgr`` get 26.05.3); '' if unusable."""
    prefix = slurm_prefix()
    if prefix is None or missing_reason() is not None:
        return ""
    return f"{prefix / 'sbin'}:{prefix / 'bin'}"


__all__ = [
    "PREFIX_ENV",
    "SLURM_BINARIES",
    "SLURM_VERSION",
    "missing_reason",
    "slurm_binary",
    "slurm_path",
    "slurm_prefix",
    "tarball_sha256",
]
