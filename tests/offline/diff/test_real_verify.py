"""`./hpcforge diff --verify` on the real Slurm 26.05.3 tier: predict a change with hpcforge's own rules, apply it the
way slurm-operator applies it, collect what the cluster shows, verify.

A private cluster (tests/daemons/slurm.py: slurmctld and slurmd n1, n2 on 127.0.0.1) runs a job in partition `cpu`
and one in partition `gpu`. Each step takes prod's recorded Controller with the step's slurm.conf lines as its
`extraConf` (base and head) and `inplaceReconfigure` as the step says, and runs the plan and impact of
offline/diff on it: the JSON report's `predictions` are what `--verify` checks. The same lines are then written to
the cluster's slurm.conf and applied as the operator applies a Controller change: `inplaceReconfigure: true` runs
`scontrol reconfigure` (the reconfigure sidecar), `false` recreates the slurmctld pod, here a new slurmctld process on
the same state (the harness's restart_controller). scripts/ci/collect_cluster.sh then collects around the change as
in the deploy workflow, with a stand-in for kubectl: its `exec ... -- scontrol ...` runs the real scontrol against
this cluster, and its `get pods` answers the slurmctld process as the controller pod (the container is the process:
its start time from /proc/PID/stat).

The fifth step's prediction is wrong on purpose (edited by hand after the rules made it): it claims an in-place
reconfigure and a value that is not applied, while the operator restarts slurmctld.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from offline.cli import main
from offline.diff.base import State
from offline.diff.command import Computed, report_of
from offline.diff.impact import assess
from offline.diff.plan import make_plan
from offline.program.engine import RecordedStack
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import REPO, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(600)]

COLLECT = REPO / "scripts" / "ci" / "collect_cluster.sh"
PARTITIONS = {
    "cpu": "PartitionName=cpu Nodes=n1,n2 Default=YES MaxTime=1-00:00:00 State=UP",
    "gpu": "PartitionName=gpu Nodes=n2 MaxTime=1-00:00:00 State=UP",
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    with SlurmCluster(
        tmp_path_factory.mktemp("verify"),
        "verify",
        nodes=[node_line("n1", cpus=2), node_line("n2", cpus=2)],
        partitions=list(PARTITIONS.values()),
        extra_conf="SlurmdTimeout=300\n",
    ) as running:
        yield running


def _conf(cluster: SlurmCluster) -> str:
    """The lines a step changes, as the Controller's extraConf carries them."""
    timeout = next(line for line in cluster.extra_conf.splitlines() if line.startswith("SlurmdTimeout="))
    return "\n".join([timeout, *cluster.partitions]) + "\n"


def _controller_state(stack: RecordedStack, extra_conf: str, inplace: bool) -> State:
    state = copy.deepcopy(State.from_recorded(stack, "prod"))
    for resource in state.resources:
        if resource["type"] == "kubernetes:slinky.slurm.net/v1beta1:Controller":
            resource["inputs"]["spec"]["extraConf"] = extra_conf
            resource["inputs"]["spec"]["inplaceReconfigure"] = inplace
    return state


def _predict(stack: RecordedStack, before: str, after: str, inplace: bool) -> dict[str, Any]:
    plan = make_plan(_controller_state(stack, before, inplace), _controller_state(stack, after, inplace))
    base = State("prod", [], "the deployed state", kind="recording")
    report = report_of(Computed(plan, assess(plan), base), acknowledged=True, live=None)
    return json.loads(json.dumps(report))


def _started(pid: int) -> float:
    """When process `pid` started, Unix seconds: /proc/PID/stat field 22 (clock ticks after boot) against
    /proc/uptime read at the same moment as the clock (/proc/stat's whole-second btime can be a second off)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19])
    now, uptime = time.time(), float(Path("/proc/uptime").read_text().split()[0])
    return now - uptime + ticks / os.sysconf("SC_CLK_TCK")


def _iso(when: float) -> str:
    """RFC 3339 in whole seconds, as Kubernetes writes a pod's creationTimestamp and startedAt."""
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


