"""Tier 4 (real daemons): the active GPU checks (scripts/gpu/active_checks.py driving scripts/gpu/active-check.sh, its
include inlined as the Slurm layer renders it) against a real Slurm 26.05.3 with accounting (slurmdbd on MariaDB), run
as they are deployed (issue 35): as a dedicated user with AdminLevel=Administrator whose only credential is a JWT in
a file (the token Slinky's Token custom resource makes: tests' `slinky_token`), no slurm.key.

The site: six nodes of two nodesets (`gpu-a`, `gpu-b`, features as Slinky registers them), each with two GPUs backed
by stand-in device files, `SelectTypeParameters=CR_CPU_Memory` with `DefMemPerNode=50` (of 100), `MinJobAge=2`, and a
Prolog that drains its node, as the GPU prolog does on a bad GPU, where the test asks it to. The GPU tools are fakes
per node: each node's RDMA port in a sysfs tree of its own (ACTIVE_CHECK_SYSFS=<tmp>/sys/%n, the kernel's formats;
a FIFO stands in for a read that hangs, or that answers after 45 s), and a fake `dcgmi` on PATH that passes only in a
step that was given GPUs.

What is proven: no healthy node is drained (a busy node, a check job that times out, one whose record slurmctld has
purged, one the prolog held, slurmctld stopped mid-run), no reason the check does not own is replaced or resumed (an
admin's drain placed during the run, the prolog's), only a check that judged the hardware drains, `action: report`
changes no node, the step gets the nodes' GPUs and all their memory, and which Slurm AdminLevel each operation needs.
Jobs run under proctrack/linuxproc (no usable freezer cgroup here), so ConstrainDevices itself is not exercised: the
fake dcgmi stands in for a step that cannot open a GPU it was not given.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import hmac
import json
import os
import random
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from components.layers.slurm.script_include import inline_includes
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import mariadb as mariadb_harness
from tests.daemons import slurm as slurm_harness
from tests.daemons import slurmdbd as slurmdbd_harness
from tests.daemons.common import run, wait_until
from tests.daemons.mariadb import MariaDBServer
from tests.daemons.slurm import SlurmCluster, node_line
from tests.daemons.slurmdbd import SlurmDBD
from tests.helpers import REPO, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(600)]

CHECK_SCRIPT = REPO / "scripts/gpu/active-check.sh"
DRIVER = REPO / "scripts/gpu/active_checks.py"
NODES = {"g1": "gpu-a", "g2": "gpu-a", "g3": "gpu-a", "g4": "gpu-b", "g5": "gpu-b", "g6": "gpu-b"}
CLUSTER = "activechk"
PROLOG_REASON = "gpu-check: GPU 0 (00000000:19:00.0, NVIDIA H100 80GB HBM3): 2 volatile uncorrectable ECC error(s) (allowed: 0)"
ADMIN_REASON = "maintenance by admin"


def slinky_token(key: bytes, username: str, lifetime: int = 3600) -> str:
    """A JWT as Slinky's Token custom resource signs it (slurm-operator v1.2.1
    internal/controller/token/slurmjwt/token.go `NewSignedToken`: HS256 over the Controller's JWT key, registered claims
    jti/iss/iat/exp/nbf and Slurm's `sun`), for the Secret the check's pod mounts."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).rstrip(b"=").decode()

    now = int(time.time())
    claims = {"jti": str(uuid.uuid4()), "iss": "slurm-operator", "iat": now, "exp": now + lifetime, "nbf": now, "sun": username}
    signing_input = f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}"
    signature = hmac.new(key, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


class Driver:
    """The driver running in the background, its output in files (the test acts while it waits)."""

    def __init__(self, argv: list[str], env: dict[str, str], prefix: Path) -> None:
        self.out, self.err = prefix.with_suffix(".out"), prefix.with_suffix(".err")
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err, text=True, cwd=prefix.parent)

    def submitted(self, *nodes: str) -> bool:
        progress = self.err.read_text()
        return all(f" on {node}\n" in progress for node in nodes)

    def finish(self, timeout: float = 400) -> tuple[int, str, str]:
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return code, self.out.read_text(), self.err.read_text()


