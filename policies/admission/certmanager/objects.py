"""cert-manager's webhook over hpcforge's objects: which objects it judges, the CRD defaults the API server
applies first, and the refusal of one object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get, items, mapping, text
from .certificate import validate_certificate
from .fields import DISABLE_VALIDATION_LABEL, GROUP, WEBHOOK, UndecodableError, aggregate
from .issuer import validate_issuer

VALIDATORS = {"Certificate": validate_certificate, "Issuer": validate_issuer, "ClusterIssuer": validate_issuer}
NAMESPACED = frozenset({"Certificate", "Issuer"})


def judged(obj: Mapping[str, Any]) -> bool:
    """Whether this reproduction judges `obj` (a cert-manager.io v1 Certificate, Issuer or ClusterIssuer)."""
    api = text(obj.get("apiVersion")) or ""
    return api == f"{GROUP}/v1" and text(obj.get("kind")) in VALIDATORS


def validation_disabled(namespace_labels: Mapping[str, Any] | None) -> bool:
    """The chart's namespaceSelector: `cert-manager.io/disable-validation NotIn [true]` leaves such namespaces out."""
    return mapping(namespace_labels).get(DISABLE_VALIDATION_LABEL) == "true"


def with_crd_defaults(kind: str, spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The defaults the API server applies from the CRDs' schemas before calling the webhook, for the fields
    validated here: an ACME HTTP-01 gateway parentRef's `kind` defaults to `Gateway`
    (deploy/crds/cert-manager.io_{cluster,}issuers.yaml)."""
    acme = spec.get("acme")
    if kind == "Certificate" or not isinstance(acme, Mapping):
        return spec
    solvers = []
    for solver in items(acme.get("solvers")):
        route = get(solver, "http01", "gatewayHTTPRoute")
        if isinstance(route, Mapping) and isinstance(route.get("parentRefs"), list):
            refs = [{"kind": "Gateway", **ref} if isinstance(ref, Mapping) else ref for ref in items(route.get("parentRefs"))]
            http01 = {**mapping(get(solver, "http01")), "gatewayHTTPRoute": {**route, "parentRefs": refs}}
            solvers.append({**mapping(solver), "http01": http01})
        else:
            solvers.append(solver)
    return {**spec, "acme": {**acme, "solvers": solvers}} if "solvers" in acme else spec


def refusal(obj: Mapping[str, Any]) -> str | None:
    """The webhook's answer for `obj`: None when admitted, else the message the API server relays."""
    kind = text(obj.get("kind")) or ""
    spec = with_crd_defaults(kind, mapping(obj.get("spec")))
    try:
        errors = VALIDATORS[kind](spec)
    except UndecodableError as error:
        return f'admission webhook "{WEBHOOK}" denied the request: cannot decode {kind}: {error}'
    if not errors:
        return None
    return f'admission webhook "{WEBHOOK}" denied the request: {aggregate(errors)}'
