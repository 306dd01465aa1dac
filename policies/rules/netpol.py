"""A small NetworkPolicy evaluator: can traffic from a pod, the API server, a node or the outside
reach pod Y on port P?

Pure functions over plain Kubernetes object dicts. The semantics follow the NetworkPolicy API
(k8s.io/api/networking/v1/types.go, and the spec text at
https://kubernetes.io/docs/concepts/services-networking/network-policies/):

- A pod is isolated for ingress (egress) when some NetworkPolicy in its namespace selects it
  (`spec.podSelector`) and has `Ingress` (`Egress`) in `policyTypes`. When `policyTypes` is absent it
  is `[Ingress]`, plus `Egress` when the policy has an `egress` section. A pod that is not isolated
  accepts (opens) everything in that direction. Policies are additive: a connection is allowed when
  any rule of any selecting policy allows it; it needs both the source's egress and the
  destination's ingress.
- A rule with no `from`/`to` (or an empty list) matches every peer; with no `ports` every port.
- A peer: `podSelector` alone selects pods in the policy's namespace; `namespaceSelector` alone every
  pod in the selected namespaces; both together, the selected pods in the selected namespaces;
  `ipBlock` a CIDR minus its `except` CIDRs. Label selectors: `matchLabels` and `matchExpressions`
  (In, NotIn, Exists, DoesNotExist); an empty selector matches everything.
- A port: `protocol` (default TCP), `port` a number or a named container port of the destination
  pod (matched with the same protocol), `endPort` for a range; no `port` means every port.
- Namespaces carry `kubernetes.io/metadata.name: <name>` (set by the API server).

Sources that are not pods (the API server on the host network, a node, a client outside the
cluster) are matched only by `ipBlock` peers or by rules without peers. How host-network traffic is
treated is left to the network plugin by the spec; this evaluator takes the portable reading. A
host whose address is not known (`ip=None`) is matched only by an ipBlock that covers every address
(prefix length 0, no `except`): reachable then means reachable whatever the address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .access import as_int, get, items, mapping, text
from .podtemplates import PodTemplate, group_of, kind_of, name_of, namespace_of, pod_templates

NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Pod:
    """A pod as a source or destination: namespace, labels, optional IP and named ports."""

    namespace: str
    labels: Mapping[str, str] = field(default_factory=dict)
    ip: str | None = None
    ports: tuple[tuple[str | None, int, str], ...] = ()
    """(name, containerPort, protocol), for named ports in policies."""
    name: str = ""

    def __str__(self) -> str:
        return self.name or f"pod {self.namespace}/{dict(self.labels)}"


@dataclass(frozen=True)
class Host:
    """A source or destination outside the pod network: the API server, a node, the outside."""

    name: str
    ip: str | None = None

    def __str__(self) -> str:
        return f"{self.name} ({self.ip})" if self.ip else self.name


API_SERVER = Host("the API server")
OUTSIDE = Host("outside the cluster")

Endpoint = Pod | Host


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


# --- label selectors ------------------------------------------------------------------------------


def selector_matches(selector: Any, labels: Mapping[str, str]) -> bool:  # noqa: PLR0911 (one return per label selector operator)
    """metav1.LabelSelector semantics; `{}` matches everything."""
    body = mapping(selector)
    for key, value in mapping(body.get("matchLabels")).items():
        if labels.get(key) != value:
            return False
    for expr in items(body.get("matchExpressions")):
        key, operator = text(get(expr, "key")) or "", text(get(expr, "operator")) or ""
        values = [v for v in items(get(expr, "values")) if isinstance(v, str)]
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False  # an invalid selector selects nothing
    return True


# --- the cluster's objects ------------------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    """The objects reachability needs, indexed: namespace labels, policies, pod templates, Services."""

    namespace_labels: Mapping[str, Mapping[str, str]]
    policies: Mapping[str, tuple[Mapping[str, Any], ...]]
    templates: tuple[PodTemplate, ...]
    services: Mapping[tuple[str, str], Mapping[str, Any]]
    ip_blocks_select_pods: bool = True
    """Whether an `ipBlock` peer can select a pod (by its IP; a pod of unknown IP only by a block covering every
    address). The API leaves it to the network plugin: its reference says ipBlocks "should be cluster-external IPs,
    since Pod IPs are ephemeral and unpredictable" (k8s.io/api/networking/v1 IPBlock). True, the default, is the
    reading under which a block that covers pod IPs lets them through (Calico); False, the reading that ipBlocks
    never select pods (Cilium's default, and NCA's; tests/policies/rules/test_netpol_nca.py)."""

    @classmethod
    def of(cls, objects: Iterable[Mapping[str, Any]], *, ip_blocks_select_pods: bool = True) -> Cluster:
        labels: dict[str, dict[str, str]] = {}
        policies: dict[str, list[Mapping[str, Any]]] = {}
        templates: list[PodTemplate] = []
        services: dict[tuple[str, str], Mapping[str, Any]] = {}
        for obj in objects:
            kind, group = kind_of(obj), group_of(obj)
            if group == "" and kind in ("Namespace", "NamespacePatch"):
                found = labels.setdefault(name_of(obj), {})
                found.update({str(k): v for k, v in mapping(get(obj, "metadata", "labels")).items() if isinstance(v, str)})
            elif group == "networking.k8s.io" and kind == "NetworkPolicy":
                policies.setdefault(namespace_of(obj), []).append(obj)
            elif group == "" and kind == "Service":
                services[(namespace_of(obj), name_of(obj))] = obj
            templates += pod_templates(obj)
        return cls(
            {ns: {**found, NAME_LABEL: ns} for ns, found in labels.items()},
            {ns: tuple(found) for ns, found in policies.items()},
            tuple(templates),
            services,
            ip_blocks_select_pods,
        )

    def labels_of(self, namespace: str) -> Mapping[str, str]:
        return self.namespace_labels.get(namespace, {NAME_LABEL: namespace})


# --- peers and ports ------------------------------------------------------------------------------


def _ip_in_block(ip: str | None, block: Mapping[str, Any]) -> bool:
    cidr = text(block.get("cidr"))
    if not cidr:
        return False
    try:
        network = ipaddress.ip_network(cidr, strict=False)
        excepts = [ipaddress.ip_network(e, strict=False) for e in items(block.get("except")) if isinstance(e, str)]
    except ValueError:
        return False
    if ip is None:
        return network.prefixlen == 0 and not excepts
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    if address.version != network.version or address not in network:
        return False
    return not any(address.version == e.version and address in e for e in excepts)


def peer_matches(peer: Any, policy_namespace: str, other: Endpoint, cluster: Cluster) -> bool:
    """Does a NetworkPolicyPeer select `other` (the source for ingress, the destination for egress)?"""
    body = mapping(peer)
    if isinstance(body.get("ipBlock"), Mapping):
        if isinstance(other, Pod) and not cluster.ip_blocks_select_pods:
            return False
        return _ip_in_block(other.ip, mapping(body.get("ipBlock")))
    if not isinstance(other, Pod):
        return False  # pod and namespace selectors select pods only
    pods, namespaces = body.get("podSelector"), body.get("namespaceSelector")
    if pods is None and namespaces is None:
        return False  # an empty peer is invalid
    if namespaces is None:
        in_namespace = other.namespace == policy_namespace
    else:
        in_namespace = selector_matches(namespaces, cluster.labels_of(other.namespace))
    return in_namespace and (pods is None or selector_matches(pods, other.labels))


def port_matches(entry: Any, port: int, protocol: str, destination: Endpoint) -> bool:
    """Does a NetworkPolicyPort cover `port`/`protocol` at `destination`?"""
    body = mapping(entry)
    if (text(body.get("protocol")) or "TCP") != protocol:
        return False
    wanted = body.get("port")
    if wanted is None:
        return True
    if isinstance(wanted, str) and not wanted.isdigit():
        if not isinstance(destination, Pod):
            return False
        return any(name == wanted and number == port and proto == protocol for name, number, proto in destination.ports)
    first = as_int(wanted)
    if first is None:
        return False
    last = as_int(body.get("endPort")) or first
    return first <= port <= last


def policy_types(policy: Mapping[str, Any]) -> set[str]:
    spec = mapping(policy.get("spec"))
    declared = {t for t in items(spec.get("policyTypes")) if isinstance(t, str)}
    if declared:
        return declared
    return {"Ingress", "Egress"} if "egress" in spec else {"Ingress"}


def _selecting(cluster: Cluster, pod: Pod, direction: str) -> list[Mapping[str, Any]]:
    return [
        p
        for p in cluster.policies.get(pod.namespace, ())
        if direction in policy_types(p) and selector_matches(get(p, "spec", "podSelector"), pod.labels)
    ]


def _rule_allows(
    rule: Any, policy_namespace: str, peer_key: str, other: Endpoint, port: int, protocol: str, dst: Endpoint, cluster: Cluster
) -> bool:
    body = mapping(rule)
    peers = items(body.get(peer_key))
    ports = items(body.get("ports"))
    peer_ok = not peers or any(peer_matches(p, policy_namespace, other, cluster) for p in peers)
    port_ok = not ports or any(port_matches(p, port, protocol, dst) for p in ports)
    return peer_ok and port_ok


def _direction(
    cluster: Cluster, subject: Pod, other: Endpoint, port: int, protocol: str, dst: Endpoint, direction: str
) -> Verdict:
    selecting = _selecting(cluster, subject, direction)
    what = "ingress" if direction == "Ingress" else "egress"
    if not selecting:
        return Verdict(True, f"no NetworkPolicy isolates {subject} for {what}")
    key = "from" if direction == "Ingress" else "to"
    for policy in selecting:
        for rule in items(get(policy, "spec", what)):
            if _rule_allows(rule, subject.namespace, key, other, port, protocol, dst, cluster):
                return Verdict(True, f"NetworkPolicy {subject.namespace}/{name_of(policy)} allows {what}")
    names = ", ".join(sorted(name_of(p) for p in selecting))
    return Verdict(False, f"{what} of {subject} is isolated by [{names}] and no rule allows {other} on {port}/{protocol}")


def ingress_allowed(cluster: Cluster, src: Endpoint, dst: Pod, port: int, protocol: str = "TCP") -> Verdict:
    return _direction(cluster, dst, src, port, protocol, dst, "Ingress")


def egress_allowed(cluster: Cluster, src: Pod, dst: Endpoint, port: int, protocol: str = "TCP") -> Verdict:
    return _direction(cluster, src, dst, port, protocol, dst, "Egress")


def connection_allowed(cluster: Cluster, src: Endpoint, dst: Endpoint, port: int, protocol: str = "TCP") -> Verdict:
    """Both ends' policies: the source's egress (for a pod) and the destination's ingress (for a pod)."""
    if isinstance(src, Pod):
        out = egress_allowed(cluster, src, dst, port, protocol)
        if not out:
            return out
    if isinstance(dst, Pod):
        return ingress_allowed(cluster, src, dst, port, protocol)
    return Verdict(True, "destination is not a pod")


