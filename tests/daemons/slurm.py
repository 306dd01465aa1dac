"""A private Slurm 26.05.3 cluster (sackd, slurmctld, one slurmd per node; auth/slurm) on 127.0.0.1, for tests.

Usage::

    with SlurmCluster(tmp_path, "hpcforge", nodes=[node_line("n1"), node_line("n2")],
                      partitions=["PartitionName=batch Nodes=n1,n2 Default=YES State=UP"],
                      extra_conf=rendered_fragment) as cluster:
        job = cluster.sbatch("#!/bin/sh\\ntouch /tmp/x\\n", partition="batch")
        assert cluster.wait_job(job, 60) == "COMPLETED"

Slurm is the 26.05.3 build of ../shared/slurm (the release Slinky's images ship), found by
tests/daemons/slurm_prefix.py (``HPCFORGE_SLURM_PREFIX``); Debian's 22.05 is not used.  Everything the
cluster writes lives under ``tmp_dir`` (slurm.conf and gres.conf/cgroup.conf/topology.yaml beside it, slurm.key,
state, spool ``<tmp>/spool/%n``, pid files, logs under ``<tmp>/log``); every daemon runs in the foreground
(``-D``) as a :class:`~tests.daemons.common.ManagedProcess` and is stopped by pid/process group in
:meth:`SlurmCluster.stop` (also on a failed start and from the atexit safety net).

The slurm.conf the harness writes
---------------------------------
``SlurmUser=root``, ``AuthType=auth/slurm``, ``CredType=cred/slurm``, ``AuthInfo=disable_sack`` with a
slurm.key per cluster and a private sackd (tests/daemons/sack.py: why munge cannot serve several slurmds
on one host in 26.05, and why the daemons do not serve the shared /run sockets), ``ProctrackType=
proctrack/linuxproc``, ``TaskPlugin=task/affinity``, ``JobAcctGatherType=jobacct_gather/none``,
``AccountingStorageType=accounting_storage/none``, private ``SlurmctldPort``/``SlurmdPort`` and, on every
static ``NodeName`` line, its own ``Port=``, ``NodeHostname=<the node's name>`` and ``NodeAddr=127.0.0.1``.

Where jobs run, the proctrack/task/jobacct plugins are the harness's: ../shared/slurm/README.md says
these machines have no usable freezer cgroup for proctrack/cgroup.  (On the machine this was written on,
26.05.3 did start jobs with the rendered proctrack/cgroup, task/cgroup,task/affinity and jobacct_gather/cgroup
under cgroup v1: tests/components/layers/slurm/test_real_slurm.py loads them as rendered where it runs no job.)  cgroup/v2 cannot
load on a hybrid-cgroup host at all ("fatal: Hybrid mode is not supported").

Keys the harness must own for the daemons to run here (ports, paths, users, auth, proctrack/task/acct
plugins, the control host, the cluster name) are *commented out* when they appear in ``extra_conf`` and
listed in :attr:`SlurmCluster.overridden` (pass ``allow_override={"Key"}`` to keep yours, e.g.
``SlurmDBD.OVERRIDES`` with a slurmdbd, or the cgroup plugins where no job runs); keys the harness only
defaults (``SelectType``, ``MpiDefault``, ``ReturnToService``, ``TreeWidth``, ``MaxNodeCount`` ...) yield to
``extra_conf``; ``SlurmctldParameters`` values are merged.  ``NodeName=`` lines belong in ``nodes=`` (they
need ports), not in ``extra_conf``.

Checked on Slurm 26.05.3 (each asserted by tests/test_daemon_harness.py or the tier's tests)
-------------------------------------------------------------------------------------------
* Several slurmd on one host: without ``--enable-multiple-slurmd`` (which ../shared/slurm/README.md's build
  does not use) 26.05 keeps one node per NodeHostname ("Duplicated NodeHostName localhost in the config
  file") and cannot forward to the others ("_fwd_tree_get_addr: can't find address for host n2"), so each
  node gets its own NodeHostname; 22.05 had taken ``NodeHostname=localhost`` for all.
* Dynamic nodes and configless: ``slurmd -Z --conf-server HOST:PORT --conf "Feature=bm ..." -N NAME``
  against ``SlurmctldParameters=enable_configless`` fetches slurm.conf (and gres.conf, cgroup.conf) into
  ``<SlurmdSpoolDir>/conf-cache`` and registers ``IDLE+DYNAMIC_NORM`` with the features of ``--conf``.  The
  harness runs such a slurmd *without* ``SLURM_CONF`` so the fetch is real (``SLURM_SACK_KEY`` gives it the key).
  26.05 also points the host-wide symlink ``/run/slurm/conf`` at its conf-cache (the last configless slurmd
  started wins); nothing here reads it, the clients use ``SLURM_CONF``.
* ``MaxNodeCount=N`` is required for dynamic nodes: without it slurmctld logs "Unable to add node, node table
  is full (dyn1)" and the node never appears while its slurmd keeps running (the harness fails fast on that
  line).  The harness defaults to ``SelectType=select/cons_tres`` + ``SelectTypeParameters=CR_CPU`` and sets
  ``TreeWidth=65533`` with dynamic nodes, as a real site with dynamic nodes does.
* ``Port=`` **is accepted** in ``--conf`` (22.05 refused it): a second ``-Z`` slurmd on this host registers
  with its own port.  Without ``Port=`` a dynamic slurmd listens on the cluster's ``SlurmdPort``, so the
  harness refuses a second one without ``Port=`` with a clear error.
* ``NodeSet=`` lines resolve features for dynamic nodes at registration: a ``-Z`` slurmd with
  ``Feature=cpu-bm`` lands in a partition over ``NodeSet=cpu-bm Feature=cpu-bm`` (22.05 put dynamic nodes
  only into ``Nodes=ALL`` partitions).  The harness still adds ``PartitionName=dynamic Nodes=ALL`` when dynamic
  nodes are on and no partition line says ``Nodes=ALL`` (``catch_all=False``: not, as Slinky writes none).
* GRES without devices: ``--conf "Gres=gpu:2"`` with no device files registers ``DRAIN+INVALID_REG`` with
  ``Reason=gres/gpu count reported lower than configured (0 < 2)``; one device file per GPU in gres.conf
  (``File=/dev/zero,/dev/null`` for 2) makes the node usable and a ``--gres=gpu:1`` job runs there.
  ``GresTypes=gpu`` must be in slurm.conf.
* ``scontrol delete NodeName=X`` removes a dynamic node after its slurmd stopped.
* Prolog=/Epilog= scripts get an environment of slurmd's making: SLURM_* variables and SLURM_CONF, **no
  PATH** and none of the daemon's own variables; a script that runs ``scontrol`` needs what the slurmd image
  gives it (:meth:`SlurmCluster.node_script`).  Several ``Prolog=`` lines all run, in order (Slinky writes one
  per script).  A failing prolog drains the node (``Reason=Prolog error``) and requeues the job held.
* ``topology.yaml`` beside slurm.conf is read without any ``TopologyPlugin=`` line; ``scontrol show topology``
  lists only nodes slurmctld knows (22.05 echoed topology.conf's host lists); ``Topology=<topo>:<unit>`` on a
  node line places a node, as Slinky's pods register.
* Partition ``AllowGroups`` with the default ``EnforcePartLimits=NO`` does not refuse a job at submission
  (22.05 did): the job stays pending with ``Reason=uid_<uid>_not_in_group_permitted_to_use_this_partition_...``.
  ``sbatch --uid`` is gone: submit as the user (run(..., user=)).
* ``scontrol reconfigure`` starts a new slurmctld process (scontrol(1)); it reloads associations and QOS from
  slurmdbd too, but not the listening port (tests/components/layers/slurm/test_real_slurm_reconfigure.py).
* ``MpiDefault=none`` and ``MailProg=/bin/true`` keep the logs free of errors about PMIx and mail; a node line
  with more CPUs/RealMemory than the host has is drained, so :func:`node_line` defaults to ``CPUs=1
  RealMemory=100``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

from .common import (
    REGISTRY,
    TAG_VAR,
    HarnessError,
    ManagedProcess,
    PidfileDaemon,
    Stack,
    WaitAbort,
    env_with,
    free_ports,
    kill_orphans,
    kill_tagged,
    log_tails,
    make_tag,
    pid_alive,
    process_tag,
    read_pidfile,
    run,
    tag_owner_alive,
    tail,
    wait_until,
    write_file,
    write_script,
)
from .sack import AUTH_LINES, SlurmAuth
from .slurm_prefix import SLURM_BINARIES, missing_reason, slurm_binary, slurm_path

#: Binaries a test needs before building a :class:`SlurmCluster` (pass to ``require_binaries``).
REQUIRED_BINARIES = ("slurmctld", "slurmd", "sackd", "sinfo", "scontrol", "sbatch", "squeue", "scancel")

MUNGE_KEY = Path("/etc/munge/munge.key")
MUNGE_RUN_DIR = Path("/run/munge")
MUNGE_PIDFILE = MUNGE_RUN_DIR / "munged.pid"

#: Job states after which a job will not change by itself.
TERMINAL_JOB_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "OUT_OF_MEMORY",
        "BOOT_FAIL",
        "DEADLINE",
        "SPECIAL_EXIT",
        "REVOKED",
    }
)

#: slurm.conf keys the harness must control; in ``extra_conf`` they are commented out (unless allowed).
OWNED_KEYS = frozenset(
    key.lower()
    for key in (
        "ClusterName",
        "SlurmctldHost",
        "ControlMachine",
        "ControlAddr",
        "BackupController",
        "SlurmUser",
        "SlurmdUser",
        "SlurmctldPort",
        "SlurmdPort",
        "StateSaveLocation",
        "SlurmdSpoolDir",
        "SlurmctldPidFile",
        "SlurmdPidFile",
        "SlurmctldLogFile",
        "SlurmdLogFile",
        "SlurmSchedLogFile",
        "ProctrackType",
        "TaskPlugin",
        "JobAcctGatherType",
        "AccountingStorageType",
        "AccountingStorageHost",
        "AccountingStoragePort",
        "AccountingStorageEnforce",
        "JobCompType",
        "AuthType",
        "AuthInfo",
        "CredType",
        "PluginDir",
    )
)

_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


# --------------------------------------------------------------------------------------------------
# munge


def munge_works(timeout: float = 10) -> bool:
    """``munge -n | unmunge`` succeeds (a munged answers on the default socket with a usable key)."""
    munge = shutil.which("munge") or "/usr/bin/munge"
    unmunge = shutil.which("unmunge") or "/usr/bin/unmunge"
    try:
        credential = run([munge, "-n"], timeout=timeout)
        if credential.returncode != 0:
            return False
        decoded = run([unmunge], input=credential.stdout, timeout=timeout)
    except (HarnessError, OSError):
        return False
    return decoded.returncode == 0 and "Success" in decoded.stdout


def ensure_munge(timeout: float = 30) -> PidfileDaemon | None:
    """Make ``munge -n | unmunge`` work; returns the munged it started (None when one already ran).

    A key is written to /etc/munge/munge.key (owner munge, mode 0400) only if there is none; /run/munge
    is created owned by munge; ``munged`` is started as the munge user (it daemonizes; known by
    /run/munge/munged.pid).  munged is shared machine state like on a real node: a munged started here
    is left running for later clusters of the same test run and stopped by the atexit registry.  It
    carries a :data:`~tests.daemons.common.TAG_VAR` tag: a munged left behind by a crashed run is
    adopted (and so stopped at exit) by the next run that finds it.  A munged nobody tagged (a system
    one) is used and never stopped.
    """
    if munge_works():
        # a munged a crashed earlier run started (and could not stop) becomes this run's to stop
        pid = read_pidfile(MUNGE_PIDFILE)
        tag = process_tag(pid) if pid is not None and pid_alive(pid) else None
        if pid is not None and tag is not None and tag.startswith("munge:") and not tag_owner_alive(tag):
            return PidfileDaemon("munged", pid, pidfile=MUNGE_PIDFILE)
        return None
    munged = shutil.which("munged", path=_SYSTEM_PATH)
    if munged is None:
        raise HarnessError("munged is not installed (Debian package munge)")
    import grp
    import pwd

    try:
        uid = pwd.getpwnam("munge").pw_uid
        gid = grp.getgrnam("munge").gr_gid
    except KeyError:
        raise HarnessError("there is no munge user/group (install the Debian package munge)") from None
    if not MUNGE_KEY.exists():
        MUNGE_KEY.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chown(MUNGE_KEY.parent, uid, gid)
        fd = os.open(MUNGE_KEY, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(1024))
        os.chown(MUNGE_KEY, uid, gid)
        MUNGE_KEY.chmod(0o400)
    for directory in (MUNGE_RUN_DIR, Path("/var/lib/munge"), Path("/var/log/munge")):
        directory.mkdir(parents=True, exist_ok=True)
        os.chown(directory, uid, gid)
    MUNGE_RUN_DIR.chmod(0o755)
    tagged = env_with({TAG_VAR: make_tag("munge", MUNGE_RUN_DIR)})
    started = run([munged, "--force"], user="munge", group="munge", env=tagged, timeout=timeout)
    if started.returncode != 0:
        raise HarnessError(f"munged did not start (exit {started.returncode}): {started.stderr.strip()}")
    daemon = PidfileDaemon.adopt("munged", MUNGE_PIDFILE, timeout=timeout, log=Path("/var/log/munge/munged.log"))
    wait_until(munge_works, timeout, "munge -n | unmunge to succeed", log=Path("/var/log/munge/munged.log"))
    return daemon


# --------------------------------------------------------------------------------------------------
# slurm.conf helpers


def node_line(
    name: str,
    *,
    cpus: int = 1,
    real_memory: int = 100,
    features: Sequence[str] = (),
    gres: str | None = None,
    extra: str = "",
) -> str:
    """A static ``NodeName=`` line that fits this host (the harness adds ``Port=``/``NodeHostname=``)."""
    parts = [f"NodeName={name}", f"CPUs={cpus}", f"RealMemory={real_memory}"]
    if features:
        parts.append("Feature=" + ",".join(features))
    if gres:
        parts.append(f"Gres={gres}")
    if extra:
        parts.append(extra)
    parts.append("State=UNKNOWN")
    return " ".join(parts)


def parse_key_values(text: str) -> dict[str, str]:
    """Parse scontrol's one-line ``Key=Value Key=Value`` records; values may contain spaces."""
    matches = list(re.finditer(r"(?:^|\s)([A-Za-z][\w/:.\-]*)=", text.strip()))
    result: dict[str, str] = {}
    stripped = text.strip()
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(stripped)
        result[match.group(1)] = stripped[match.end() : end].strip()
    return result


