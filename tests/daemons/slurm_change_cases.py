"""The changes tests/daemons/slurm_change.py runs through a real Slurm 26.05.3 cluster: every slurm.conf parameter
hpcforge writes (components/layers/slurm/controller.py TYPED_CONTROLLER_PARAMETERS), every parameter whose entry in
slurm.conf(5) of 26.05.3 says a change needs a restart or loses job state, the structural changes (partitions and
nodesets added, renamed, removed, a nodeset leaving or joining a partition) and the files beside slurm.conf that
hpcforge writes (gres.conf, topology.yaml, cgroup.conf).

Each change starts from tests/daemons/slurm_change.py's base; a value a row sets is one hpcforge can write where
there is one (the typed settings' alternatives), else one this host can run (the plugins that need cgroups)."""

from __future__ import annotations

from collections.abc import Callable

from components.layers.slurm.slurm_conf import JOB_NAMESPACE_BASE, job_container_conf

from .slurm_change import CGROUP_CONF, PARTITIONS, TOPOLOGY_YAML, Change, ChangeSite, Files


def _set(**values: str | None) -> Callable[[Files, ChangeSite], None]:
    def edit(files: Files, site: ChangeSite) -> None:
        del site
        for key, value in values.items():
            files.set(key, value)

    return edit


def _config(*keys: str) -> Callable[[ChangeSite], dict[str, str]]:
    return lambda site: site.config(*keys)


def parameter(id: str, what: str, **values: str | None) -> Change:
    """A change of slurm.conf parameters (None: the line removed); `shown` reads them from `scontrol show config`."""
    return Change(id, what, tuple(values), _set(**values), _config(*values))


# The timeouts, weights and limits: each changed at once (their entries note no restart).
GROUP = {
    "SchedulerParameters": "bf_continue,bf_interval=60,bf_max_job_test=500,bf_window=4320",
    "PriorityDecayHalfLife": "14-0",
    "PriorityMaxAge": "14-0",
    "PriorityWeightAge": "2000",
    "PriorityWeightFairshare": "50000",
    "PriorityWeightJobSize": "10",
    "PriorityWeightPartition": "20000",
    "PriorityWeightQOS": "40000",
    "ReturnToService": "1",
    "SlurmctldTimeout": "240",
    "SlurmdTimeout": "900",
    "MessageTimeout": "20",
    "KillWait": "10",
    "InactiveLimit": "600",
    "MinJobAge": "600",
    "UnkillableStepTimeout": "180",
    "PrologEpilogTimeout": "600",
    "SrunPortRange": "60101-63100",
    "PropagateResourceLimitsExcept": None,
    "MaxJobCount": "20000",
}


def _port(key: str) -> Callable[[Files, ChangeSite], None]:
    def edit(files: Files, site: ChangeSite) -> None:
        files.set(key, str(site.new_port))

    return edit


def _state_save(files: Files, site: ChangeSite) -> None:
    moved = site.cluster.tmp_dir / "state-moved"
    moved.mkdir(parents=True, exist_ok=True)
    files.set("StateSaveLocation", str(moved))


def _cluster_name(files: Files, site: ChangeSite) -> None:
    files.set("ClusterName", site.cluster_name + "x")


def _lines(*pairs: tuple[str, str]) -> Callable[[Files, ChangeSite], None]:
    """Replace whole lines of slurm.conf (old -> new; new '' removes; old '' adds)."""

    def edit(files: Files, site: ChangeSite) -> None:
        del site
        for old, new in pairs:
            if old:
                files.replace(old, new)
            else:
                files.add(new)

    return edit


BATCH, GPU = PARTITIONS[0], PARTITIONS[1]
LIMITS = ("MaxTime", "DefaultTime", "MaxNodes", "DefMemPerCPU", "DefMemPerGPU", "OverSubscribe", "PriorityTier", "PreemptMode")
LIMITS_BASE = "MaxTime=7-00:00:00 DefaultTime=1:00:00 DefMemPerCPU=50 OverSubscribe=NO PriorityTier=10"
LIMITS_HEAD = (
    "MaxTime=5-00:00:00 DefaultTime=2:00:00 MaxNodes=4 DefMemPerCPU=40 DefMemPerGPU=60 OverSubscribe=FORCE:2 PriorityTier=20"
    " PreemptMode=CANCEL"
)


def _files(**texts: str) -> Callable[[Files, ChangeSite], None]:
    def edit(files: Files, site: ChangeSite) -> None:
        del site
        for name, text in texts.items():
            setattr(files, name, text)

    return edit


def _namespace(files: Files, site: ChangeSite) -> None:
    """hpcforge's NamespaceType line and job_container.conf (components/layers/slurm/slurm_conf.py job_container_conf), its
    BasePath under the cluster's folder (a slurmd pod's spool folder is not this host's)."""
    files.set("NamespaceType", "namespace/tmpfs")
    lines = job_container_conf().splitlines()
    assert f"BasePath={JOB_NAMESPACE_BASE}" in lines
    base = site.cluster.tmp_dir / "namespace"
    files.job_container_conf = "\n".join(f"BasePath={base}/%n" if line.startswith("BasePath=") else line for line in lines) + "\n"