@dataclass
class Site:
    cluster: SlurmCluster
    tmp: Path
    user: str
    jwt_key: bytes

    @property
    def ib(self) -> Path:
        return self.tmp / "ib"

    def links(self, **states: str) -> None:
        """Per node its port mlx5_0/1 (a stand-in for /sys/class/infiniband): `healthy`, `port-down`,
        `no-devices` (an empty tree), `hang` (its state a FIFO nobody writes) or `slow` (a FIFO answered 45 s after the
        check opens it, which touches started/<node>)."""
        for node, what in states.items():
            root = self.sys / node
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            root.chmod(0o755)
            if what == "no-devices":
                continue
            port = root / "mlx5_0" / "ports" / "1"
            port.mkdir(parents=True)
            for folder in (root / "mlx5_0", root / "mlx5_0" / "ports", port):
                folder.chmod(0o755)
            attrs = PORT_DOWN if what == "port-down" else HEALTHY_PORT
            for name, text in attrs.items():
                (port / name).write_text(text + "\n")
                (port / name).chmod(0o644)
            if what in ("hang", "slow"):
                (port / "state").unlink()
                os.mkfifo(port / "state", 0o644)
            if what == "slow":
                threading.Thread(target=_answer_late, args=(port / "state", self.tmp / "started" / node), daemon=True).start()

    @property
    def sys(self) -> Path:
        return self.tmp / "sys"

    def prolog_fails_on(self, *nodes: str) -> None:
        for node in nodes:
            (self.tmp / "prolog-fails" / node).touch()

    def checks(self, **check: Any) -> Path:
        entry = {
            "name": "ib",
            "kind": "ib-link",
            "action": "drain",
            "nodesets": ["gpu-a", "gpu-b"],
            "gpus": {"gpu-a": 2, "gpu-b": 2},
            "timeLimitMinutes": 1,
            "nodes": 2,
            "partition": "gpu",
            "qos": None,
            "hcas": {"gpu-a": ["mlx5_0"], "gpu-b": ["mlx5_0"]},
            "env": {"MIN_RATE": "400", "TIMEOUT_SECONDS": "20"},
            **check,
        }
        entry["env"] = {"SYSFS": f"{self.sys}/%n", **entry["env"]}
        path = self.tmp / f"checks-{secrets.token_hex(3)}.json"
        path.write_text(json.dumps({"checks": [entry]}))
        path.chmod(0o644)
        return path

    def token_file(self, user: str | None = None) -> Path:
        path = self.tmp / f"token-{secrets.token_hex(3)}"
        path.write_text(slinky_token(self.jwt_key, user or self.user))
        return path

    def env(self) -> dict[str, str]:
        """The pod's environment: the JWT only (no SLURM_SACK_KEY: auth/jwt, src/interfaces/auth.c). The jobs it
        submits keep SLURM_SACK_SOCKET, the stand-in for the sack socket slurmd serves on every node, through which the
        job's own scontrol authenticates as the job's user."""
        return self.cluster.env({"PATH": f"{self.tmp / 'bin'}:{self.cluster.env()['PATH']}", "SLURM_SACK_KEY": None})

    def start(self, checks: Path, token: Path | None = None, grace: int = 60) -> Driver:
        argv = [
            "python3", str(DRIVER), "--config", str(checks), "--check", "ib", "--script", str(self.tmp / "active-check.sh"),
            "--token-file", str(token or self.token_file()), "--poll", "1", "--grace", str(grace), "--settle", "60",
        ]  # fmt: skip
        return Driver(argv, self.env(), self.tmp / f"driver-{secrets.token_hex(3)}")

    def check(self, checks: Path, **kwargs: Any) -> tuple[int, str]:
        driver = self.start(checks, **kwargs)
        code, out, err = driver.finish()
        return code, out + err

    def started(self, node: str) -> bool:
        """Whether the check job on `node` is past PENDING (running or ended)."""
        rows = self.cluster.run("squeue", "-h", "-o", "%T %n", "--name=active-check-ib").stdout.splitlines()
        return not any(row.split() == ["PENDING", node] for row in rows)

    def jobs(self, states: str = "all") -> list[str]:
        result = self.cluster.run("squeue", "-h", "-o", "%i %T %N", "-t", states, "--name=active-check-ib")
        return result.stdout.splitlines()

    def reason(self, node: str) -> str:
        return self.cluster.node_reason(node)

    def drained(self, node: str) -> bool:
        return "DRAIN" in self.cluster.node_state(node).split("+")

    def reset(self) -> None:
        """Every node idle and in service, no job, no reservation, every link healthy, no prolog failure."""
        jobs = self.cluster.run("squeue", "-h", "-o", "%i").stdout.split()
        if jobs:
            self.cluster.run("scancel", *jobs)
        wait_until(lambda: not self.cluster.run("squeue", "-h", "-o", "%i").stdout.split(), 60, "the queue to empty")
        self.cluster.run("scontrol", "delete", "ReservationName=active-check-ib")
        for path in [*(self.tmp / "prolog-fails").iterdir(), *(self.tmp / "started").iterdir()]:
            path.unlink()
        self.links(**dict.fromkeys(NODES, "healthy"))
        for node in NODES:
            if self.reason(node):
                self.cluster.scontrol("update", f"NodeName={node}", "State=RESUME")
            self.cluster.wait_node_idle(node, 60)


