"""Multus CNI v4.3.0, thick plugin, as typed objects.

Multus has no maintained Helm chart; these objects follow upstream's
`deployments/multus-daemonset-thick.yml` at v4.3.0 (CRD, RBAC, daemon config, DaemonSet), with
resource requests/limits raised to what the thick daemon needs in practice (upstream's 50Mi limit
OOM-kills it on busy nodes). It runs privileged with host networking and host paths: it installs
the CNI shim into /opt/cni/bin and enters pod network namespaces. The policy packs allow exactly
this workload (kube-system/kube-multus-ds) to do so.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...context import DeployContext
from ...versions import Images

NAMESPACE = "kube-system"
APP = "multus"

DAEMON_CONFIG = {
    "chrootDir": "/hostroot",
    "cniVersion": "0.3.1",
    "logLevel": "verbose",
    "logToStderr": True,
    "cniConfigDir": "/host/etc/cni/net.d",
    "multusAutoconfigDir": "/host/etc/cni/net.d",
    "multusConfigFile": "auto",
    "socketDir": "/host/run/multus/",
}


def _nad_crd_spec() -> dict[str, Any]:
    return {
        "group": "k8s.cni.cncf.io",
        "scope": "Namespaced",
        "names": {
            "plural": "network-attachment-definitions",
            "singular": "network-attachment-definition",
            "kind": "NetworkAttachmentDefinition",
            "shortNames": ["net-attach-def"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "description": "NetworkAttachmentDefinition is a CRD schema specified by the Network Plumbing "
                        "Working Group to express the intent for attaching pods to one or more logical or physical networks.",
                        "type": "object",
                        "properties": {
                            "apiVersion": {"type": "string"},
                            "kind": {"type": "string"},
                            "metadata": {"type": "object"},
                            "spec": {
                                "description": "NetworkAttachmentDefinition spec defines the desired state of a network attachment",
                                "type": "object",
                                "properties": {
                                    "config": {
                                        "description": "NetworkAttachmentDefinition config is a JSON-formatted CNI configuration",
                                        "type": "string",
                                    }
                                },
                            },
                        },
                    }
                },
            }
        ],
    }


def _host_path(name: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path, **extra}}


def cluster_role_rules() -> list[dict[str, Any]]:
    """The rules of the ClusterRole `multus`: its own CRDs, pods' status, events."""
    return [
        {"apiGroups": ["k8s.cni.cncf.io"], "resources": ["*"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["pods", "pods/status"], "verbs": ["get", "list", "update", "watch"]},
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
    ]


def _daemon_container() -> dict[str, Any]:
    """The thick daemon: it serves the shim's requests and enters pods' network namespaces."""
    return {
        "name": "kube-multus",
        "image": Images.MULTUS.ref,
        "command": ["/usr/src/multus-cni/bin/multus-daemon"],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
        "securityContext": {"privileged": True},
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "env": [{"name": "MULTUS_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "volumeMounts": [
            {"name": "cni", "mountPath": "/host/etc/cni/net.d"},
            {"name": "host-run", "mountPath": "/host/run"},
            {"name": "host-var-lib-cni-multus", "mountPath": "/var/lib/cni/multus"},
            {
                "name": "host-var-lib-kubelet",
                "mountPath": "/var/lib/kubelet",
                "mountPropagation": "HostToContainer",
            },
            {"name": "host-run-k8s-cni-cncf-io", "mountPath": "/run/k8s.cni.cncf.io"},
            {"name": "host-run-netns", "mountPath": "/run/netns", "mountPropagation": "HostToContainer"},
            {"name": "multus-daemon-config", "mountPath": "/etc/cni/net.d/multus.d", "readOnly": True},
            {"name": "hostroot", "mountPath": "/hostroot", "mountPropagation": "HostToContainer"},
        ],
    }


def daemonset_spec(labels: dict[str, str]) -> dict[str, Any]:
    """`spec` of the DaemonSet `kube-multus-ds` (upstream's thick daemonset): on every node, privileged with host
    networking; an init container installs the shim into /opt/cni/bin. `labels`: its pods' labels."""
    selector = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": "cni"}
    return {
        "selector": {"matchLabels": selector},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "hostNetwork": True,
                "hostPID": True,
                "priorityClassName": "system-node-critical",
                "tolerations": [
                    {"operator": "Exists", "effect": "NoSchedule"},
                    {"operator": "Exists", "effect": "NoExecute"},
                ],
                "serviceAccountName": "multus",
                "terminationGracePeriodSeconds": 10,
                "initContainers": [
                    {
                        "name": "install-multus-binary",
                        "image": Images.MULTUS.ref,
                        "command": [
                            "sh",
                            "-c",
                            "cp /usr/src/multus-cni/bin/multus-shim /host/opt/cni/bin/multus-shim && "
                            "cp /usr/src/multus-cni/bin/passthru /host/opt/cni/bin/passthru",
                        ],
                        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
                        "securityContext": {"privileged": True},
                        "terminationMessagePolicy": "FallbackToLogsOnError",
                        "volumeMounts": [
                            {"name": "cnibin", "mountPath": "/host/opt/cni/bin", "mountPropagation": "Bidirectional"}
                        ],
                    }
                ],
                "containers": [_daemon_container()],
                "volumes": [
                    _host_path("cni", "/etc/cni/net.d"),
                    _host_path("cnibin", "/opt/cni/bin"),
                    _host_path("hostroot", "/"),
                    {
                        "name": "multus-daemon-config",
                        "configMap": {
                            "name": "multus-daemon-config",
                            "items": [{"key": "daemon-config.json", "path": "daemon-config.json"}],
                        },
                    },
                    _host_path("host-run", "/run"),
                    _host_path("host-var-lib-cni-multus", "/var/lib/cni/multus"),
                    _host_path("host-var-lib-kubelet", "/var/lib/kubelet"),
                    _host_path("host-run-k8s-cni-cncf-io", "/run/k8s.cni.cncf.io"),
                    _host_path("host-run-netns", "/run/netns/"),
                ],
            },
        },
    }


