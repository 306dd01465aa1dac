"""Files too large for one ConfigMap, shipped as gzip parts and reassembled by an init container.

The API server refuses objects over ~1 MiB (etcd's request limit). Inventories grow with the site
(10,000 hosts of Grendel JSON is several MB), so such files are gzipped and, when even that is too
big, split across several ConfigMaps; a small init container joins and unzips them into an
emptyDir that the workload reads. Small files stay plain text for readable diffs.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..chart_security import RESTRICTED_CONTAINER_SECURITY
from ..context import DeployContext
from ..versions import Images
from .resources import config_map, container_resources

OBJECT_LIMIT = 1024 * 1024
"""The API server's limit on one object (etcd's request size; a ConfigMap's data is capped at 1 MiB)."""
MAP_PAYLOAD_LIMIT = 640 * 1024
"""Encoded bytes of `data`/`binaryData` per ConfigMap, counted as they travel (JSON: quoted keys and
values with escapes, base64 for binary parts). The rest of the object (name, labels, annotations) is
independent of the files' size and a few KiB at most, so every map stays under OBJECT_LIMIT with over
a third of it to spare, whatever the size of the inventory (see `encoded_entry_size`)."""
PLAIN_LIMIT = 512 * 1024
"""Files up to this many encoded bytes (in total) stay plain text in one ConfigMap."""


def encoded_entry_size(key: str, value: str) -> int:
    """Bytes of `"key":"value",` in JSON: the value's escapes (newlines, quotes, control characters,
    non-ASCII as UTF-8) are counted, not its raw length."""
    return len(json.dumps(key, ensure_ascii=False).encode()) + len(json.dumps(value, ensure_ascii=False).encode()) + 2


def _fits_plain(files: Mapping[str, str]) -> bool:
    """Whether `files` fit in PLAIN_LIMIT encoded bytes (`encoded_entry_size`).

    An entry's encoded size is at least its key's and value's length in characters (quotes, escapes
    and UTF-8 only add bytes): files longer than that in total cannot fit, and large inventories
    (tens of MB) are not encoded just to find out.
    """
    if sum(len(name) + len(text) for name, text in files.items()) > PLAIN_LIMIT:
        return False
    return sum(encoded_entry_size(name, text) for name, text in files.items()) <= PLAIN_LIMIT


def _b64_length(raw: int) -> int:
    return 4 * ((raw + 2) // 3)


@dataclass(frozen=True)
class Assembly:
    container: dict[str, Any]
    mounts: list[dict[str, Any]]
    """Mount these in the workload container to see the assembled files."""
    volumes: list[dict[str, Any]]


def plan_parts(files: Mapping[str, str]) -> tuple[list[dict[str, str]], list[dict[str, str]], str]:
    """Split `files` into ConfigMap payloads: (data per map, binaryData per map, shell script).

    Pure: the script, run with the maps mounted at /chunks/NN, recreates every file in $TARGET.
    Each map's payload, counted by `encoded_entry_size`, is at most MAP_PAYLOAD_LIMIT: plain files
    only when all of them fit in PLAIN_LIMIT, else gzip parts sized so that a part's base64 and its
    key fit, packed into maps by their encoded size.
    """
    if _fits_plain(files):
        script = "".join(f'cp "/chunks/00/{name}" "$TARGET/{name}"\n' for name in sorted(files))
        return [dict(files)], [{}], script
    maps: list[dict[str, str]] = [{}]
    used = 0
    script_lines: list[str] = []
    for name in sorted(files):
        packed = gzip.compress(files[name].encode(), compresslevel=6, mtime=0)
        key_cost = encoded_entry_size(f"{name}.gz.part000", "")
        # Largest raw part whose base64 (plus its key) fits in one map's budget.
        part_raw = (MAP_PAYLOAD_LIMIT - key_cost) // 4 * 3
        parts = [packed[i : i + part_raw] for i in range(0, len(packed), part_raw)] or [b""]
        for index, part in enumerate(parts):
            cost = key_cost + _b64_length(len(part))
            if used and used + cost > MAP_PAYLOAD_LIMIT:
                maps.append({})
                used = 0
            maps[-1][f"{name}.gz.part{index:03d}"] = base64.b64encode(part).decode()
            used += cost
        script_lines.append(f'cat /chunks/*/"{name}".gz.part* | gunzip > "$TARGET/{name}"\n')
    return [{} for _ in maps], maps, "".join(script_lines)


def chunked_file(
    ctx: DeployContext,
    parent: pulumi.Resource,
    namespace: str,
    name: str,
    files: Mapping[str, str],
    *,
    component: str,
    app: str,
    target_dir: str,
    depends_on: Sequence[pulumi.Resource] = (),
    annotations: Mapping[str, str] | None = None,
) -> tuple[list[k8s.core.v1.ConfigMap], Assembly]:
    data_maps, binary_maps, script = plan_parts(files)
    maps: list[k8s.core.v1.ConfigMap] = []
    volumes: list[dict[str, Any]] = [{"name": f"{name}-assembled", "emptyDir": {}}]
    chunk_mounts: list[dict[str, Any]] = []
    for index, (data, binary) in enumerate(zip(data_maps, binary_maps, strict=True)):
        map_name = f"{name}-{index:02d}"
        maps.append(
            config_map(
                ctx,
                map_name,
                namespace,
                data,
                component=component,
                parent=parent,
                app=app,
                depends_on=depends_on,
                binary_data=binary or None,
                annotations=annotations,
            )
        )
        volumes.append({"name": map_name, "configMap": {"name": map_name}})
        chunk_mounts.append({"name": map_name, "mountPath": f"/chunks/{index:02d}", "readOnly": True})
    container = {
        "name": f"assemble-{component}",
        "image": Images.ALPINE.ref,
        "command": ["/bin/sh", "-ec", f'TARGET="{target_dir}"\n{script}'],
        "resources": container_resources("10m", "32Mi", "128Mi"),
        "securityContext": {**RESTRICTED_CONTAINER_SECURITY, "readOnlyRootFilesystem": True},
        "volumeMounts": [*chunk_mounts, {"name": f"{name}-assembled", "mountPath": target_dir}],
    }
    mounts = [{"name": f"{name}-assembled", "mountPath": target_dir, "readOnly": True}]
    return maps, Assembly(container=container, mounts=mounts, volumes=volumes)
