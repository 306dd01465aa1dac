"""Helpers for the Kubernetes objects that every layer needs: namespaces with Pod Security labels,
default-deny NetworkPolicies with explicit allows, ConfigMaps and Secrets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s

from ..context import DeployContext, Stateful

PodSecurityLevel = Literal["privileged", "baseline", "restricted"]
ANYWHERE = "0.0.0.0/0"
USER_CODE_LABEL = "hpcforge.io/user-code"
"""On a namespace where users' code runs: `beside-services` (it shares the namespace with daemons that hold keys or
credentials: each NetworkPolicy names its pods, the security pack's `user-code-policies-select-pods` checks it) or
`only` (every pod there is the users' own)."""


@dataclass(frozen=True)
class Port:
    port: int
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"
    end_port: int | None = None
    """Last port of a range starting at `port` (NetworkPolicy `endPort`)."""

    def to_k8s(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"port": self.port, "protocol": self.protocol}
        if self.end_port is not None:
            spec["endPort"] = self.end_port
        return spec


APP_LABEL = "app.kubernetes.io/name"


@dataclass(frozen=True)
class PodPeer:
    """Pods of one namespace, by labels (none: every pod of it); `apps`: any of these `app.kubernetes.io/name`s."""

    namespace: str
    labels: Mapping[str, str] = field(default_factory=dict)
    apps: tuple[str, ...] = ()

    def to_k8s(self) -> dict[str, Any]:
        peer: dict[str, Any] = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": self.namespace}}}
        selector = pod_selector(self.labels, self.apps)
        if selector:
            peer["podSelector"] = selector
        return peer


def pod_selector(labels: Mapping[str, str], apps: Sequence[str] = ()) -> dict[str, Any]:
    """A label selector: `labels` exactly, and (with `apps`) an `app.kubernetes.io/name` among them."""
    selector: dict[str, Any] = {}
    if labels:
        selector["matchLabels"] = dict(labels)
    if apps:
        selector["matchExpressions"] = [{"key": APP_LABEL, "operator": "In", "values": list(apps)}]
    return selector


@dataclass(frozen=True)
class Allow:
    """One NetworkPolicy rule on top of the namespace's default deny.

    Peers: `namespaces` (by name), `cidrs`, the control plane (`api_server`), or none of them (then the rule has no
    peer restriction). `peer_pods` narrows the peers to pods with these labels: in `namespaces` when given, else in
    the policy's own namespace. `except_cidrs` are cut out of every CIDR peer.
    `pod_labels` narrows the pods in this namespace that the rule applies to (default: all).
    """

    name: str
    direction: Literal["ingress", "egress"]
    ports: tuple[Port, ...] = ()
    namespaces: tuple[str, ...] = ()
    cidrs: tuple[str, ...] = ()
    pod_labels: Mapping[str, str] = field(default_factory=dict)
    peer_pods: Mapping[str, str] = field(default_factory=dict)
    api_server: bool = False
    """The peers are the API server's addresses (`hpcforge:kubernetes.apiServerAddresses`, see `to_spec`)."""
    except_cidrs: tuple[str, ...] = ()
    except_api_server: bool = False
    """Cut the API server's addresses out of every CIDR peer too (when they are known)."""
    pod_peers: tuple[PodPeer, ...] = ()
    """Further peers: pods of a namespace, by labels."""
    pod_apps: tuple[str, ...] = ()
    """With `pod_labels`: the rule applies to pods whose `app.kubernetes.io/name` is one of these."""
    all_namespaces: bool = False
    """A further peer: every pod of every namespace (`namespaceSelector: {}`)."""

    def to_spec(self, api_server: Sequence[str] = ()) -> dict[str, Any]:
        """The NetworkPolicy spec. `api_server`: the control plane's addresses, empty when not known (then a rule
        with `api_server` peers names every address, ANYWHERE)."""
        pods = {"podSelector": {"matchLabels": dict(self.peer_pods)}} if self.peer_pods else {}
        peers: list[dict[str, Any]] = [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}, **pods} for ns in self.namespaces
        ]
        if self.peer_pods and not self.namespaces and not self.cidrs and not self.api_server:
            peers.append(pods)
        peers += [peer.to_k8s() for peer in self.pod_peers]
        if self.all_namespaces:
            peers.append({"namespaceSelector": {}})
        cidrs = list(self.cidrs) + (list(api_server or (ANYWHERE,)) if self.api_server else [])
        cut = [*self.except_cidrs, *(api_server if self.except_api_server else ())]
        peers += [{"ipBlock": {"cidr": cidr, **({"except": cut} if cut else {})}} for cidr in cidrs]
        rule: dict[str, Any] = {}
        if peers:
            rule["to" if self.direction == "egress" else "from"] = peers
        if self.ports:
            rule["ports"] = [port.to_k8s() for port in self.ports]
        return {
            "podSelector": pod_selector(self.pod_labels, self.pod_apps),
            "policyTypes": ["Egress" if self.direction == "egress" else "Ingress"],
            self.direction: [rule],
        }


