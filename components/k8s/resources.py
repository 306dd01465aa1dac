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


@dataclass(frozen=True)
class Allow:
    """One NetworkPolicy rule on top of the namespace's default deny.

    Peers: `namespaces` (by name), `cidrs`, or neither (then the rule has no peer restriction).
    `pod_labels` narrows the pods in this namespace that the rule applies to (default: all).
    """

    name: str
    direction: Literal["ingress", "egress"]
    ports: tuple[Port, ...] = ()
    namespaces: tuple[str, ...] = ()
    cidrs: tuple[str, ...] = ()
    pod_labels: Mapping[str, str] = field(default_factory=dict)

    def to_spec(self) -> dict[str, Any]:
        peers: list[dict[str, Any]] = [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}} for ns in self.namespaces
        ]
        peers += [{"ipBlock": {"cidr": cidr}} for cidr in self.cidrs]
        rule: dict[str, Any] = {}
        if peers:
            rule["to" if self.direction == "egress" else "from"] = peers
        if self.ports:
            rule["ports"] = [port.to_k8s() for port in self.ports]
        return {
            "podSelector": {"matchLabels": dict(self.pod_labels)} if self.pod_labels else {},
            "policyTypes": ["Egress" if self.direction == "egress" else "Ingress"],
            self.direction: [rule],
        }


# Common allows -----------------------------------------------------------------------------------

HTTPS = Port(443)


def egress_to_apiserver() -> Allow:
    # The API server is outside the pod network (host network or an external endpoint), so it can
    # only be matched by address; its address differs per cluster, hence any address on its ports.
    return Allow("allow-egress-apiserver", "egress", (HTTPS, Port(6443)), cidrs=(ANYWHERE,))


def egress_to_internet(*ports: int) -> Allow:
    return Allow("allow-egress-internet", "egress", tuple(Port(p) for p in ports), cidrs=(ANYWHERE,))


def ingress_from_anywhere(name: str, *ports: Port) -> Allow:
    """For webhooks (called by the API server from the host network) and LoadBalancer services."""
    return Allow(name, "ingress", tuple(ports), cidrs=(ANYWHERE,))


def ingress_from_namespaces(name: str, namespaces: Sequence[str], *ports: Port) -> Allow:
    return Allow(name, "ingress", tuple(ports), namespaces=tuple(namespaces))


def egress_to_namespaces(name: str, namespaces: Sequence[str], *ports: Port) -> Allow:
    return Allow(name, "egress", tuple(ports), namespaces=tuple(namespaces))


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
    ) -> None:
        """`created_by`: the namespace comes from an upstream manifest; patch our labels onto it."""
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
        for allow in (*_BASELINE_ALLOWS, *_same_namespace_allows(name), *allows):
            self._add(ctx, parent, allow.name, allow.to_spec())

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
