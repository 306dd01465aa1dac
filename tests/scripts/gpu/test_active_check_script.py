"""scripts/gpu/active-check.sh, the job script of the active GPU checks, against faked tools replaying published or
reconstructed outputs: `dcgmi diag` of faulty nodes (tests/fixtures/dcgmi/), nccl-tests' all_reduce_perf on two 8x H100
nodes (tests/fixtures/nccl-tests/, NVIDIA/nccl-tests#294), and RDMA ports' sysfs files in the kernel's formats.

The script judges and never changes a node: its verdict is its exit status (0 pass, 10 the hardware failed, 11 it could
not judge) with the reason in the job's AdminComment, which the driver reads from accounting. Only 10 may lead to a
drain (issue 35 item 2). The whole cycle against a real Slurm 26.05.3 is in tests/scripts/gpu/test_real_active_checks.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO

SCRIPT = REPO / "scripts/gpu/active-check.sh"
FIXTURES = REPO / "tests/fixtures"
FAIL, ERROR = 10, 11


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)


def _run(tmp_path: Path, kind: str, env: dict[str, str], node: bool = True) -> subprocess.CompletedProcess[str]:
    """The script with PATH = the fakes, then /usr/bin and /bin (where no dcgmi or srun is)."""
    assert not any(shutil.which(tool, path="/usr/bin:/bin") for tool in ("dcgmi", "srun", "scontrol"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    _fake(bin_dir, "scontrol", f'echo "$*" >> {tmp_path}/scontrol.log; exit 0')
    environment = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "ACTIVE_CHECK_NAME": "weekly",
        "ACTIVE_CHECK_KIND": kind,
        "SLURMD_NODENAME": "n1",
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": "n[1-2]",
        "ACTIVE_CHECK_TIMEOUT_SECONDS": "5",
        **({"ACTIVE_CHECK_NODE": "1"} if node else {}),
        **env,
    }
    return subprocess.run(["bash", str(SCRIPT)], env=environment, capture_output=True, text=True, timeout=60, check=False)


def _scontrol(tmp_path: Path) -> list[str]:
    log = tmp_path / "scontrol.log"
    return log.read_text().splitlines() if log.exists() else []


def _verdict(tmp_path: Path, result: subprocess.CompletedProcess[str], status: int, reason: str) -> None:
    """Exit `status`, `reason` on stderr and as the job's AdminComment, and no node touched."""
    assert result.returncode == status, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == reason
    assert _scontrol(tmp_path) == [f"update JobId=4242 AdminComment={reason}"]


def _published(name: str) -> str:
    """A fixture's text after its leading '#' header (nccl-tests' own output has '#' lines too)."""
    lines = (FIXTURES / name).read_text().splitlines(True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "".join(lines)


# --- dcgm-diag ------------------------------------------------------------------------------------------------------


def test_a_failed_dcgm_diagnostic_is_a_failing_verdict_recorded_in_the_job(tmp_path: Path) -> None:
    (tmp_path / "out").write_text(_published("dcgmi/row-remap-pending.txt"))
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "dcgmi", f'echo "$*" > {tmp_path}/dcgmi.args; cat {tmp_path}/out; exit 226')
    result = _run(tmp_path, "dcgm-diag", {"ACTIVE_CHECK_DCGM_LEVEL": "3"})
    reason = "active-check weekly: dcgmi diag -r 3 failed (exit 226): Error: GPU 3 has uncorrectable memory errors and row remappings are pending"
    _verdict(tmp_path, result, FAIL, reason)
    assert (tmp_path / "dcgmi.args").read_text().strip() == "diag -r 3"


def test_a_passing_dcgm_diagnostic_records_nothing(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "dcgmi", "echo '| Deployment | Pass |'; exit 0")
    result = _run(tmp_path, "dcgm-diag", {})
    assert result.returncode == 0 and _scontrol(tmp_path) == []
    assert "n1: dcgmi diag -r 2 passed" in result.stdout


@pytest.mark.parametrize(
    ("dcgmi", "reason"),
    [
        (
            "echo 'Error: unable to establish a connection to the specified host: localhost'; exit 255",
            "dcgmi diag -r 2 exited 255 without a result table: Error: unable to establish a connection to the specified host: localhost",
        ),
        (None, "dcgmi is not installed here (run the check in an image with DCGM)"),
    ],
)
def test_a_dcgmi_that_cannot_reach_its_host_engine_is_not_a_verdict(tmp_path: Path, dcgmi: str | None, reason: str) -> None:
    """Issue 35 items 2 and 5: no host engine at localhost:5555, or no dcgmi, says nothing about the GPUs."""
    (tmp_path / "bin").mkdir()
    if dcgmi is not None:
        _fake(tmp_path / "bin", "dcgmi", dcgmi)
    result = _run(tmp_path, "dcgm-diag", {})
    _verdict(tmp_path, result, ERROR, f"active-check weekly: not judged: {reason}")


