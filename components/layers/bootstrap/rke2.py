"""RKE2 over SSH: node preparation, the first server bootstrapping the cluster, the other servers and
the agents joining it through `https://<first>:9345` with the cluster token (a Pulumi secret, sent on
standard input), and the admin kubeconfig read back as a secret.

Servers form a chain (each depends on the one before it), so Pulumi installs and upgrades them one at
a time; `rke2-install.sh` takes a server down only while every server is Ready and returns only once
it is Ready again, so etcd keeps its quorum throughout. Agents follow the last server. All scripts
are idempotent: a re-run on a converged host changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import pulumi
import pulumi_command as command

from ...ground.platform_core import ProtectionMode
from ...k8s.generated import generated_password
from .config import K0sBootstrap, SshHost

RKE2_SUPERVISOR_PORT = 9345


def host_name(host: SshHost) -> str:
    return host.name or host.host


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


def rke2_cluster(
    parent: pulumi.Resource,
    cfg: K0sBootstrap,
    connection: Callable[[SshHost], command.remote.ConnectionArgs],
    remote_script: Callable[[str, dict[str, str]], str],
    protection: ProtectionMode = "none",
) -> pulumi.Output[str]:
    """Declare the RKE2 commands as children of `parent`; the kubeconfig (secret) of the first server."""
    # The cluster token: generated once, protected like every generated key (components/k8s/generated.py).
    token = generated_password(protection, "rke2-token", length=48, parent=parent)
    settings = cfg.rke2
    previous: pulumi.Resource | None = None
    installed: list[pulumi.Resource] = []
    for server, hosts in ((True, cfg.controllers), (False, cfg.workers)):
        last_server = previous
        for host in hosts:
            name = host_name(host)
            prepare_env = {
                "RKE2_TYPE": "server" if server else "agent",
                "RKE2_SYSADMIN": settings.sysadmin_user,
                "RKE2_SYSADMIN_KEYS": "\n".join(settings.sysadmin_ssh_keys),
            }
            prepare = remote_script("rke2-prepare.sh", prepare_env)
            prep = command.remote.Command(
                f"rke2-prepare-{name}",
                connection=connection(host),
                create=prepare,
                update=prepare,
                opts=pulumi.ResourceOptions(parent=parent),
            )
            install = remote_script("rke2-install.sh", install_environment(cfg, host, server=server))
            # Servers: each after the one before (join order, and one upgrade at a time). Agents: after
            # the last server, side by side.
            after = previous if server else last_server
            node = command.remote.Command(
                f"rke2-{name}",
                connection=connection(host),
                create=install,
                update=install,
                delete=remote_script("rke2-remove.sh", {}),
                stdin=token.result,
                opts=pulumi.ResourceOptions(parent=parent, depends_on=[prep, *([after] if after else [])]),
            )
            installed.append(node)
            if server:
                previous = node
    first = cfg.controllers[0]
    kubeconfig = command.remote.Command(
        "rke2-kubeconfig",
        connection=connection(first),
        create=remote_script("rke2-kubeconfig.sh", {"RKE2_API_HOST": first.host}),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=installed, additional_secret_outputs=["stdout"]),
    )
    return pulumi.Output.secret(kubeconfig.stdout)