def multus_objects(ctx: DeployContext, parent: pulumi.Resource, *, crd: bool = True) -> list[pulumi.Resource]:
    """Multus' objects; `crd`: with its NetworkAttachmentDefinition CRD (False when a chart of the stack ships it:
    one owner per object)."""

    def meta(name: str, namespace: str | None = NAMESPACE) -> dict[str, Any]:
        return ctx.meta(name, "cni", namespace, app=APP, extra_labels={"app.kubernetes.io/version": "4.3.0"})

    definition = (
        k8s.apiextensions.v1.CustomResourceDefinition(
            "network-attachment-definitions.k8s.cni.cncf.io",
            metadata=meta("network-attachment-definitions.k8s.cni.cncf.io", None),
            spec=_nad_crd_spec(),
            opts=ctx.opts(parent),
        )
        if crd
        else None
    )
    crds: list[pulumi.Resource] = [definition] if definition is not None else []
    role = k8s.rbac.v1.ClusterRole(
        "multus",
        metadata=meta("multus", None),
        rules=cluster_role_rules(),
        opts=ctx.opts(parent),
    )
    account = k8s.core.v1.ServiceAccount(f"{NAMESPACE}/multus", metadata=meta("multus"), opts=ctx.opts(parent))
    binding = k8s.rbac.v1.ClusterRoleBinding(
        "multus",
        metadata=meta("multus", None),
        role_ref={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "multus"},
        subjects=[{"kind": "ServiceAccount", "name": "multus", "namespace": NAMESPACE}],
        opts=ctx.opts(parent, depends_on=[role, account]),
    )
    daemon_config = k8s.core.v1.ConfigMap(
        f"{NAMESPACE}/multus-daemon-config",
        metadata=meta("multus-daemon-config"),
        data={"daemon-config.json": json.dumps(DAEMON_CONFIG, indent=4)},
        opts=ctx.opts(parent),
    )
    daemonset = k8s.apps.v1.DaemonSet(
        f"{NAMESPACE}/kube-multus-ds",
        metadata=meta("kube-multus-ds"),
        spec=daemonset_spec(ctx.labels(APP, "cni")),
        opts=ctx.opts(parent, depends_on=[*crds, binding, daemon_config]),
    )
    return [*crds, role, account, binding, daemon_config, daemonset]
