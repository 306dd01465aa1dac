"""Scheduled active GPU checks (hpcforge:gpu.activeChecks, issue 28): the typed config and its checks, what one
costs in GPU-hours a week (`weekly_gpu_hours`), what prod renders (ConfigMap, CronJobs), and the check job script
(scripts/gpu/active-check.sh) against faked tools replaying published or reconstructed outputs:
`dcgmi diag` of faulty nodes (tests/fixtures/dcgmi/), nccl-tests' all_reduce_perf on two 8x H100 nodes
(tests/fixtures/nccl-tests/, NVIDIA/nccl-tests#294) and `ibstat` (tests/fixtures/ibstat/, reconstructed).
The drain/resume cycle against a real Slurm 26.05.3 is in tests/components/layers/slurm/test_real_active_checks.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from components.layers.gpu.config import runs_per_week
from components.layers.slurm.accounts_job import SACK_START
from components.layers.slurm.active_checks import ACTIVE_CHECKS_MAP, weekly_gpu_hours
from components.site.loader import ConfigError, load_config
from components.versions import Images
from offline.program.engine import RecordedStack
from tests.helpers import REPO, config_values, raw_config
from tests.test_layers import objects, one

SCRIPT = REPO / "scripts/gpu/active-check.sh"
FIXTURES = REPO / "tests/fixtures"


def _prod_with(mutate: Any) -> Any:
    values = config_values("prod")
    mutate(values)
    return load_config(raw_config(values))


def _checks(values: dict[str, Any]) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = values["hpcforge:gpu"]["activeChecks"]
    return checks


# --- config and cost ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "runs"),
    [
        ("0 3 * * 0", 1.0),  # weekly, Sunday
        ("0 3 * * 7", 1.0),  # 7 is Sunday too
        ("30 2 * * *", 7.0),
        ("*/15 * * * *", 672.0),
        ("0 */6 * * 1-5", 20.0),
        ("0 3 1 * *", 12 / (365.2425 / 7)),  # monthly: 12 a year
    ],
)
def test_runs_per_week_of_a_cron_schedule(schedule: str, runs: float) -> None:
    assert runs_per_week(schedule) == pytest.approx(runs)


def test_weekly_gpu_hours_of_prods_checks() -> None:
    config = load_config(raw_config(config_values("prod")))
    # dcgm: weekly, 8 a100 + 4 h100 nodes x 8 GPUs, 20 min; nccl: weekly, 4 h100 nodes in pairs x 8 GPUs, 15 min;
    # ib: daily, 4 h100 nodes x 8 GPUs, 5 min.
    assert weekly_gpu_hours(config.slurm, config.gpu.active_checks) == {"dcgm": 32.0, "nccl": 8.0, "ib": 18.7}


def test_an_allreduce_holds_a_full_last_group() -> None:
    def odd(values: dict[str, Any]) -> None:
        values["hpcforge:slurm"]["nodesets"][3]["replicas"] = 3
        _checks(values)[1].update(nodes=2, timeLimitMinutes=60)

    # 3 nodes in pairs: 2 pairs, the last filled with a node already tested: 4 nodes x 8 GPUs x 1 h, weekly.
    assert weekly_gpu_hours(_prod_with(odd).slurm, _prod_with(odd).gpu.active_checks)["nccl"] == 32.0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda v: _checks(v)[0].update(nodesets=["cpu"]),
            "hpcforge:gpu.activeChecks[0].nodesets[0]: 'cpu' is not a GPU nodeset",
        ),
        (
            lambda v: _checks(v)[1].update(nodes=8),
            "hpcforge:gpu.activeChecks[1].nodes: an all-reduce across 8 nodes, but nodeset 'gpu-h100' has 4",
        ),
        (lambda v: _checks(v)[2].update(name="dcgm"), "hpcforge:gpu.activeChecks[2].name: 'dcgm' is used by another check"),
        (lambda v: _checks(v)[2].update(schedule="0 25 * * *"), "hpcforge:gpu.activeChecks[2].schedule"),
        (lambda v: _checks(v)[2].update(schedule="daily"), "hpcforge:gpu.activeChecks[2].schedule"),
        (lambda v: _checks(v)[2].update(name="IB_links"), "hpcforge:gpu.activeChecks[2].name"),
        (
            lambda v: v["hpcforge:slurm"].update(pyxis=False) or v["hpcforge:gpu"]["evidence"].update(enabled=False),
            "hpcforge:gpu.activeChecks[0].kind: dcgm-diag starts its image (nccl-tests, DCGM) with srun --container-image",
        ),
    ],
)
def test_active_check_mistakes_name_the_key(mutate: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        _prod_with(mutate)


# --- what prod renders ----------------------------------------------------------------------------------------------


@pytest.mark.program
def test_prod_runs_each_check_from_a_cronjob_that_never_overlaps(prod_stack: RecordedStack) -> None:
    cronjobs = {key: r.inputs["spec"] for key, r in objects(prod_stack, "CronJob").items() if "gpu-check-" in key}
    assert set(cronjobs) == {"slurm/gpu-check-dcgm", "slurm/gpu-check-nccl", "slurm/gpu-check-ib"}
    ib = cronjobs["slurm/gpu-check-ib"]
    assert ib["schedule"] == "30 2 * * *" and ib["concurrencyPolicy"] == "Forbid"
    pod = ib["jobTemplate"]["spec"]["template"]["spec"]
    command = pod["containers"][0]["command"]
    assert command[-3:] == ["ib", "--script", "/etc/hpcforge/active-checks/active-check.sh"]
    # sackd first, as in the accounts Job: under auth/slurm the clients ask its socket for a token.
    assert command[:3] == ["/bin/sh", "-c", SACK_START]
    assert {"name": "sack", "mountPath": "/run/slurm"} in pod["containers"][0]["volumeMounts"]
    assert pod["containers"][0]["image"] == Images.LOGIN.ref
    data = one(prod_stack, "ConfigMap", "slurm", ACTIVE_CHECKS_MAP)["data"]
    assert "# --- include ../" not in data["active-check.sh"] and "dcgm_reason()" in data["active-check.sh"]
    checks = {c["name"]: c for c in json.loads(data["checks.json"])["checks"]}
    assert checks["nccl"]["partition"] == checks["dcgm"]["partition"] == "gpu"  # the first that holds the nodesets
    assert checks["dcgm"]["env"]["IMAGE"] == Images.DCGM.ref and checks["ib"]["env"]["MIN_RATE"] == "400"


# --- the check job script ---------------------------------------------------------------------------------------


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)


def _run(tmp_path: Path, kind: str, env: dict[str, str], node: bool = True) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    _fake(bin_dir, "scontrol", f'echo "$*" >> {tmp_path}/scontrol.log\n[ "$1 $2" = "show hostnames" ] && echo n1 n2; exit 0')
    environment = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "ACTIVE_CHECK_NAME": "weekly",
        "ACTIVE_CHECK_KIND": kind,
        "SLURMD_NODENAME": "n1",
        "SLURM_JOB_NODELIST": "n[1-2]",
        "ACTIVE_CHECK_TIMEOUT_SECONDS": "5",
        **({"ACTIVE_CHECK_NODE": "1"} if node else {}),
        **env,
    }
    return subprocess.run(["bash", str(SCRIPT)], env=environment, capture_output=True, text=True, timeout=60, check=False)


def _drains(tmp_path: Path) -> list[str]:
    log = tmp_path / "scontrol.log"
    return [line for line in log.read_text().splitlines() if line.startswith("update")] if log.exists() else []


def _published(name: str) -> str:
    """A fixture's text after its leading '#' header (nccl-tests' own output has '#' lines too)."""
    lines = (FIXTURES / name).read_text().splitlines(True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "".join(lines)


def test_a_failed_dcgm_diagnostic_drains_the_node_naming_the_check(tmp_path: Path) -> None:
    (tmp_path / "out").write_text(_published("dcgmi/row-remap-pending.txt"))
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "dcgmi", f'echo "$*" > {tmp_path}/dcgmi.args; cat {tmp_path}/out; exit 226')
    result = _run(tmp_path, "dcgm-diag", {"ACTIVE_CHECK_DCGM_LEVEL": "3"})
    assert result.returncode == 1
    reason = "active-check weekly: dcgmi diag -r 3 failed (exit 226): Error: GPU 3 has uncorrectable memory errors and row remappings are pending"
    assert result.stderr.strip() == reason
    assert (tmp_path / "dcgmi.args").read_text().strip() == "diag -r 3"
    assert _drains(tmp_path) == [f"update NodeName=n1 State=DRAIN Reason={reason}"]