def test_a_hung_dcgmi_is_not_a_verdict_and_ends_in_time(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "dcgmi", 'trap "" TERM; sleep 60')
    started = time.monotonic()
    result = _run(tmp_path, "dcgm-diag", {"ACTIVE_CHECK_TIMEOUT_SECONDS": "1", "GPU_CHECK_KILL_AFTER_SECONDS": "1"})
    assert time.monotonic() - started < 10
    _verdict(tmp_path, result, ERROR, "active-check weekly: not judged: dcgmi diag -r 2 did not finish within 1s")


def test_the_job_asks_its_nodes_host_engine_from_the_dcgm_image_and_records_the_verdict_itself(tmp_path: Path) -> None:
    """Issue 35 item 5: dcgmi alone runs in the DCGM image (which has no scontrol), against the node's host engine
    (`--host`: the operator's Service with internalTrafficPolicy Local); the batch script, in the slurmd pod, judges
    and records. Main ran the whole node part in the DCGM image, dcgmi at localhost:5555, where no engine listens."""
    (tmp_path / "out").write_text(_published("dcgmi/row-remap-pending.txt"))
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "dcgmi", f'echo "$*" > {tmp_path}/dcgmi.args; cat {tmp_path}/out; exit 226')
    # srun with Pyxis: its options, then the command it starts in the container
    _fake(
        tmp_path / "bin",
        "srun",
        f'echo "$*" > {tmp_path}/srun.args\nwhile [ "${{1#--}}" != "$1" ]; do shift; done\nexec "$@"',
    )
    host = "nvidia-dcgm.gpu-operator.svc"
    image = "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04"
    result = _run(tmp_path, "dcgm-diag", {"ACTIVE_CHECK_IMAGE": image, "ACTIVE_CHECK_DCGM_HOST": host}, node=False)
    reason = "active-check weekly: dcgmi diag -r 2 failed (exit 226): Error: GPU 3 has uncorrectable memory errors and row remappings are pending"
    _verdict(tmp_path, result, FAIL, reason)
    assert (tmp_path / "srun.args").read_text().split() == [
        "--ntasks=1", "--nodes=1", f"--container-image={image}", "dcgmi", "diag", "-r", "2", "--host", host,
    ]  # fmt: skip
    assert (tmp_path / "dcgmi.args").read_text().split() == ["diag", "-r", "2", "--host", host]


def test_a_dcgm_image_that_would_not_start_is_not_a_verdict(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "srun", "echo 'pyxis: failed to import docker image'; exit 1")
    result = _run(tmp_path, "dcgm-diag", {"ACTIVE_CHECK_IMAGE": "img:1"}, node=False)
    _verdict(
        tmp_path,
        result,
        ERROR,
        "active-check weekly: not judged: dcgmi diag -r 2 exited 1 without a result table: pyxis: failed to import docker image",
    )


# --- nccl-allreduce -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "floor", "status", "verdict"),
    [
        ("h100x16-two-nodes.txt", "300", 0, None),
        ("h100x16-two-nodes.txt", "450", FAIL, "all-reduce bus bandwidth 406.034 GB/s is below 450 GB/s"),
        # nccl-tests built without MPI: every rank alone, nothing measured (not the hardware's fault)
        (
            "ranks-ran-alone.txt",
            "300",
            ERROR,
            "not judged: all-reduce bus bandwidth 0: every rank ran alone, nothing was measured",
        ),
    ],
)
def test_the_allreduce_judges_only_a_measured_bandwidth(
    tmp_path: Path, fixture: str, floor: str, status: int, verdict: str | None
) -> None:
    (tmp_path / "out").write_text(_published(f"nccl-tests/{fixture}"))
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "srun", f'echo "$*" > {tmp_path}/srun.args; cat {tmp_path}/out')
    result = _run(tmp_path, "nccl-allreduce", {"ACTIVE_CHECK_MIN_BUSBW": floor, "SLURM_GPUS_ON_NODE": "8"}, node=False)
    args = (tmp_path / "srun.args").read_text().split()
    assert args[:2] == ["--mpi=pmix", "--ntasks-per-node=8"] and "all_reduce_perf_mpi" in args
    if verdict is None:
        assert result.returncode == 0 and _scontrol(tmp_path) == []
    else:
        _verdict(tmp_path, result, status, f"active-check weekly: {verdict}")


