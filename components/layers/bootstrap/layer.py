"""Optional cluster bootstrap: install k0s or RKE2 (`distribution`) on bare hosts over SSH, join them, and read back
the kubeconfig (a Pulumi secret) from which the Kubernetes provider is built. The commands' scripts and environments
are built in objects.py.

Only used when `hpcforge:cluster.bootstrap` names hosts; by default hpcforge deploys into an
existing cluster from the kubeconfig context and none of this is created. The scripts in
scripts/bootstrap are idempotent: re-running them on a converged host changes nothing.

RKE2: node preparation, the first server bootstrapping the cluster, the other servers and the agents joining it
through `https://<first>:9345` with the cluster token (a Pulumi secret, sent on standard input), and the admin
kubeconfig read back as a secret. Servers form a chain (each depends on the one before it), so Pulumi installs and
upgrades them one at a time; `rke2-install.sh` takes a server down only while every server is Ready and returns only
once it is Ready again, so etcd keeps its quorum throughout. Agents follow the last server.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_command as command

from ...ground.platform_core import ProtectionMode
from ...k8s.generated import generated_password
from .config import K0sBootstrap, SshHost
from .objects import host_name, install_environment, k0s_install_environment, remote_script, rke2_prepare_environment


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
        self._key = pulumi.Output.secret(args.ssh_private_key)
        if cfg.distribution == "rke2":
            self.kubeconfig = self._rke2(cfg, args.protection)
            self.register_outputs(
                {"distribution": "rke2", "servers": [h.host for h in cfg.controllers], "agents": [h.host for h in cfg.workers]}
            )
            return
        self.kubeconfig = self._k0s(cfg)
        self.register_outputs({"controllers": [h.host for h in cfg.controllers], "workers": [h.host for h in cfg.workers]})

    def _connection(self, host: SshHost) -> command.remote.ConnectionArgs:
        return command.remote.ConnectionArgs(host=host.host, user=host.user, port=host.port, private_key=self._key)

    def _k0s(self, cfg: K0sBootstrap) -> pulumi.Output[str]:
        """k0s on the first controller, then the other controllers and the workers joined with a token each; the
        kubeconfig (secret) of the first controller."""
        first, *others = cfg.controllers
        single = not cfg.workers and not others
        # No `triggers` on the install commands: a trigger change REPLACES the command, and a replace
        # runs the old resource's `delete` (k0s reset) after the new install. A changed version or
        # script changes `create`, which is an UPDATE: `update` re-runs the idempotent install, which
        # stops the old release, installs the new one and starts it (the leader first, then the joined
        # hosts, which depend on it). `delete` runs only when a host leaves the config.
        install = remote_script("k0s-install.sh", k0s_install_environment(cfg, "controller+worker" if single else "controller"))
        leader = command.remote.Command(
            f"k0s-{host_name(first)}",
            connection=self._connection(first),
            create=install,
            update=install,
            delete=remote_script("k0s-remove.sh", {}),
            opts=pulumi.ResourceOptions(parent=self),
        )
        joined: list[pulumi.Resource] = [leader]
        for token_role, hosts in (("controller", others), ("worker", cfg.workers)):
            if not hosts:
                continue
            token = command.remote.Command(
                f"k0s-token-{token_role}",
                connection=self._connection(first),
                create=remote_script("k0s-token.sh", {"K0S_TOKEN_ROLE": token_role}),
                triggers=[*(h.host for h in hosts)],
                opts=pulumi.ResourceOptions(parent=self, depends_on=[leader], additional_secret_outputs=["stdout"]),
            )
            for host in hosts:
                join = remote_script("k0s-install.sh", k0s_install_environment(cfg, token_role, join=token_role == "controller"))
                joined.append(
                    command.remote.Command(
                        f"k0s-{host_name(host)}",
                        connection=self._connection(host),
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
            connection=self._connection(first),
            create=remote_script("k0s-kubeconfig.sh", {}),
            opts=pulumi.ResourceOptions(parent=self, depends_on=joined, additional_secret_outputs=["stdout"]),
        )
        return pulumi.Output.secret(kubeconfig.stdout)

    def _rke2(self, cfg: K0sBootstrap, protection: ProtectionMode) -> pulumi.Output[str]:
        """The RKE2 commands: each host prepared, the servers one after another, the agents after the last server; the
        kubeconfig (secret) of the first server."""
        # The cluster token: generated once, protected like every generated key (components/k8s/generated.py).
        token = generated_password(protection, "rke2-token", length=48, parent=self)
        previous: pulumi.Resource | None = None
        installed: list[pulumi.Resource] = []
        for server, hosts in ((True, cfg.controllers), (False, cfg.workers)):
            last_server = previous
            for host in hosts:
                name = host_name(host)
                prepare = remote_script("rke2-prepare.sh", rke2_prepare_environment(cfg, server=server))
                prep = command.remote.Command(
                    f"rke2-prepare-{name}",
                    connection=self._connection(host),
                    create=prepare,
                    update=prepare,
                    opts=pulumi.ResourceOptions(parent=self),
                )
                install = remote_script("rke2-install.sh", install_environment(cfg, host, server=server))
                # Servers: each after the one before (join order, and one upgrade at a time). Agents: after
                # the last server, side by side.
                after = previous if server else last_server
                node = command.remote.Command(
                    f"rke2-{name}",
                    connection=self._connection(host),
                    create=install,
                    update=install,
                    delete=remote_script("rke2-remove.sh", {}),
                    stdin=token.result,
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[prep, *([after] if after else [])]),
                )
                installed.append(node)
                if server:
                    previous = node
        first = cfg.controllers[0]
        kubeconfig = command.remote.Command(
            "rke2-kubeconfig",
            connection=self._connection(first),
            create=remote_script("rke2-kubeconfig.sh", {"RKE2_API_HOST": first.host}),
            opts=pulumi.ResourceOptions(parent=self, depends_on=installed, additional_secret_outputs=["stdout"]),
        )
        return pulumi.Output.secret(kubeconfig.stdout)