# Common allows -----------------------------------------------------------------------------------

HTTPS = Port(443)


def egress_to_apiserver(pod_labels: Mapping[str, str] | None = None) -> Allow:
    """The API server, for the pods that hold a service account token (`pod_labels`; default: every pod of the
    namespace, where every pod is an operator's). It is outside the pod network (host network or an external
    endpoint), so it can only be matched by address: the control plane's (`hpcforge:kubernetes.apiServerAddresses`),
    or any address when they are not configured. 443 is the `kubernetes` Service's port (rewritten to the
    endpoints' port before policies apply on most CNIs), 6443 the API server's."""
    return Allow("allow-egress-apiserver", "egress", (HTTPS, Port(6443)), api_server=True, pod_labels=dict(pod_labels or {}))


def ingress_from_apiserver(name: str, *ports: Port, pod_labels: Mapping[str, str] | None = None) -> Allow:
    """For webhooks and aggregated APIs: the API server calls them from the control-plane hosts' addresses."""
    return Allow(name, "ingress", tuple(ports), api_server=True, pod_labels=dict(pod_labels or {}))


def egress_to_internet(*ports: int) -> Allow:
    return Allow("allow-egress-internet", "egress", tuple(Port(p) for p in ports), cidrs=(ANYWHERE,))


def ingress_from_anywhere(name: str, *ports: Port) -> Allow:
    """For LoadBalancer services that are public (say so in config) and for traffic whose source is not known."""
    return Allow(name, "ingress", tuple(ports), cidrs=(ANYWHERE,))


def ingress_from_namespaces(
    name: str, namespaces: Sequence[str], *ports: Port, peer_pods: Mapping[str, str] | None = None
) -> Allow:
    return Allow(name, "ingress", tuple(ports), namespaces=tuple(namespaces), peer_pods=dict(peer_pods or {}))


def egress_to_namespaces(name: str, namespaces: Sequence[str], *ports: Port, peer_pods: Mapping[str, str] | None = None) -> Allow:
    return Allow(name, "egress", tuple(ports), namespaces=tuple(namespaces), peer_pods=dict(peer_pods or {}))


_BASELINE_ALLOWS = (
    Allow(
        "allow-egress-dns",
        "egress",
        (Port(53, "UDP"), Port(53, "TCP")),
        namespaces=("kube-system",),
    ),
)


def _same_namespace_allows(namespace: str) -> tuple[Allow, ...]:
    return (
        Allow("allow-ingress-same-namespace", "ingress", namespaces=(namespace,)),
        Allow("allow-egress-same-namespace", "egress", namespaces=(namespace,)),
    )


class Namespace:
    """A namespace with Pod Security labels, a default-deny NetworkPolicy and explicit allows."""

    def __init__(
        self,
        ctx: DeployContext,
        name: str,
        *,
        component: str,
        parent: pulumi.Resource,
        pod_security: PodSecurityLevel = "restricted",
        allows: Sequence[Allow] = (),
        depends_on: Sequence[pulumi.Resource] = (),
        created_by: pulumi.Resource | None = None,
        extra_labels: Mapping[str, str] | None = None,
        same_namespace: bool = True,
    ) -> None:
        """`created_by`: the namespace comes from an upstream manifest; patch our labels onto it. `same_namespace`:
        every pod may reach every other pod of the namespace (False: only what `allows` opens, for a namespace where
        users' code runs beside services)."""
        self.name = name
        version = f"v{ctx.kubernetes_version}"
        pss = {
            "pod-security.kubernetes.io/enforce": pod_security,
            "pod-security.kubernetes.io/enforce-version": version,
            # Audit and warn at `restricted` so that anything weaker than restricted shows up.
            "pod-security.kubernetes.io/audit": "restricted",
            "pod-security.kubernetes.io/audit-version": version,
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/warn-version": version,
        }
        meta = ctx.meta(name, component, extra_labels={**pss, **dict(extra_labels or {})}, app=name)
        self.resource: pulumi.Resource
        if created_by is None:
            self.resource = k8s.core.v1.Namespace(name, metadata=meta, opts=ctx.opts(parent, depends_on=list(depends_on)))
        else:
            self.resource = k8s.core.v1.NamespacePatch(
                name, metadata=meta, opts=ctx.opts(parent, depends_on=[*depends_on, created_by])
            )
        self.policies: list[k8s.networking.v1.NetworkPolicy] = []
        self._add(ctx, parent, "default-deny", {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]})
        for allow in (*_BASELINE_ALLOWS, *(_same_namespace_allows(name) if same_namespace else ()), *allows):
            self._add(ctx, parent, allow.name, allow.to_spec(ctx.api_server))

    def _add(self, ctx: DeployContext, parent: pulumi.Resource, policy: str, spec: dict[str, Any]) -> None:
        self.policies.append(network_policy(ctx, parent, self.name, policy, spec, app=self.name, depends_on=[self.resource]))

    @property
    def ready(self) -> list[pulumi.Resource]:
        """Depend on these to run after the namespace and its policies exist."""
        return [self.resource, *self.policies]


