"""The cert-manager and MetalLB validating webhooks over a whole set of objects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.podtemplates import display, kind_of, namespace_of
from .. import certmanager, metallb
from ..family import mark, namespace_labels


@dataclass(frozen=True)
class WebhookVerdict:
    obj: Mapping[str, Any]
    webhook: str
    refusal: str | None
    """The message the API server relays when the webhook refuses the object (None: admitted)."""

    @property
    def admitted(self) -> bool:
        return self.refusal is None

    @property
    def reasons(self) -> tuple[str, ...]:
        return () if self.refusal is None else (self.refusal,)

    def lines(self) -> list[str]:
        return [f"  {mark(self.admitted)} {display(self.obj)} ({self.webhook})", *(f"         {r}" for r in self.reasons)]


def webhook_verdicts(
    objects: Sequence[Mapping[str, Any]],
    *,
    metallb_bgp_type: str | None = None,
    metallb_namespace: str = metallb.NAMESPACE,
    nodes: Sequence[Mapping[str, str]] = (),
) -> list[WebhookVerdict]:
    """Every cert-manager and MetalLB object of `objects`, as the operator's validating webhook answers its
    creation. MetalLB's webhooks judge an object together with the objects of its kind (and the pools) that
    exist: here, every one among `objects`, i.e. the state once all of them are applied; when that set is
    refused, at least the last of them to be applied is, and each of them is reported.

    MetalLB's BGP backend (which peer rules apply): the MetalLB controller's METALLB_BGP_TYPE when its
    Deployment is among the objects (charts rendered), else `metallb_bgp_type` (hpcforge's chart values,
    `metallb.bgp_type_from_values`), else the chart's default (`frr-k8s`). `nodes`: the labels of
    the cluster's nodes, when known (none: every pair of peers may share a node, as the webhook assumes)."""
    labels = namespace_labels(objects)
    bgp_type = metallb.controller_bgp_type(objects) or metallb_bgp_type or metallb.bgp_type_from_values({})
    existing = [o for o in objects if metallb.judged(o)]
    verdicts: list[WebhookVerdict] = []
    for obj in objects:
        if certmanager.judged(obj):
            if kind_of(obj) in certmanager.NAMESPACED and certmanager.validation_disabled(labels.get(namespace_of(obj))):
                continue  # the chart's namespaceSelector: the webhook is not called
            verdicts.append(WebhookVerdict(obj, certmanager.WEBHOOK, certmanager.refusal(obj)))
        elif metallb.judged(obj):
            refusal = metallb.refusal(obj, existing, namespace=metallb_namespace, bgp_type=bgp_type, nodes=nodes)
            verdicts.append(WebhookVerdict(obj, metallb.WEBHOOKS[kind_of(obj)], refusal))
    return verdicts
