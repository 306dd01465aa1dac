"""Containers in jobs: Slinky's Pyxis/enroot images on GPU nodesets and login pods, and Pyxis in plugstack.conf.

What the images are: SlinkyProject/containers builds `slurmd-pyxis` and `login-pyxis` (docker-bake.hcl targets
`slurmd_pyxis`/`login_pyxis`, schedmd/slurm/26.05/ubuntu26.04/Dockerfile.pyxis) FROM the slurmd and login images of
the same tag. How slurm-operator v1.2.1 wants them configured: docs/usage/pyxis.md (plugstack.conf through the
Controller's config files; NodeSets and LoginSets on the pyxis images). The rendered plugstack.conf is loaded by a
real Slurm in tests/components/layers/slurm/test_real_pyxis_plugstack.py.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from components.layers.slurm.enroot import PYXIS_PLUGSTACK, enroot_conf, enroot_prolog
from components.layers.slurm.objects import login_spec, nodeset_spec
from components.site.loader import ConfigError, load_config
from components.site.root import PlatformConfig
from components.versions import SLINKY_TAG, Images
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config
from tests.test_layers import objects


def _prod(**slurm: Any) -> PlatformConfig:
    values = config_values("prod")
    values["hpcforge:slurm"].update(slurm)
    return load_config(raw_config(values))


def test_pyxis_images_are_the_slinky_release_s_variants() -> None:
    assert Images.SLURMD_PYXIS.ref == f"ghcr.io/slinkyproject/slurmd-pyxis:{SLINKY_TAG}"
    assert Images.LOGIN_PYXIS.ref == f"ghcr.io/slinkyproject/login-pyxis:{SLINKY_TAG}"
    assert Images.SLURMD.tag == Images.SLURMD_PYXIS.tag == Images.LOGIN_PYXIS.tag


def test_gpu_nodesets_and_logins_get_pyxis_by_default_where_there_are_gpus() -> None:
    prod = _prod()
    assert prod.slurm.has_gpus and prod.slurm.pyxis is None and prod.slurm.pyxis_enabled
    images = {
        ns.name: nodeset_spec(ns, node_selector={}, pyxis=prod.slurm.pyxis_enabled)["slurmd"]["image"]
        for ns in prod.slurm.nodesets
    }
    assert {name for name, image in images.items() if image == Images.SLURMD_PYXIS.ref} == {
        ns.name for ns in prod.slurm.nodesets if ns.gpus is not None
    }
    assert images["cpu"] == Images.SLURMD.ref
    login = login_spec(prod.slurm.login, pyxis=True)
    assert login["login"]["image"] == Images.LOGIN_PYXIS.ref
    # srun only needs the plugin loaded to accept --container-image; enroot runs on the compute pods, so the login
    # container stays unprivileged (Slinky asks for privileged only to run enroot inside the login pod itself).
    assert "securityContext" not in login["login"]


def test_pyxis_off_keeps_the_plain_images() -> None:
    values = config_values("prod")
    values["hpcforge:slurm"]["pyxis"] = False
    values["hpcforge:gpu"]["evidence"]["enabled"] = False
    # The active checks that start images (DCGM, nccl-tests) need Pyxis too (tests/components/layers/slurm/test_gpu_active_checks.py).
    values["hpcforge:gpu"]["activeChecks"] = [c for c in values["hpcforge:gpu"]["activeChecks"] if c["kind"] == "ib-link"]
    prod = load_config(raw_config(values))
    assert not prod.slurm.pyxis_enabled
    gpu = next(ns for ns in prod.slurm.nodesets if ns.gpus is not None)
    assert nodeset_spec(gpu, node_selector={}, pyxis=False)["slurmd"]["image"] == Images.SLURMD.ref
    assert login_spec(prod.slurm.login)["login"]["image"] == Images.LOGIN.ref


def test_prod_serves_the_pyxis_plugstack_through_the_controller(prod_stack: RecordedStack) -> None:
    extra = objects(prod_stack, "ConfigMap")["slurm/slurm-config-extra"].inputs["data"]
    assert extra["plugstack.conf"] == PYXIS_PLUGSTACK == "include /usr/share/pyxis/*\n"
    controller = objects(prod_stack, "Controller")["slurm/slurm"].inputs["spec"]
    assert {"name": "slurm-config-extra"} in controller["configFileRefs"]
    logins = [r.inputs["spec"]["login"]["image"] for r in objects(prod_stack, "LoginSet").values()]
    assert logins and set(logins) == {Images.LOGIN_PYXIS.ref}


def test_nccl_evidence_without_pyxis_is_refused_naming_the_key() -> None:
    values = config_values("prod")
    values["hpcforge:slurm"]["pyxis"] = False
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert "hpcforge:gpu.evidence.enabled: the NCCL evidence starts its image with srun --container-image" in str(raised.value)
    values["hpcforge:gpu"]["evidence"]["enabled"] = False
    values["hpcforge:gpu"]["activeChecks"] = [c for c in values["hpcforge:gpu"]["activeChecks"] if c["kind"] == "ib-link"]
    assert load_config(raw_config(values)).slurm.pyxis_enabled is False


# enroot's own reading of a configuration file (NVIDIA/enroot enroot.in at 8ea147d, config::load): refuse a file
# that `bash -n` refuses, then for each `KEY VALUE` line with an ENROOT_* key export `$(eval echo VALUE)`.
ENROOT_CONFIG_LOAD = r"""
file="$(mktemp)"; trap 'rm -f "$file"' EXIT; cat > "$file"
if [ -s "$file" ] && ! bash -n "$file" > /dev/null 2>&1; then echo "Invalid configuration file: $file"; exit 1; fi
while IFS=$' \t=' read -r key value; do
    if [[ "$key" =~ ^ENROOT_[[:upper:]_]+$ ]]; then printf '%s=%s\n' "$key" "$(eval echo "$value")"; fi