def test_a_passing_dcgm_diagnostic_drains_nothing(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "dcgmi", "echo '| Deployment | Pass |'; exit 0")
    result = _run(tmp_path, "dcgm-diag", {})
    assert result.returncode == 0 and _drains(tmp_path) == []
    assert "n1: dcgmi diag -r 2 passed" in result.stdout


def test_a_hung_dcgmi_fails_the_check_in_time(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "dcgmi", 'trap "" TERM; sleep 60')
    started = time.monotonic()
    result = _run(tmp_path, "dcgm-diag", {"ACTIVE_CHECK_TIMEOUT_SECONDS": "1", "GPU_CHECK_KILL_AFTER_SECONDS": "1"})
    assert time.monotonic() - started < 10
    assert result.returncode == 1 and "dcgmi diag -r 2 did not finish within 1s" in result.stderr


@pytest.mark.parametrize(
    ("fixture", "floor", "verdict"),
    [
        ("h100x16-two-nodes.txt", "300", None),
        ("h100x16-two-nodes.txt", "450", "all-reduce bus bandwidth 406.034 GB/s is below 450 GB/s"),
        ("ranks-ran-alone.txt", "300", "all-reduce bus bandwidth 0 GB/s is below 300 GB/s"),
    ],
)
def test_the_allreduce_drains_every_node_of_the_job_below_the_floor(
    tmp_path: Path, fixture: str, floor: str, verdict: str | None
) -> None:
    (tmp_path / "out").write_text(_published(f"nccl-tests/{fixture}"))
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "srun", f'echo "$*" > {tmp_path}/srun.args; cat {tmp_path}/out')
    result = _run(tmp_path, "nccl-allreduce", {"ACTIVE_CHECK_MIN_BUSBW": floor, "SLURM_GPUS_ON_NODE": "8"}, node=False)
    args = (tmp_path / "srun.args").read_text().split()
    assert args[:2] == ["--mpi=pmix", "--ntasks-per-node=8"] and "all_reduce_perf_mpi" in args
    if verdict is None:
        assert result.returncode == 0 and _drains(tmp_path) == []
    else:
        assert result.returncode == 1
        assert _drains(tmp_path) == [
            f"update NodeName={n} State=DRAIN Reason=active-check weekly: {verdict}" for n in ("n1", "n2")
        ]


