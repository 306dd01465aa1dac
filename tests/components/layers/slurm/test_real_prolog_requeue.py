"""Tier 4 (real daemons): what an operator sees when a prolog fails, and the recovery block of docs/operations.md
("Recover a node", `<!-- runs: real-daemon recover-prolog-node -->`) run against slurmctld and slurmd 26.05.3.

The cluster has prod's rendered `SchedulerParameters` and `PrologFlags` (what decides whether a failed prolog holds
the job and when a requeued job may start again) and a prolog that fails while a file exists, standing for a node
that is not fit. A batch job lands there: the node drains with `Reason=Prolog error`, the job is requeued held
(`launch failed requeued held`, priority 0) and eligible only `requeue_delay` after the requeue, 120 s by default
(AuthInfo=cred_expire; neither Slinky's `AuthInfo=use_client_ids` nor the harness's `disable_sack` sets it). The
file is removed ("fix the cause"), and the doc's block runs as written, with `kubectl` replaced by
tests/fakes/kubectl_cluster.py, whose `exec` into `statefulset/slurm-controller` runs the Slurm client on this
machine against the test's slurmctld. proctrack/linuxproc as everywhere jobs run here (../shared/slurm/README.md:
no usable freezer cgroup).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from components.layers.slurm.slurm_conf import controller_extra_conf
from components.site.loader import load_config
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.common import wait_until, write_script
from tests.daemons.slurm import SlurmCluster, node_line
from tests.daemons.slurm_prefix import slurm_binary
from tests.docblocks import block
from tests.helpers import REPO, config_values, raw_config, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(400)]

SHIM = REPO / "tests" / "fakes" / "kubectl_cluster.py"
DECIDING = ("SchedulerParameters=", "PrologFlags=")
"""The rendered lines that decide the hold and the delay (slurm.conf(5): nohold_on_prolog_fail, requeue_delay)."""


def _prod_lines() -> str:
    config = load_config(raw_config(config_values("prod")))
    text = controller_extra_conf(config.slurm, accounting=config.slurm.accounting.enabled)
    lines = [line for line in text.splitlines() if line.startswith(DECIDING)]
    assert len(lines) == 2, lines
    assert "nohold_on_prolog_fail" not in text and "requeue_delay" not in text
    return "\n".join(lines) + "\n"


def _kubectl(tmp: Path, cluster: SlurmCluster) -> dict[str, str]:
    """A kubectl on PATH whose exec into the slurmctld pod runs the Slurm clients against `cluster`."""
    root, bin_dir = tmp / "kube", tmp / "bin"
    root.mkdir()
    bin_dir.mkdir()
    env = cluster.env()
    programs = {name: [str(slurm_binary(name))] for name in ("sinfo", "squeue", "scontrol")}
    pod = {"programs": programs, "env": {k: v for k, v in env.items() if k != "PATH"}}
    (root / "cluster.json").write_text(
        json.dumps({"workloads": {}, "pods": {"slurm/statefulset/slurm-controller": pod}, "rewrite": {}})
    )
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SHIM}" "$@"\n')
    kubectl.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}", "KUBE_CLUSTER": str(root)}


def test_a_failing_prolog_holds_the_job_and_the_recovery_block_runs_it_again(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    unfit = tmp_path / "unfit"
    unfit.write_text("the cause\n")
    prolog = write_script(tmp_path / "00-health.sh", f"if [ -e {unfit} ]; then echo 'node not fit' >&2; exit 1; fi\nexit 0\n")
    with SlurmCluster(
        tmp_path / "cluster",
        "requeue",
        nodes=[node_line("n1")],
        partitions=["PartitionName=batch Nodes=n1 Default=YES State=UP MaxTime=INFINITE"],
        extra_conf=f"Prolog={prolog}\n" + _prod_lines(),
    ) as cluster:
        job = cluster.sbatch("echo ran > ran.txt\n")
        cluster.wait_node_state("n1", "DRAIN", 60)
        assert cluster.node_reason("n1") == "Prolog error"

        def held() -> dict[str, str] | None:
            info = cluster.job_info(job)
            return info if info.get("JobState") == "PENDING" and info.get("Priority") == "0" else None

        info = wait_until(held, 60, f"job {job} to be requeued held", log=cluster.log_paths())
        assert info["Reason"] == "launch_failed_requeued_held", info
        assert int(info["Restarts"]) >= 1
        submit, eligible = (
            subprocess.run(["date", "-d", info[key], "+%s"], capture_output=True, text=True, check=True).stdout
            for key in ("SubmitTime", "EligibleTime")
        )
        assert 120 <= int(eligible) - int(submit) <= 121  # requeue_delay = cred_expire (120 s) + 1, from the requeue

        unfit.unlink()  # fix the cause
        text = block("recover-prolog-node")
        for placeholder in ("<node>", "<jobid>"):
            assert placeholder in text
        script = text.replace("<node>", "n1").replace("<jobid>", str(job))
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            env={**_kubectl(tmp_path, cluster), "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        lines = done.stdout.splitlines()
        assert any(line.split()[:1] == ["Prolog"] and line.split()[-1] == "n1" for line in lines), lines  # sinfo -R
        assert f"{job} root launch failed requeued held" in lines  # squeue -t PD -o '%i %u %r'
        assert cluster.wait_job(job, 60) == "COMPLETED", cluster.job_info(job)
        assert (cluster.jobs_dir / "ran.txt").read_text() == "ran\n"
        assert "DRAIN" not in cluster.node_state("n1").split("+")


def test_released_without_a_new_start_time_the_job_waits_for_the_requeue_delay(tmp_path: Path) -> None:
    """The block's last line is the way around the delay; without it the released job waits (Reason=BeginTime)."""
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    unfit = tmp_path / "unfit"
    unfit.write_text("the cause\n")
    prolog = write_script(tmp_path / "00-health.sh", f"if [ -e {unfit} ]; then exit 1; fi\nexit 0\n")
    with SlurmCluster(
        tmp_path / "cluster",
        "delay",
        nodes=[node_line("n1")],
        partitions=["PartitionName=batch Nodes=n1 Default=YES State=UP MaxTime=INFINITE"],
        extra_conf=f"Prolog={prolog}\n" + _prod_lines(),
    ) as cluster:
        job = cluster.sbatch("true\n")
        cluster.wait_node_state("n1", "DRAIN", 60)
        wait_until(lambda: cluster.job_info(job).get("Priority") == "0" or None, 60, "the hold", log=cluster.log_paths())
        unfit.unlink()
        cluster.scontrol("update", "nodename=n1", "state=resume")
        cluster.scontrol("release", str(job))
        wait_until(lambda: cluster.job_info(job).get("Reason") == "BeginTime" or None, 30, "Reason=BeginTime")
        info = cluster.job_info(job)
        assert info["JobState"] == "PENDING" and info["Priority"] != "0"
