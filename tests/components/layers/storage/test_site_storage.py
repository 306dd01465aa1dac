"""Shared storage: the NFS exports of one config list become StorageClasses, volumes of the whole trees
mounted on login and compute pods, and mount commands of the bare-metal hosts' join scripts; a lab
gets local-path-provisioner as its default class."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from components.layers.slurm.face import render_join_script
from components.layers.storage.face import host_mount_commands
from components.site.loader import load_config
from components.site.root import PlatformConfig
from offline.program.engine import RecordedStack
from tests.daemons.common import write_script
from tests.helpers import config_values, raw_config
from tests.site_helpers import refusal


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def _objects(stack: RecordedStack, kind: str) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in stack.kubernetes_objects() if r.inputs["kind"] == kind}


def test_each_export_is_a_storage_class_and_a_tree_volume(prod_stack: RecordedStack) -> None:
    classes = _objects(prod_stack, "StorageClass")
    assert set(classes) == {"nfs-home", "nfs-software", "nfs-scratch"}
    software = classes["nfs-software"]
    assert software["provisioner"] == "nfs.csi.k8s.io" and software["reclaimPolicy"] == "Retain"
    assert software["parameters"] == {"server": "nfs01.hpc.example.org", "share": "/export/software"}
    assert software["mountOptions"] == ["nfsvers=4.2", "hard", "noatime", "ro"]
    assert "nconnect=8" in classes["nfs-scratch"]["mountOptions"]
    volumes = _objects(prod_stack, "PersistentVolume")
    home = volumes["slurm-home"]["spec"]
    assert home["claimRef"] == {"namespace": "slurm", "name": "nfs-home"} and home["accessModes"] == ["ReadWriteMany"]
    assert volumes["slurm-software"]["spec"]["csi"]["readOnly"] is True
    claims = {name: spec for name, spec in _objects(prod_stack, "PersistentVolumeClaim").items() if name.startswith("nfs-")}
    assert claims["nfs-software"]["spec"]["volumeName"] == "slurm-software"


def test_login_and_compute_pods_mount_the_same_trees(prod_stack: RecordedStack) -> None:
    def mounts(container: dict[str, Any]) -> dict[str, tuple[str, bool]]:
        return {
            m["mountPath"]: (m["name"], m["readOnly"]) for m in container.get("volumeMounts", []) if m["name"].startswith("nfs-")
        }

    for name, loginset in _objects(prod_stack, "LoginSet").items():
        assert mounts(loginset["spec"]["login"]) == {"/home": ("nfs-home", False), "/software": ("nfs-software", True)}, name
        claims = {
            v["persistentVolumeClaim"]["claimName"]
            for v in loginset["spec"]["template"]["spec"]["volumes"]
            if "persistentVolumeClaim" in v
        }
        assert claims == {"nfs-home", "nfs-software"}
    for name, nodeset in _objects(prod_stack, "NodeSet").items():
        assert mounts(nodeset["spec"]["slurmd"]) == {
            "/home": ("nfs-home", False),
            "/software": ("nfs-software", True),
            "/scratch": ("nfs-scratch", False),
        }, name


def test_lab_gets_local_path_as_default_class(dev_stack: RecordedStack) -> None:
    charts = [r.inputs for r in dev_stack.resources if r.is_chart and "local-path" in str(r.inputs.get("chart"))]
    assert len(charts) == 1
    values = charts[0]["values"]
    assert values["storageClass"]["defaultClass"] is True and values["storageClass"]["name"] == "local-path"
    assert values["helperImage"]["tag"] != "latest"
    assert not _objects(dev_stack, "StorageClass")  # the chart makes the class; no NFS in the lab


def test_join_script_mounts_the_trees_before_slurmd_once(prod: PlatformConfig, tmp_path: Path) -> None:
    assert prod.provisioning is not None
    lines = host_mount_commands(prod.storage.mounted_on("compute"))
    script = render_join_script(prod.slurm, "cpu-bm", "10.10.0.102", hosts=prod.provisioning.hosts, mounts=lines)
    assert script.index("mount -t nfs") < script.index("exec slurmd")
    # Run the script with stand-ins: `mount` records its arguments, `mountpoint` says /software is
    # already mounted, `slurmd` exits. Only /home and /scratch get mounted; nothing else runs.
    log = tmp_path / "mount.log"
    bin_dir = tmp_path / "bin"
    write_script(bin_dir / "mount", f'echo "$@" >> {log}\n')
    write_script(bin_dir / "mountpoint", '[ "$2" = /software ]\n')
    write_script(bin_dir / "mkdir", "exit 0\n")
    write_script(bin_dir / "slurmd", "exit 0\n")
    write_script(bin_dir / "hostname", "echo cn001\n")
    write_script(bin_dir / "sysctl", "exit 0\n")  # the job port range (tests/components/layers/slurm/test_slurm_reachability.py)
    path = tmp_path / "join.sh"
    path.write_text(script)
    key = tmp_path / "slurm.key"  # delivered after boot (the script waits for it; tests/components/layers/test_renderers.py)
    key.write_text("k" * 32)
    key.chmod(0o600)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "HPCFORGE_SLURM_KEY": str(key), "HPCFORGE_KEY_WAIT_SECONDS": "0"}
    subprocess.run(["/bin/sh", str(path)], env=env, check=True, capture_output=True, text=True, timeout=60)
    assert log.read_text().splitlines() == [
        "-t nfs -o nfsvers=4.2,hard,noatime nfs01.hpc.example.org:/export/home /home",
        "-t nfs -o nfsvers=4.2,hard,noatime,nconnect=8 nfs02.hpc.example.org:/export/scratch /scratch",
    ]


def _export(index: int, **changes: Any) -> Any:
    return lambda values: values["hpcforge:storage"]["nfsExports"][index].update(changes)


BAD = [
    (
        "export mounted inside another",
        _export(2, mountPath="/home/scratch"),
        "hpcforge:storage.nfsExports[2].mountPath: /home/scratch is inside another export's /home",
    ),
    ("two exports at one path", _export(1, mountPath="/home"), "hpcforge:storage.nfsExports: two exports mount at /home"),
    (
        "ro option on a writable export",
        _export(0, mountOptions=["ro"]),
        "hpcforge:storage.nfsExports[0]: export 'home': mount option 'ro' with readOnly false",
    ),
    (
        "mount option that would split the list",
        _export(0, mountOptions=["hard,intr"]),
        "hpcforge:storage.nfsExports[0].mountOptions[0]: 'hard,intr' is not a single NFS mount option",
    ),
    ("export over a system tree", _export(0, mountPath="/usr"), "hpcforge:storage.nfsExports[0].mountPath: /usr would hide"),
    (
        "relative export path",
        _export(0, export="export/home"),
        "hpcforge:storage.nfsExports[0].export: 'export/home' is not an absolute path",
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), BAD, ids=[case for case, _, _ in BAD])
def test_bad_storage_is_refused_naming_the_key(tmp_path: Path, case: str, edit: Any, expected: str) -> None:
    refusal(tmp_path, edit, expected)
