"""MetalLB's webhooks over hpcforge's objects: which objects they judge, the refusal of one object among the
cluster's, and which BGP implementation the controller runs (from the chart's values).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...rules.access import get, items, text
from .addresses import GROUP, NAMESPACE, VERSIONS, WEBHOOKS, RefusedError
from .parser import ClusterResources, validate


def judged(obj: Mapping[str, Any]) -> bool:
    """Whether a webhook of MetalLB judges `obj` (its kind at the version the webhook is registered for)."""
    kind = text(obj.get("kind")) or ""
    return kind in WEBHOOKS and text(obj.get("apiVersion")) == f"{GROUP}/{VERSIONS[kind]}"


def _namespace(obj: Mapping[str, Any]) -> str:
    return text(get(obj, "metadata", "namespace")) or ""


def _with_update(existing: Sequence[Mapping[str, Any]], obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """`*ListWithUpdate` on CREATE: the other objects of the kind as the API server lists them (by name), `obj`
    appended."""
    name = text(get(obj, "metadata", "name"))
    others = sorted(
        (o for o in existing if text(get(o, "metadata", "name")) != name), key=lambda o: text(get(o, "metadata", "name")) or ""
    )
    return (*others, obj)


def refusal(
    obj: Mapping[str, Any],
    existing: Sequence[Mapping[str, Any]],
    *,
    namespace: str = NAMESPACE,
    bgp_type: str = "native",
    nodes: Sequence[Mapping[str, str]] = (),
) -> str | None:
    """The answer of MetalLB's webhook to creating `obj` when `existing` (any MetalLB objects) are in the
    cluster: None when admitted, else the message the API server relays."""
    kind = text(obj.get("kind")) or ""
    webhook = WEBHOOKS[kind]
    if kind == "BGPPeer" and get(obj, "spec", "disableMP") is True:
        return None  # validatePeerCreate: a warning, nothing validated
    if _namespace(obj) != namespace:
        return f'admission webhook "{webhook}" denied the request: resource must be created in {namespace} namespace'

    def of(wanted: str) -> tuple[Mapping[str, Any], ...]:
        """The objects of a kind in the controller's namespace, as the API server lists them (by name)."""
        found = [o for o in existing if text(o.get("kind")) == wanted and judged(o) and _namespace(o) == namespace]
        return tuple(sorted(found, key=lambda o: text(get(o, "metadata", "name")) or ""))

    node_list = tuple(nodes)
    resources = {
        "IPAddressPool": lambda: ClusterResources(pools=_with_update(of("IPAddressPool"), obj)),
        "L2Advertisement": lambda: ClusterResources(pools=of("IPAddressPool"), l2_advs=_with_update(of("L2Advertisement"), obj)),
        "BGPAdvertisement": lambda: ClusterResources(
            pools=of("IPAddressPool"), bgp_advs=_with_update(of("BGPAdvertisement"), obj), nodes=node_list
        ),
        "BGPPeer": lambda: ClusterResources(peers=_with_update(of("BGPPeer"), obj), nodes=node_list),
        "Community": lambda: ClusterResources(communities=_with_update(of("Community"), obj)),
    }[kind]()
    try:
        validate(resources, bgp_type)
    except RefusedError as error:
        return f'admission webhook "{webhook}" denied the request: {error}'
    return None


def controller_bgp_type(objects: Sequence[Mapping[str, Any]]) -> str | None:
    """METALLB_BGP_TYPE of the MetalLB controller among `objects` (the chart rendered): the last entry of
    that name wins, as in a container's env; `native` when the controller sets none; None without one."""
    for obj in objects:
        if text(obj.get("kind")) != "Deployment" or get(obj, "metadata", "labels", "app.kubernetes.io/component") != "controller":
            continue
        if get(obj, "metadata", "labels", "app.kubernetes.io/name") != "metallb":
            continue
        found = "native"
        for container in items(get(obj, "spec", "template", "spec", "containers")):
            for entry in items(get(container, "env")):
                if get(entry, "name") == "METALLB_BGP_TYPE" and isinstance(get(entry, "value"), str):
                    found = str(get(entry, "value"))
        return found
    return None


# charts/metallb/values.yaml at metallb-chart-0.16.1: the values bgp_type_from_values reads.
CHART_DEFAULTS: Mapping[str, Any] = {
    "speaker": {"enabled": True, "frr": {"enabled": False}},
    "frrk8s": {"enabled": True, "external": False},
}


def bgp_type_from_values(values: Mapping[str, Any]) -> str:
    """The controller's METALLB_BGP_TYPE for these chart values (over the chart's defaults), as
    charts/metallb/templates/controller.yaml writes it: `frr` when speaker.enabled and speaker.frr.enabled,
    then `frr-k8s` when frrk8s.enabled or frrk8s.external (a later env entry of the same name wins);
    unset (`native`) otherwise."""

    def value(*path: str) -> Any:
        given: Any = values
        for step in path:
            given = given.get(step) if isinstance(given, Mapping) else None
        if given is not None:
            return given
        default: Any = CHART_DEFAULTS
        for step in path:
            default = default.get(step) if isinstance(default, Mapping) else None
        return default

    found = "native"
    if value("speaker", "enabled") and value("speaker", "frr", "enabled"):
        found = "frr"
    if value("frrk8s", "enabled") or value("frrk8s", "external"):
        found = "frr-k8s"
    return found
