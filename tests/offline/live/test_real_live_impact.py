"""offline/live/impact.py against what a real Slurm 26.05.3 prints while jobs run.

A private cluster (tests/daemons/slurm.py: slurmctld, slurmd cpu1, cpu2 and gpu1 with 4 GPUs given as
device files, as the harness docstring describes) runs jobs as root and as nobody, two of them with
`--gres gpu`; the test captures `squeue --json` and `sinfo --json` live, and slurmrestd's
`/slurm/v0.0.45/jobs` and `/nodes` with a JWT (rest_auth/jwt, `scontrol token`), and checks the jobs
at risk on the nodes a change would drain against what Slurm's own plain `squeue` says.

The same setup made the fixtures of tests/offline/live/test_live_impact.py (tests/fixtures/slurm-json/README.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from offline.live.impact import jobs_at_risk, render_text
from offline.live.slurm_json import fetch_live, load_live
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.common import ManagedProcess, free_ports, run, wait_until
from tests.daemons.slurm import SlurmCluster, node_line
from tests.daemons.slurm_prefix import slurm_prefix
from tests.docblocks import block
from tests.helpers import require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

# Four character devices stand in for four GPUs: the gpu plugin counts device files (harness docstring).
GPU_FILES = "/dev/null,/dev/zero,/dev/full,/dev/random"


@pytest.fixture(scope="module")
def cluster() -> Iterator[SlurmCluster]:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    # nobody's sbatch reads slurm.conf: pytest's own temporary tree is root-only (0700), so use /tmp
    shared = Path(tempfile.mkdtemp(prefix="hpcforge-live-"))
    shared.chmod(0o755)
    jwt_key = shared / "jwt.key"
    jwt_key.write_bytes(os.urandom(32))
    jwt_key.chmod(0o600)
    try:
        with SlurmCluster(
            shared / "cluster",
            "live",
            nodes=[node_line("cpu1", cpus=2), node_line("cpu2", cpus=2), node_line("gpu1", cpus=2, gres="gpu:h100:4")],
            partitions=[
                "PartitionName=cpu Nodes=cpu1,cpu2 Default=YES State=UP MaxTime=INFINITE",
                "PartitionName=gpu Nodes=gpu1 State=UP MaxTime=1-00:00:00",
            ],
            extra_conf=f"GresTypes=gpu\nAuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key={jwt_key}\n",
            gres_conf=f"NodeName=gpu1 Name=gpu Type=h100 File={GPU_FILES}\n",
        ) as running:
            yield running
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@pytest.fixture(scope="module")
def jobs(cluster: SlurmCluster) -> dict[str, int]:
    def as_nobody(*argv: str) -> int:
        result = run(["sbatch", "--parsable", "-D", "/tmp", *argv], env=cluster.env(), user="nobody", group="nogroup", cwd="/tmp")
        assert result.returncode == 0, result.stderr
        return int(result.stdout.strip().split(";")[0])

    sleep = "sleep 600\n"
    submitted = {
        "train": cluster.sbatch(sleep, "gpu", args=["-J", "train", "-A", "ml", "--gres=gpu:h100:2", "-t", "12:00:00"]),
        "infer": cluster.sbatch(sleep, "gpu", args=["-J", "infer", "-A", "ml", "--gres=gpu:1", "-t", "30"]),
        "mpi": cluster.sbatch(sleep, "cpu", args=["-J", "mpi", "-A", "physics", "-N", "2", "-n", "2", "-t", "1:00:00"]),
        "post": as_nobody("-p", "cpu", "-J", "post", "-A", "bio", "-n", "1", "-t", "UNLIMITED", "--wrap", "sleep 600"),
    }
    for job in submitted.values():
        assert cluster.wait_job(job, 60, states={"RUNNING"}) == "RUNNING", cluster.job_info(job)
    # gpu1's two CPUs are taken: this one waits, and holds no node
    submitted["waiting"] = cluster.sbatch(sleep, "gpu", args=["-J", "waiting", "--gres=gpu:h100:4", "-t", "1:00:00"])
    time.sleep(2)  # a measurable elapsed time
    return submitted


@pytest.fixture(scope="module")
def captured(cluster: SlurmCluster, jobs: dict[str, int]) -> tuple[Path, Path, float]:
    folder = cluster.tmp_dir / "capture"
    folder.mkdir()
    for command, name in ((["squeue", "--json"], "squeue.json"), (["sinfo", "--json"], "sinfo.json")):
        result = cluster.run(*command, check=True)
        (folder / name).write_text(result.stdout)
    return folder / "squeue.json", folder / "sinfo.json", time.time()


def _plain_squeue(cluster: SlurmCluster) -> dict[int, tuple[str, str, str, str]]:
    """job id -> (state, user, nodes, tres-per-node) as plain `squeue` prints them."""
    lines = cluster.run("squeue", "-h", "-o", "%i|%T|%u|%N|%b", check=True).stdout.splitlines()
    return {int(i): (state, user, nodes, tres) for i, state, user, nodes, tres in (line.split("|") for line in lines)}


def test_the_json_is_what_slurm_2605_prints(captured: tuple[Path, Path, float]) -> None:
    squeue, sinfo, _ = captured
    for path in (squeue, sinfo):
        meta = json.loads(path.read_text())["meta"]
        assert meta["slurm"]["release"] == "26.05.3" and meta["plugin"]["data_parser"] == "data_parser/v0.0.45"


def test_jobs_on_the_gpu_node_are_at_risk_with_their_gpus(
    cluster: SlurmCluster, jobs: dict[str, int], captured: tuple[Path, Path, float]
) -> None:
    squeue, sinfo, observed = captured
    live = load_live(squeue, sinfo, observed_at=observed)
    impact = jobs_at_risk(live, {"gpu1"})
    plain = _plain_squeue(cluster)
    assert {risk.job.job_id for risk in impact.jobs} == {jobs["train"], jobs["infer"]}
    assert {j for j, (state, _, nodes, _) in plain.items() if state == "RUNNING" and nodes == "gpu1"} == {
        jobs["train"],
        jobs["infer"],
    }
    gpus = {risk.job.job_id: risk.job.gpus for risk in impact.jobs}
    assert gpus == {jobs["train"]: 2, jobs["infer"]: 1}
    assert impact.gpus_out == 4 and impact.users == ("root",)
    for risk in impact.jobs:
        assert 0 < risk.elapsed_s < 300
        assert risk.gpu_hours_at_risk == pytest.approx(risk.job.gpus * risk.elapsed_s / 3600)
    limits = {risk.job.job_id: risk.job.time_limit_min for risk in impact.jobs}
    assert limits == {jobs["train"]: 720, jobs["infer"]: 30}
    text = render_text(impact)
    assert "2 running jobs of 1 user on 1 node that drain or restart (gpu1)" in text and "4 GPUs out" in text


def test_a_job_spanning_a_drained_node_and_another_user_s_job_are_at_risk(
    jobs: dict[str, int], captured: tuple[Path, Path, float]
) -> None:
    squeue, sinfo, observed = captured
    impact = jobs_at_risk(load_live(squeue, sinfo, observed_at=observed), {"cpu2", "gpu9"})
    assert [risk.job.job_id for risk in impact.jobs] == [jobs["mpi"]]
    (mpi,) = impact.jobs
    assert mpi.job.nodes == ("cpu1", "cpu2") and mpi.nodes_hit == ("cpu2",) and mpi.job.gpus == 0
    assert impact.unknown_nodes == ("gpu9",)
    both = jobs_at_risk(load_live(squeue, sinfo, observed_at=observed), {"cpu[1-2]"})
    assert {risk.job.job_id for risk in both.jobs} == {jobs["mpi"], jobs["post"]}
    assert both.users == ("nobody", "root")
    (post,) = [risk for risk in both.jobs if risk.job.job_id == jobs["post"]]
    assert post.job.time_limit_min is None and post.remaining_s is None  # -t UNLIMITED


def test_pending_jobs_hold_no_node(jobs: dict[str, int], captured: tuple[Path, Path, float]) -> None:
    squeue, sinfo, observed = captured
    live = load_live(squeue, sinfo, observed_at=observed)
    (waiting,) = [job for job in live.jobs if job.job_id == jobs["waiting"]]
    assert waiting.state == ("PENDING",) and not waiting.holds_nodes
    assert jobs["waiting"] not in {risk.job.job_id for risk in jobs_at_risk(live, {"gpu1", "cpu1", "cpu2"}).jobs}


@contextlib.contextmanager
def _slurmrestd(cluster: SlurmCluster) -> Iterator[tuple[str, str]]:
    """slurmrestd 26.05.3 in front of the cluster (rest_auth/jwt): its URL and a token of root's."""
    prefix = slurm_prefix()
    if prefix is None or not (prefix / "sbin" / "slurmrestd").exists():
        pytest.skip("slurmrestd is not in the Slurm 26.05.3 build")
    token = cluster.scontrol("token", "username=root", "lifespan=600").strip().split("=", 1)[1]
    (port,) = free_ports(1)
    # slurmrestd refuses to run as root. SLURM_JWT=daemon makes auth/jwt its plugin, unless SLURM_SACK_KEY is
    # set, which makes it auth/slurm again (src/interfaces/auth.c auth_g_init), and auth/slurm rejects every
    # request's token ("Rejecting thread config token", auth_slurm.c): the harness's sackd variables stay out.
    env = {key: value for key, value in cluster.env().items() if not key.startswith("SLURM_SACK_")}
    rest = ManagedProcess(
        [
            str(prefix / "sbin" / "slurmrestd"),
            "-a",
            "rest_auth/jwt",
            "-s",
            "openapi/slurmctld",
            "-u",
            "65534",
            "-g",
            "65534",
            f"127.0.0.1:{port}",
        ],
        name="slurmrestd",
        log_path=cluster.log_dir / "slurmrestd.log",
        env={**env, "SLURM_JWT": "daemon"},
    )
    try:
        url = f"http://127.0.0.1:{port}"

        def answers() -> bool:
            try:
                fetch_live(url, token, user="root", timeout=5)
            except Exception:
                return False
            return True

        wait_until(answers, 30, "slurmrestd to answer", log=[cluster.log_dir / "slurmrestd.log"])
        yield url, token
    finally:
        rest.stop()


