"""What the storage layer publishes to the other layers (they import this module and the storage config, nothing else
of the layer): how a pod mounts the NFS exports (claims, volumes, mounts) and how a bare-metal host mounts them."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from .config import NfsExport


def storage_class_name(export: NfsExport) -> str:
    return f"nfs-{export.name}"


def claim_name(export: NfsExport) -> str:
    return f"nfs-{export.name}"


def nfs_mount_options(export: NfsExport) -> list[str]:
    return [*export.mount_options, *(["ro"] if export.read_only else [])]


def tree_claim_spec(export: NfsExport, volume: str) -> dict[str, Any]:
    return {
        "accessModes": ["ReadOnlyMany" if export.read_only else "ReadWriteMany"],
        "storageClassName": storage_class_name(export),
        "volumeName": volume,
        "resources": {"requests": {"storage": export.size}},
    }


def pod_volumes(exports: Sequence[NfsExport]) -> list[dict[str, Any]]:
    return [
        {"name": f"nfs-{e.name}", "persistentVolumeClaim": {"claimName": claim_name(e), "readOnly": e.read_only}} for e in exports
    ]


def container_mounts(exports: Sequence[NfsExport]) -> list[dict[str, Any]]:
    return [{"name": f"nfs-{e.name}", "mountPath": e.mount_path, "readOnly": e.read_only} for e in exports]


def host_mount_commands(exports: Sequence[NfsExport]) -> list[str]:
    """Idempotent shell lines that mount each export on a bare-metal host before slurmd starts."""
    lines = []
    for export in exports:
        target = shlex.quote(export.mount_path)
        source = shlex.quote(f"{export.server}:{export.export}")
        options = shlex.quote(",".join(nfs_mount_options(export)))
        lines.append(f"mkdir -p {target}")
        lines.append(f"mountpoint -q {target} || mount -t nfs -o {options} {source} {target}")
    return lines