def can_reach(
    objects: Iterable[Mapping[str, Any]] | Cluster,
    src: Endpoint,
    dst_pod_labels: Mapping[str, str],
    namespace: str,
    port: int,
    protocol: str = "TCP",
    dst_ports: Sequence[tuple[str | None, int, str]] = (),
) -> Verdict:
    """Can `src` open a connection to a pod with `dst_pod_labels` in `namespace` on `port`/`protocol`?

    `objects`: every object of the cluster (Namespaces for their labels, NetworkPolicies), or a
    `Cluster` built once. `dst_ports`: the destination's container ports, for named ports.
    """
    cluster = objects if isinstance(objects, Cluster) else Cluster.of(objects)
    dst = Pod(namespace, dict(dst_pod_labels), ports=tuple(dst_ports))
    return connection_allowed(cluster, src, dst, port, protocol)


def pod_of(template: PodTemplate, ip: str | None = None) -> Pod:
    return Pod(template.namespace, dict(template.labels), ip, tuple(template.container_ports()), template.where)


def workload_pod(
    objects: Iterable[Mapping[str, Any]], kind: str, namespace: str, name: str, extra_labels: Mapping[str, str] | None = None
) -> Pod:
    """The pod of workload `kind namespace/name` among `objects` (labels and named ports from its
    template), for tests of other layers: `connection_allowed(Cluster.of(objects), workload_pod(...),
    workload_pod(...), port)`. `extra_labels`: labels an operator adds to the pods it makes (Slinky's,
    for instance), which the template does not show."""
    for obj in objects:
        if kind_of(obj) == kind and namespace_of(obj) == namespace and name_of(obj) == name:
            for template in pod_templates(obj):
                pod = pod_of(template)
                return Pod(pod.namespace, {**pod.labels, **dict(extra_labels or {})}, None, pod.ports, pod.name)
    raise KeyError(f"no {kind} {namespace}/{name} with a pod template among the objects")


