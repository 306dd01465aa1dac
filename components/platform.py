"""The Platform: every layer of the site, wired in dependency order from one PlatformConfig."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .charts import ChartDeployer, ChartUse
from .config.root import PlatformConfig
from .context import DeployContext
from .layers import certificates, gitops, network, sealed_secrets
from .layers.certificates import Certificates, CertificatesArgs
from .layers.gitops import GitOps, GitOpsArgs
from .layers.network import Network, NetworkArgs
from .layers.sealed_secrets import SealedSecrets, SealedSecretsArgs


@dataclass(frozen=True)
class PlatformArgs:
    config: PlatformConfig


def planned_charts(config: PlatformConfig) -> list[ChartUse]:
    """Every chart release the stack deploys (the platform AppProject allows exactly these)."""
    uses: list[ChartUse] = [
        *gitops.CHARTS,
        *network.CHARTS,
        *certificates.CHARTS,
        *sealed_secrets.CHARTS,
    ]
    return uses


def dns_records(config: PlatformConfig) -> dict[str, dict[str, str]]:
    """Records the site DNS serves for the bare-metal inventory (hosts and their BMCs)."""
    prov = config.provisioning
    if prov is None or not prov.enabled or not prov.hosts:
        return {}
    records: dict[str, str] = {"grendel": prov.grendel_ip}
    for host in prov.hosts:
        records[host.name] = host.ip
        if host.bmc is not None:
            records[f"{host.name}-bmc"] = host.bmc.ip
    return {config.domain: records}


class Platform(pulumi.ComponentResource):
    outputs: dict[str, Any]

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:platform:Platform", name, None, opts)
        cfg = args.config
        provider = k8s.Provider(
            "kubernetes",
            context=cfg.kubernetes.context,
            opts=pulumi.ResourceOptions(parent=self),
        )
        ctx = DeployContext(
            environment=cfg.environment,
            delivery=cfg.delivery,
            domain=cfg.domain,
            kubernetes_version=cfg.kubernetes.version,
            storage_class=cfg.kubernetes.storage_class,
            protection=cfg.protection_mode,
            provider=provider,
        )
        plan = planned_charts(cfg)
        by_pulumi = ChartDeployer(ctx, plan, mode="pulumi")
        argocd_host = cfg.gitops.argocd.hostname or f"argocd.{cfg.domain}"

        # Argo CD first: in argocd delivery every other chart is an Application it reconciles.
        git = GitOps(
            "gitops",
            GitOpsArgs(
                ctx=ctx,
                config=cfg.gitops,
                charts=by_pulumi,
                platform_charts=plan,
                hostname=argocd_host,
                ingress_class=network.INGRESS_CLASS,
                issuer=certificates.ACME_ISSUER if cfg.tls.acme else certificates.CA_ISSUER,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        charts = by_pulumi.with_argocd(git.ready)

        net = Network(
            "network",
            NetworkArgs(ctx=ctx, config=cfg.network, charts=charts, dns_records=dns_records(cfg)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        certs = Certificates(
            "certificates",
            CertificatesArgs(ctx=ctx, config=cfg.tls, charts=charts, ingress_class=net.ingress_class),
            opts=pulumi.ResourceOptions(parent=self),
        )
        sealed = SealedSecrets(
            "sealed-secrets",
            SealedSecretsArgs(ctx=ctx, charts=charts),
            opts=pulumi.ResourceOptions(parent=self),
        )

        self.outputs = {
            "environment": cfg.environment,
            "delivery": cfg.delivery,
            "argocdUrl": git.url,
            "argocdAdminPassword": git.admin_password,
            "ingressAddress": net.ingress_address,
            "caIssuer": certs.ca_issuer,
            "sealedSecretsController": f"{sealed.namespace}/{sealed.controller_name}",
        }
        self.register_outputs(self.outputs)
