"""Shared-storage renderers (pure): local-path-provisioner's namespace allows, the charts' values, StorageClasses,
the PersistentVolumes and claims that put each NFS export's whole tree into the Slurm pods, the pods' volumes and
mounts, and the mount commands of the bare-metal hosts' join scripts. One list (`hpcforge:storage.nfsExports`) feeds
all of them, so pods and hosts see the same trees at the same paths.
"""

from __future__ import annotations

from typing import Any

from ...k8s.resources import Allow, container_resources, egress_to_apiserver
from ...versions import Images
from .config import LocalPathConfig, NfsExport
from .face import claim_name, nfs_mount_options, storage_class_name

NFS_DRIVER = "nfs.csi.k8s.io"
"""csi-driver-nfs 4.13.4 `driver.name` (its values.yaml default)."""
LOCAL_PATH_CLASS = "local-path"


def local_path_namespace_allows() -> list[Allow]:
    """local-path-provisioner's namespace: the API server (its helper pods work on the node's host path)."""
    return [egress_to_apiserver()]


def nfs_values(*, kubelet_dir: str | None) -> dict[str, Any]:
    """csi-driver-nfs values: no chart-made StorageClass (hpcforge makes one per export)."""
    values: dict[str, Any] = {
        "storageClass": {"create": False},
        "controller": {"replicas": 2},
        "customLabels": {"app.kubernetes.io/part-of": "hpcforge"},
    }
    if kubelet_dir is not None:
        values["kubeletDir"] = kubelet_dir
    return values


def local_path_values(config: LocalPathConfig) -> dict[str, Any]:
    """local-path-provisioner values: its StorageClass (the lab's default, if so configured) on one node path."""
    return {
        "helperImage": {"repository": Images.BUSYBOX.repository, "tag": Images.BUSYBOX.tag},
        "storageClass": {"create": True, "name": LOCAL_PATH_CLASS, "defaultClass": config.default_class},
        "nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": [config.path]}],
        "resources": container_resources("10m", "32Mi", "128Mi"),
        "commonLabels": {"app.kubernetes.io/part-of": "hpcforge"},
    }


def storage_class_body(export: NfsExport) -> dict[str, Any]:
    """StorageClass fields (besides metadata): dynamic volumes are sub-directories of the export.

    `Retain`: deleting a claim never deletes users' data on the server.
    """
    return {
        "provisioner": NFS_DRIVER,
        "parameters": {"server": export.server, "share": export.export},
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": False,
        "mountOptions": nfs_mount_options(export),
    }


def tree_volume_spec(export: NfsExport, namespace: str) -> dict[str, Any]:
    """A PersistentVolume of the export's root (not a sub-directory), bound to one claim in `namespace`."""
    return {
        "capacity": {"storage": export.size},
        "accessModes": ["ReadOnlyMany" if export.read_only else "ReadWriteMany"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": storage_class_name(export),
        "mountOptions": nfs_mount_options(export),
        "claimRef": {"namespace": namespace, "name": claim_name(export)},
        "csi": {
            "driver": NFS_DRIVER,
            # The handle names the export; csi-driver-nfs reads server and share from the attributes.
            "volumeHandle": f"{export.server}#{export.export.lstrip('/')}#tree",
            "volumeAttributes": {"server": export.server, "share": export.export},
            "readOnly": export.read_only,
        },
    }


INLINE_NFS_POLICY = "hpcforge-no-inline-nfs"
"""The ValidatingAdmissionPolicy (and its binding) that refuses NFS mounted inline in a pod."""

_INLINE_NFS_VOLUMES = (
    "object.kind == 'Pod' ? object.spec.?volumes.orValue([]) : "
    "object.kind == 'CronJob' ? object.spec.jobTemplate.?spec.?template.?spec.?volumes.orValue([]) : "
    "object.spec.?template.?spec.?volumes.orValue([])"
)
_NO_INLINE_NFS = f"variables.volumes.all(v, !has(v.nfs) && !(has(v.csi) && v.csi.driver == '{NFS_DRIVER}'))"
_WORKLOADS = (
    ("apps", ("deployments", "statefulsets", "daemonsets", "replicasets")),
    ("batch", ("jobs", "cronjobs")),
    ("", ("replicationcontrollers",)),
)


def inline_nfs_policy_spec() -> dict[str, Any]:
    """A ValidatingAdmissionPolicy that refuses a pod, or a workload's pod template, with an inline NFS volume (`nfs:`,
    or `csi:` of csi-driver-nfs), in every namespace.

    Pod Security `restricted` forbids inline `nfs`, but `baseline` and `privileged` do not: without this, whoever may
    create a pod in such a namespace mounts any export (the software tree, home) read-write with no claim. hpcforge's
    pods mount the exports only through claims bound to the storage layer's PersistentVolumes. csi-driver-nfs refuses
    inline `csi` volumes itself while `feature.enableInlineVolume` is false, its default (values.yaml@v4.13.4:48; the
    CSIDriver then lists only `Persistent`, charts/v4.13.4/csi-driver-nfs/templates/csi-nfs-driverinfo.yaml@v4.13.4:8-12);
    the policy refuses them anyway. Pods are judged on create (their volumes are immutable), workloads on create and update."""
    workload_rules = [
        {"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": list(resources)}
        for group, resources in _WORKLOADS
    ]
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]},
                *workload_rules,
            ]
        },
        "variables": [{"name": "volumes", "expression": _INLINE_NFS_VOLUMES}],
        "validations": [
            {
                "expression": _NO_INLINE_NFS,
                "reason": "Forbidden",
                "message": "an inline NFS volume (nfs, or csi of nfs.csi.k8s.io) is refused in every namespace: mount "
                "NFS through a PersistentVolumeClaim bound to a PersistentVolume of hpcforge's storage layer",
            }
        ],
    }


def inline_nfs_binding_spec() -> dict[str, Any]:
    """The policy's binding: every namespace, refused requests are denied."""
    return {"policyName": INLINE_NFS_POLICY, "validationActions": ["Deny"]}