KUBECTL = """#!/bin/sh
# kubectl as scripts/ci/collect_cluster.sh uses it: `get pods`, `get <slinky objects>`, `-n NS exec POD -c C -- CMD`.
case "$1" in
    get) if [ "$2" = pods ]; then cat "$STUB_PODS"; else echo '{"items": []}'; fi ;;
    -n) shift 2; [ "$1" = exec ] || exit 64
        while [ "$1" != "--" ]; do shift; done
        shift; exec "$@" ;;
    *) exit 64 ;;
esac
"""


def _collect(cluster: SlurmCluster, folder: Path, phase: str) -> None:
    """scripts/ci/collect_cluster.sh PHASE FOLDER against the tier, through the kubectl stand-in."""
    kubectl = cluster.tmp_dir / "kubectl"
    if not kubectl.exists():
        kubectl.write_text(KUBECTL)
        kubectl.chmod(0o755)
    assert cluster.slurmctld is not None
    since = _iso(_started(cluster.slurmctld.pid))
    pod = {
        "metadata": {"namespace": "slurm", "name": "slurm-controller-0", "creationTimestamp": since},
        "status": {"containerStatuses": [{"name": "slurmctld", "restartCount": 0, "state": {"running": {"startedAt": since}}}]},
    }
    (cluster.tmp_dir / "pods.json").write_text(json.dumps({"items": [pod]}))
    env = cluster.env({"KUBECTL": str(kubectl), "STUB_PODS": str(cluster.tmp_dir / "pods.json")})
    result = subprocess.run(
        ["bash", str(COLLECT), phase, str(folder)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0 and "::warning::" not in result.stderr, result.stderr


def _step(
    cluster: SlurmCluster,
    stack: RecordedStack,
    folder: Path,
    *,
    inplace: bool,
    change: Callable[[SlurmCluster], None],
    wrong: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    before_conf = _conf(cluster)
    change(cluster)
    prediction = _predict(stack, before_conf, _conf(cluster), inplace)
    if wrong is not None:
        wrong(prediction)
    folder.mkdir(parents=True)
    (folder / "prediction.json").write_text(json.dumps(prediction))
    time.sleep(1.1)  # the deploy's start, BOOT_TIME and pod times have a resolution of a second
    _collect(cluster, folder / "observed", "before")
    cluster.write_config()
    if inplace:
        cluster.scontrol("reconfigure")
        time.sleep(3)
        cluster.wait_controller(60)
    else:
        cluster.restart_controller(60)
    time.sleep(2)
    _collect(cluster, folder / "observed", "after")
    code = main(
        [
            "diff",
            "--verify",
            str(folder / "prediction.json"),
            "--observed",
            str(folder / "observed"),
            "--format",
            "json",
            "--out",
            str(folder / "verify.json"),
        ]
    )
    results = json.loads((folder / "verify.json").read_text())["results"]
    print(f"\n--- {folder.name} (exit {code})")
    for result in results:
        print(f"  {result['id']:3} {result['verdict']:11} {result['text']}  |  {result['seen']}")
    return prediction, results, code


def timeout(value: int) -> Callable[[SlurmCluster], None]:
    def set_timeout(c: SlurmCluster) -> None:
        c.extra_conf = f"SlurmdTimeout={value}\n"

    return set_timeout


def longer(c: SlurmCluster) -> None:
    c.partitions = [PARTITIONS["cpu"].replace("MaxTime=1-00:00:00", "MaxTime=2-00:00:00"), PARTITIONS["gpu"]]


def without_gpu(c: SlurmCluster) -> None:
    c.partitions = [c.partitions[0]]


def wrong(prediction: dict[str, Any]) -> None:
    """The prediction made wrong by hand: an in-place reconfigure, and SlurmdTimeout=1500."""
    for claim in prediction["predictions"]:
        if claim["claim"] == "controller-pod":
            claim["expected"] = False
            claim["text"] = "the slurmctld pod slurm-controller-0 is not recreated (reconfigured in place)"
        if claim["claim"] == "slurm-config" and claim["key"] == "SlurmdTimeout":
            claim["value"], claim["text"] = "1500", "slurm.conf SlurmdTimeout = 1500 in force"


def _by_claim(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["text"]: r for r in results}


def test_verify_reports_what_the_real_slurm_did_for_five_changes(
    cluster: SlurmCluster, prod_stack: RecordedStack, tmp_path: Path
) -> None:
    long = cluster.sbatch("#!/bin/sh\nsleep 900\n", "cpu", args=["-J", "long", "-t", "60"])
    assert cluster.wait_job(long, 60, states={"RUNNING"}) == "RUNNING"
    on_gpu = cluster.sbatch("#!/bin/sh\nsleep 900\n", "gpu", args=["-J", "on-gpu", "-t", "60"])
    assert cluster.wait_job(on_gpu, 60, states={"RUNNING"}) == "RUNNING"

    # 1. inplaceReconfigure: a reload. The pod stays, the value is in force, the jobs run on.
    prediction, results, code = _step(cluster, prod_stack, tmp_path / "1-reconfigure", inplace=True, change=timeout(600))
    assert prediction["worst"] == "reload"
    claims = _by_claim(results)
    assert claims["the slurmctld pod slurm-controller-0 is not recreated (reconfigured in place)"]["verdict"] == "seen"
    assert claims["slurm.conf SlurmdTimeout = 600 in force"]["verdict"] == "seen"
    assert claims["running jobs continue"]["verdict"] == "seen"
    assert "BOOT_TIME moved" in claims["the slurmctld pod slurm-controller-0 is not recreated (reconfigured in place)"]["seen"]
    assert code == 0

    # 2. no inplaceReconfigure: the operator recreates the pod; the value is in force, the jobs run on.
    prediction, results, code = _step(cluster, prod_stack, tmp_path / "2-restart", inplace=False, change=timeout(900))
    assert prediction["worst"] == "singleton-restart"
    claims = _by_claim(results)
    assert claims["the slurmctld pod slurm-controller-0 is recreated"]["verdict"] == "seen"
    assert claims["slurm.conf SlurmdTimeout = 900 in force"]["verdict"] == "seen"
    assert claims["running jobs continue"]["verdict"] == "seen"
    assert code == 0

    # 3. a partition's MaxTime, reconfigured in place.
    prediction, results, code = _step(cluster, prod_stack, tmp_path / "3-partition-maxtime", inplace=True, change=longer)
    claims = _by_claim(results)
    assert claims["partition cpu exists with MaxTime 2-00:00:00"]["verdict"] == "seen"
    assert claims["partition cpu exists with MaxTime 2-00:00:00"]["seen"] == "partition cpu exists, MaxTime 2880 min"
    assert code == 0

    # 4. partition gpu removed while a job runs in it, with a pod restart: what happens to the job is Slurm's to say,
    # and the verdict follows what the rules predicted (jobs killed: seen; jobs continue: not seen).
    prediction, results, code = _step(cluster, prod_stack, tmp_path / "4-partition-removed", inplace=False, change=without_gpu)
    claims = _by_claim(results)
    assert claims["partition gpu is gone"]["verdict"] == "seen"
    job_claims = [r for r in results if r["claim"] == "jobs"]
    state = cluster.job_state(on_gpu)
    ended = state in slurm.TERMINAL_JOB_STATES and state != "COMPLETED"
    assert cluster.job_state(long) == "RUNNING"
    for claim in job_claims:
        predicted_end = claim["expected"] == "end"
        assert claim["verdict"] == ("seen" if predicted_end == ended else "not seen"), (claim, state)
    assert ended == (f"job {on_gpu} NODE_FAIL" in " ".join(c["seen"] for c in job_claims)), (state, job_claims)

    # 5. deliberately wrong: the prediction (edited) claims an in-place reconfigure and SlurmdTimeout=1500; the
    # operator restarts slurmctld with 1200.
    prediction, results, code = _step(cluster, prod_stack, tmp_path / "5-wrong", inplace=False, change=timeout(1200), wrong=wrong)
    claims = _by_claim(results)
    pod = claims["the slurmctld pod slurm-controller-0 is not recreated (reconfigured in place)"]
    assert pod["verdict"] == "not seen" and pod["seen"].startswith("pod recreated")
    value = claims["slurm.conf SlurmdTimeout = 1500 in force"]
    assert value["verdict"] == "not seen" and value["seen"] == "SlurmdTimeout = 1200"
    assert code == 1
