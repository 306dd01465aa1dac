"""Pyxis and enroot configuration for the Slurm pods (pure): plugstack.conf, and enroot's drop-in.

enroot (NVIDIA/enroot `enroot.in`, at 8ea147d) reads `/etc/enroot/enroot.conf` and then every
`/etc/enroot/enroot.conf.d/*.conf`: lines `KEY VALUE` whose key is `ENROOT_*`, the value passed through
`eval echo` (so `$(id -u)` expands per user); a file that `bash -n` refuses is an error. Its defaults put the
runtime directory at `${XDG_RUNTIME_DIR}/enroot`, with XDG_RUNTIME_DIR defaulting to `/run`: in Slinky's
slurmd-pyxis image that is `/run/enroot`, created root-owned 0755 (SlinkyProject/containers
schedmd/slurm/26.05/ubuntu26.04/Dockerfile.pyxis), where a job's user cannot create anything. Pyxis does not
let a job override these variables (NVIDIA/pyxis pyxis_slurmstepd.c `enroot_deny_env`). This drop-in gives
each user directories it can create: runtime files on the pod's /tmp (a tmpfs the image's entrypoint mounts),
container root filesystems and layer cache under `/usr/share/enroot/enroot-data` (created 0777 by the image),
on the pod's disk rather than in home directories.
"""

from __future__ import annotations

PYXIS_PLUGSTACK = "include /usr/share/pyxis/*\n"
"""plugstack.conf with Pyxis: what slurm-operator v1.2.1 docs/usage/pyxis.md prescribes. A glob, because slurmctld
(configless: it serves plugstack.conf to slurmd and srun) and the CPU pods have no Pyxis, and an include of a missing
file would fail there; Slinky's pyxis images link /usr/share/pyxis/pyxis.conf (the deb's `required ... spank_pyxis.so`)."""

ENROOT_DROPIN_DIR = "/etc/enroot/enroot.conf.d"
ENROOT_DROPIN = "hpcforge.conf"
ENROOT_DATA_ROOT = "/usr/share/enroot/enroot-data"

SETTINGS = (
    ("ENROOT_RUNTIME_PATH", "/tmp/enroot-runtime/user-$(id -u)"),
    ("ENROOT_DATA_PATH", f"{ENROOT_DATA_ROOT}/user-$(id -u)"),
    ("ENROOT_CACHE_PATH", f"{ENROOT_DATA_ROOT}/cache-user-$(id -u)"),
)


def enroot_conf() -> str:
    source = "components/layers/slurm/enroot.py"  # rendered: tests/test_paths_named.py checks it exists
    lines = [f"# hpcforge: per-user enroot directories in the Pyxis slurmd pods ({source})"]
    lines += [f"{key} {value}" for key, value in SETTINGS]
    return "\n".join(lines) + "\n"
