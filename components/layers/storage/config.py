"""Shared storage: NFS exports (csi-driver-nfs) mounted in the same place on login pods, compute pods
and bare-metal hosts, and local-path-provisioner as a lab's default StorageClass."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from ...ground.base import DnsName, K8sName, ProblemCollector, Quantity, StrictModel, duplicates


def _mount_option(value: str) -> str:
    # Options go into StorageClass/PV mountOptions and into the hosts' `mount -o`: no separators.
    if not re.fullmatch(r"[A-Za-z0-9_.=:/-]+", value):
        raise ValueError(f"{value!r} is not a single NFS mount option (letters, digits, '_', '.', '=', ':', '/', '-')")
    return value


def _absolute_path(value: str) -> str:
    if not re.fullmatch(r"(/[A-Za-z0-9_.+-]+)+/?", value) or "/../" in f"{value}/" or "/./" in f"{value}/":
        raise ValueError(f"{value!r} is not an absolute path of plain names")
    return value.rstrip("/") or "/"


MountOption = Annotated[str, AfterValidator(_mount_option)]
AbsolutePath = Annotated[str, AfterValidator(_absolute_path)]


class NfsExport(StrictModel):
    """One NFS export: a StorageClass of its own, and (with `login`/`compute`) the same tree mounted on
    login pods, NodeSet pods and bare-metal hosts."""

    name: K8sName
    """Name of the export (`home`, `software`, `scratch`): StorageClass `nfs-<name>`, volume `<name>`."""
    server: str = Field(pattern=r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$")
    """NFS server (host name or address)."""
    export: AbsolutePath
    """Exported path on the server."""
    mount_path: AbsolutePath
    """Where the tree appears on login pods, compute pods and bare-metal hosts (e.g. `/home`)."""
    read_only: bool = False
    """Mount read-only (e.g. the software tree, which only the build lane writes)."""
    mount_options: tuple[MountOption, ...] = ("nfsvers=4.2", "hard", "noatime")
    """NFS mount options (StorageClass `mountOptions`, the PersistentVolume's and the hosts' `mount -o`)."""
    size: Quantity = "1Ti"
    """Capacity written on the PersistentVolume (NFS does not enforce it)."""
    login: bool = True
    """Mount it on the login pods."""
    compute: bool = True
    """Mount it on the NodeSet pods and on bare-metal hosts that join Slurm."""

    @model_validator(mode="after")
    def _options(self) -> NfsExport:
        if "ro" in self.mount_options and not self.read_only:
            raise ValueError(f"export {self.name!r}: mount option 'ro' with readOnly false; set readOnly: true instead")
        return self


class LocalPathConfig(StrictModel):
    """local-path-provisioner: node-local volumes, for a lab cluster that has no storage class."""

    default_class: bool = True
    """Make `local-path` the cluster's default StorageClass."""
    path: AbsolutePath = "/opt/local-path-provisioner"
    """Directory on each node that holds the volumes."""


class StorageConfig(StrictModel):
    nfs_exports: tuple[NfsExport, ...] = ()
    """NFS exports (csi-driver-nfs): home, software, scratch... mounted from this one list everywhere."""
    local_path: LocalPathConfig | None = None
    """Deploy local-path-provisioner (null: the cluster brings its own storage)."""

    def mounted_on(self, where: str) -> tuple[NfsExport, ...]:
        """Exports mounted on `login` or `compute`."""
        return tuple(export for export in self.nfs_exports if getattr(export, where))

    @model_validator(mode="after")
    def _unique(self) -> StorageConfig:
        problems = ProblemCollector()
        for name in duplicates(e.name for e in self.nfs_exports):
            problems.add(["nfsExports"], f"duplicate export name {name!r}")
        paths = [e.mount_path for e in self.nfs_exports]
        for path in duplicates(paths):
            problems.add(["nfsExports"], f"two exports mount at {path}")
        # Each path against every other as a folder (`other/`): looked up by the path's own folder prefixes.
        as_folder: dict[str, list[int]] = {}
        for position, other in enumerate(paths):
            as_folder.setdefault(other.rstrip("/") + "/", []).append(position)
        for index, export in enumerate(self.nfs_exports):
            path = export.mount_path
            prefixes = (path[:end] for end in range(1, len(path) + 1) if path[end - 1] == "/")
            outer = sorted(position for prefix in prefixes for position in as_folder.get(prefix, ()))
            for other in (paths[position] for position in outer):
                if other != path:
                    problems.add(["nfsExports", index, "mountPath"], f"{path} is inside another export's {other}")
            if export.mount_path in {"/", "/etc", "/usr", "/var", "/proc", "/sys", "/dev", "/run", "/tmp"}:
                problems.add(["nfsExports", index, "mountPath"], f"{export.mount_path} would hide the system's own tree")
        problems.raise_if_any()
        return self


class Storage(StrictModel):
    size: Quantity = "10Gi"
    """Size of the volume."""
    storage_class: DnsName | None = None
    """A storage class name (lowercase DNS name); null: `hpcforge:kubernetes.storageClass`, else the cluster default."""
