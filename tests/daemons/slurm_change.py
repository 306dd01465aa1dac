"""What a slurm.conf change does to a running Slurm 26.05.3 cluster, applied the way slurm-operator 1.2.1 applies it.

One :class:`ChangeSite` is one small cluster in the shape the operator writes (configless, dynamic nodes that
register with ``Feature=<nodeset>`` like NodeSet pods, ``NodeSet=`` lines, partitions over them, the
operator's ``SlurmctldParameters=enable_configless,reconfig_on_restart``,
internal/builder/controllerbuilder/controller_config.go@v1.2.1:160-164) with hpcforge's typed settings
(:data:`BASE_PARAMETERS`, the prod render's extraConf with this host's plugins), a slurmdbd behind it and jobs
in flight:

* ``running``: a batch job on ``cpu-0`` in partition ``batch`` that writes a heartbeat every second;
* ``gpu``: a batch job with ``--gres=gpu:1`` on ``gpu-0`` in partition ``gpu`` (heartbeat too);
* ``pending`` and ``pending-gpu``: jobs held back by ``--begin`` in ``batch`` and ``gpu``;
* after the change, a ``probe`` job in partition ``probe`` (its own nodeset and node, which no change touches):
  does the cluster still start new jobs?

A :class:`Change` edits the base (slurm.conf lines, gres.conf, topology.yaml, cgroup.conf); the head is applied in
one of two :data:`MODES`, which are how the operator applies it:

* ``reconfigure``: the Controller's ``inplaceReconfigure: true``: the reconfigure sidecar sees the files under
  /etc/slurm change and runs ``scontrol reconfigure`` with them
  (internal/builder/controllerbuilder/scripts/reconfigure.sh@v1.2.1:13-25);
* ``restart``: ``inplaceReconfigure: false``: the operator recreates the slurmctld pod when the slurm-config
  ConfigMap's hash changes (controller_app.go@v1.2.1:106-119, 349-369): slurmctld stops (SIGTERM) and starts
  with the head files; ``reconfig_on_restart`` then reconfigures every slurmd.  The slurmd pods are not
  recreated by a slurm.conf change (the NodeSet pods carry no config hash).

What happened is an :class:`Outcome`: how it was applied, whether slurmctld is up, whether the change is in
force (``shown``: what the daemons show before and after), each job's state and whether its processes still
run, nodes left drained or down, and the probe job's state.  Paths and ports of this host are written as
``<tmp>``/``<port>`` so the record is the same on every run.

Where jobs run the harness uses proctrack/linuxproc, task/affinity and jobacct_gather/none: this host has no
usable freezer cgroup for proctrack/cgroup (../shared/slurm/README.md), and cgroup.conf's CgroupPlugin is
autodetect (a hybrid cgroup host cannot load cgroup/v2: tests/components/layers/slurm/test_real_slurm.py).

``python -m tests.daemons.slurm_change --write FILE`` runs every case of tests/daemons/slurm_change_cases.py and
writes the table (offline/diff/slurm_outcomes.json); ``--check FILE`` runs them and compares.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .common import HarnessError, free_ports, port_open, run, wait_until, write_script
from .mariadb import MariaDBServer
from .slurm import TERMINAL_JOB_STATES, SlurmCluster, ensure_munge, parse_key_values
from .slurm_prefix import missing_reason, slurm_binary
from .slurmdbd import SlurmDBD

SLURM_VERSION = "26.05.3"
MODES = ("reconfigure", "restart")

#: hpcforge's typed controller settings as prod renders them (components/layers/slurm/slurm_conf.py
#: controller_parameters), with the plugins this host can run jobs with and KillWait short enough to watch a kill;
#: without NamespaceType, which the case of that name adds (the site before hpcforge wrote it).
BASE_PARAMETERS: tuple[tuple[str, str], ...] = (
    ("SchedulerType", "sched/backfill"),
    ("SchedulerParameters", "bf_continue,bf_interval=30,bf_max_job_test=1000,bf_window=10080"),
    ("SelectType", "select/cons_tres"),
    ("SelectTypeParameters", "CR_Core_Memory"),
    ("PriorityType", "priority/multifactor"),
    ("PriorityDecayHalfLife", "7-0"),
    ("PriorityMaxAge", "7-0"),
    ("PriorityWeightAge", "1000"),
    ("PriorityWeightFairshare", "100000"),
    ("PriorityWeightJobSize", "0"),
    ("PriorityWeightPartition", "10000"),
    ("PriorityWeightQOS", "50000"),
    ("PreemptType", "preempt/partition_prio"),
    ("PreemptMode", "REQUEUE"),
    ("EnforcePartLimits", "ALL"),
    ("GresTypes", "gpu"),
    ("AccountingStorageTRES", "gres/gpu"),
    ("ProctrackType", "proctrack/linuxproc"),
    ("TaskPlugin", "task/affinity"),
    ("JobAcctGatherType", "jobacct_gather/none"),
    ("PrologFlags", "Contain"),
    ("ReturnToService", "2"),
    ("SlurmctldTimeout", "300"),
    ("SlurmdTimeout", "600"),
    ("MessageTimeout", "10"),
    ("KillWait", "5"),
    ("InactiveLimit", "0"),
    ("MinJobAge", "300"),
    ("UnkillableStepTimeout", "120"),
    ("PrologEpilogTimeout", "300"),
    ("SrunPortRange", "60001-63000"),
    ("PropagateResourceLimitsExcept", "MEMLOCK"),
)
ENFORCE = "associations,limits,qos,safe"

#: The operator's lines (controller_config.go@v1.2.1:160-164, 309-316), one NodeSet per node role here.
OPERATOR_LINES = (
    "SlurmctldParameters=enable_configless,reconfig_on_restart",
    "Prolog=prolog.sh",
    "Epilog=epilog.sh",
    "NodeSet=cpu Feature=cpu",
    "NodeSet=gpu Feature=gpu",
    "NodeSet=probe Feature=probe",
)
#: The scripts of the prolog/epilog ConfigMaps, beside slurm.conf and named by file name only, as the operator writes
#: them (controller_config.go@v1.2.1:229-233, 284-296); each records which version ran for which job.
SCRIPT = "#!/bin/sh\necho {version} > {jobs}/{kind}-$SLURM_JOB_ID\n"
PARTITIONS = (
    "PartitionName=batch Nodes=cpu Default=YES MaxTime=7-00:00:00 DefaultTime=1:00:00 DefMemPerCPU=50 OverSubscribe=NO"
    " PriorityTier=10 State=UP",
    "PartitionName=gpu Nodes=gpu Default=NO MaxTime=3-00:00:00 DefaultTime=1:00:00 DefMemPerCPU=50 OverSubscribe=NO"
    " PriorityTier=10 State=UP",
    "PartitionName=probe Nodes=probe Default=NO MaxTime=1:00:00 DefMemPerCPU=50 State=UP",
)
#: Dynamic nodes as NodeSet pods register (`slurmd -Z --conf-server ... --conf "Feature=<nodeset> ... Topology=<topology>:<leaf>"`,
#: the topology from the Kubernetes node's annotation: hpcforge's components/layers/slurm/topology_files.py); one host,
#: so each gets one CPU (a second job on it waits) and all but one their own Port=.  A dynamic node that only
#: topology.yaml's `nodes:` names is not placed until the next reconfigure after it registered (seen on 26.05.3:
#: `scontrol show topology` lists it only then, and a job before is refused "Requested topology configuration is
#: not available"), so the nodes here register with Topology= as the pods do.
NODES = {
    "cpu-0": "Feature=cpu CPUs=1 RealMemory=100 Topology=fabric:leaf1",
    "gpu-0": "Feature=gpu Gres=gpu:a100:2 CPUs=1 RealMemory=100 Topology=fabric:leaf2",
    "probe-0": "Feature=probe CPUs=1 RealMemory=100 Topology=fabric:leaf1",
}
#: The node that listens on SlurmdPort, as every NodeSet pod does (the others need their own Port= on one host).
ON_SLURMD_PORT = "probe-0"
GRES_CONF = "NodeName=gpu-[0-1] Name=gpu Type=a100 File=/dev/zero,/dev/null\n"
TOPOLOGY_YAML = """- topology: fabric
  cluster_default: true
  tree:
    switches:
    - switch: spine
      children: leaf[1-2]
    - switch: leaf1
    - switch: leaf2
