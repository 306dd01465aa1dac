"""Certificates layer: cert-manager, a self-signed bootstrap -> private CA -> CA ClusterIssuer chain,
and an optional ACME ClusterIssuer (HTTP-01 through Traefik)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...k8s.certificates import CA_ISSUER, CA_SECRET, CERT_MANAGER_API
from ...k8s.layer_namespace import LayerNamespace
from ...versions import Charts
from .config import TlsConfig
from .objects import (
    BOOTSTRAP_ISSUER,
    acme_issuer_spec,
    ca_certificate_spec,
    ca_issuer_spec,
    cert_manager_namespace_allows,
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
            allows=cert_manager_namespace_allows(),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        chart = namespace.chart("cert-manager", Charts.CERT_MANAGER, chart_values(production=ctx.production))
        scope = namespace.scope.but(app="cert-manager")

        def issuer(name: str, spec: dict[str, Any], depends: list[pulumi.Resource]) -> pulumi.Resource:
            return scope.custom(CERT_MANAGER_API, "ClusterIssuer", name, spec, cluster_scoped=True, depends_on=depends)

        bootstrap = issuer(BOOTSTRAP_ISSUER, self_signed_issuer_spec(), [chart])
        ca_certificate = scope.custom(
            CERT_MANAGER_API, "Certificate", CA_SECRET, ca_certificate_spec(cfg.ca), depends_on=[bootstrap]
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
