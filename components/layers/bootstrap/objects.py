"""The cluster bootstrap's commands as pure functions: the remote command line that runs one of scripts/bootstrap
with its environment, and the environments of k0s' and RKE2's scripts on each host. layer.py registers the commands.
"""

from __future__ import annotations

import shlex

from ...paths import SCRIPTS
from .config import K0sBootstrap, SshHost

BOOTSTRAP_SCRIPTS = SCRIPTS / "bootstrap"
RKE2_SUPERVISOR_PORT = 9345


def remote_script(name: str, environment: dict[str, str]) -> str:
    """A remote command that runs one of our scripts (sent inline) with its environment."""
    text = (BOOTSTRAP_SCRIPTS / name).read_text()
    exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in sorted(environment.items()))
    return f"{exports} bash -c {shlex.quote(text)}"


def host_name(host: SshHost) -> str:
    """The name of a host's commands: its name, or its address."""
    return host.name or host.host


def k0s_install_environment(cfg: K0sBootstrap, role: str, *, join: bool = False) -> dict[str, str]:
    """The environment of `k0s-install.sh` for a host of `role` (`controller+worker`, `controller` or `worker`);
    `join`: a controller joining the first one."""
    return {"K0S_VERSION": cfg.release, "K0S_ROLE": role, **({"K0S_JOIN": "1"} if join else {})}


def rke2_prepare_environment(cfg: K0sBootstrap, *, server: bool) -> dict[str, str]:
    """The environment of `rke2-prepare.sh` on one host: its type and the sysadmin account with its SSH keys."""
    settings = cfg.rke2
    return {
        "RKE2_TYPE": "server" if server else "agent",
        "RKE2_SYSADMIN": settings.sysadmin_user,
        "RKE2_SYSADMIN_KEYS": "\n".join(settings.sysadmin_ssh_keys),
    }


def install_environment(cfg: K0sBootstrap, host: SshHost, *, server: bool) -> dict[str, str]:
    """The environment of `rke2-install.sh` on one host (pure: tested directly)."""
    first = cfg.controllers[0]
    settings = cfg.rke2
    env = {
        "RKE2_VERSION": cfg.release,
        "RKE2_TYPE": "server" if server else "agent",
        "RKE2_SERVERS": str(len(cfg.controllers)),
        "RKE2_SELINUX": "true" if settings.selinux else "false",
        "RKE2_WAIT_SECONDS": str(settings.upgrade_timeout_seconds),
    }
    if host is not first:
        env["RKE2_SERVER_URL"] = f"https://{first.host}:{RKE2_SUPERVISOR_PORT}"
    if server:
        sans = [h.host for h in cfg.controllers] + [
            san for san in settings.tls_san if san not in {h.host for h in cfg.controllers}
        ]
        env.update(
            RKE2_CLUSTER_CIDR=settings.cluster_cidr,
            RKE2_SERVICE_CIDR=settings.service_cidr,
            RKE2_TLS_SAN=",".join(sans),
            RKE2_KUBECONFIG_MODE=settings.write_kubeconfig_mode,
        )
    return env
