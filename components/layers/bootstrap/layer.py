"""Optional cluster bootstrap: install k0s or RKE2 (`distribution`, see components/layers/bootstrap/rke2.py) on
bare hosts over SSH, join them, and read back the kubeconfig (a Pulumi secret) from which the
Kubernetes provider is built.

Only used when `hpcforge:cluster.bootstrap` names hosts; by default hpcforge deploys into an
existing cluster from the kubeconfig context and none of this is created. The scripts in
scripts/bootstrap are idempotent: re-running them on a converged host changes nothing.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumi_command as command

from ...ground.platform_core import ProtectionMode
from .config import K0sBootstrap, SshHost
from .rke2 import rke2_cluster

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts" / "bootstrap"


def remote_script(name: str, environment: dict[str, str]) -> str:
    """A remote command that runs one of our scripts (sent inline) with its environment."""
    text = (SCRIPTS / name).read_text()
    exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in sorted(environment.items()))
    return f"{exports} bash -c {shlex.quote(text)}"


@dataclass(frozen=True)
class BootstrapArgs:
    config: K0sBootstrap
    ssh_private_key: pulumi.Input[str]
    protection: ProtectionMode = "none"
    """Protection of generated key material (the RKE2 cluster token)."""


class ClusterBootstrap(pulumi.ComponentResource):
    kubeconfig: pulumi.Output[str]

    def __init__(self, name: str, args: BootstrapArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:bootstrap:ClusterBootstrap", name, None, opts)
        cfg = args.config
        key = pulumi.Output.secret(args.ssh_private_key)

        def connection(host: SshHost) -> command.remote.ConnectionArgs:
            return command.remote.ConnectionArgs(host=host.host, user=host.user, port=host.port, private_key=key)

        if cfg.distribution == "rke2":
            self.kubeconfig = rke2_cluster(self, cfg, connection, remote_script, args.protection)
            self.register_outputs(
                {"distribution": "rke2", "servers": [h.host for h in cfg.controllers], "agents": [h.host for h in cfg.workers]}
            )
            return
        first, *others = cfg.controllers
        single = not cfg.workers and not others
        role = "controller+worker" if single else "controller"
        install_env = {"K0S_VERSION": cfg.release, "K0S_ROLE": role}
        # No `triggers` on the install commands: a trigger change REPLACES the command, and a replace
        # runs the old resource's `delete` (k0s reset) after the new install. A changed version or
        # script changes `create`, which is an UPDATE: `update` re-runs the idempotent install, which
        # stops the old release, installs the new one and starts it (the leader first, then the joined
        # hosts, which depend on it). `delete` runs only when a host leaves the config.
        install = remote_script("k0s-install.sh", install_env)
        leader = command.remote.Command(
            f"k0s-{first.name or first.host}",
            connection=connection(first),
            create=install,
            update=install,
            delete=remote_script("k0s-remove.sh", {}),
            opts=pulumi.ResourceOptions(parent=self),
        )
        joined: list[pulumi.Resource] = [leader]
        for token_role, hosts, host_role in (("controller", others, "controller"), ("worker", cfg.workers, "worker")):
            if not hosts:
                continue
            token = command.remote.Command(
                f"k0s-token-{token_role}",
                connection=connection(first),
                create=remote_script("k0s-token.sh", {"K0S_TOKEN_ROLE": token_role}),
                triggers=[*(h.host for h in hosts)],
                opts=pulumi.ResourceOptions(parent=self, depends_on=[leader], additional_secret_outputs=["stdout"]),
            )
            for host in hosts:
                env = {
                    "K0S_VERSION": cfg.release,
                    "K0S_ROLE": host_role,
                    **({"K0S_JOIN": "1"} if host_role == "controller" else {}),
                }
                join = remote_script("k0s-install.sh", env)
                joined.append(
                    command.remote.Command(
                        f"k0s-{host.name or host.host}",
                        connection=connection(host),
                        create=join,
                        update=join,
                        delete=remote_script("k0s-remove.sh", {}),
                        # The join token reaches the host on standard input, never on a command line.
                        stdin=token.stdout,
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[token]),
                    )
                )
        kubeconfig = command.remote.Command(
            "k0s-kubeconfig",
            connection=connection(first),
            create=remote_script("k0s-kubeconfig.sh", {}),
            opts=pulumi.ResourceOptions(parent=self, depends_on=joined, additional_secret_outputs=["stdout"]),
        )
        self.kubeconfig = pulumi.Output.secret(kubeconfig.stdout)
        self.register_outputs({"controllers": [h.host for h in cfg.controllers], "workers": [h.host for h in cfg.workers]})