def test_slurmrestd_gives_the_same_jobs_at_risk(cluster: SlurmCluster, captured: tuple[Path, Path, float]) -> None:
    with _slurmrestd(cluster) as (url, token):
        squeue, sinfo, observed = captured
        from_files = jobs_at_risk(load_live(squeue, sinfo, observed_at=observed), {"gpu1", "cpu1"})
        from_rest = jobs_at_risk(fetch_live(url, token, user="root", observed_at=observed), {"gpu1", "cpu1"})
        assert [(r.job.job_id, r.job.gpus, r.job.user, r.job.nodes) for r in from_rest.jobs] == [
            (r.job.job_id, r.job.gpus, r.job.user, r.job.nodes) for r in from_files.jobs
        ]
        assert from_rest.gpus_out == from_files.gpus_out == 4 and from_rest.release == "26.05.3"


def test_the_drain_block_of_the_operations_guide_runs_against_this_cluster(
    cluster: SlurmCluster, jobs: dict[str, int], tmp_path: Path
) -> None:
    """docs/operations.md "Which running jobs a drain hits" (`<!-- runs: real-daemon live-impact -->`), as written:
    squeue/sinfo on this cluster, then ./hpcforge live-impact from the files and from slurmrestd, with this cluster's
    GPU node and a CPU node for the guide's `gpu-a100-[0-3]` and a real token for `SLURM_JWT=...`."""
    from tests.test_docs_commands import _hpcforge_dir

    text = block("live-impact")
    with _slurmrestd(cluster) as (url, token):
        for old, new in (("'gpu-a100-[0-3]'", "'gpu1,cpu1'"), ("SLURM_JWT=...", f"SLURM_JWT={token}")):
            assert old in text
            text = text.replace(old, new)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", text],
            cwd=_hpcforge_dir(tmp_path / "login"),
            env={**cluster.env(), "SLURMRESTD_URL": url},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert (tmp_path / "login" / "squeue.json").is_file() and (tmp_path / "login" / "sinfo.json").is_file()
    reports = done.stdout.split("Live impact: ")[1:]
    assert len(reports) == 2, done.stdout
    assert "(squeue.json + sinfo.json)" in reports[0] and "batch 1: gpu1" in reports[0]  # --max-unavailable 1
    assert "(slurmrestd)" in reports[1]
    running = {jobs[name] for name in ("train", "infer", "mpi", "post")}  # on gpu1 and cpu1; the pending one holds no node
    for report in reports:
        rows = {int(line.split()[0]) for line in report.splitlines() if re.match(r"^  \d+ +(root|nobody) ", line)}
        assert rows == running, report