# --- Services and the API server's callers ---------------------------------------------------------


@dataclass(frozen=True)
class Backend:
    pod: Pod
    port: int | None
    """The container port the Service's targetPort resolves to (None: a named port the pod lacks)."""
    host_network: bool = False
    """The pod uses the node's network. The NetworkPolicy documentation leaves hostNetwork pods to the
    network plugin; the common behaviour, taken here, is that policies do not isolate them."""


def service_backends(cluster: Cluster, namespace: str, name: str, port: int) -> tuple[list[Backend], str]:
    """The pods behind Service `namespace/name` for its port `port`, with the resolved target port.

    Returns ([], why) when the Service, its port or a selector is missing, or no pod template in the
    objects matches its selector.
    """
    service = cluster.services.get((namespace, name))
    if service is None:
        return [], f"Service {namespace}/{name} is not among the objects"
    spec = mapping(service.get("spec"))
    entry = next((mapping(p) for p in items(spec.get("ports")) if as_int(get(p, "port")) == port), None)
    if entry is None:
        return [], f"Service {namespace}/{name} has no port {port}"
    selector = {str(k): v for k, v in mapping(spec.get("selector")).items() if isinstance(v, str)}
    if not selector:
        return [], f"Service {namespace}/{name} has no selector (endpoints managed by hand)"
    protocol = text(entry.get("protocol")) or "TCP"
    target = entry.get("targetPort", port)
    backends: list[Backend] = []
    for template in cluster.templates:
        if template.namespace != namespace or not all(template.labels.get(k) == v for k, v in selector.items()):
            continue
        pod = pod_of(template)
        number = as_int(target)
        if number is None and isinstance(target, str):
            number = next((n for pname, n, proto in pod.ports if pname == target and proto == protocol), None)
        backends.append(Backend(pod, number, template.spec.get("hostNetwork") is True))
    if not backends:
        return [], f"no pod template in the objects matches Service {namespace}/{name}'s selector {selector}"
    return backends, ""