def _partitions(site: ChangeSite) -> dict[str, str]:
    return site.partitions()


CASES: tuple[Change, ...] = (
    # -- hpcforge's typed settings, one plugin at a time
    parameter("SchedulerType", "sched/backfill -> sched/builtin", SchedulerType="sched/builtin"),
    parameter("SelectType", "select/cons_tres -> select/linear", SelectType="select/linear"),
    parameter("SelectTypeParameters", "CR_Core_Memory -> CR_Core", SelectTypeParameters="CR_Core"),
    parameter("PriorityType", "priority/multifactor -> priority/basic", PriorityType="priority/basic"),
    parameter("PreemptType", "preemption off: PreemptType and PreemptMode removed", PreemptType=None, PreemptMode=None),
    parameter("PreemptMode", "REQUEUE -> CANCEL", PreemptMode="CANCEL"),
    parameter(
        "AccountingStorageEnforce", "associations,limits,qos,safe -> associations", AccountingStorageEnforce="associations"
    ),
    parameter("EnforcePartLimits", "ALL -> NO", EnforcePartLimits="NO"),
    parameter(
        "GresTypes",
        "the last GPU nodeset leaves the config: GresTypes and AccountingStorageTRES removed",
        GresTypes=None,
        AccountingStorageTRES=None,
    ),
    parameter("ProctrackType", "proctrack/linuxproc -> proctrack/pgid", ProctrackType="proctrack/pgid"),
    parameter("TaskPlugin", "task/affinity -> (unset)", TaskPlugin=None),
    parameter("JobAcctGatherType", "jobacct_gather/none -> jobacct_gather/linux", JobAcctGatherType="jobacct_gather/linux"),
    parameter("PrologFlags", "Contain -> (unset)", PrologFlags=None),
    parameter("timeouts-and-weights", "timeouts, priority weights, backfill and port settings, all at once", **GROUP),
    parameter(
        "PrivateData",
        "PrivateData set, with MetricsParameters=ignore_private_data (issue 39), under running jobs",
        PrivateData="accounts,events,jobs,reservations,usage,users",
        MetricsParameters="ignore_private_data",
    ),
    # -- parameters whose slurm.conf(5) entry says the daemons must restart or job state may be lost
    Change(
        "AuthType",
        "auth/slurm -> auth/munge (with munged running)",
        ("AuthType",),
        _set(AuthType="auth/munge"),
        _config("AuthType"),
        munge=True,
    ),
    parameter("SwitchType", "(unset) -> switch/nvidia_imex", SwitchType="switch/nvidia_imex"),
    Change(
        "SwitchType-off",
        "switch/nvidia_imex -> (unset), the jobs started under switch/nvidia_imex",
        ("SwitchType",),
        _set(SwitchType=None),
        _config("SwitchType"),
        base=(("SwitchType", "switch/nvidia_imex"),),
    ),
    Change(
        "SlurmctldPort",
        "slurmctld's port moves",
        ("SlurmctldPort",),
        _port("SlurmctldPort"),
        lambda site: site.listening("slurmctld"),
    ),
    Change(
        "SlurmdPort",
        "slurmd's port moves (probe-0 listens on SlurmdPort)",
        ("SlurmdPort",),
        _port("SlurmdPort"),
        lambda site: site.listening("slurmd"),
    ),
    Change(
        "StateSaveLocation", "a new, empty StateSaveLocation", ("StateSaveLocation",), _state_save, _config("StateSaveLocation")
    ),
    Change("ClusterName", "ClusterName renamed, same state", ("ClusterName",), _cluster_name, _config("ClusterName")),
    # -- partitions and nodesets (items: offline/diff/slurm_conf.py conf_items)
    Change(
        "partition-added",
        "a partition debug over nodeset cpu",
        ("partition:added",),
        _lines(("", "PartitionName=debug Nodes=cpu Default=NO MaxTime=30:00 State=UP")),
        _partitions,
    ),
    Change(
        "partition-removed", "partition gpu removed (nodeset gpu stays)", ("partition:removed",), _lines((GPU, "")), _partitions
    ),
    Change(
        "partition-renamed",
        "partition gpu renamed accel",
        ("partition:renamed",),
        _lines((GPU, GPU.replace("PartitionName=gpu", "PartitionName=accel"))),
        _partitions,
    ),
    Change(
        "partition-limits",
        "partition batch: MaxTime, DefaultTime, MaxNodes, DefMemPerCPU, DefMemPerGPU, OverSubscribe, PriorityTier, PreemptMode",
        tuple(f"partition:{key}" for key in LIMITS),
        _lines((BATCH, BATCH.replace(LIMITS_BASE, LIMITS_HEAD))),
        lambda site: site.partition("batch", *(key if key != "DefMemPerGPU" else "JobDefaults" for key in LIMITS)),
    ),
    Change(
        "partition-access",
        "partition batch: AllowGroups and AllowAccounts set to a group and an account the jobs' user (root) is not in",
        ("partition:AllowGroups", "partition:AllowAccounts"),
        _lines((BATCH, BATCH.replace(" State=UP", " AllowGroups=nogroup AllowAccounts=nobody State=UP"))),
        lambda site: site.partition("batch", "AllowGroups", "AllowAccounts"),
    ),
    Change(
        "partition-default",
        "the default partition moves from batch to gpu",
        ("partition:Default",),
        _lines(
            (BATCH, BATCH.replace("Default=YES", "Default=NO")),
            (GPU, GPU.replace("Default=NO", "Default=YES")),
        ),
        lambda site: {**site.partition("batch", "Default"), **site.partition("gpu", "Default")},
    ),
    Change(
        "nodeset-joins-partition",
        "nodeset cpu joins partition gpu",
        ("partition:Nodes+",),
        _lines((GPU, GPU.replace("Nodes=gpu", "Nodes=gpu,cpu"))),
        lambda site: site.partition("gpu", "Nodes"),
    ),
    Change(
        "nodeset-leaves-partition",
        "nodeset cpu leaves partition batch, which gets nodeset gpu (the running job's node leaves its partition)",
        ("partition:Nodes-", "partition:Nodes+"),
        _lines((BATCH, BATCH.replace("Nodes=cpu", "Nodes=gpu"))),
        lambda site: site.partition("batch", "Nodes"),
    ),
    Change(
        "nodeset-added",
        "a NodeSet added: its NodeSet line and a partition over it",
        ("nodeset:added", "partition:added"),
        _lines(("", "NodeSet=extra Feature=extra"), ("", "PartitionName=extra Nodes=extra Default=NO State=UP")),
        _partitions,
    ),
    Change(
        "nodeset-removed",
        "NodeSet gpu deleted: its NodeSet line and its partition gpu go (its node's slurmd still runs)",
        ("nodeset:removed", "partition:removed"),
        _lines(("NodeSet=gpu Feature=gpu", ""), (GPU, "")),
        _partitions,
    ),
    # -- the files beside slurm.conf (hpcforge's slurm-config-extra ConfigMap, the prolog/epilog ConfigMaps)
    Change(
        "topology.yaml",
        "topology.yaml: a leaf switch added under the spine (a new rack)",
        ("topology.yaml",),
        _files(topology_yaml=TOPOLOGY_YAML.replace("children: leaf[1-2]", "children: leaf[1-3]") + "    - switch: leaf3\n"),
        lambda site: site.topology(),
    ),
    Change(
        "gres.conf-nodes",
        "gres.conf: the GPU nodeset's host list grows (a scale-out); the running GPU node's devices stay",
        ("gres.conf:nodes",),
        _files(gres_conf="NodeName=gpu-[0-3] Name=gpu Type=a100 File=/dev/zero,/dev/null\n"),
        lambda site: {**site.node("gpu-0", "Gres"), **site.pushed("gpu-0", "gres.conf")},
    ),
    Change(
        "gres.conf-devices",
        "gres.conf: the GPU nodeset's device files drop from 2 to 1 while its pods register gpu:2",
        ("gres.conf:devices",),
        _files(gres_conf="NodeName=gpu-[0-1] Name=gpu Type=a100 File=/dev/zero\n"),
        lambda site: {**site.node("gpu-0", "Gres"), **site.pushed("gpu-0", "gres.conf")},
    ),
    Change(
        "cgroup.conf",
        "cgroup.conf: AllowedRAMSpace 100 -> 95, ConstrainSwapSpace yes -> no",
        ("cgroup.conf",),
        _files(
            cgroup_conf=CGROUP_CONF.replace("AllowedRAMSpace=100", "AllowedRAMSpace=95").replace(
                "ConstrainSwapSpace=yes", "ConstrainSwapSpace=no"
            )
        ),
        lambda site: site.pushed("cpu-0", "cgroup.conf"),
    ),
    Change(
        "NamespaceType",
        "NamespaceType=namespace/tmpfs and its job_container.conf added (each job its own /dev/shm) under running jobs",
        ("NamespaceType", "job_container.conf"),
        _namespace,
        lambda site: {**site.config("NamespaceType"), **site.pushed("cpu-0", "job_container.conf")},
    ),
    Change(
        "prolog-epilog",
        "the prolog and epilog scripts' contents change (their file names stay)",
        ("script:prolog", "script:epilog"),
        _files(version="v2"),
        lambda site: site.scripts(),
    ),
)

assert len({c.id for c in CASES}) == len(CASES), "case ids repeat"
