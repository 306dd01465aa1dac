"""scripts/ci/build-slurm.sh, which builds the Slurm 26.05.3 of the real-daemon tier: its pins agree with the shared
tarball it builds from, and its git source (the GitHub workflow's, where no tarball is fetched) refuses any other
commit before building anything."""

from __future__ import annotations

import bz2
import os
import re
import subprocess
from pathlib import Path

import yaml

from tests.helpers import REPO, require_shared

SCRIPT = REPO / "scripts/ci/build-slurm.sh"


def _pin(name: str) -> str:
    found = re.search(rf"^{name}=(\S+)$", SCRIPT.read_text(), re.M)
    assert found, name
    return found[1]


def test_the_scripts_pins_are_the_shared_tarballs_sha256_and_commit() -> None:
    shared = require_shared()
    tarball = shared / "slurm" / "slurm-26.05.3.tar.bz2"
    readme = (shared / "slurm" / "README.md").read_text()
    assert _pin("SHA256") in readme
    assert _pin("TAG") in readme  # the README names the tag the tarball was archived from
    with bz2.open(tarball) as stream:
        header = stream.read(1536)
    # `git archive` writes the commit it archived into the pax global header: "52 comment=<40 hex>\n"
    assert re.search(rb"comment=([0-9a-f]{40})\n", header)[1].decode() == _pin("COMMIT")  # type: ignore[index]


def test_a_git_source_at_another_commit_is_refused_before_building(tmp_path: Path) -> None:
    source = tmp_path / "slurm"
    source.mkdir()
    git = ["git", "-C", str(source), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (source / "README").write_text("not slurm\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    env = {
        **os.environ,
        "HPCFORGE_SHARED": str(tmp_path / "no-shared"),
        "HPCFORGE_SLURM_GIT": str(source),
        "HPCFORGE_CACHE": str(tmp_path / "cache"),
    }
    result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert "is at '" in result.stderr and f"not {_pin('COMMIT')} ({_pin('TAG')})" in result.stderr
    assert not (tmp_path / "cache").exists()
    env.pop("HPCFORGE_SLURM_GIT")
    result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1 and "HPCFORGE_SLURM_GIT" in result.stderr


def test_the_pull_request_job_builds_slurm_from_the_pinned_tag_into_a_cached_prefix() -> None:
    workflow = yaml.safe_load((REPO / ".github/workflows/pull-request.yml").read_text())
    job = workflow["jobs"]["test"]
    steps = job["steps"]
    clone = next(s for s in steps if "SchedMD/slurm" in str(s.get("run", "")))
    assert f"--branch {_pin('TAG')}" in clone["run"] and '"$HPCFORGE_SLURM_GIT"' in clone["run"]
    cache = next(s for s in steps if s.get("with", {}).get("path") == "${{ env.HPCFORGE_CACHE }}")
    suite = next(i for i, s in enumerate(steps) if str(s.get("run", "")).strip() == 'sudo -E env "PATH=$PATH" .ci/run')
    assert steps.index(clone) < suite and steps.index(cache) < suite
    assert "build-slurm.sh" in cache["with"]["key"]
    assert {"HPCFORGE_SLURM_GIT", "HPCFORGE_CACHE"} <= set(job["env"])