def test_wrong_allreduce_results_fail_the_hardware(tmp_path: Path) -> None:
    text = _published("nccl-tests/h100x16-two-nodes.txt").replace(
        "Out of bounds values : 0 OK", "Out of bounds values : 12 FAILED"
    )
    (tmp_path / "out").write_text(text)
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "srun", f"cat {tmp_path}/out; exit 1")
    result = _run(tmp_path, "nccl-allreduce", {"ACTIVE_CHECK_MIN_BUSBW": "300", "SLURM_GPUS_ON_NODE": "8"}, node=False)
    _verdict(tmp_path, result, FAIL, "active-check weekly: all-reduce returned wrong results (12 values out of bounds)")


@pytest.mark.parametrize(
    ("srun", "gpus", "reason"),
    [
        (
            "echo 'srun: error: pmix: plugin not found'; exit 1",
            "8",
            "all-reduce failed (exit 1): srun: error: pmix: plugin not found",
        ),
        ("exit 0", "", "the job has no GPUs (SLURM_GPUS_ON_NODE is empty: submitted without --gres?)"),
    ],
)
def test_an_allreduce_that_could_not_run_is_not_a_verdict(tmp_path: Path, srun: str, gpus: str, reason: str) -> None:
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "srun", srun)
    result = _run(tmp_path, "nccl-allreduce", {"SLURM_GPUS_ON_NODE": gpus} if gpus else {}, node=False)
    _verdict(tmp_path, result, ERROR, f"active-check weekly: not judged: {reason}")