TRAEFIK_API = "traefik.io/v1alpha1"
"""The API version of Traefik's IngressRouteTCP, which layers make to pass TLS through the network layer's Traefik."""
NETWORK_POLICY_COMPONENT = "network-policy"
"""The component label of every NetworkPolicy hpcforge makes (the namespace's own and those it adds elsewhere)."""


def network_policy(
    ctx: DeployContext,
    parent: pulumi.Resource,
    namespace: str,
    name: str,
    spec: Mapping[str, Any],
    *,
    app: str | None,
    depends_on: Sequence[pulumi.Resource] = (),
) -> k8s.networking.v1.NetworkPolicy:
    """A NetworkPolicy `name` in `namespace` (registered as `<namespace>/<name>`); layers make one through
    `Scope.network_policy`, a namespace its default deny and allows through `Namespace`."""
    return k8s.networking.v1.NetworkPolicy(
        f"{namespace}/{name}",
        metadata=ctx.meta(name, NETWORK_POLICY_COMPONENT, namespace, app=app),
        spec=dict(spec),
        opts=ctx.opts(parent, depends_on=list(depends_on)),
    )


def config_map(
    ctx: DeployContext,
    name: str,
    namespace: str,
    data: Mapping[str, pulumi.Input[str]],
    *,
    component: str,
    parent: pulumi.Resource,
    app: str | None = None,
    depends_on: Sequence[pulumi.Resource] = (),
    labels: Mapping[str, str] | None = None,
    binary_data: Mapping[str, pulumi.Input[str]] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> k8s.core.v1.ConfigMap:
    return k8s.core.v1.ConfigMap(
        f"{namespace}/{name}",
        metadata=ctx.meta(
            name, component, namespace, app=app, extra_labels=dict(labels or {}), annotations=dict(annotations or {}) or None
        ),
        data=dict(data) if data else None,
        binary_data=dict(binary_data) if binary_data else None,
        opts=ctx.opts(parent, depends_on=list(depends_on)),
    )


def secret(
    ctx: DeployContext,
    name: str,
    namespace: str,
    string_data: Mapping[str, pulumi.Input[str]] | None = None,
    *,
    component: str,
    parent: pulumi.Resource,
    data: Mapping[str, pulumi.Input[str]] | None = None,
    app: str | None = None,
    secret_type: str = "Opaque",
    depends_on: Sequence[pulumi.Resource] = (),
    stateful: Stateful | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> k8s.core.v1.Secret:
    """A Secret whose values are always Pulumi secrets (encrypted in state, redacted in output)."""
    return k8s.core.v1.Secret(
        f"{namespace}/{name}",
        metadata=ctx.meta(
            name,
            component,
            namespace,
            app=app,
            stateful=stateful,
            extra_labels=dict(labels or {}),
            annotations=dict(annotations or {}),
        ),
        type=secret_type,
        string_data={k: pulumi.Output.secret(v) for k, v in (string_data or {}).items()} or None,
        data={k: pulumi.Output.secret(v) for k, v in (data or {}).items()} or None,
        opts=ctx.opts(parent, depends_on=list(depends_on), stateful=stateful),
    )


def container_resources(cpu: str, memory: str, memory_limit: str | None = None) -> dict[str, Any]:
    """Requests for scheduling, a memory limit against leaks; no CPU limit (throttling hurts latency)."""
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory_limit or memory}}
