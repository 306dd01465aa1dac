"""The certificates layer's pure builders: cert-manager's values, the private CA and the issuers."""

from __future__ import annotations

from components.k8s.certificates import CA_SECRET
from components.layers.certificates.config import TlsConfig
from components.layers.certificates.objects import (
    BOOTSTRAP_ISSUER,
    acme_issuer_spec,
    ca_certificate_spec,
    ca_issuer_spec,
    chart_values,
)


def test_production_runs_two_controllers_and_webhooks_with_a_disruption_budget() -> None:
    prod, dev = chart_values(production=True), chart_values(production=False)
    assert (prod["replicaCount"], prod["webhook"]["replicaCount"], prod["podDisruptionBudget"]["enabled"]) == (2, 2, True)
    assert (dev["replicaCount"], dev["webhook"]["replicaCount"], dev["podDisruptionBudget"]["enabled"]) == (1, 1, False)


def test_the_crds_outlive_the_chart() -> None:
    assert chart_values(production=False)["crds"] == {"enabled": True, "keep": True}


def test_the_ca_is_signed_by_the_bootstrap_issuer_and_keeps_its_key() -> None:
    cfg = TlsConfig.model_validate({"ca": {"commonName": "Example CA", "organization": "Example", "duration": "43800h"}})
    spec = ca_certificate_spec(cfg.ca)
    assert spec["isCA"] is True
    assert (spec["commonName"], spec["subject"], spec["duration"]) == ("Example CA", {"organizations": ["Example"]}, "43800h")
    assert spec["issuerRef"]["name"] == BOOTSTRAP_ISSUER
    assert spec["privateKey"]["rotationPolicy"] == "Never"
    # the CA issuer signs with the key of the CA certificate's Secret
    assert spec["secretName"] == ca_issuer_spec()["ca"]["secretName"] == CA_SECRET


def test_the_acme_issuer_solves_through_the_given_ingress_class() -> None:
    cfg = TlsConfig.model_validate({"acme": {"email": "ops@example.org"}})
    assert cfg.acme is not None
    acme = acme_issuer_spec(cfg.acme, ingress_class="traefik-public")["acme"]
    assert acme["email"] == "ops@example.org"
    assert acme["server"] == cfg.acme.server
    assert acme["solvers"] == [{"http01": {"ingress": {"ingressClassName": "traefik-public"}}}]
