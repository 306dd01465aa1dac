"""Each job its own /dev/shm (issue 35 item 11), on the real slurmd 26.05.3: the rendered `NamespaceType=namespace/tmpfs`
and `PrologFlags=Contain` lines of the Controller's extraConf and the rendered job_container.conf (its BasePath under
the test's directory) loaded into a private cluster. What ran: a job writes a segment into /dev/shm and is then
cancelled, as a crashed NCCL or PyTorch job is; a job running beside it does not see the segment, nor does the host;
once the job is gone, so is the segment. Needs root and mount namespaces (this machine allows both); the jobs run
under the harness's proctrack/linuxproc (no usable freezer cgroup here), so the memory cgroup's charge of the job's
tmpfs is not observed here."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from components.layers.slurm.slurm_conf import controller_extra_conf
from components.site.loader import load_config
from tests.components.layers.slurm.test_real_slurm import loadable_job_container_conf, require_root
from tests.daemons import slurm
from tests.daemons.common import wait_until
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import config_values, raw_config, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]


def _rendered_lines() -> list[str]:
    config = load_config(raw_config(config_values("prod")))
    text = controller_extra_conf(config.slurm, accounting=True)
    return [line for line in text.splitlines() if line.startswith(("PrologFlags=", "NamespaceType="))]


def test_prod_renders_a_private_dev_shm_for_every_job() -> None:
    """Fails on main: no NamespaceType, so every job of a slurmd pod shared the pod's one /dev/shm emptyDir."""
    assert _rendered_lines() == ["PrologFlags=Contain", "NamespaceType=namespace/tmpfs"]


def test_a_killed_jobs_dev_shm_segment_is_private_and_gone_with_the_job(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    marker = f"hpcforge-shm-{uuid.uuid4().hex[:12]}"
    shared = tmp_path / "shared"
    shared.mkdir()
    base = tmp_path / "namespace"
    cluster = SlurmCluster(
        tmp_path / "cluster",
        nodes=[node_line("n1", cpus=2)],
        extra_conf="\n".join(_rendered_lines()) + "\n",
        job_container_conf=loadable_job_container_conf(base),
    )
    with cluster:
        left = cluster.sbatch(
            f"echo segment > /dev/shm/{marker}\ngrep ' /dev/shm ' /proc/self/mounts > {shared}/left-mounts\n"
            f"touch {shared}/left-ready\nsleep 120\n",
            args=["-n1"],
        )
        wait_until((shared / "left-ready").exists, 60, what="the first job to write its segment")
        beside = cluster.sbatch(f"ls -a /dev/shm > {shared}/beside-sees\n", args=["-n1"])
        assert cluster.wait_job(beside, 60) == "COMPLETED"
        assert marker not in (shared / "beside-sees").read_text()  # a job running beside it does not see it
        assert not (Path("/dev/shm") / marker).exists()  # nor does the node
        # the job's /dev/shm is a tmpfs of its own, mounted over the node's
        assert len((shared / "left-mounts").read_text().splitlines()) >= 2
        cluster.run("scancel", str(left), timeout=30)
        assert cluster.wait_job(left, 90) == "CANCELLED"
        after = cluster.sbatch(f"ls -a /dev/shm > {shared}/after-sees\n", args=["-n1"])
        assert cluster.wait_job(after, 60) == "COMPLETED"
        assert marker not in (shared / "after-sees").read_text()
        wait_until(lambda: not [p for p in base.rglob(marker)], 30, what="the cancelled job's namespace to be removed")
        assert not (Path("/dev/shm") / marker).exists()