# --- ib-link --------------------------------------------------------------------------------------------------------
# What the kernel reports for an RDMA port (drivers/infiniband/core/sysfs.c `state_show` "%d: %s", `phys_state_show`
# "%u: %s", `rate_show` "%d%s Gb/sec (%dX%s)"): a healthy NDR port, and the faults the check names.
HEALTHY_PORT = {"state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "400 Gb/sec (4X NDR)"}


def _sysfs(root: Path, hcas: dict[str, dict[str, str] | None]) -> Path:
    """A /sys/class/infiniband with port 1 of each HCA (None: the HCA without ports, e.g. a second function)."""
    for hca, port in hcas.items():
        (root / hca).mkdir(parents=True)
        if port is None:
            continue
        (root / hca / "ports" / "1").mkdir(parents=True)
        for name, text in port.items():
            (root / hca / "ports" / "1" / name).write_text(text + "\n")
    return root


def _ib(tmp_path: Path, hcas: dict[str, dict[str, str] | None], **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "bin").mkdir(exist_ok=True)
    sysfs = _sysfs(tmp_path / "sys", hcas)
    return _run(tmp_path, "ib-link", {"ACTIVE_CHECK_SYSFS": str(sysfs), "ACTIVE_CHECK_MIN_RATE": "400", **env})


@pytest.mark.parametrize(
    ("mlx5_1", "rate", "verdict"),
    [
        (HEALTHY_PORT, "400", None),
        (HEALTHY_PORT, "800", "mlx5_0 port 1: rate 400 Gb/s (at least 800)"),
        ({**HEALTHY_PORT, "state": "1: DOWN", "phys_state": "3: Disabled"}, "400", "mlx5_1 port 1: state DOWN"),
        ({**HEALTHY_PORT, "phys_state": "2: Polling"}, "400", "mlx5_1 port 1: physical state Polling"),
        ({**HEALTHY_PORT, "rate": "200 Gb/sec (4X HDR)"}, "400", "mlx5_1 port 1: rate 200 Gb/s (at least 400)"),
    ],
)
def test_the_link_check_fails_a_port_down_or_slow(tmp_path: Path, mlx5_1: dict[str, str], rate: str, verdict: str | None) -> None:
    result = _ib(
        tmp_path, {"mlx5_0": HEALTHY_PORT, "mlx5_1": mlx5_1}, ACTIVE_CHECK_HCAS="mlx5_0,mlx5_1", ACTIVE_CHECK_MIN_RATE=rate
    )
    if verdict is None:
        assert result.returncode == 0 and _scontrol(tmp_path) == [], result.stderr
        assert "n1: mlx5_0,mlx5_1: 2 port(s) ACTIVE, LinkUp, at least 400 Gb/s" in result.stdout
    else:
        _verdict(tmp_path, result, FAIL, f"active-check weekly: {verdict}")


def test_only_the_pools_hcas_are_judged(tmp_path: Path) -> None:
    """Issue 35 item 4: a privileged slurmd pod sees every RDMA device of its host; a down port of one the pool does
    not declare (here a management port, mlx5_4) is not this check's business. Main judged every port ibstat listed."""
    down = {**HEALTHY_PORT, "state": "1: DOWN", "phys_state": "3: Disabled"}
    result = _ib(tmp_path, {"mlx5_0": HEALTHY_PORT, "mlx5_4": down}, ACTIVE_CHECK_HCAS="mlx5_0")
    assert result.returncode == 0 and _scontrol(tmp_path) == [], result.stderr


def test_a_declared_hca_the_node_lacks_fails_it(tmp_path: Path) -> None:
    result = _ib(tmp_path, {"mlx5_0": HEALTHY_PORT, "mlx5_2": HEALTHY_PORT}, ACTIVE_CHECK_HCAS="mlx5_0,mlx5_1")
    _verdict(tmp_path, result, FAIL, "active-check weekly: mlx5_1: not present (the node has mlx5_0 mlx5_2)")


@pytest.mark.parametrize(
    ("hcas", "declared", "reason"),
    [
        ({}, "mlx5_0", "{sys} lists no RDMA device (no driver loaded, or this pod does not see the host's devices)"),
        ({"mlx5_0": HEALTHY_PORT}, "", "no HCA to check (ACTIVE_CHECK_HCAS is empty: rdma.pools[].nics[].hca)"),
        ({"mlx5_0": None}, "mlx5_0", "mlx5_0: no port under {sys}"),
    ],
)
def test_no_device_to_read_is_not_a_verdict(tmp_path: Path, hcas: dict[str, Any], declared: str, reason: str) -> None:
    """Issue 35 items 2 and 4: what this pod cannot see says nothing about the links (main: 'ibstat is not installed
    here' on every run, the slurmd images having no infiniband-diags)."""
    (tmp_path / "sys").mkdir()
    result = (
        _ib(tmp_path, hcas, ACTIVE_CHECK_HCAS=declared)
        if hcas
        else _run(tmp_path, "ib-link", {"ACTIVE_CHECK_SYSFS": str(tmp_path / "sys"), "ACTIVE_CHECK_HCAS": declared})
    )
    _verdict(tmp_path, result, ERROR, "active-check weekly: not judged: " + reason.format(sys=tmp_path / "sys"))


def test_a_hung_port_read_is_not_a_verdict_and_ends_in_time(tmp_path: Path) -> None:
    """A sysfs read goes to the adapter's driver: a broken adapter can leave it blocked (a FIFO stands in for it)."""
    sysfs = _sysfs(tmp_path / "sys", {"mlx5_0": HEALTHY_PORT})
    (sysfs / "mlx5_0/ports/1/state").unlink()
    os.mkfifo(sysfs / "mlx5_0/ports/1/state")
    (tmp_path / "bin").mkdir()
    started = time.monotonic()
    result = _run(
        tmp_path,
        "ib-link",
        {
            "ACTIVE_CHECK_SYSFS": str(sysfs),
            "ACTIVE_CHECK_HCAS": "mlx5_0",
            "ACTIVE_CHECK_TIMEOUT_SECONDS": "1",
            "GPU_CHECK_KILL_AFTER_SECONDS": "1",
        },
    )
    assert time.monotonic() - started < 10
    _verdict(
        tmp_path,
        result,
        ERROR,
        "active-check weekly: not judged: mlx5_0 port 1: its state, physical state or rate could not be read within 1s",
    )


def test_the_node_name_in_the_sysfs_path_picks_each_nodes_tree(tmp_path: Path) -> None:
    _sysfs(tmp_path / "sys" / "n1", {"mlx5_0": HEALTHY_PORT})
    (tmp_path / "bin").mkdir()
    result = _run(
        tmp_path,
        "ib-link",
        {"ACTIVE_CHECK_SYSFS": f"{tmp_path}/sys/%n", "ACTIVE_CHECK_HCAS": "mlx5_0", "ACTIVE_CHECK_MIN_RATE": "400"},
    )
    assert result.returncode == 0, result.stderr


# --- the batch part: srun's status is the verdict -------------------------------------------------------------------


@pytest.mark.parametrize(("status", "expected"), [(0, 0), (FAIL, FAIL), (ERROR, ERROR), (137, ERROR)])
def test_the_batch_script_passes_on_the_nodes_verdict_and_nothing_else(tmp_path: Path, status: int, expected: int) -> None:
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "srun", f'echo "$*" > {tmp_path}/srun.args; exit {status}')
    result = _run(tmp_path, "ib-link", {}, node=False)
    assert result.returncode == expected, result.stderr
    assert (tmp_path / "srun.args").read_text().split()[:1] == ["--ntasks-per-node=1"]
    if status == 137:
        assert _scontrol(tmp_path) == [
            "update JobId=4242 AdminComment=active-check weekly: not judged: srun exited 137 (the check did not run to its verdict)"
        ]
    else:
        assert _scontrol(tmp_path) == []  # the node's part records its own verdict
