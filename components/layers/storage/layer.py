"""Storage layer: csi-driver-nfs with a StorageClass per NFS export and a PersistentVolume of each
export's whole tree (for the Slurm pods), local-path-provisioner as a lab's default class, and in every stack a
ValidatingAdmissionPolicy that refuses NFS mounted inline in a pod (NFS is mounted through claims only).

Neither chart has Helm hooks at these versions (csi-driver-nfs v4.13.4 charts/v4.13.4/csi-driver-nfs/
templates, local-path-provisioner v0.0.37 deploy/chart/local-path-provisioner/templates: no
`helm.sh/hook`), so `helm.v4.Chart` and Argo CD install the same objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext, Stateful
from ...k8s.layer_namespace import LayerNamespace
from ...versions import Charts
from .config import StorageConfig
from .face import storage_class_name
from .objects import (
    INLINE_NFS_POLICY,
    inline_nfs_binding_spec,
    inline_nfs_policy_spec,
    local_path_namespace_allows,
    local_path_values,
    nfs_values,
    storage_class_body,
    tree_volume_spec,
)

NFS_NAMESPACE = "kube-system"
LOCAL_PATH_NAMESPACE = "local-path-storage"
K0S_KUBELET_DIR = "/var/lib/k0s/kubelet"

NFS_CHARTS = (ChartUse("csi-driver-nfs", Charts.CSI_DRIVER_NFS, NFS_NAMESPACE),)
LOCAL_PATH_CHARTS = (ChartUse("local-path-provisioner", Charts.LOCAL_PATH_PROVISIONER, LOCAL_PATH_NAMESPACE),)


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def charts_for(storage: StorageConfig) -> tuple[ChartUse, ...]:
    return (*(NFS_CHARTS if storage.nfs_exports else ()), *(LOCAL_PATH_CHARTS if storage.local_path else ()))


@dataclass(frozen=True)
class StorageArgs:
    ctx: DeployContext
    config: StorageConfig
    charts: ChartDeployer
    slurm_namespace: str
    """Namespace of the claims that the export trees are bound to."""
    kubelet_dir: str | None = None
    """The kubelet's root directory when it is not /var/lib/kubelet (k0s)."""
    depends_on: Sequence[pulumi.Resource] = ()


class Storage(pulumi.ComponentResource):
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: StorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:storage:Storage", name, None, opts)
        cfg = args.config
        self.ready = self._no_inline_nfs(args.ctx)
        if cfg.nfs_exports:
            self.ready += self._nfs(args)
        if cfg.local_path is not None:
            self.ready += self._local_path(args)
        self.register_outputs(
            {
                "nfsClasses": [storage_class_name(e) for e in cfg.nfs_exports],
                "localPath": cfg.local_path is not None,
            }
        )

    def _nfs(self, args: StorageArgs) -> list[pulumi.Resource]:
        """csi-driver-nfs, a StorageClass per export, and a PersistentVolume of the tree of each export that Slurm
        pods mount."""
        ctx = args.ctx
        driver = args.charts.deploy(
            "csi-driver-nfs",
            Charts.CSI_DRIVER_NFS,
            NFS_NAMESPACE,
            nfs_values(kubelet_dir=args.kubelet_dir),
            parent=self,
            depends_on=list(args.depends_on),
        )
        objects: list[pulumi.Resource] = [driver]
        for export in args.config.nfs_exports:
            meta = ctx.meta(storage_class_name(export), "storage")
            objects.append(
                k8s.storage.v1.StorageClass(
                    f"storageclass-{export.name}",
                    metadata=meta,
                    **{_snake(key): value for key, value in storage_class_body(export).items()},
                    opts=ctx.opts(self, depends_on=[driver]),
                )
            )
            if export.login or export.compute:
                # The export's root for the Slurm pods; the data is the site's: protected in prod.
                objects.append(
                    k8s.core.v1.PersistentVolume(
                        f"pv-slurm-{export.name}",
                        metadata=ctx.meta(f"slurm-{export.name}", "storage", stateful=Stateful.VOLUME),
                        spec=tree_volume_spec(export, args.slurm_namespace),
                        opts=ctx.opts(self, depends_on=[driver], stateful=Stateful.VOLUME),
                    )
                )
        return objects

    def _no_inline_nfs(self, ctx: DeployContext) -> list[pulumi.Resource]:
        """NFS is mounted only through claims of PersistentVolumes (the exports' trees here, the DevOps lane's software
        volumes): a pod that names an NFS server inline (Pod Security `baseline` and `privileged` allow it) is refused
        in every namespace, whether or not the stack lists NFS exports."""
        policy = k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
            "validatingadmissionpolicy-no-inline-nfs",
            metadata=ctx.meta(INLINE_NFS_POLICY, "storage"),
            spec=inline_nfs_policy_spec(),
            opts=ctx.opts(self),
        )
        binding = k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
            "validatingadmissionpolicybinding-no-inline-nfs",
            metadata=ctx.meta(INLINE_NFS_POLICY, "storage"),
            spec=inline_nfs_binding_spec(),
            opts=ctx.opts(self, depends_on=[policy]),
        )
        return [policy, binding]

    def _local_path(self, args: StorageArgs) -> list[pulumi.Resource]:
        """local-path-provisioner in its namespace."""
        assert args.config.local_path is not None
        namespace = LayerNamespace(
            args.ctx,
            self,
            LOCAL_PATH_NAMESPACE,
            component="storage",
            # Helper pods create and remove directories on the node (hostPath).
            pod_security="privileged",
            allows=local_path_namespace_allows(),
            depends_on=args.depends_on,
            charts=args.charts,
        )
        values = local_path_values(args.config.local_path)
        return [namespace.chart("local-path-provisioner", Charts.LOCAL_PATH_PROVISIONER, values)]
