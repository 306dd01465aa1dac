"""The API server's calls over a whole set of objects: can it reach the pods behind every APIService, admission
webhook and CRD conversion webhook, through the NetworkPolicies (policies/rules/netpol.py)?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.netpol import API_SERVER, ApiServerCall, Cluster, Host, api_server_calls, ingress_allowed, service_backends
from ...rules.podtemplates import display
from ..family import mark


@dataclass(frozen=True)
class CallVerdict:
    call: ApiServerCall
    admitted: bool | None
    """True: every backend pod accepts the API server on the target port; False: one does not (the NetworkPolicies
    drop the call); None: the backends are not among the objects (cannot be judged)."""
    reasons: tuple[str, ...]
    """Per backend pod, what admits or drops the call (or why it cannot be judged)."""

    @property
    def obj(self) -> Mapping[str, Any]:
        return self.call.caller

    def lines(self) -> list[str]:
        target = f"Service {self.call.namespace}/{self.call.service}:{self.call.port}"
        return [
            f"  {mark(self.admitted)} {display(self.call.caller)} {self.call.where} -> {target}",
            *(f"         {reason}" for reason in self.reasons),
        ]


def judge_api_server_calls(objects: Sequence[Mapping[str, Any]], source: Host = API_SERVER) -> list[CallVerdict]:
    """For every Service the API server calls: does every backend pod accept the API server on the
    resolved target port?"""
    cluster = Cluster.of(objects)
    verdicts: list[CallVerdict] = []
    for call in api_server_calls(objects):
        backends, why = service_backends(cluster, call.namespace, call.service, call.port)
        if not backends:
            verdicts.append(CallVerdict(call, None, (why,)))
            continue
        reasons: list[str] = []
        ok = True
        for backend in backends:
            if backend.port is None:
                ok = False
                reasons.append(f"{backend.pod}: the Service's targetPort names no container port of the pod")
                continue
            if backend.host_network:
                reasons.append(f"{backend.pod} port {backend.port}: host network, not isolated by NetworkPolicies")
                continue
            verdict = ingress_allowed(cluster, source, backend.pod, backend.port)
            ok = ok and verdict.allowed
            reasons.append(f"{backend.pod} port {backend.port}: {verdict.reason}")
        verdicts.append(CallVerdict(call, ok, tuple(reasons)))
    return verdicts