@pytest.mark.parametrize(
    ("fixture", "rate", "verdict"),
    [
        ("healthy-ndr.txt", "400", None),
        ("healthy-ndr.txt", "800", "mlx5_0 port 1: rate 400 Gb/s (at least 800)"),
        ("port-down.txt", "400", "mlx5_0 port 1: state Down"),
    ],
)
def test_the_link_check_drains_a_node_with_a_port_down_or_slow(
    tmp_path: Path, fixture: str, rate: str, verdict: str | None
) -> None:
    (tmp_path / "bin").mkdir()
    _fake(tmp_path / "bin", "ibstat", f"cat {FIXTURES / 'ibstat' / fixture}")
    result = _run(tmp_path, "ib-link", {"ACTIVE_CHECK_MIN_RATE": rate})
    if verdict is None:
        assert result.returncode == 0 and _drains(tmp_path) == []
    else:
        assert result.returncode == 1
        assert _drains(tmp_path) == [f"update NodeName=n1 State=DRAIN Reason=active-check weekly: {verdict}"]


def test_preview_and_diff_print_what_each_check_costs_in_gpu_hours(prod_stack: RecordedStack) -> None:
    """Each CronJob carries its `weekly_gpu_hours` figure; preview sums them, and a diff that changes a schedule
    names the old and new cost (issue 28: the cost printed by the impact/preview output)."""
    import copy

    from offline.diff.base import State
    from offline.diff.impact import assess
    from offline.diff.plan import make_plan
    from offline.preview.summary import active_check_costs

    config = load_config(config_values("prod"), stack="prod")
    expected = weekly_gpu_hours(config.slurm, config.gpu.active_checks)
    line = active_check_costs(prod_stack)
    assert line is not None and f"{sum(expected.values()):.1f} GPU-hours a week" in line
    for name, hours in expected.items():
        assert f"gpu-check-{name} {hours:.1f}" in line
    base = State.from_recorded(prod_stack, "prod")
    head = copy.deepcopy(base)
    for resource in head.resources:
        if resource["name"] == "slurm/gpu-check-nccl":
            resource["inputs"]["metadata"]["annotations"]["hpcforge.io/gpu-hours-per-week"] = "16.0"
            resource["inputs"]["spec"]["schedule"] = "0 3 * * 0,3"
    effects = [e for e in assess(make_plan(base, head)).effects if "active GPU check" in e.what]
    assert [e.what for e in effects] == [
        f"active GPU check gpu-check-nccl: up to 16.0 GPU-hours a week (was {expected['nccl']:.1f})"
    ]
    assert effects[0].severity == "none"