# What the kernel reports for an RDMA port (drivers/infiniband/core/sysfs.c state_show, phys_state_show, rate_show).
HEALTHY_PORT = {"state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "400 Gb/sec (4X NDR)"}
PORT_DOWN = {"state": "1: DOWN", "phys_state": "3: Disabled", "rate": "10 Gb/sec (4X SDR)"}
DOWN = "active-check ib: mlx5_0 port 1: state DOWN"


def _answer_late(fifo: Path, started: Path, delay: float = 45, wait: float = 600) -> None:
    """Once the check opens `fifo` (a writer's non-blocking open succeeds only then), touch `started`, and answer
    ACTIVE `delay` seconds later."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader yet (ENXIO), or the tree was reset (ENOENT)
            if not fifo.exists():
                return
            time.sleep(0.2)
            continue
        started.touch()
        time.sleep(delay)
        with contextlib.suppress(OSError):
            os.write(fd, (HEALTHY_PORT["state"] + "\n").encode())
        os.close(fd)
        return


FAKE_DCGMI = """#!/bin/bash
# What the step was given, for the test; and, standing in for ConstrainDevices, no GPU to test without one.
echo "gpus=${{SLURM_STEP_GPUS:-}} cuda=${{CUDA_VISIBLE_DEVICES:-}} token=${{SLURM_JWT:+leaked}}" > "{out}/$SLURMD_NODENAME"
if [ -z "${{CUDA_VISIBLE_DEVICES:-}}" ]; then
  echo '| Deployment                | Fail - All                                     |'
  echo '| Error                     | No GPU could be opened                         |'
  exit 226
fi
echo '| Deployment                | Pass                                           |'
"""

PROLOG = """#!/bin/bash
# The GPU prolog's part that matters here: a bad GPU drains the node with its reason, and the prolog fails.
if [ -e "{flags}/$SLURMD_NODENAME" ]; then
  scontrol update NodeName="$SLURMD_NODENAME" State=DRAIN Reason="{reason}"
  exit 1
fi
exit 0
"""


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    require_root()
    require_binaries(*slurm_harness.REQUIRED_BINARIES, *slurmdbd_harness.REQUIRED_BINARIES, *mariadb_harness.REQUIRED_BINARIES)
    require_binaries("sacct", "sacctmgr")
    # The jobs run as the check's user: everything they read must be readable by it (pytest's tree is root-only).
    tmp = Path(tempfile.mkdtemp(prefix="hpcforge-activecheck-"))
    tmp.chmod(0o755)
    for folder in ("bin", "sys", "prolog-fails", "dcgm", "started"):
        (tmp / folder).mkdir()
        (tmp / folder).chmod(0o777 if folder in ("dcgm", "started") else 0o755)
    (tmp / "bin" / "dcgmi").write_text(FAKE_DCGMI.format(out=tmp / "dcgm"))
    (tmp / "bin" / "dcgmi").chmod(0o755)
    (tmp / "active-check.sh").write_text(inline_includes(CHECK_SCRIPT.read_text(), CHECK_SCRIPT, REPO))
    key = tmp / "jwt.key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    jwt = f"AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key={key}\n"
    user, uid = f"hpck{secrets.token_hex(3)}", 40000 + secrets.randbelow(20000) * 2
    run(["useradd", "-M", "-N", "-u", str(uid), "-s", "/bin/sh", user], timeout=30, check=True)
    try:
        with MariaDBServer(tmp / "db") as db, SlurmDBD(tmp / "dbd", db, extra_conf=jwt) as dbd:
            cluster = SlurmCluster(
                tmp / "slurm",
                CLUSTER,
                nodes=[node_line(name, features=[nodeset], gres="gpu:2") for name, nodeset in NODES.items()],
                partitions=[f"PartitionName=gpu Nodes={','.join(NODES)} Default=YES State=UP"],
                gres_conf="NodeName=g[1-6] Name=gpu File=/dev/null,/dev/zero\n",
                allow_override=SlurmDBD.OVERRIDES,
                slurm_key=dbd.slurm_key,
            )
            prolog = cluster.node_script("prolog.sh", PROLOG.format(flags=tmp / "prolog-fails", reason=PROLOG_REASON))
            cluster.extra_conf = (
                dbd.slurm_conf_lines("associations")
                + jwt
                + "GresTypes=gpu\nAccountingStorageTRES=gres/gpu\nSelectTypeParameters=CR_CPU_Memory\nDefMemPerNode=50\n"
                + f"MinJobAge=2\nProlog={prolog}\nFirstJobId={random.randint(200_000, 900_000)}\n"
            )
            with cluster:
                wait_until(
                    lambda: CLUSTER in cluster.run("sacctmgr", "-P", "-n", "show", "cluster", "format=cluster").stdout,
                    60,
                    "the cluster to register with slurmdbd",
                )
                cluster.run("sacctmgr", "-i", "add", "account", "checks", f"cluster={CLUSTER}", check=True)
                cluster.run("sacctmgr", "-i", "add", "user", user, "account=checks", "adminlevel=Administrator", check=True)
                yield Site(cluster, tmp, user, key.read_bytes())
    finally:
        run(["userdel", user], timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


def _lines(output: str) -> dict[str, str]:
    """Node -> its report line."""
    return {
        line.split()[1].rstrip(":"): line
        for line in output.splitlines()
        if line.split()[:1] in (["PASS"], ["FAIL"], ["ERROR"], ["SKIP"])
    }


def test_no_healthy_node_is_drained_and_no_foreign_reason_touched(site: Site) -> None:
    """Issue 35 items 2 and 3 in one run: g1 busy with a user job that outlasts the window, g2's check job hangs until
    Slurm kills it at its time limit, g3 healthy (and drained by an admin during the run), g4's job held by the prolog
    that drained g4, g5's link down (and drained by an admin during the run), g6's link down. Only g6 is drained by the
    check; the records of the jobs that ended early are purged from slurmctld (MinJobAge=2) long before the end."""
    site.reset()
    user_job = site.cluster.sbatch("sleep 600\n", "gpu", args=["-w", "g1", "--exclusive", "--mem=0"])
    site.cluster.wait_job(user_job, 30, states={"RUNNING"})
    site.links(g2="hang", g5="port-down", g6="port-down")
    site.prolog_fails_on("g4")
    checks = site.checks(env={"MIN_RATE": "400", "TIMEOUT_SECONDS": "600"})
    driver = site.start(checks)
    wait_until(lambda: driver.submitted(*NODES), 60, "the six check jobs to be submitted")
    wait_until(lambda: site.drained("g4"), 60, "the prolog to drain g4")
    prolog_reason = site.reason("g4")
    for node in ("g3", "g5"):
        wait_until(functools.partial(site.started, node), 60, f"{node}'s check job to start")
        site.cluster.scontrol("update", f"NodeName={node}", "State=DRAIN", f"Reason={ADMIN_REASON}")
    code, out, err = driver.finish()
    report = _lines(out)
    assert code == 1, out + err
    assert out.splitlines()[0] == "active-check ib (action drain): 1 passed, 2 failed, 3 not judged, 0 left alone", out + err
    assert "CANCELLED" in report["g1"] and "not judged" in report["g1"]
    assert "TIMEOUT" in report["g2"] and "not judged" in report["g2"]
    assert report["g3"] == "PASS g3"
    assert report["g4"].startswith("ERROR g4") and "not judged" in report["g4"]
    assert report["g5"] == (
        f"FAIL g5: active-check ib: mlx5_0 port 1: state DOWN (not drained: it carries a reason that is not this check's "
        f"({ADMIN_REASON}))"
    )
    assert report["g6"] == "FAIL g6: active-check ib: mlx5_0 port 1: state DOWN (drained)"
    # the nodes as Slurm has them now
    assert site.cluster.node_state("g1") == "ALLOCATED" and site.reason("g1") == ""
    assert site.cluster.job_state(user_job) == "RUNNING"
    assert not site.drained("g2") and site.reason("g2") == ""
    assert site.reason("g3") == ADMIN_REASON and site.reason("g5") == ADMIN_REASON
    assert site.reason("g4") == prolog_reason and site.drained("g4")
    assert site.reason("g6") == "active-check ib: mlx5_0 port 1: state DOWN" and site.drained("g6")
    assert "active-check-ib" not in site.cluster.scontrol("show", "reservation")
    # the check jobs ran as the check's user, and slurmctld had forgotten those that ended first
    accounting = site.cluster.run("sacct", "-n", "-P", "-X", "--name=active-check-ib", "-o", "JobIDRaw,User,State").stdout
    rows = [row.split("|") for row in accounting.splitlines()]
    assert {row[1] for row in rows} == {site.user}
    completed = [row[0] for row in rows if row[2] == "COMPLETED"]
    assert completed and site.cluster.run("scontrol", "show", "job", completed[0]).returncode != 0


def test_a_second_pass_resumes_what_the_check_drained_and_puts_back_what_it_could_not_judge(site: Site) -> None:
    """g1 and g2 drained by this check earlier, g3 by an admin: g1 now passes and is resumed; g2's link tool cannot be
    run (not judged), so g2 is drained again with the reason it had; g3 is left alone."""
    site.reset()
    for node in ("g1", "g2"):
        site.cluster.scontrol("update", f"NodeName={node}", "State=DRAIN", "Reason=active-check ib: mlx5_0 port 1: state DOWN")
    site.cluster.scontrol("update", "NodeName=g3", "State=DRAIN", f"Reason={ADMIN_REASON}")
    site.links(g2="no-devices")  # the pod sees no RDMA device: nothing judged
    code, output = site.check(site.checks(nodesets=["gpu-a"]))
    report = _lines(output)
    assert code == 2, output
    assert report["g1"] == "PASS g1"
    assert report["g2"].startswith("ERROR g2: job ") and "lists no RDMA device" in report["g2"]
    assert report["g2"].endswith("(it stays drained: active-check ib: mlx5_0 port 1: state DOWN: drained)")
    assert report["g3"] == f"SKIP g3: drained ({ADMIN_REASON})"
    assert site.cluster.node_state("g1") == "IDLE"
    assert site.drained("g2") and site.reason("g2") == "active-check ib: mlx5_0 port 1: state DOWN"
    assert site.reason("g3") == ADMIN_REASON


def test_report_only_changes_no_node(site: Site) -> None:
    """`action: report`, the first stage of a rollout: the failing g4 is reported, not drained; g5, which this check
    drained while it was allowed to, is neither resumed nor tested."""
    site.reset()
    site.cluster.scontrol("update", "NodeName=g5", "State=DRAIN", "Reason=active-check ib: mlx5_0 port 1: state DOWN")
    site.links(g4="port-down")
    code, output = site.check(site.checks(nodesets=["gpu-b"], action="report"))
    report = _lines(output)
    assert code == 1, output
    assert output.splitlines()[0] == "active-check ib (action report): 1 passed, 1 failed, 0 not judged, 1 left alone"
    assert report["g4"] == "FAIL g4: active-check ib: mlx5_0 port 1: state DOWN (action report: not drained)"
    assert report["g5"] == "SKIP g5: active-check ib: mlx5_0 port 1: state DOWN (action report: not resumed, not tested)"
    assert report["g6"] == "PASS g6"
    assert site.cluster.node_state("g4") == "IDLE" and site.reason("g4") == ""
    assert site.drained("g5")


def test_slurmctld_stopped_mid_run_drains_nothing(site: Site) -> None:
    """Issue 35 item 2: a failing squeue (slurmctld away) once ended the wait and drained jobs still running. The
    controller goes away while every check job runs, long enough for squeue to fail, and comes back."""
    site.reset()
    site.links(**dict.fromkeys(("g1", "g2", "g3"), "slow"))
    driver = site.start(site.checks(nodesets=["gpu-a"], env={"MIN_RATE": "400", "TIMEOUT_SECONDS": "55"}))
    started = [site.tmp / "started" / node for node in ("g1", "g2", "g3")]
    wait_until(lambda: all(path.exists() for path in started), 60, "the three checks' steps to run")
    site.cluster.stop_controller()
    time.sleep(25)  # longer than a client's retries (MessageTimeout, 10 s): squeue fails; the steps outlast it
    site.cluster.start_controller(60)
    code, out, err = driver.finish()
    assert "squeue failed" in err
    assert code == 0, out + err
    assert sorted(_lines(out).values()) == ["PASS g1", "PASS g2", "PASS g3"]
    for node in ("g1", "g2", "g3"):
        assert site.cluster.node_state(node) == "IDLE" and site.reason(node) == ""


def test_the_check_steps_get_the_nodes_gpus_and_all_their_memory(site: Site) -> None:
    """Issue 35 item 1: `sbatch --exclusive` alone allocates the node's GPUs to the job but gives its steps none
    (srun(1) --gres; stepmgr.c `_copy_job_tres_to_step`), and only DefMemPerNode of its memory (accounting's AllocTRES
    says mem=50M without --mem=0). The fake dcgmi records what its step got and, like a step behind ConstrainDevices,
    fails without a GPU."""
    site.reset()
    code, output = site.check(site.checks(kind="dcgm-diag", nodesets=["gpu-a"], env={"DCGM_LEVEL": "1", "TIMEOUT_SECONDS": "20"}))
    assert code == 0, output
    assert sorted(_lines(output).values()) == ["PASS g1", "PASS g2", "PASS g3"]
    for node in ("g1", "g2", "g3"):
        # dcgm-diag runs dcgmi from the batch step of its one-node job (with an image, from a one-task srun step
        # there): the job's GPUs (CUDA_VISIBLE_DEVICES; Slurm sets SLURM_STEP_GPUS in srun steps only), and no JWT:
        # sbatch leaves SLURM_JWT out of the job's environment (without --export)
        assert (site.tmp / "dcgm" / node).read_text().split() == ["gpus=", "cuda=0,1", "token="]
    accounting = site.cluster.run("sacct", "-n", "-P", "-X", "--name=active-check-ib", "-o", "AllocTRES").stdout.splitlines()
    assert accounting and all("gres/gpu=2" in row and "mem=100M" in row for row in accounting[-3:])


@pytest.mark.parametrize(
    ("level", "reserve", "drain"),
    [("None", False, False), ("Operator", True, False), ("Administrator", True, True)],
)
def test_what_each_admin_level_may_do_with_a_token_for_one_user(site: Site, level: str, reserve: bool, drain: bool) -> None:
    """Issue 35 item 12, on 26.05.3: with a JWT for one user (no slurm.key), creating a reservation needs Operator,
    draining and resuming a node needs Administrator (src/slurmctld/proc_req.c: `_slurm_rpc_resv_create` checks
    validate_operator, `_slurm_rpc_update_node` validate_super_user). The check's user is therefore an Administrator,
    which is still narrower than slurm.key: a token acts as its one user, whose jobs run as that user."""
    site.reset()
    user = f"hpco{secrets.token_hex(3)}"
    run(
        ["useradd", "-M", "-N", "-u", str(42000 + secrets.randbelow(10000) * 2 + 1), "-s", "/bin/sh", user],
        timeout=30,
        check=True,
    )
    try:
        site.cluster.run("sacctmgr", "-i", "add", "user", user, "account=checks", f"adminlevel={level}", check=True)
        env = site.cluster.env({"SLURM_SACK_KEY": None, "SLURM_JWT": slinky_token(site.jwt_key, user)})

        def ok(*argv: str) -> bool:
            return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False).returncode == 0

        assert ok("sinfo", "-h")  # reading needs no level
        made = ok(
            "scontrol", "create", "reservation", "ReservationName=levels", "StartTime=now", "Duration=5", f"Users={user}",
            "Flags=MAINT,IGNORE_JOBS", "Nodes=g6",
        )  # fmt: skip
        assert made == reserve
        assert ok("scontrol", "update", "NodeName=g6", "State=DRAIN", "Reason=levels") == drain
        assert site.drained("g6") == drain
        assert ok("scontrol", "update", "NodeName=g6", "State=RESUME") == drain
    finally:
        site.cluster.run("scontrol", "delete", "ReservationName=levels")
        site.cluster.run("sacctmgr", "-i", "delete", "user", user)
        run(["userdel", user], timeout=30)
    assert not site.drained("g6")


def test_a_token_for_a_user_slurmctld_cannot_resolve_reserves_nothing(site: Site) -> None:
    """Slinky's tokens carry only the user's name (`sun`) and Slinky sets no `use_jwt_client_ids`, so slurmctld and
    slurmdbd look the name up in their own user database (26.05.3 src/plugins/auth/jwt/auth_jwt.c `cred_get_ids`): the
    check's user must exist there. A name they do not know runs as nobody; the check reserves and drains nothing."""
    site.reset()
    site.links(g4="port-down")
    code, output = site.check(site.checks(nodesets=["gpu-b"]), token=site.token_file("nosuchuser"))
    assert code == 2, output
    assert all(line.startswith("ERROR") and "the reservation could not be made" in line for line in _lines(output).values())
    assert site.cluster.node_state("g4") == "IDLE"


def test_a_stopped_run_puts_back_the_drain_it_lifted(site: Site) -> None:
    """The pod deleted mid-run (SIGTERM): g1, which this check drained earlier and resumed for the test, is drained
    again with its reason before the reservation that kept user jobs off it is deleted (after cancelling the check's
    jobs: Slurm deletes no reservation with jobs in it)."""
    site.reset()
    site.cluster.scontrol("update", "NodeName=g1", "State=DRAIN", "Reason=active-check ib: mlx5_0 port 1: state DOWN")
    site.links(g1="slow")
    driver = site.start(site.checks(nodesets=["gpu-a"], env={"MIN_RATE": "400", "TIMEOUT_SECONDS": "55"}))
    wait_until((site.tmp / "started" / "g1").exists, 60, "g1's check to run")
    driver.proc.terminate()
    code, out, err = driver.finish()
    assert code == 2, out + err
    assert "ERROR -: the run was stopped (SIGTERM) before it ended" in out
    assert (
        "ERROR g1: the run ended before its job was judged (it stays drained: active-check ib: mlx5_0 port 1: state DOWN: "
        "drained)" in out
    )
    assert site.drained("g1") and site.reason("g1") == "active-check ib: mlx5_0 port 1: state DOWN"
    assert "active-check-ib" not in site.cluster.scontrol("show", "reservation")