"""
CGROUP_CONF = """CgroupPlugin=autodetect
IgnoreSystemd=yes
ConstrainCores=yes
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
ConstrainDevices=yes
AllowedRAMSpace=100
"""

HEARTBEAT = "while true; do date +%s%N > {file}; sleep 1; done\n"
#: Node state flags that mean the node is not (fully) usable; the others (IDLE, ALLOCATED, DYNAMIC_NORM ...) are not recorded.
BAD_FLAGS = frozenset(
    {"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING", "INVALID", "INVALID_REG", "NOT_RESPONDING", "UNKNOWN"}
)


# --------------------------------------------------------------------------------------------------
# the files of one side


@dataclass
class Files:
    """slurm.conf and the files beside it, as text (one side of a change)."""

    slurm_conf: str
    gres_conf: str = GRES_CONF
    topology_yaml: str = TOPOLOGY_YAML
    cgroup_conf: str = CGROUP_CONF
    version: str = "v1"
    """The version the prolog and epilog scripts record."""
    job_container_conf: str | None = None
    """job_container.conf (None: none beside slurm.conf)."""

    def set(self, key: str, value: str | None) -> None:
        """`key=value` in slurm.conf: the active line that sets it is replaced (removed for None; added when none)."""
        line = re.compile(rf"^{re.escape(key)}=.*$\n?", re.M | re.I)
        found = line.findall(self.slurm_conf)
        if len(found) > 1:
            raise HarnessError(f"{key} is set {len(found)} times in the base slurm.conf")
        if value is None:
            if not found:
                raise HarnessError(f"{key} is not set in the base slurm.conf: nothing to remove")
            self.slurm_conf = line.sub("", self.slurm_conf)
        elif found:
            self.slurm_conf = line.sub(f"{key}={value}\n", self.slurm_conf)
        else:
            self.slurm_conf += f"{key}={value}\n"

    def replace(self, old: str, new: str) -> None:
        """Replace a whole line of slurm.conf (`new` empty: remove it)."""
        lines = self.slurm_conf.splitlines()
        if lines.count(old) != 1:
            raise HarnessError(f"slurm.conf has {lines.count(old)} lines {old!r}")
        self.slurm_conf = "\n".join(new if line == old else line for line in lines if new or line != old) + "\n"

    def add(self, line: str) -> None:
        self.slurm_conf += line + "\n"


# --------------------------------------------------------------------------------------------------
# a change and what it did


@dataclass(frozen=True)
class Change:
    id: str
    what: str
    """What the change is, for people."""
    items: tuple[str, ...]
    """What this row answers for, as offline/diff/slurm_conf.py names changes (`conf_items`, `file_items`): slurm.conf
    parameters, `partition:...`, `nodeset:...`, `gres.conf:...`, `topology.yaml`, `cgroup.conf`, `script:...`."""
    edit: Callable[[Files, ChangeSite], None]
    """Turns the base files into the head files."""
    shown: Callable[[ChangeSite], dict[str, str]]
    """What the daemons show of the changed items (compared before and after)."""
    munge: bool = False
    """The head needs munged (AuthType=auth/munge)."""
    base: tuple[tuple[str, str], ...] = ()
    """Parameters of the base that differ from :data:`BASE_PARAMETERS` for this change (set before the jobs start)."""


@dataclass
class Outcome:
    applied: str
    """`reconfigured`, `reconfigure refused` (scontrol reconfigure failed), `restarted` or `did not start`."""
    controller: str
    """`up` (slurmctld answers clients that use the head files) or `down`."""
    live: bool | None
    """The change is in force: what `shown` reads differs from before (None: nothing could be read)."""
    shown: dict[str, list[str]]
    """Per item read: [before, after]."""
    jobs: dict[str, str]
    """Job role -> its state after the change (`lost`: slurmctld no longer knows the job)."""
    alive: dict[str, bool]
    """Running job role -> its processes still run (the heartbeat moves)."""
    nodes: dict[str, str]
    """Node -> the flags that make it unusable (DRAIN, DOWN, INVALID_REG ...), only for such nodes."""
    probe: str
    """State of a new job submitted after the change (COMPLETED: the cluster runs new jobs)."""
    note: str = ""
    """slurmctld's fatal or error lines about the change (not compared)."""

    def compared(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("note")
        return out


# --------------------------------------------------------------------------------------------------
# one cluster


class ChangeSite:
    """A cluster in the base state with jobs in flight; :meth:`apply` the head in a mode, then :meth:`outcome`."""

    def __init__(
        self,
        tmp: Path,
        dbd: SlurmDBD,
        cluster_name: str,
        base: Sequence[tuple[str, str]] = (),
        wrappers: Mapping[str, str] | None = None,
    ) -> None:
        self.tmp = tmp
        socket = tmp / "cluster" / "spool" / "probe-0" / "probe-0_1000000.4294967292"
        if len(str(socket)) > 107:
            raise HarnessError(f"{tmp} is too deep: slurmstepd's sockets there would pass the 108 bytes of a socket path")
        #: node -> the `slurmd` that gives it its own host name (:func:`hostname_wrappers`)
        self.wrappers = dict(wrappers) if wrappers is not None else hostname_wrappers(tmp / "bin")
        self.dbd = dbd
        self.cluster_name = cluster_name
        self.new_port, self.node_ports = free_ports(1)[0], dict(zip(NODES, free_ports(len(NODES)), strict=True))
        extra = "\n".join(
            [
                *OPERATOR_LINES,
                dbd.slurm_conf_lines(enforce=ENFORCE).rstrip("\n"),
                *(f"{key}={value}" for key, value in {**dict(BASE_PARAMETERS), **dict(base)}.items()),
            ]
        )
        self.cluster = SlurmCluster(
            tmp / "cluster",
            cluster_name,
            partitions=PARTITIONS,
            extra_conf=extra + "\n",
            gres_conf=GRES_CONF,
            topology_yaml=TOPOLOGY_YAML,
            cgroup_conf=CGROUP_CONF,
            dynamic=True,
            catch_all=False,
            allow_override={*SlurmDBD.OVERRIDES, "ProctrackType", "TaskPlugin", "JobAcctGatherType"},
            slurm_key=dbd.slurm_key,
            max_node_count=16,
        )
        self.jobs: dict[str, int] = {}
        self.heartbeats: dict[str, Path] = {}
        #: the slurm.conf clients read (the head's once written; the base's where the head's do not reach slurmctld)
        self.client_conf = self.cluster.conf_path
        self.base_conf = self.cluster.tmp_dir / "slurm.conf.base"
        self.log_offset = 0
        self.applied_at = ""
        self.refusal = ""
        self.last_job = 0

    # -- lifecycle

    def start(self) -> ChangeSite:
        """Start slurmctld and the nodes (the cluster name is registered in slurmdbd already: :func:`accounting`),
        then the jobs."""
        self._write_scripts("v1")
        self.cluster.start()
        for node, conf in NODES.items():
            port = "" if node == ON_SLURMD_PORT else f" Port={self.node_ports[node]}"
            argv = [self.wrappers[node], "-D", "-Z", "--conf-server", self.cluster.conf_server, "--conf", conf + port]
            self.cluster.start_slurmd_command([*argv, "-N", node], timeout=60, wait_registered=False)
        for node in NODES:
            self.cluster.wait_node_idle(node, 60)
        self._submit()
        return self

    def stop(self) -> None:
        """Stop slurmctld first (so nothing waits for jobs to be cancelled), then the rest; the jobs' processes are
        killed by the cluster's tag."""
        self.cluster.stop_controller()
        self.cluster.stop()

    def _submit(self) -> None:
        jobs_dir = self.cluster.jobs_dir
        jobs_dir.mkdir(parents=True, exist_ok=True)
        common = ["--mem=10", "-t", "60"]
        for role, args in (
            ("running", ["-p", "batch", "-w", "cpu-0"]),
            ("gpu", ["-p", "gpu", "-w", "gpu-0", "--gres=gpu:1"]),
        ):
            beat = jobs_dir / f"{role}.beat"
            self.heartbeats[role] = beat
            self.jobs[role] = self.cluster.sbatch(HEARTBEAT.format(file=beat), args=[*args, *common])
        for role in self.heartbeats:
            self.cluster.wait_job(self.jobs[role], 60, states={"RUNNING"})
            output = jobs_dir / f"slurm-{self.jobs[role]}.out"
            wait_until(self.heartbeats[role].exists, 60, f"job {role} to beat", log=[output, *self.cluster.log_paths()])
        self.jobs["pending"] = self.cluster.sbatch("true", args=["-p", "batch", "--begin=now+3600", *common])
        self.jobs["pending-gpu"] = self.cluster.sbatch("true", args=["-p", "gpu", "--begin=now+3600", *common])
        # a job that ran its prolog and epilog before the change (:meth:`scripts` reads what they recorded)
        self.last_job = self.cluster.sbatch("true", args=["-p", "probe", "--mem=10", "-t", "5"])
        self.cluster.wait_job(self.last_job, 60)

    def _write_scripts(self, version: str) -> None:
        for kind in ("prolog", "epilog"):
            text = SCRIPT.format(version=version, jobs=self.cluster.jobs_dir, kind=kind)
            write_script(self.cluster.tmp_dir / f"{kind}.sh", text)

    # -- reading

    def run(self, *cmd: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """A Slurm client command with the slurm.conf clients use now (:attr:`client_conf`)."""
        return run(
            list(cmd), env=self.cluster.env({"SLURM_CONF": str(self.client_conf)}), timeout=timeout, cwd=self.cluster.tmp_dir
        )

    def norm(self, text: str) -> str:
        """`text` with this host's paths and ports replaced, so records compare across runs."""
        out = text.replace(str(self.cluster.tmp_dir), "<tmp>")
        for port, name in (
            (self.new_port, "<new-port>"),
            (self.cluster.ctld_port, "<ctld-port>"),
            (self.cluster.slurmd_port, "<slurmd-port>"),
        ):
            out = re.sub(rf"\b{port}\b", name, out)
        return out.replace(self.cluster_name, "<cluster>")

    def config(self, *keys: str) -> dict[str, str]:
        """`scontrol show config` values of `keys` ('(absent)' when not shown; '(no answer)' when slurmctld does not answer)."""
        done = self.run("scontrol", "show", "config")
        if done.returncode != 0:
            return dict.fromkeys(keys, "(no answer)")
        values = {name.lower(): value for name, value in re.findall(r"^(\S+)\s+= (.*)$", done.stdout, re.M)}
        return {key: self.norm(values.get(key.lower(), "(absent)").strip()) for key in keys}

    def partitions(self) -> dict[str, str]:
        done = self.run("scontrol", "show", "partition", "-o")
        if done.returncode != 0:
            return {"partitions": "(no answer)"}
        names = sorted(parse_key_values(line).get("PartitionName", "?") for line in done.stdout.splitlines() if line.strip())
        return {"partitions": ",".join(names)}

    def partition(self, name: str, *keys: str) -> dict[str, str]:
        done = self.run("scontrol", "show", "partition", name, "-o")
        if done.returncode != 0:
            return dict.fromkeys((f"{name}.{key}" for key in keys), "(none)")
        info = parse_key_values(done.stdout)
        return {f"{name}.{key}": info.get(key, "(absent)") for key in keys}

    def node(self, name: str, *keys: str) -> dict[str, str]:
        done = self.run("scontrol", "show", "node", name, "-o")
        info = parse_key_values(done.stdout) if done.returncode == 0 else {}
        return {f"{name}.{key}": info.get(key, "(none)") for key in keys}

    def topology(self) -> dict[str, str]:
        done = self.run("scontrol", "show", "topology")
        lines = [re.sub(r"\s+", " ", line.strip()) for line in done.stdout.splitlines() if line.strip()]
        return {"topology": " | ".join(lines) if done.returncode == 0 else "(no answer)"}

    def pushed(self, node: str, name: str) -> dict[str, str]:
        """The file `name` as slurmd on `node` has it (configless: slurmctld pushes it into the node's conf-cache)."""
        cached = self.cluster.spool_root / node / "conf-cache" / name
        text = cached.read_text() if cached.exists() else "(none)"
        lines = [self.norm(line) for line in text.splitlines() if line.strip() and not line.startswith("#")]
        return {f"{node}: {name}": " | ".join(lines)}

    def scripts(self) -> dict[str, str]:
        """The versions of the prolog and epilog that ran for the last job (before the change: one run before it;
        after: the probe job)."""
        found = {}
        for kind in ("prolog", "epilog"):
            mark = self.cluster.jobs_dir / f"{kind}-{self.last_job}"
            found[f"{kind} that ran"] = mark.read_text().strip() if mark.exists() else "(none)"
        return found

    def listening(self, what: str) -> dict[str, str]:
        """Which port `what` (slurmctld, or the node on SlurmdPort) accepts connections on: the old one, the new one."""
        old = self.cluster.ctld_port if what == "slurmctld" else self.cluster.slurmd_port
        ports = [name for port, name in ((old, "old port"), (self.new_port, "new port")) if port_open(port)]
        return {f"{what} listens on": ",".join(ports) or "(nothing)"}

    def job_state(self, role: str) -> str:
        done = self.run("scontrol", "show", "job", str(self.jobs[role]), "-o")
        if done.returncode != 0:
            return "lost" if "Invalid job id" in done.stderr else "(no answer)"
        info = parse_key_values(done.stdout)
        state = info.get("JobState", "?")
        restarts = info.get("Restarts", "0")
        return state if restarts in ("", "0") else f"{state} (requeued {restarts}x)"

    def beats(self) -> dict[str, str]:
        return {role: beat.read_text() if beat.exists() else "" for role, beat in self.heartbeats.items()}

    def beating(self, since: tuple[float, dict[str, str]]) -> dict[str, bool]:
        """Running job role -> its heartbeat file changed since `since` (a time and :meth:`beats`): its processes still
        run. At least 1.6 s (a beat and a half) after `since`; a beat not seen yet is waited for up to 8 s (a loaded
        machine delays a `sleep 1`)."""
        time.sleep(max(0.0, since[0] + 1.6 - time.monotonic()))
        deadline = since[0] + 8
        while True:
            now = self.beats()
            moved = {role: bool(now[role]) and now[role] != since[1][role] for role in self.heartbeats}
            if all(moved.values()) or time.monotonic() >= deadline:
                return moved
            time.sleep(0.3)

    def ping(self, conf: Path) -> bool:
        done = run(["scontrol", "ping"], env=self.cluster.env({"SLURM_CONF": str(conf)}), timeout=15)
        return done.returncode == 0 and "UP" in done.stdout

    # -- applying

    def apply(self, change: Change, mode: str) -> Outcome:
        """Apply `change` in `mode` (MODES) and record what happened."""
        head = Files(self.cluster.conf_path.read_text())
        change.edit(head, self)
        if change.munge:
            ensure_munge()
        before = change.shown(self)
        shutil.copyfile(self.cluster.conf_path, self.base_conf)
        log = self.cluster.log_dir / "slurmctld.out"
        self.log_offset = log.stat().st_size if log.exists() else 0
        self.applied_at = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())
        if mode == "reconfigure":
            self._write(head)
            done = self.run("scontrol", "reconfigure", timeout=60)
            applied = "reconfigured" if done.returncode == 0 else "reconfigure refused"
            self.refusal = self.norm(done.stderr.strip())
        elif mode == "restart":
            self.cluster.stop_controller()
            self._write(head)
            applied = "restarted" if self._start_controller() else "did not start"
        else:
            raise ValueError(f"unknown mode {mode!r}")
        return self._outcome(change, before, applied)

    def _write(self, head: Files) -> None:
        root = self.cluster.tmp_dir
        self.cluster.conf_path.write_text(head.slurm_conf)
        (root / "gres.conf").write_text(head.gres_conf)
        (root / "topology.yaml").write_text(head.topology_yaml)
        (root / "cgroup.conf").write_text(head.cgroup_conf)
        if head.job_container_conf is not None:
            (root / "job_container.conf").write_text(head.job_container_conf)
        self._write_scripts(head.version)

    def _start_controller(self) -> bool:
        try:
            self.cluster.start_controller(40)
        except HarnessError:
            return False
        return True

    def _controller(self) -> str:
        """`up` (clients with the head files reach it), `up, old configuration` (only clients with the base files
        do: the head was not applied, as the reconfigure sidecar's clients cannot parse or reach it) or `down`."""
        proc = self.cluster.slurmctld
        if proc is None or not proc.alive():
            return "down"
        with contextlib.suppress(HarnessError):
            wait_until(lambda: self.ping(self.cluster.conf_path), 20, "slurmctld to answer clients of the head files")
            return "up"
        if self.ping(self.base_conf):
            self.client_conf = self.base_conf
            return "up, old configuration"
        return "down"

    def _unusable_nodes(self) -> dict[str, str]:
        """Wait (bounded) until every node answers again; then the nodes that are not usable and why."""

        def states() -> dict[str, str]:
            out = {}
            for node in NODES:
                flags = set(self.node(node, "State")[f"{node}.State"].split("+"))
                bad = sorted(flags & BAD_FLAGS) if flags != {"(none)"} else ["(not known)"]
                if bad:
                    out[node] = "+".join(bad)
            return out

        def registered_again() -> bool:
            # every slurmd restarts on a reconfigure (26.05.3: "Caught SIGHUP. Triggering reconfigure." and a new
            # process), and registers with the head files: until then a node shows what it was
            starts = [self.node(node, "SlurmdStartTime")[f"{node}.SlurmdStartTime"] for node in NODES]
            return all(start in ("(none)", "None") or start >= self.applied_at for start in starts)

        with contextlib.suppress(HarnessError):
            wait_until(registered_again, 20, "every slurmd to register again")
        with contextlib.suppress(HarnessError):
            wait_until(lambda: not any("NOT_RESPONDING" in v for v in states().values()), 15, "nodes to answer")
        return states()

    def _outcome(self, change: Change, before: dict[str, str], applied: str) -> Outcome:
        controller = self._controller()
        if controller == "down":
            alive = self.beating((time.monotonic(), self.beats()))
            return Outcome(
                applied, controller, None, {}, dict.fromkeys(self.jobs, "(no answer)"), alive, {}, "(no answer)", self._note()
            )
        nodes = self._unusable_nodes()
        with contextlib.suppress(HarnessError):
            # a killed job ends within KillWait (5 s) plus a message round
            wait_until(lambda: "COMPLETING" not in {self.job_state(r) for r in self.jobs}, 20, "killed jobs to end")
        since = (time.monotonic(), self.beats())
        probe = self._probe()
        after = change.shown(self)
        alive = self.beating(since)
        jobs = {role: self.job_state(role) for role in self.jobs}
        shown = {key: [before.get(key, "(absent)"), after.get(key, "(absent)")] for key in sorted({*before, *after})}
        live = any(a != b for a, b in shown.values()) if shown else None
        return Outcome(applied, controller, live, shown, jobs, alive, nodes, probe, self._note())

    def _probe(self) -> str:
        self.cluster.jobs_dir.mkdir(parents=True, exist_ok=True)
        done = self.run(
            "sbatch", "--parsable", "-D", str(self.cluster.jobs_dir), "-p", "probe", "--mem=10", "-t", "5", "--wrap", "true"
        )
        if done.returncode != 0:
            return "refused: " + self.norm(done.stderr.strip()).splitlines()[0][:120] if done.stderr.strip() else "refused"
        job = done.stdout.strip().split(";")[0]
        self.last_job = int(job)

        def state() -> dict[str, str] | None:
            info = parse_key_values(self.run("scontrol", "show", "job", job, "-o").stdout)
            return info if info.get("JobState") in TERMINAL_JOB_STATES else None

        with contextlib.suppress(HarnessError):
            wait_until(state, 20, f"probe job {job} to end")
        info = parse_key_values(self.run("scontrol", "show", "job", job, "-o").stdout)
        found = info.get("JobState", "?")
        return found if found in TERMINAL_JOB_STATES else f"{found} ({info.get('Reason', '?')})"

    def _note(self) -> str:
        """slurmctld's lines since the change that say what it did to jobs, or why it stopped."""
        log = self.cluster.log_dir / "slurmctld.out"
        text = log.read_bytes()[self.log_offset :].decode(errors="replace") if log.exists() else ""
        wanted = re.compile(
            r"fatal|Killing|defunct|Invalid|Purging|lost|mismatch|cancel|incompatible|error: (?!.*PrologFlags)", re.I
        )
        lines = [self.norm(line.split("] ", 1)[-1]) for line in text.splitlines() if wanted.search(line)]
        if self.refusal:
            lines.insert(0, "scontrol reconfigure: " + self.refusal)
        return " | ".join(dict.fromkeys(lines))[:800]


# --------------------------------------------------------------------------------------------------
# running the cases


def hostname_wrappers(folder: Path) -> dict[str, str]:
    """Per node, a `slurmd` that runs the real one with host name `node` (its own UTS namespace), as a NodeSet pod has.

    Dynamic nodes register with the host's name as NodeHostname (`--conf NodeHostname=` is not taken); two with one
    name make slurmctld log "Duplicated NodeHostName" and fail to forward to the second ("_fwd_tree_get_addr: can't
    find address for host gpu-0"), and a job launched there is requeued (seen on 26.05.3).  Written before any cluster
    starts: a script written while another thread forks cannot be run at once ("Text file busy")."""
    real = slurm_binary("slurmd")
    if real is None:
        raise HarnessError(missing_reason() or "slurmd is missing from the Slurm prefix")
    out = {}
    for node in NODES:
        script = f'#!/bin/sh\nexec unshare --uts /bin/sh -c \'hostname {node}; exec "$@"\' sh {real} "$@"\n'
        out[node] = str(write_script(folder / node / "slurmd", script))
    return out


class Accounting:
    """One slurmdbd for every case, with cluster names registered up front: a case takes one while it runs (adding a
    cluster to slurmdbd creates its tables, seconds each)."""

    def __init__(self, dbd: SlurmDBD, names: Sequence[str], wrappers: Mapping[str, str]) -> None:
        self.dbd = dbd
        self.wrappers = wrappers
        self._names: queue.Queue[str] = queue.Queue()
        for name in names:
            self._names.put(name)

    @contextlib.contextmanager
    def cluster_name(self) -> Iterator[str]:
        name = self._names.get(timeout=600)
        try:
            yield name
        finally:
            self._names.put(name)


@contextlib.contextmanager
def accounting(tmp: Path, slots: int = 4) -> Iterator[Accounting]:
    """MariaDB and slurmdbd with `slots` clusters registered (at most that many cases at a time)."""
    with MariaDBServer(tmp / "db") as db, SlurmDBD(tmp / "dbd", db) as dbd:
        names = [f"slot{i}" for i in range(slots)]
        run(["sacctmgr", "-i", "add", "cluster", *names], env=dbd.client_env(names[0]), timeout=120, check=True)
        yield Accounting(dbd, names, hostname_wrappers(tmp / "bin"))


def run_case(change: Change, mode: str, db: Accounting, tmp: Path, index: int = 0) -> Outcome:
    """One change in one mode on a fresh cluster.  Setting the base up (daemons, jobs running) is tried twice on a
    fresh cluster each (a loaded machine can be slow to start a job); what happens after the change is never retried."""
    with db.cluster_name() as name:
        for attempt in (1, 2):
            # short folder names: slurmstepd's sockets live under the spool folder, and a socket path has 108 bytes
            site = ChangeSite(tmp / f"c{index:02d}{mode[:3]}{attempt}", db.dbd, name, change.base, db.wrappers)
            try:
                try:
                    site.start()
                except HarnessError as error:
                    if attempt == 2:
                        raise
                    print(f"[slurm_change] {change.id} ({mode}): the base did not come up, once more: {error}", file=sys.stderr)
                    continue
                return site.apply(change, mode)
            finally:
                site.stop()
    raise AssertionError("unreachable")


def run_cases(changes: Sequence[Change], db: Accounting, tmp: Path, *, workers: int = 4) -> list[dict[str, Any]]:
    """Every change in every mode (`workers` clusters at a time); the table's rows."""
    jobs = [(i, change, mode) for i, change in enumerate(changes) for mode in MODES]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = list(pool.map(lambda job: run_case(job[1], job[2], db, tmp, job[0]), jobs))
    results = {(change.id, mode): outcome for (_, change, mode), outcome in zip(jobs, done, strict=True)}
    return [
        {"id": c.id, "what": c.what, "items": list(c.items), **{mode: asdict(results[c.id, mode]) for mode in MODES}}
        for c in changes
    ]


def table(rows: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    return {
        "slurm": SLURM_VERSION,
        "produced_by": "python -m tests.daemons.slurm_change --write offline/diff/slurm_outcomes.json (tests/daemons/slurm_change.py)",
        "seconds": round(seconds),
        "modes": {
            "reconfigure": "Controller inplaceReconfigure: true: the reconfigure sidecar runs `scontrol reconfigure` with the head files",
            "restart": "inplaceReconfigure: false: the operator recreates the slurmctld pod (SIGTERM, start on the head files)",
        },
        "rows": rows,
    }


def differences(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """What differs between two tables' rows (the `note` fields and timings are not compared)."""
    old = {row["id"]: row for row in want["rows"]}
    new = {row["id"]: row for row in got["rows"]}
    out = [f"row {key}: only in the {'committed' if key in old else 'new'} table" for key in sorted(set(old) ^ set(new))]
    for key in sorted(set(old) & set(new)):
        for mode in MODES:
            a = {k: v for k, v in old[key][mode].items() if k != "note"}
            b = {k: v for k, v in new[key][mode].items() if k != "note"}
            out += [f"{key} [{mode}] {k}: {a.get(k)!r} -> {b.get(k)!r}" for k in sorted({*a, *b}) if a.get(k) != b.get(k)]
    return out


def print_table(rows: list[dict[str, Any]], out: Any = sys.stdout) -> None:
    """Summary first: one line per row and mode."""
    for row in rows:
        for mode in MODES:
            o = row[mode]
            jobs = " ".join(f"{k}={v}" for k, v in o["jobs"].items())
            nodes = ",".join(f"{k}:{v}" for k, v in o["nodes"].items()) or "-"
            print(
                f"{row['id']:<28} {mode:<11} {o['applied']:<19} ctld={o['controller']:<4} live={o['live']!s:<5} "
                f"{jobs} alive={sum(o['alive'].values())}/{len(o['alive'])} nodes={nodes} probe={o['probe']}",
                file=out,
            )


def main(argv: Sequence[str] | None = None) -> int:
    from .slurm_change_cases import CASES

    parser = argparse.ArgumentParser(prog="python -m tests.daemons.slurm_change", description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", type=Path, help="run every case and write the table here")
    action.add_argument("--check", type=Path, help="run every case and compare with this table")
    parser.add_argument("--only", nargs="*", default=None, help="case ids (with --check)")
    parser.add_argument("--workers", type=int, default=4, help="clusters at a time")
    parser.add_argument("--keep", type=Path, default=None, help="run in this folder and keep the daemons' logs")
    args = parser.parse_args(argv)
    changes = [c for c in CASES if args.only is None or c.id in args.only]
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            shutil.rmtree(args.keep, ignore_errors=True)
            args.keep.mkdir(parents=True)
        root = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="slurm-change-")))
        db = stack.enter_context(accounting(root, args.workers))
        rows = run_cases(changes, db, root, workers=args.workers)
    got = table(rows, time.monotonic() - started)
    print_table(rows)
    print(f"{len(rows)} changes x {len(MODES)} modes in {got['seconds']} s", file=sys.stderr)
    if args.write:
        args.write.write_text(json.dumps(got, indent=1, sort_keys=False) + "\n")
        return 0
    want = json.loads(args.check.read_text())
    if args.only is not None:
        want["rows"] = [row for row in want["rows"] if row["id"] in args.only]
    found = differences(want, got)
    print("\n".join(found) or "the table matches", file=sys.stderr)
    return 1 if found else 0


__all__ = ["MODES", "Change", "ChangeSite", "Files", "Outcome", "accounting", "differences", "run_case", "run_cases"]

if __name__ == "__main__":
    raise SystemExit(main())