def _line_key(line: str) -> str | None:
    stripped = line.strip()
    if not stripped or stripped.startswith("#") or "=" not in stripped:
        return None
    return stripped.split("=", 1)[0].strip().lower()


def _split_node_line(line: str) -> tuple[str, list[str]]:
    tokens = shlex.split(line)
    if not tokens or not tokens[0].lower().startswith("nodename="):
        raise ValueError(f"not a NodeName= line: {line!r}")
    name = tokens[0].split("=", 1)[1]
    if any(ch in name for ch in "[],") or name.upper() in {"DEFAULT", "ALL"}:
        raise ValueError(f"the harness needs one NodeName per line (each slurmd gets its own Port=): {line!r}")
    return name, tokens[1:]


# --------------------------------------------------------------------------------------------------
# the cluster


class SlurmCluster:
    """slurmctld + one slurmd per static node on 127.0.0.1 with private ports, all under ``tmp_dir``.

    Parameters: ``nodes`` are static ``NodeName=`` lines (one name each, see :func:`node_line`);
    ``partitions`` are ``PartitionName=`` lines (default: ``PartitionName=debug Nodes=ALL Default=YES``);
    ``extra_conf`` is appended slurm.conf text (e.g. rendered by hpcforge: scheduler/priority
    parameters, ``Prolog=``/``Epilog=`` lines); ``gres_conf``/``cgroup_conf``/``topology_conf``/``job_container_conf``
    are written beside slurm.conf (``NamespaceType=namespace/tmpfs`` needs job_container.conf: without it slurmd
    stops at start).  ``dynamic=True`` turns on configless + dynamic nodes (``enable_configless``,
    ``MaxNodeCount``, ``TreeWidth=65533``); ``configless=True`` only ``enable_configless``.
    """

    def __init__(
        self,
        tmp_dir: Path,
        cluster_name: str = "hpcforge",
        nodes: Sequence[str] = (),
        partitions: Sequence[str] = (),
        extra_conf: str = "",
        *,
        gres_conf: str | None = None,
        cgroup_conf: str | None = None,
        topology_conf: str | None = None,
        topology_yaml: str | None = None,
        job_container_conf: str | None = None,
        configless: bool = False,
        dynamic: bool = False,
        max_node_count: int | None = None,
        allow_override: Collection[str] = (),
        start_timeout: float = 60.0,
        debug: str = "info",
        slurm_key: Path | None = None,
        catch_all: bool = True,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_\-]{1,40}", cluster_name):
            raise ValueError(f"unusable ClusterName {cluster_name!r}")
        self.tmp_dir = Path(tmp_dir).resolve()
        self.cluster_name = cluster_name
        self.dynamic = dynamic
        self.configless = configless or dynamic
        self.start_timeout = start_timeout
        self.debug = debug
        self.conf_path = self.tmp_dir / "slurm.conf"
        self.log_dir = self.tmp_dir / "log"
        self.state_dir = self.tmp_dir / "state"
        self.spool_root = self.tmp_dir / "spool"
        self.run_dir = self.tmp_dir / "run"
        self.jobs_dir = self.tmp_dir / "jobs"
        self.scripts_dir = self.tmp_dir / "scripts"
        self.ctld_log = self.log_dir / "slurmctld.log"

        self._node_lines: dict[str, list[str]] = {}
        for line in nodes:
            name, tokens = _split_node_line(line)
            if name in self._node_lines:
                raise ValueError(f"node {name} is defined twice")
            self._node_lines[name] = tokens
        ports = free_ports(2 + len(self._node_lines))
        self.ctld_port, self.slurmd_port = ports[0], ports[1]
        self.node_ports: dict[str, int] = dict(zip(self._node_lines, ports[2:], strict=True))
        self.partitions = list(partitions) or ["PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"]
        self.extra_conf = extra_conf
        self.gres_conf = gres_conf
        self.cgroup_conf = cgroup_conf
        self.topology_conf = topology_conf
        self.topology_yaml = topology_yaml
        self.job_container_conf = job_container_conf
        self.max_node_count = max_node_count if max_node_count is not None else len(self._node_lines) + 8
        self.allow_override = {key.lower() for key in allow_override}
        self.catch_all = catch_all
        #: extra_conf lines the harness commented out because it must own those keys
        self.overridden: list[str] = []

        self.slurmctld: ManagedProcess | None = None
        self.slurmds: dict[str, ManagedProcess | PidfileDaemon] = {}
        self._own_port: set[str] = set()  # dynamic nodes started with Port= in --conf
        self._stack = Stack()
        self._started = False
        #: value of TAG_VAR in every process this cluster starts (jobs inherit SLURM_CONF instead)
        self.tag = make_tag("slurm", self.tmp_dir)
        #: auth/slurm: the key (``slurm_key``, e.g. a :class:`~tests.daemons.slurmdbd.SlurmDBD`'s, else a
        #: new one beside slurm.conf) and this cluster's own sackd for its clients (tests/daemons/sack.py)
        self.auth = SlurmAuth(self.tmp_dir, key=slurm_key)

    # ----------------------------------------------------------------------------------------------
    # configuration

    @property
    def conf_server(self) -> str:
        """``host:port`` for ``slurmd --conf-server``."""
        return f"127.0.0.1:{self.ctld_port}"

    @property
    def static_nodes(self) -> list[str]:
        return list(self._node_lines)

    def env(self, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
        """The environment for Slurm commands: ``SLURM_CONF`` set, the Slurm 26.05.3 prefix first on PATH, /usr/sbin last."""
        env = env_with({"SLURM_CONF": str(self.conf_path), TAG_VAR: self.tag, **self.auth.env(), **(extra or {})})
        env["PATH"] = ":".join(part for part in (slurm_path(), env.get("PATH", ""), _SYSTEM_PATH) if part)
        return env

    def render_conf(self) -> str:  # noqa: PLR0912 (one branch per optional setting of the test cluster)
        """The complete slurm.conf text (also written by :meth:`start`)."""
        tmp = self.tmp_dir
        owned = {
            "ClusterName": self.cluster_name,
            "SlurmctldHost": "localhost",
            "SlurmUser": "root",
            "SlurmdUser": "root",
            "SlurmctldPort": str(self.ctld_port),
            "SlurmdPort": str(self.slurmd_port),
            **AUTH_LINES,
            "StateSaveLocation": str(self.state_dir),
            "SlurmdSpoolDir": f"{self.spool_root}/%n",
            "SlurmctldPidFile": f"{self.run_dir}/slurmctld.pid",
            "SlurmdPidFile": f"{self.run_dir}/slurmd-%n.pid",
            "SlurmctldLogFile": str(self.ctld_log),
            "SlurmdLogFile": f"{self.log_dir}/slurmd-%n.log",
            "ProctrackType": "proctrack/linuxproc",
            "TaskPlugin": "task/affinity",
            "JobAcctGatherType": "jobacct_gather/none",
            "AccountingStorageType": "accounting_storage/none",
            "JobCompType": "jobcomp/none",
        }
        defaults = {
            "SelectType": "select/cons_tres",
            "SelectTypeParameters": "CR_CPU",
            "MpiDefault": "none",
            "MailProg": "/bin/true",
            "ReturnToService": "2",
            "SlurmctldDebug": self.debug,
            "SlurmdDebug": self.debug,
            "SlurmctldTimeout": "30",
            "SlurmdTimeout": "60",
            "MinJobAge": "300",
            "KillWait": "5",
        }
        if self.dynamic:
            defaults["MaxNodeCount"] = str(self.max_node_count)
            defaults["TreeWidth"] = "65533"
        ctld_params = ["enable_configless"] if self.configless else []

        extra_lines: list[str] = []
        self.overridden = []
        extra_keys: set[str] = set()
        for line in self.extra_conf.splitlines():
            key = _line_key(line)
            if key == "nodename":
                raise ValueError("put NodeName= lines in nodes=, not in extra_conf (each slurmd needs its own Port=)")
            if key == "slurmctldparameters":
                for value in line.split("=", 1)[1].strip().split(","):
                    if value and value not in ctld_params:
                        ctld_params.append(value)
                continue
            if key in OWNED_KEYS and key not in self.allow_override:
                self.overridden.append(line.strip())
                extra_lines.append(f"# [test harness] overridden: {line.strip()}")
                continue
            if key is not None:
                extra_keys.add(key)
            extra_lines.append(line)
        for key in list(owned):
            if key.lower() in extra_keys:
                del owned[key]
        for key in list(defaults):
            if key.lower() in extra_keys:
                del defaults[key]

        lines = [f"# slurm.conf written by the hpcforge test harness under {tmp}"]
        lines += [f"{key}={value}" for key, value in owned.items()]
        lines += [f"{key}={value}" for key, value in defaults.items()]
        if ctld_params:
            lines.append("SlurmctldParameters=" + ",".join(ctld_params))
        if self.extra_conf.strip():
            lines.append("# --- extra_conf ---")
            lines += extra_lines
            lines.append("# --- end of extra_conf ---")
        for name, tokens in self._node_lines.items():
            kept = [tok for tok in tokens if tok.split("=", 1)[0].lower() not in {"port", "nodehostname", "nodeaddr"}]
            lines.append(
                " ".join(
                    [f"NodeName={name}", f"NodeHostname={name}", "NodeAddr=127.0.0.1", f"Port={self.node_ports[name]}", *kept]
                )
            )
        partitions = list(self.partitions)
        if self.dynamic and self.catch_all and not any(re.search(r"(?i)\bNodes=ALL\b", line) for line in partitions):
            partitions.append("PartitionName=dynamic Nodes=ALL State=UP")
        lines += partitions
        return "\n".join(lines) + "\n"

    def node_environment(self) -> dict[str, str]:
        """What a Slinky slurmd image gives a Prolog/Epilog script and this host does not.

        slurmd runs Prolog=/Epilog= scripts with an environment of its own (SLURM_* variables and
        SLURM_CONF, no PATH: checked on 26.05.3).  In the images, ``scontrol`` is in /usr/bin and slurmd
        serves the sack socket at /run/slurm/sack.socket; here Slurm lives in the 26.05.3 prefix and each
        cluster has its own sackd.  A script that calls Slurm's clients needs these two variables (see
        :meth:`node_script`).
        """
        return {"PATH": ":".join(part for part in (slurm_path(), _SYSTEM_PATH) if part), **self.auth.env()}

    def node_script(self, name: str, text: str) -> Path:
        """An executable script under ``<tmp>/scripts``: ``text`` as given, with :meth:`node_environment`
        exported right after its ``#!`` line (the node image's part, not the script's)."""
        shebang, _, body = text.partition("\n") if text.startswith("#!") else ("#!/bin/sh", "", text)
        exports = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in self.node_environment().items())
        return write_script(
            self.scripts_dir / name, f"{shebang}\n# [test harness] the slurmd image's environment\n{exports}{body}"
        )

    def write_script(self, name: str, text: str) -> Path:
        """An executable script under ``<tmp>/scripts`` (for Prolog=/Epilog= lines and the like)."""
        return write_script(self.scripts_dir / name, text)

    def write_config(self) -> None:
        for directory in (self.log_dir, self.state_dir, self.spool_root, self.run_dir, self.jobs_dir, self.scripts_dir):
            directory.mkdir(parents=True, exist_ok=True)
        for name in self._node_lines:
            (self.spool_root / name).mkdir(parents=True, exist_ok=True)
        write_file(self.conf_path, self.render_conf())
        if self.gres_conf is not None:
            write_file(self.tmp_dir / "gres.conf", self.gres_conf)
        if self.cgroup_conf is not None:
            write_file(self.tmp_dir / "cgroup.conf", self.cgroup_conf)
        if self.topology_conf is not None:
            write_file(self.tmp_dir / "topology.conf", self.topology_conf)
        if self.topology_yaml is not None:
            write_file(self.tmp_dir / "topology.yaml", self.topology_yaml)
        if self.job_container_conf is not None:
            write_file(self.tmp_dir / "job_container.conf", self.job_container_conf)

    # ----------------------------------------------------------------------------------------------
    # lifecycle

    def log_paths(self) -> list[Path]:
        return [self.ctld_log, *sorted(self.log_dir.glob("slurmd-*.log")), *sorted(self.log_dir.glob("*.out"))]

    def _binary(self, name: str) -> str:
        """Slurm's binaries from the 26.05.3 prefix (tests/daemons/slurm_prefix.py); munge's from Debian."""
        if name in SLURM_BINARIES:
            found = slurm_binary(name)
            if found is None:
                raise HarnessError(missing_reason() or f"{name} is missing from the Slurm prefix")
            return found
        path = shutil.which(name, path=_SYSTEM_PATH) or shutil.which(name)
        if path is None:
            raise HarnessError(f"{name} is not installed")
        return path

    def start(self, *, wait_idle: bool = True) -> SlurmCluster:
        """Write the configs, make munge work, start slurmctld and the static slurmds, wait for idle nodes.

        On any failure everything started so far is stopped before the error propagates.
        """
        if self._started:
            raise HarnessError("cluster already started")
        self._started = True
        try:
            for name in REQUIRED_BINARIES:
                self._binary(name)
            self.auth.ensure_key()
            kill_orphans("slurm")  # daemons of an earlier run that was killed before it could stop them
            self.write_config()
            self._stack.push(self.auth)
            self.auth.start_sackd(self.conf_path, log=self.log_dir / "sackd.log", extra_env={TAG_VAR: self.tag})
            self.slurmctld = ManagedProcess(
                [self._binary("slurmctld"), "-D", "-f", str(self.conf_path)],
                name="slurmctld",
                log_path=self.log_dir / "slurmctld.out",
                env=self.env(),
                cwd=self.tmp_dir,
            )
            self._stack.push(self.slurmctld)
            self.wait_controller(self.start_timeout)
            for name in self._node_lines:
                proc = ManagedProcess(
                    [self._binary("slurmd"), "-D", "-N", name, "-f", str(self.conf_path)],
                    name=f"slurmd {name}",
                    log_path=self.log_dir / f"slurmd-{name}.out",
                    env=self.env(),
                    cwd=self.tmp_dir,
                )
                self.slurmds[name] = proc
                self._stack.push(proc)
            if wait_idle:
                for name in self._node_lines:
                    self.wait_node_idle(name, self.start_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop_controller(self) -> None:
        """Stop slurmctld only (by pid); slurmds, sackd and jobs keep running, as when its pod is deleted."""
        if self.slurmctld is not None:
            self.slurmctld.stop()

    def start_controller(self, timeout: float | None = None) -> None:
        """Start slurmctld again with the same slurm.conf and state (``-D``, no ``-c``: it recovers its state)."""
        if self.slurmctld is not None and self.slurmctld.alive():
            raise HarnessError("slurmctld is running")
        self.slurmctld = ManagedProcess(
            [self._binary("slurmctld"), "-D", "-f", str(self.conf_path)],
            name="slurmctld",
            log_path=self.log_dir / "slurmctld.out",
            env=self.env(),
            cwd=self.tmp_dir,
        )
        self._stack.push(self.slurmctld)
        self.wait_controller(timeout or self.start_timeout)

    def restart_controller(self, timeout: float | None = None) -> None:
        """:meth:`stop_controller` then :meth:`start_controller`."""
        self.stop_controller()
        self.start_controller(timeout)

    def __enter__(self) -> SlurmCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _check_daemons(self) -> None:
        if self.slurmctld is not None and not self.slurmctld.alive():
            raise WaitAbort(f"slurmctld exited with code {self.slurmctld.returncode}")
        for name, proc in self.slurmds.items():
            if not proc.alive():
                raise WaitAbort(f"slurmd for node {name} is not running")

    def wait_controller(self, timeout: float = 30) -> None:
        """Wait until ``scontrol ping`` reports the controller UP."""

        def up() -> bool:
            self._check_daemons()
            result = self.run("scontrol", "ping", timeout=10)
            return result.returncode == 0 and "UP" in result.stdout

        wait_until(up, timeout, f"slurmctld of cluster {self.cluster_name} to answer scontrol ping", log=self.log_paths())

    def stop(self) -> None:
        """Cancel jobs, stop every slurmd, then slurmctld (by pid/process group; idempotent, never raises)."""
        if self.slurmctld is not None and self.slurmctld.alive():
            with contextlib.suppress(Exception):
                self._cancel_all_jobs()
        errors = self._stack.stop_all()
        self.slurmds.clear()
        # slurmstepd and job processes leave slurmd's process group: find them by environment, and slurmstepd (whose
        # title overwrites its environment) by its working directory in this cluster's; a job left running when
        # slurmctld was stopped first (tests/daemons/slurm_change.py) would keep its slurmstepd otherwise
        with contextlib.suppress(Exception):
            kill_tagged([f"{TAG_VAR}={self.tag}", f"SLURM_CONF={self.conf_path}"], root=self.tmp_dir)
        if errors:
            # stopping is best effort: report but do not mask the test's own failure
            print(f"[slurm harness] errors while stopping: {errors}")

    def _cancel_all_jobs(self) -> None:
        jobs = self.run("squeue", "-h", "-o", "%i", timeout=10).stdout.split()
        if not jobs:
            return
        self.run("scancel", *jobs, timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if not self.run("squeue", "-h", "-t", "RUNNING,COMPLETING", "-o", "%i", timeout=10).stdout.split():
                return
            time.sleep(0.3)

    # ----------------------------------------------------------------------------------------------
    # commands and queries

    def run(
        self, *cmd: str, timeout: float = 30, check: bool = False, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command with ``SLURM_CONF`` set; a CompletedProcess (text)."""
        return run(list(cmd), env=self.env(), timeout=timeout, check=check, input=input, cwd=self.tmp_dir)

    def scontrol(self, *args: str, timeout: float = 30) -> str:
        """``scontrol ARGS`` (must succeed); its stdout."""
        return str(self.run("scontrol", *args, timeout=timeout, check=True).stdout)

    def hostnames(self, expression: str) -> list[str]:
        """Expand a hostlist expression (``n[1-3]``) with ``scontrol show hostnames``."""
        if not expression or expression == "(null)":
            return []
        return self.scontrol("show", "hostnames", expression).split()

    def sinfo_partitions(self) -> dict[str, list[str]]:
        """Partition name -> sorted node names, as ``sinfo`` shows them (every partition, even empty)."""
        result: dict[str, list[str]] = {}
        names = self.run("sinfo", "-h", "-a", "-o", "%R", timeout=15, check=True).stdout.split()
        for name in names:
            result.setdefault(name, [])
        rows = self.run("sinfo", "-h", "-a", "-N", "-o", "%R %N", timeout=15, check=True).stdout.splitlines()
        for row in rows:
            if row.strip():
                partition, node = row.split()
                result.setdefault(partition, []).append(node)
        return {name: sorted(set(nodes)) for name, nodes in result.items()}

    def default_partition(self) -> str | None:
        for name in self.run("sinfo", "-h", "-a", "-o", "%P", timeout=15, check=True).stdout.split():
            if name.endswith("*"):
                return name[:-1]
        return None

    def partition_info(self, name: str) -> dict[str, str]:
        """``scontrol show partition NAME -o`` as a dict."""
        return parse_key_values(self.scontrol("show", "partition", name, "-o"))

    def node_info(self, name: str) -> dict[str, str]:
        """``scontrol show node NAME -o`` as a dict (State, Reason, AvailableFeatures, Gres, ...)."""
        return parse_key_values(self.scontrol("show", "node", name, "-o"))

    def node_state(self, name: str) -> str:
        """The node's State, e.g. ``IDLE``, ``IDLE+DRAIN``, ``IDLE+DYNAMIC_NORM``, ``DOWN+NOT_RESPONDING``."""
        return self.node_info(name).get("State", "")

    def node_reason(self, name: str, *, raw: bool = False) -> str:
        """The node's Reason without the `` [user@time]`` suffix slurmctld appends (unless ``raw``)."""
        reason = self.node_info(name).get("Reason", "")
        return reason if raw else re.sub(r"\s*\[[^\]@]*@[^\]]*\]$", "", reason)

    def wait_node_state(self, name: str, want: str | Callable[[str], bool], timeout: float = 30) -> str:
        """Wait until node ``name``'s State contains flag ``want`` (e.g. ``"DRAIN"``) or satisfies it; the State."""

        def check() -> str | None:
            self._check_daemons()
            state = self.node_state(name)
            ok = want(state) if callable(want) else want.upper() in state.split("+")
            return state if ok else None

        return wait_until(check, timeout, f"node {name} to reach state {want}", log=self.log_paths())

    def wait_node_idle(self, name: str, timeout: float = 30) -> str:
        """Wait until ``name`` is IDLE and neither drained, invalid nor unresponsive; fail fast if drained."""

        def idle() -> str | None:
            self._check_daemons()
            info = self.node_info(name)
            flags = set(info.get("State", "").split("+"))
            if flags & {"DRAIN", "INVALID_REG", "INVALID", "FAIL"}:
                raise WaitAbort(f"node {name} is {info.get('State')}: Reason={info.get('Reason', '')}")
            return info["State"] if "IDLE" in flags and "NOT_RESPONDING" not in flags else None

        return wait_until(idle, timeout, f"node {name} to be idle", log=self.log_paths())

    def sbatch(self, script_text: str, partition: str | None = None, *, args: Sequence[str] = (), timeout: float = 30) -> int:
        """Submit ``script_text`` (a ``#!/bin/sh`` line is added if missing); the job id."""
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        script = write_script(self.jobs_dir / f"job-{time.monotonic_ns()}.sh", script_text)
        argv = ["sbatch", "--parsable", "-D", str(self.jobs_dir)]
        if partition:
            argv += ["-p", partition]
        argv += [*args, str(script)]
        result = self.run(*argv, timeout=timeout)
        if result.returncode != 0:
            raise HarnessError(f"sbatch failed (exit {result.returncode}): {result.stderr.strip()}")
        return int(result.stdout.strip().split(";")[0])

    def job_info(self, job_id: int) -> dict[str, str]:
        """``scontrol show job ID -o`` as a dict (JobState, Reason, NodeList, ExitCode, ...)."""
        return parse_key_values(self.scontrol("show", "job", str(job_id), "-o"))

    def job_state(self, job_id: int) -> str:
        return self.job_info(job_id).get("JobState", "")

    def wait_job(self, job_id: int, timeout: float = 60, states: Iterable[str] = TERMINAL_JOB_STATES) -> str:
        """Wait until the job reaches one of ``states`` (default: any terminal state); that state.

        Uses ``scontrol show job`` (no sacct without slurmdbd); records stay for ``MinJobAge=300`` s.
        """
        wanted = set(states)

        def done() -> str | None:
            self._check_controller()
            state = self.job_state(job_id)
            return state if state in wanted else None

        return wait_until(done, timeout, f"job {job_id} to reach one of {sorted(wanted)}", log=self.log_paths())

    def _check_controller(self) -> None:
        if self.slurmctld is not None and not self.slurmctld.alive():
            raise WaitAbort(f"slurmctld exited with code {self.slurmctld.returncode}")

    # ----------------------------------------------------------------------------------------------
    # dynamic nodes

    def start_dynamic_slurmd(
        self,
        node_name: str,
        conf_server: str | None = None,
        conf: str = "",
        *,
        extra_args: Sequence[str] = (),
        foreground: bool = True,
        timeout: float = 30,
    ) -> ManagedProcess | PidfileDaemon:
        """Run ``slurmd [-D] -Z --conf-server HOST:PORT --conf CONF -N NAME`` and wait for it to register.

        ``conf_server`` defaults to this cluster's controller.  See :meth:`start_slurmd_command`.
        """
        argv = ["slurmd"]
        if foreground:
            argv.append("-D")
        argv += ["-Z", "--conf-server", conf_server or self.conf_server]
        if conf:
            argv += ["--conf", conf]
        argv += [*extra_args, "-N", node_name]
        return self.start_slurmd_command(argv, timeout=timeout)

    def start_slurmd_command(
        self, argv: Sequence[str] | str, *, timeout: float = 30, wait_registered: bool = True
    ) -> ManagedProcess | PidfileDaemon:
        """Run a slurmd command line exactly as given (a list, or a string split with shlex).

        With ``-D`` in it slurmd stays in the foreground and is managed as a process group; without,
        slurmd daemonizes and is tracked by its pid file (``<tmp>/run/slurmd-NAME.pid``, from the
        fetched/loaded slurm.conf).  It runs *without* ``SLURM_CONF`` so a ``--conf-server`` really
        fetches the config; give ``-f`` to use a file.  The node name is the ``-N`` value (required:
        the host name would collide between clusters).  Waits until ``scontrol show node NAME`` knows
        the node and it is responding (not necessarily idle: see :meth:`wait_node_idle`).
        """
        args = shlex.split(argv) if isinstance(argv, str) else [str(arg) for arg in argv]
        if not args or Path(args[0]).name != "slurmd":
            raise ValueError(f"not a slurmd command line: {args!r}")
        if "-N" not in args or args.index("-N") + 1 >= len(args):
            raise ValueError("the slurmd command line needs -N NODENAME")
        node = args[args.index("-N") + 1]
        if node in self.slurmds and self.slurmds[node].alive():
            raise HarnessError(f"a slurmd for node {node} is already running")
        conf_arg = args[args.index("--conf") + 1] if "--conf" in args[:-1] else ""
        if "-Z" in args and not re.search(r"(?i)(^|\s)Port=", conf_arg):
            running = [
                name
                for name, proc in self.slurmds.items()
                if name not in self._node_lines and proc.alive() and name not in self._own_port
            ]
            if running:
                raise HarnessError(
                    f"a dynamic slurmd ({running[0]}) already listens on SlurmdPort={self.slurmd_port}: only one -Z slurmd "
                    "without Port= per cluster can run on one host (give the next one Port=N in --conf; 26.05 accepts it)"
                )
        if "-Z" in args and re.search(r"(?i)(^|\s)Port=", conf_arg):
            self._own_port.add(node)
        args[0] = self._binary("slurmd") if args[0] == "slurmd" else args[0]
        env = self.env({"SLURM_CONF": None})
        log = self.log_dir / f"slurmd-{node}.out"
        if "-D" in args:
            proc: ManagedProcess | PidfileDaemon = ManagedProcess(
                args, name=f"slurmd {node}", log_path=log, env=env, cwd=self.tmp_dir
            )
            self._stack.push(proc)
        else:
            launched = run(args, env=env, timeout=timeout, cwd=self.tmp_dir)
            if launched.returncode != 0:
                raise HarnessError(
                    f"slurmd exited with {launched.returncode}: {launched.stderr.strip()}\n{log_tails(self.log_paths())}"
                )
            proc = PidfileDaemon.adopt(
                f"slurmd {node}", self.run_dir / f"slurmd-{node}.pid", timeout=timeout, log=self.log_dir / f"slurmd-{node}.log"
            )
            self._stack.push(proc)
        self.slurmds[node] = proc
        if wait_registered:

            def registered() -> str | None:
                if not proc.alive():
                    raise WaitAbort(f"slurmd for {node} exited")
                if f"node table is full ({node})" in tail(self.ctld_log, 200):
                    raise WaitAbort(f"slurmctld could not add dynamic node {node} (MaxNodeCount missing or too small?)")
                result = self.run("scontrol", "show", "node", node, "-o", timeout=10)
                if result.returncode != 0:
                    return None
                state = parse_key_values(result.stdout).get("State", "")
                return state if state and "NOT_RESPONDING" not in state.split("+") else None

            wait_until(
                registered,
                timeout,
                f"dynamic node {node} to register",
                log=[log, self.log_dir / f"slurmd-{node}.log", self.ctld_log],
            )
        return proc

    def stop_slurmd(self, node: str, *, delete: bool = False) -> None:
        """Stop one slurmd (by pid); ``delete=True`` also ``scontrol delete NodeName=`` (dynamic nodes)."""
        proc = self.slurmds.pop(node, None)
        if proc is not None:
            proc.stop()
        if delete:
            self.scontrol("delete", f"NodeName={node}")


def leftover_slurm_pids(tmp_dir: Path) -> list[int]:
    """Pids from ``<tmp>/run/*.pid`` that are still alive (for asserting a clean stop)."""
    pids = []
    for pidfile in sorted((Path(tmp_dir) / "run").glob("*.pid")):
        pid = read_pidfile(pidfile)
        if pid is not None and pid_alive(pid):
            pids.append(pid)
    return pids


__all__ = [
    "MUNGE_KEY",
    "REGISTRY",
    "REQUIRED_BINARIES",
    "TERMINAL_JOB_STATES",
    "SlurmCluster",
    "ensure_munge",
    "leftover_slurm_pids",
    "munge_works",
    "node_line",
    "parse_key_values",
]
