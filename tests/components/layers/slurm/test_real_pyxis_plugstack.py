"""Tier 4 (real daemons): the plugstack.conf hpcforge renders for Pyxis, loaded by a real Slurm 26.05.3.

slurm-operator v1.2.1 (docs/usage/pyxis.md) serves plugstack.conf to every slurmd and srun (configless), including
the CPU pods and slurmctld's host, which have no Pyxis: the include must be a glob that matches nothing there. Here
this machine plays such a node: srun and slurmd read the rendered file, and jobs still run; a glob that does match
is followed (a required plugin that is missing then stops slurmd), so the glob is not silently ignored.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from offline.program.engine import RecordedStack
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.common import HarnessError
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]


def _plugstack(stack: RecordedStack) -> str:
    data = next(
        r.inputs["data"]
        for r in stack.kubernetes_objects()
        if r.inputs["kind"] == "ConfigMap" and r.inputs["metadata"]["name"] == "slurm-config-extra"
    )
    text: str = data["plugstack.conf"]
    return text


def _cluster(tmp_path: Path, plugstack: str) -> SlurmCluster:
    path = tmp_path / "plugstack.conf"
    path.write_text(plugstack)
    return SlurmCluster(
        tmp_path / "cluster",
        "pyxis",
        nodes=[node_line("c1")],
        extra_conf=f"PlugStackConfig={path}\nFirstJobId={random.randint(200_000, 900_000)}\n",
    )


def test_rendered_plugstack_lets_jobs_run_where_pyxis_is_absent(prod_stack: RecordedStack, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    text = _plugstack(prod_stack)
    assert text == "include /usr/share/pyxis/*\n"
    assert not Path("/usr/share/pyxis").exists(), "this machine has Pyxis: it cannot play a node without it"
    with _cluster(tmp_path, text) as cluster:
        result = cluster.run("srun", "-N1", "-t", "1", "echo", "ran", timeout=60)
        assert (result.returncode, result.stdout.strip()) == (0, "ran"), result.stderr


def test_a_matching_glob_is_followed(tmp_path: Path) -> None:
    # Seen: slurmd refuses to start ("spank: .../pyxis.conf:1: Failed to load plugin ... Aborting.").
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    plugins = tmp_path / "pyxis"
    plugins.mkdir()
    (plugins / "pyxis.conf").write_text(f"required {tmp_path}/no-such-spank-plugin.so\n")
    cluster = _cluster(tmp_path, f"include {plugins}/*\n")
    with pytest.raises(HarnessError, match=r"pyxis\.conf:1: Failed to load plugin .*no-such-spank-plugin\.so"):
        cluster.start()
    cluster.stop()
