"""scripts/slurm/accounts-check.sh (the drift workflow's accounting step) with stand-ins for kubectl
and sacctmgr/squeue on PATH: it streams the deployed ConfigMap's script and desired state into the
login pod (here: a local `sh -c`, which is what `kubectl exec ... -- sh -c` runs) and passes the
reconciler's verdict through: 0 no drift, 1 drift (the plan printed), 2 could not check."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from components.k8s.chunks import plan_parts
from components.layers.slurm.sacct import render_desired_state
from components.site.loader import load_config
from tests.helpers import REPO, config_values, raw_config

CHECK = REPO / "scripts" / "slurm" / "accounts-check.sh"

FAKE_KUBECTL = """#!/usr/bin/env python3
import os, subprocess, sys
argv = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join(argv) + "\\n")
line = " ".join(argv)
if "--all-namespaces" in argv:
    print(os.environ.get("FAKE_CM_NAMESPACE", ""))
elif "loginsets.slinky.slurm.net" in line:
    print("login", end="")
elif argv[2:] == ["get", "configmap", "-o", "json"]:
    sys.stdout.write(open(os.environ["FAKE_MAPS"]).read())
elif "sacct_sync\\\\.py" in line:
    sys.stdout.write(open(os.environ["FAKE_SCRIPT"]).read())
elif argv[2:5] == ["exec", "-i", "deployment/login"]:
    command = argv[argv.index("--") + 1 :]
    sys.exit(subprocess.run(command).returncode)
else:
    sys.exit(f"unexpected kubectl call: {line}")
"""

# A slurmdbd that holds only what slurmdbd creates itself (cluster, root account, normal QOS).
FAKE_SACCTMGR = """#!/bin/sh
case "$*" in
  *"show qos"*) echo "normal||0|||||||||cluster" ;;
  *"show account"*) echo "root|default root account|root|" ;;
  *"show assoc"*) echo "devlab|root||||1|normal|" ;;
  *"show user"*) echo "root|root|Administrator" ;;
  *"show cluster"*) echo "devlab" ;;
  *) echo "unexpected sacctmgr call: $*" >&2; exit 1 ;;
esac
"""


def run_check(
    tmp_path: Path, *, namespace: str, sacctmgr: str | None = FAKE_SACCTMGR, padding: str = ""
) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("kubectl", FAKE_KUBECTL), ("sacctmgr", sacctmgr), ("squeue", "#!/bin/sh\nexit 0\n")):
        if text is not None:
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
    dev = load_config(raw_config(config_values("dev")))
    assert dev.slurm.accounts is not None
    desired = render_desired_state(dev.slurm.cluster_name, dev.slurm.accounts, dev.directory)
    if padding:  # a site large enough to be shipped in gzip parts
        desired = desired[:-2] + ',"padding":"' + padding + '"}\n'
    data_maps, binary_maps, _ = plan_parts({"accounts.json": desired})
    items = [
        {"metadata": {"name": f"slurm-accounts-desired-{i:02d}"}, "data": data, "binaryData": binary}
        for i, (data, binary) in enumerate(zip(data_maps, binary_maps, strict=True))
    ]
    items.append({"metadata": {"name": "unrelated"}, "data": {"accounts.json": "{}"}})
    maps = tmp_path / "maps.json"
    maps.write_text(json.dumps({"items": items}))
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "FAKE_LOG": str(tmp_path / "kubectl.log"),
        "FAKE_CM_NAMESPACE": namespace,
        "FAKE_MAPS": str(maps),
        "FAKE_SCRIPT": str(REPO / "scripts" / "slurm" / "sacct_sync.py"),
    }
    return subprocess.run(["bash", str(CHECK)], env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("padding", ["", "x" * 2_000_000], ids=["plain", "gzip parts"])
def test_drift_is_reported_with_the_plan(tmp_path: Path, padding: str) -> None:
    result = run_check(tmp_path, namespace="slurm", padding=padding)
    assert result.returncode == 1, result.stderr
    assert "+ account lab (parent root, fairshare 1)" in result.stdout
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["check"] is True and summary["writes"] == 0
    assert "-n slurm exec -i deployment/login -c login -- sh -c" in (tmp_path / "kubectl.log").read_text()


def test_no_configmap_means_nothing_to_check(tmp_path: Path) -> None:
    result = run_check(tmp_path, namespace="")
    assert result.returncode == 0 and "not managed as code" in result.stdout


@pytest.mark.parametrize("sacctmgr", ["#!/bin/sh\necho 'Connection refused' >&2\nexit 1\n"])
def test_unreadable_slurmdbd_is_not_reported_as_drift(tmp_path: Path, sacctmgr: str) -> None:
    result = run_check(tmp_path, namespace="slurm", sacctmgr=sacctmgr)
    assert result.returncode == 2
    assert "could not run" in result.stdout + result.stderr
