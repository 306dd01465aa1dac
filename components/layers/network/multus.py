"""Multus CNI v4.3.0, thick plugin: its objects' bodies (pure; the network layer registers them).

Multus has no maintained Helm chart; these objects follow upstream's
`deployments/multus-daemonset-thick.yml` at v4.3.0 (CRD, RBAC, daemon config, DaemonSet), with its
ClusterRole narrowed to what the daemon calls (`cluster_role_rules`) and resource requests/limits raised to what the thick daemon needs in practice (upstream's 50Mi limit
OOM-kills it on busy nodes). It runs privileged with host networking and host paths: it installs
the CNI shim into /opt/cni/bin and enters pod network namespaces. The policy packs allow exactly
this workload (kube-system/kube-multus-ds) to do so.
"""

from __future__ import annotations

import json
from typing import Any

from ...versions import Images

MULTUS_NAMESPACE = "kube-system"
MULTUS_APP = "multus"
MULTUS_VERSION = Images.MULTUS.tag.removeprefix("v").removesuffix("-thick")
"""The upstream release these objects follow (the `app.kubernetes.io/version` label), from the image's pin."""
NAD_CRD = "network-attachment-definitions.k8s.cni.cncf.io"

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


def nad_crd_spec() -> dict[str, Any]:
    """The NetworkAttachmentDefinition CRD's spec (upstream's, v1 only)."""
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


def daemon_config_data() -> dict[str, str]:
    """The `multus-daemon-config` ConfigMap's data: the thick daemon's configuration."""
    return {"daemon-config.json": json.dumps(DAEMON_CONFIG, indent=4)}


def _host_path(name: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path, **extra}}


def cluster_role_rules() -> list[dict[str, Any]]:
    """The rules of the ClusterRole `multus`: read NetworkAttachmentDefinitions, pods and their status, events.

    Upstream's manifest grants `k8s.cni.cncf.io` `*` verbs `*` (deployments/multus-daemonset-thick.yml@v4.3.0:61-65).
    The daemon only reads NetworkAttachmentDefinitions: an informer that lists and watches them in every namespace
    (pkg/server/server.go@v4.3.0:169-181, started at :368) and `GetNetAttachDef`, from that informer's cache or a live
    `Get` (pkg/k8sclient/k8sclient.go@v4.3.0:112-118). Its one write of them, `AddNetAttachDef` (:106-109), is called
    only from k8sclient_test.go; no other `k8s.cni.cncf.io` resource is used outside vendor/."""
    return [
        {"apiGroups": ["k8s.cni.cncf.io"], "resources": ["network-attachment-definitions"], "verbs": ["get", "list", "watch"]},
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
    selector = {"app.kubernetes.io/name": MULTUS_APP, "app.kubernetes.io/component": "cni"}
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
