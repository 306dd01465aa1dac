"""Certificates layer: cert-manager, a self-signed bootstrap -> private CA -> CA ClusterIssuer chain,
and an optional ACME ClusterIssuer (HTTP-01 through Traefik)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...k8s.certificates import CA_ISSUER, CA_SECRET
from ...k8s.layer_namespace import LayerNamespace
from ...k8s.resources import Port, egress_to_apiserver, egress_to_internet, ingress_from_apiserver
from ...versions import Charts
from .config import TlsConfig
from .objects import (
    BOOTSTRAP_ISSUER,
    acme_issuer_spec,
    ca_certificate_spec,
    ca_issuer_spec,
    chart_values,
    self_signed_issuer_spec,
)

NAMESPACE = "cert-manager"
ACME_ISSUER = "acme"

CHARTS = (ChartUse("cert-manager", Charts.CERT_MANAGER, NAMESPACE),)


@dataclass(frozen=True)
class CertificatesArgs:
    ctx: DeployContext
    config: TlsConfig
    charts: ChartDeployer
    ingress_class: str
    depends_on: Sequence[pulumi.Resource] = ()


class Certificates(pulumi.ComponentResource):
    ca_issuer: str
    acme_issuer: str | None
    ready: list[pulumi.Resource]
    """Depend on these before creating Certificates or issuer-backed Ingresses."""

    def __init__(self, name: str, args: CertificatesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:certificates:Certificates", name, None, opts)
        ctx, cfg = args.ctx, args.config
        namespace = LayerNamespace(
            ctx,
            self,
            NAMESPACE,
            component="certificates",
            allows=[
                egress_to_apiserver(),
                # ACME directories and HTTP-01 self-checks.
                egress_to_internet(80, 443),
                ingress_from_apiserver("allow-ingress-webhook", Port(10250)),
            ],
            depends_on=args.depends_on,
            charts=args.charts,
        )
        chart = namespace.chart("cert-manager", Charts.CERT_MANAGER, chart_values(production=ctx.production))

        def issuer(name: str, spec: dict[str, Any], depends: list[pulumi.Resource]) -> k8s.apiextensions.CustomResource:
            return k8s.apiextensions.CustomResource(
                name,
                api_version="cert-manager.io/v1",
                kind="ClusterIssuer",
                metadata=ctx.meta(name, "certificates", app="cert-manager"),
                spec=spec,
                opts=ctx.opts(self, depends_on=depends),
            )

        bootstrap = issuer(BOOTSTRAP_ISSUER, self_signed_issuer_spec(), [chart])
        ca_certificate = k8s.apiextensions.CustomResource(
            f"{NAMESPACE}/{CA_SECRET}",
            api_version="cert-manager.io/v1",
            kind="Certificate",
            metadata=ctx.meta(CA_SECRET, "certificates", NAMESPACE, app="cert-manager"),
            spec=ca_certificate_spec(cfg.ca),
            opts=ctx.opts(self, depends_on=[bootstrap]),
        )
        ca_issuer = issuer(CA_ISSUER, ca_issuer_spec(), [ca_certificate])
        self.ca_issuer = CA_ISSUER
        self.acme_issuer = None
        self.ready = [chart, bootstrap, ca_certificate, ca_issuer]
        if cfg.acme is not None:
            acme = issuer(ACME_ISSUER, acme_issuer_spec(cfg.acme, ingress_class=args.ingress_class), [chart])
            self.acme_issuer = ACME_ISSUER
            self.ready.append(acme)
        self.register_outputs({"caIssuer": self.ca_issuer, "acmeIssuer": self.acme_issuer})