@dataclass(frozen=True)
class ApiServerCall:
    """An object that makes the API server call a Service: an APIService, a webhook, a CRD conversion."""

    caller: Mapping[str, Any]
    where: str
    namespace: str
    service: str
    port: int
    consequence: str = ""
    """What an unreachable backend does (a webhook's failurePolicy decides it)."""


def _service_ref(ref: Any) -> tuple[str, str, int] | None:
    body = mapping(ref)
    namespace, name = text(body.get("namespace")), text(body.get("name"))
    if not namespace or not name:
        return None
    return namespace, name, as_int(body.get("port")) or 443


def api_server_calls(objects: Iterable[Mapping[str, Any]]) -> list[ApiServerCall]:
    """Every Service the API server calls: APIService `spec.service` (aggregation, default port 443),
    Validating/MutatingWebhookConfiguration `webhooks[].clientConfig.service` (default 443) and
    CustomResourceDefinition `spec.conversion.webhook.clientConfig.service`."""
    calls: list[ApiServerCall] = []
    for obj in objects:
        kind, group = kind_of(obj), group_of(obj)
        refs: list[tuple[str, Any, str]] = []
        if group == "apiregistration.k8s.io" and kind == "APIService":
            refs.append(("spec.service", get(obj, "spec", "service"), "the aggregated API is unavailable"))
        elif group == "admissionregistration.k8s.io" and kind in (
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
        ):
            for index, hook in enumerate(items(obj.get("webhooks"))):
                label = text(get(hook, "name")) or str(index)
                # failurePolicy defaults to Fail in admissionregistration.k8s.io/v1.
                fail = (text(get(hook, "failurePolicy")) or "Fail") == "Fail"
                effect = (
                    "failurePolicy Fail: every request the webhook matches is refused"
                    if fail
                    else "failurePolicy Ignore: the webhook is silently skipped"
                )
                refs.append((f"webhooks[{label}].clientConfig.service", get(hook, "clientConfig", "service"), effect))
        elif group == "apiextensions.k8s.io" and kind == "CustomResourceDefinition":
            refs.append(
                (
                    "spec.conversion.webhook.clientConfig.service",
                    get(obj, "spec", "conversion", "webhook", "clientConfig", "service"),
                    "objects of other versions cannot be read or written",
                )
            )
        for where, ref, effect in refs:
            parsed = _service_ref(ref)
            if parsed:
                calls.append(ApiServerCall(obj, where, *parsed, consequence=effect))
    return calls