done < "$file"
"""


def test_enroot_drop_in_expands_to_per_user_directories_as_enroot_reads_it() -> None:
    # As a job's user would read it (nobody, when the tests run as root).
    if os.geteuid() == 0 and shutil.which("runuser"):
        argv = ["runuser", "-u", "nobody", "--", "bash", "-c", ENROOT_CONFIG_LOAD]
        uid = pwd.getpwnam("nobody").pw_uid
    else:
        argv = ["bash", "-c", ENROOT_CONFIG_LOAD]
        uid = os.geteuid()
    result = subprocess.run(argv, input=enroot_conf(), capture_output=True, text=True, check=True, cwd="/")
    assert dict(line.split("=", 1) for line in result.stdout.splitlines()) == {
        "ENROOT_RUNTIME_PATH": f"/run/enroot/user-{uid}",
        "ENROOT_DATA_PATH": f"/usr/share/enroot/enroot-data/user-{uid}",
        "ENROOT_CACHE_PATH": f"/usr/share/enroot/enroot-data/cache-user-{uid}",
    }


def _run_enroot_prolog(tmp_path: Path, uid: int) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "prolog.sh"
    script.write_text(enroot_prolog())
    env = {
        "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
        "SLURM_JOB_UID": str(uid),
        "SLURM_JOB_GID": str(uid),
        "HPCFORGE_ENROOT_DATA_ROOT": str(tmp_path / "enroot-data"),
        "HPCFORGE_ENROOT_RUNTIME_ROOT": str(tmp_path / "run-enroot"),
    }
    return subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, check=False, timeout=30)


def test_the_enroot_prolog_gives_each_user_directories_no_other_user_could_prepare(tmp_path: Path) -> None:
    """Issue 39: enroot's `mkdir -p` takes a directory another user made first. As Slinky's Pyxis image leaves the
    data root (0777, no sticky bit), another user (uid 4242) has made the victim's (uid 4243) data directory, with a
    file in it; the prolog, as root, takes the data root back, moves the planted directory aside and makes the
    victim's directories, its own and 0700."""
    if os.geteuid() != 0:
        pytest.skip("the prolog runs as root (chown): run the tests as root")
    data = tmp_path / "enroot-data"
    data.mkdir(mode=0o777)
    data.chmod(0o777)
    planted = data / "user-4243"
    planted.mkdir()
    (planted / "rootfs-trojan").write_text("x")
    os.chown(planted, 4242, 4242)
    planted.chmod(0o777)
    done = _run_enroot_prolog(tmp_path, 4243)
    assert done.returncode == 0, done.stderr
    assert (data.stat().st_mode & 0o777) == 0o755 and data.stat().st_uid == 0
    for path in (data / "user-4243", data / "cache-user-4243", tmp_path / "run-enroot" / "user-4243"):
        status = path.stat()
        assert (status.st_uid, status.st_mode & 0o777) == (4243, 0o700), path
        assert list(path.iterdir()) == []
    aside = [p.name for p in data.iterdir() if p.name.startswith("user-4243.not-4243.")]
    assert len(aside) == 1 and (data / aside[0] / "rootfs-trojan").exists()
    # The next job of the same user keeps its directories and what is in them.
    (data / "user-4243" / "pyxis_image").write_text("kept")
    assert _run_enroot_prolog(tmp_path, 4243).returncode == 0
    assert (data / "user-4243" / "pyxis_image").read_text() == "kept"


def test_the_enroot_prolog_does_nothing_where_there_is_no_enroot(tmp_path: Path) -> None:
    done = _run_enroot_prolog(tmp_path, 4243)
    assert done.returncode == 0 and not (tmp_path / "run-enroot").exists()


def test_prod_gpu_pods_mount_the_enroot_drop_in(prod_stack: RecordedStack) -> None:
    conf = objects(prod_stack, "ConfigMap")["slurm/slurm-enroot-conf"]
    assert conf.inputs["data"] == {"hpcforge.conf": enroot_conf()}
    for key, nodeset in objects(prod_stack, "NodeSet").items():
        spec = nodeset.inputs["spec"]
        mounts = [m for m in spec["slurmd"].get("volumeMounts", []) if m["name"] == "enroot-conf"]
        if spec["slurmd"]["image"] == Images.SLURMD_PYXIS.ref:
            assert mounts == [
                {
                    "name": "enroot-conf",
                    "mountPath": "/etc/enroot/enroot.conf.d/hpcforge.conf",
                    "subPath": "hpcforge.conf",
                    "readOnly": True,
                }
            ], key
            assert {"name": "enroot-conf", "configMap": {"name": "slurm-enroot-conf"}} in spec["template"]["spec"]["volumes"]
            # Through the Controller, which waits for what the pods mount (the NodeSet lists the Controller alone).
            assert any(urn.endswith("::slurm/slurm-enroot-conf") for urn in _before(prod_stack, nodeset.depends_on)), key
        else:
            assert mounts == [], key


def _before(stack: RecordedStack, urns: list[str]) -> set[str]:
    """`urns` and every resource they wait for, transitively (recorded `depends_on`)."""
    by_urn = {r.urn: r for r in stack.resources}
    seen: set[str] = set()
    todo = list(urns)
    while todo:
        urn = todo.pop()
        if urn not in seen:
            seen.add(urn)
            todo += by_urn[urn].depends_on if urn in by_urn else []
    return seen
