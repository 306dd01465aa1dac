"""Pyxis and enroot configuration for the Slurm pods (pure): plugstack.conf, and enroot's drop-in.

enroot (NVIDIA/enroot `enroot.in`, at 8ea147d) reads `/etc/enroot/enroot.conf` and then every
`/etc/enroot/enroot.conf.d/*.conf`: lines `KEY VALUE` whose key is `ENROOT_*`, the value passed through
`eval echo` (so `$(id -u)` expands per user); a file that `bash -n` refuses is an error. Its defaults put the
runtime directory at `${XDG_RUNTIME_DIR}/enroot`, with XDG_RUNTIME_DIR defaulting to `/run`: in Slinky's
slurmd-pyxis image that is `/run/enroot`, created root-owned 0755 (SlinkyProject/containers
schedmd/slurm/26.05/ubuntu26.04/Dockerfile.pyxis, line 111), where a job's user cannot create anything. Pyxis does
not let a job override these variables (NVIDIA/pyxis pyxis_slurmstepd.c `enroot_deny_env`).

enroot creates its directories with `mkdir -p` (`enroot.in` line 106 at 8ea147d), which takes a directory that
another user made first as it is: a per-user directory in a place every user can write (the pod's /tmp, a tmpfs of
mode 1777; the image's `/usr/share/enroot/enroot-data`, created 0777 without the sticky bit, Dockerfile.pyxis line
110) lets one user prepare another's runtime files or container root filesystems (issue 39). So the directories
are made by root, before the job, in places only root can write: the prolog ENROOT_PROLOG (run as root on every
node of the allocation, PrologFlags=Contain) takes write access away from everyone but root on the data root and
makes the job user's `user-<uid>` and `cache-user-<uid>` there and `user-<uid>` under /run/enroot, owned by the
user, mode 0700, moving aside whatever else stood at those names. This drop-in points enroot at them.
"""

from __future__ import annotations

PYXIS_PLUGSTACK = "include /usr/share/pyxis/*\n"
"""plugstack.conf with Pyxis: what slurm-operator v1.2.1 docs/usage/pyxis.md prescribes. A glob, because slurmctld
(configless: it serves plugstack.conf to slurmd and srun) and the CPU pods have no Pyxis, and an include of a missing
file would fail there; Slinky's pyxis images link /usr/share/pyxis/pyxis.conf (the deb's `required ... spank_pyxis.so`)."""

ENROOT_DROPIN_DIR = "/etc/enroot/enroot.conf.d"
ENROOT_DROPIN = "hpcforge.conf"
ENROOT_DATA_ROOT = "/usr/share/enroot/enroot-data"

ENROOT_RUNTIME_ROOT = "/run/enroot"
SETTINGS = (
    ("ENROOT_RUNTIME_PATH", f"{ENROOT_RUNTIME_ROOT}/user-$(id -u)"),
    ("ENROOT_DATA_PATH", f"{ENROOT_DATA_ROOT}/user-$(id -u)"),
    ("ENROOT_CACHE_PATH", f"{ENROOT_DATA_ROOT}/cache-user-$(id -u)"),
)
ENROOT_PROLOG = "01-hpcforge-enroot-dirs.sh"
"""The prolog that makes each job user's enroot directories (prepended to the prolog scripts with Pyxis)."""


def enroot_conf() -> str:
    source = "components/layers/slurm/enroot.py"  # rendered: tests/test_paths_named.py checks it exists
    lines = [f"# hpcforge: per-user enroot directories in the Pyxis slurmd pods ({source})"]
    lines += [f"{key} {value}" for key, value in SETTINGS]
    return "\n".join(lines) + "\n"


def enroot_prolog() -> str:
    """The prolog (root, before the job, on every node of the allocation) that makes the job user's enroot
    directories where only root can create them; a no-op on pods without enroot (the CPU nodesets). Roots can be
    moved for tests (HPCFORGE_ENROOT_DATA_ROOT, HPCFORGE_ENROOT_RUNTIME_ROOT)."""
    return f"""#!/bin/sh
# hpcforge: the job user's enroot directories, made by root where only root can write (components/layers/slurm/enroot.py).
set -eu
data="${{HPCFORGE_ENROOT_DATA_ROOT:-{ENROOT_DATA_ROOT}}}"
runtime="${{HPCFORGE_ENROOT_RUNTIME_ROOT:-{ENROOT_RUNTIME_ROOT}}}"
[ -d "$data" ] || exit 0
uid="$SLURM_JOB_UID"
gid="${{SLURM_JOB_GID:-$uid}}"
chown root:root "$data" "$runtime" 2>/dev/null || true
chmod 0755 "$data"
mkdir -p "$runtime" && chmod 0755 "$runtime"
for dir in "$data/user-$uid" "$data/cache-user-$uid" "$runtime/user-$uid"; do
  if [ -L "$dir" ] || {{ [ -e "$dir" ] && [ "$(stat -c %u "$dir")" != "$uid" ]; }}; then
    mv "$dir" "$dir.not-$uid.$(date +%s)"
  fi
  if [ ! -d "$dir" ]; then
    mkdir "$dir"
  fi
  chown "$uid:$gid" "$dir"
  chmod 0700 "$dir"
done
"""
