"""Storage layer: csi-driver-nfs with a StorageClass per NFS export and a PersistentVolume of each
export's whole tree (for the Slurm pods), and local-path-provisioner as a lab's default class.

Neither chart has Helm hooks at these versions (csi-driver-nfs v4.13.4 charts/v4.13.4/csi-driver-nfs/
templates, local-path-provisioner v0.0.37 deploy/chart/local-path-provisioner/templates: no
`helm.sh/hook`), so `helm.v4.Chart` and Argo CD install the same objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext, Stateful
from ...k8s.resources import Namespace, container_resources, egress_to_apiserver
from ...versions import Charts, Images
from .config import LocalPathConfig, StorageConfig
from .objects import storage_class_body, storage_class_name, tree_volume_spec

NFS_NAMESPACE = "kube-system"
LOCAL_PATH_NAMESPACE = "local-path-storage"
LOCAL_PATH_CLASS = "local-path"
K0S_KUBELET_DIR = "/var/lib/k0s/kubelet"

NFS_CHARTS = (ChartUse("csi-driver-nfs", Charts.CSI_DRIVER_NFS, NFS_NAMESPACE),)
LOCAL_PATH_CHARTS = (ChartUse("local-path-provisioner", Charts.LOCAL_PATH_PROVISIONER, LOCAL_PATH_NAMESPACE),)


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def charts_for(storage: StorageConfig) -> tuple[ChartUse, ...]:
    return (*(NFS_CHARTS if storage.nfs_exports else ()), *(LOCAL_PATH_CHARTS if storage.local_path else ()))


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
    return {
        "helperImage": {"repository": Images.BUSYBOX.repository, "tag": Images.BUSYBOX.tag},
        "storageClass": {"create": True, "name": LOCAL_PATH_CLASS, "defaultClass": config.default_class},
        "nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": [config.path]}],
        "resources": container_resources("10m", "32Mi", "128Mi"),
        "commonLabels": {"app.kubernetes.io/part-of": "hpcforge"},
    }


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
        ctx, cfg = args.ctx, args.config
        self.ready = []
        if cfg.nfs_exports:
            driver = args.charts.deploy(
                "csi-driver-nfs",
                Charts.CSI_DRIVER_NFS,
                NFS_NAMESPACE,
                nfs_values(kubelet_dir=args.kubelet_dir),
                parent=self,
                depends_on=list(args.depends_on),
            )
            self.ready.append(driver)
            for export in cfg.nfs_exports:
                meta = ctx.meta(storage_class_name(export), "storage")
                self.ready.append(
                    k8s.storage.v1.StorageClass(
                        f"storageclass-{export.name}",
                        metadata=meta,
                        **{_snake(key): value for key, value in storage_class_body(export).items()},
                        opts=ctx.opts(self, depends_on=[driver]),
                    )
                )
                if export.login or export.compute:
                    # The export's root for the Slurm pods; the data is the site's: protected in prod.
                    self.ready.append(
                        k8s.core.v1.PersistentVolume(
                            f"pv-slurm-{export.name}",
                            metadata=ctx.meta(f"slurm-{export.name}", "storage", stateful=Stateful.VOLUME),
                            spec=tree_volume_spec(export, args.slurm_namespace),
                            opts=ctx.opts(self, depends_on=[driver], stateful=Stateful.VOLUME),
                        )
                    )
        if cfg.local_path is not None:
            namespace = Namespace(
                ctx,
                LOCAL_PATH_NAMESPACE,
                component="storage",
                parent=self,
                # Helper pods create and remove directories on the node (hostPath).
                pod_security="privileged",
                allows=[egress_to_apiserver()],
                depends_on=list(args.depends_on),
            )
            self.ready.append(
                args.charts.deploy(
                    "local-path-provisioner",
                    Charts.LOCAL_PATH_PROVISIONER,
                    LOCAL_PATH_NAMESPACE,
                    local_path_values(cfg.local_path),
                    parent=self,
                    depends_on=namespace.ready,
                )
            )
        self.register_outputs(
            {
                "nfsClasses": [storage_class_name(e) for e in cfg.nfs_exports],
                "localPath": cfg.local_path is not None,
            }
        )
