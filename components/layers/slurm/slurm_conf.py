"""Slurm configuration renderers (pure): the Controller's extraConf, gres.conf, cgroup.conf, the
NodeSet `--conf` parameters and the bare-metal slurmd command line.

The Slinky operator writes the base of slurm.conf itself (cluster name, auth, ports, state paths,
accounting host, `NodeSet=<name> Feature=<name>` per NodeSet, Prolog/Epilog lines from the
referenced ConfigMaps) and appends the Controller's `extraConf`: everything here goes there.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from ...ground.base import quantity_value
from ...ground.hosts import Host
from .config import NodeSetConfig, SlurmConfig
from .partitions import PartitionConfig

SLURMCTLD_PORT = 6817
SLURMD_PORT = 6818


# slurm.conf(5): white space separates `Name=Value` pairs on a line and `#` starts a comment. The
# config models refuse such values; the renderers refuse them again (belt and braces).
_UNSAFE = re.compile(r"[\s#\"'\\]")


def conf_token(name: str, value: str) -> str:
    """`Name=Value` for slurm.conf or slurmd --conf; ValueError if either part would change the line's structure."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
        raise ValueError(f"slurm.conf parameter name {name!r} is not letters and digits")
    if value == "" or _UNSAFE.search(value):
        raise ValueError(f"slurm.conf value {value!r} of {name} is empty or has white space, '#', a quote or a backslash")
    return f"{name}={value}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _mebibytes_text(quantity: str) -> str:
    return str(int(quantity_value(quantity) // 2**20))


def partition_nodes(partition: PartitionConfig) -> list[str]:
    """`Nodes=` items: the nodesets by name, then one feature NodeSet per feature."""
    return [*partition.nodesets, *(partition.feature_nodeset(feature) for feature in partition.features)]


def feature_nodeset_lines(slurm: SlurmConfig) -> list[str]:
    """`NodeSet=<partition>_<feature> Feature=<feature>`: the nodes of a partition chosen by feature."""
    return [
        f"{conf_token('NodeSet', partition.feature_nodeset(feature))} {conf_token('Feature', feature)}"
        for partition in slurm.partitions
        for feature in partition.features
    ]


def partition_line(partition: PartitionConfig) -> str:
    """`PartitionName=... Nodes=<nodeset>,...`: nodesets are Slurm NodeSet names (one per NodeSet CR,
    plus the feature NodeSets of `feature_nodeset_lines`)."""
    fields = [
        f"PartitionName={partition.name}",
        f"Nodes={','.join(partition_nodes(partition))}",
        f"Default={'YES' if partition.default else 'NO'}",
        f"MaxTime={partition.max_time}",
    ]
    if partition.default_time is not None:
        fields.append(f"DefaultTime={partition.default_time}")
    if partition.max_nodes is not None:
        fields.append(f"MaxNodes={partition.max_nodes}")
    if partition.allow_groups:
        fields.append(f"AllowGroups={','.join(partition.allow_groups)}")
    if partition.allow_accounts:
        fields.append(f"AllowAccounts={','.join(partition.allow_accounts)}")
    if partition.def_mem_per_cpu is not None:
        fields.append(f"DefMemPerCPU={_mebibytes_text(partition.def_mem_per_cpu)}")
    if partition.def_mem_per_gpu is not None:
        fields.append(f"DefMemPerGPU={_mebibytes_text(partition.def_mem_per_gpu)}")
    if partition.preempt_mode is not None:
        fields.append(f"PreemptMode={partition.preempt_mode}")
    fields.append(f"OverSubscribe={partition.oversubscribe}")
    fields.append(f"PriorityTier={partition.priority_tier}")
    if partition.qos:
        fields.append(f"QOS={partition.qos}")
    fields.append("State=UP")
    return " ".join(conf_token(*field.split("=", 1)) for field in fields)


def controller_parameters(slurm: SlurmConfig, *, accounting: bool, rdma: bool = False) -> list[tuple[str, str]]:
    """Typed controller settings as ordered slurm.conf (name, value) pairs.

    `rdma`: jobs keep slurmd's (unlimited) locked-memory limit instead of the submitting shell's, which RDMA needs."""
    ctl = slurm.controller
    params: list[tuple[str, str]] = [
        ("SchedulerType", ctl.scheduler.type),
    ]
    if ctl.scheduler.parameters:
        params.append(("SchedulerParameters", ",".join(ctl.scheduler.parameters)))
    params.append(("SelectType", ctl.select.type))
    if ctl.select.parameters:
        params.append(("SelectTypeParameters", ",".join(ctl.select.parameters)))
    params.append(("PriorityType", ctl.priority.type))
    if ctl.priority.type == "priority/multifactor":
        weights = ctl.priority.weights
        params += [
            ("PriorityDecayHalfLife", ctl.priority.decay_half_life),
            ("PriorityMaxAge", ctl.priority.max_age),
            ("PriorityWeightAge", str(weights.age)),
            ("PriorityWeightFairshare", str(weights.fairshare)),
            ("PriorityWeightJobSize", str(weights.job_size)),
            ("PriorityWeightPartition", str(weights.partition)),
            ("PriorityWeightQOS", str(weights.qos)),
        ]
    if ctl.preemption.type != "preempt/none":
        params.append(("PreemptType", ctl.preemption.type))
        params.append(("PreemptMode", ctl.preemption.slurm_mode()))
    if accounting and ctl.accounting_enforce:
        params.append(("AccountingStorageEnforce", ",".join(ctl.accounting_enforce)))
    # slurm.conf(5) of 26.05, EnforcePartLimits: with ALL a job that breaks a partition limit (AllowAccounts,
    # AllowGroups, MaxTime, MaxNodes, ...) is refused at submit; with NO (the default) it stays queued forever.
    params.append(("EnforcePartLimits", ctl.enforce_part_limits))
    if slurm.has_gpus:
        params.append(("GresTypes", "gpu"))
        if accounting:
            params.append(("AccountingStorageTRES", "gres/gpu"))
    params += [
        ("ProctrackType", "proctrack/cgroup"),
        ("TaskPlugin", "task/cgroup,task/affinity"),
        ("JobAcctGatherType", "jobacct_gather/cgroup"),
        ("PrologFlags", "Contain"),
        # Each job its own /dev/shm (job_container_conf): what a killed NCCL or PyTorch job leaves there goes with it.
        ("NamespaceType", "namespace/tmpfs"),
        ("ReturnToService", str(ctl.return_to_service)),
        ("SlurmctldTimeout", str(ctl.timeouts.slurmctld)),
        ("SlurmdTimeout", str(ctl.timeouts.slurmd)),
        ("MessageTimeout", str(ctl.timeouts.message)),
        ("KillWait", str(ctl.timeouts.kill_wait)),
        ("InactiveLimit", str(ctl.timeouts.inactive_limit)),
        ("MinJobAge", str(ctl.timeouts.min_job_age)),
        ("UnkillableStepTimeout", str(ctl.timeouts.unkillable_step)),
    ]
    if ctl.timeouts.prolog_epilog is not None:
        params.append(("PrologEpilogTimeout", str(ctl.timeouts.prolog_epilog)))
    params.append(("SrunPortRange", f"{ctl.srun_port_range[0]}-{ctl.srun_port_range[1]}"))
    if rdma:
        params.append(("PropagateResourceLimitsExcept", "MEMLOCK"))
    params += sorted(ctl.extra_parameters.items())
    return params


JOB_NAMESPACE_BASE = "/var/spool/slurmd/namespace/%n"
"""Where namespace/tmpfs keeps each job's mount points on a node (created by it: AutoBasePath)."""


def job_container_conf() -> str:
    """job_container.conf for `NamespaceType=namespace/tmpfs` (Slurm 26.05.3 job_container.conf(5); the Controller's
    configFileRefs put it beside slurm.conf, and configless slurmds fetch it: src/common/fetch_config.c
    `slurmd_config_files`). Every job, in its own mount namespace (`PrologFlags=Contain` makes it at allocation), gets
    a new tmpfs on /dev/shm (namespace_tmpfs.c: `mount("tmpfs", "/dev/shm", "tmpfs", ...)`), torn down when the job
    ends: what a killed job left there is gone, instead of staying charged to the slurmd pod's memory (its /dev/shm
    emptyDir) while Slurm offers that memory to the next job. The job's pages are charged to the job's own memory
    cgroup. /tmp is left shared (`Dirs=/dev/shm` only). slurmd stops at start without this file
    ("fatal: Unable to initialize namespace plugin", checked on 26.05.3)."""
    return (
        "# hpcforge: each job gets a private /dev/shm, removed when it ends (NamespaceType=namespace/tmpfs)\n"
        f"AutoBasePath=true\nBasePath={JOB_NAMESPACE_BASE}\nDirs=/dev/shm\n"
    )


def controller_extra_conf(slurm: SlurmConfig, *, accounting: bool, rdma: bool = False) -> str:
    """The Controller's `extraConf`: typed settings, then one line per partition."""
    lines = ["### hpcforge: controller settings (typed, from hpcforge:slurm.controller) ###"]
    lines += [conf_token(name, value) for name, value in controller_parameters(slurm, accounting=accounting, rdma=rdma)]
    lines.append("### hpcforge: partitions (hpcforge:slurm.partitions) ###")
    lines += feature_nodeset_lines(slurm)
    lines += [partition_line(partition) for partition in slurm.partitions]
    return "\n".join(lines) + "\n"


def nodeset_hostlist(nodeset: NodeSetConfig) -> str | None:
    """The Slurm node names of a StatefulSet nodeset's pods (`<name>-[0-N]`); None when they are not known in advance
    (DaemonSet mode, or a nodeset only bare-metal hosts join)."""
    if nodeset.scaling_mode != "StatefulSet" or nodeset.replicas == 0:
        return None
    return f"{nodeset.name}-0" if nodeset.replicas == 1 else f"{nodeset.name}-[0-{nodeset.replicas - 1}]"


def gres_lines(nodeset: NodeSetConfig) -> list[str]:
    """gres.conf lines of one GPU nodeset, from its `gpus` hardware description (type, count, device files, cores)."""
    gpus = nodeset.gpus
    if gpus is None:
        return []
    hosts = nodeset_hostlist(nodeset)
    prefix = f"NodeName={hosts} " if hosts else ""
    if gpus.autodetect != "off":
        # slurmd discovers the devices; Slurm matches the configured type (`Gres=gpu:<type>:<n>` in --conf) as a
        # substring of the detected name (e.g. h100 in nvidia_h100_80gb_hbm3, 1g.10gb in nvidia_a100_1g.10gb).
        return [f"{prefix}AutoDetect={gpus.autodetect}"]
    if not gpus.cores:
        return [f"{prefix}Name=gpu Type={gpus.type} File={gpus.device_files()}"]
    files = expand_device_files(gpus.device_files())
    return [f"{prefix}Name=gpu Type={gpus.type} File={file} Cores={cores}" for file, cores in zip(files, gpus.cores, strict=True)]


def expand_device_files(expression: str) -> list[str]:
    """`/dev/nvidia[0-2,5]` -> the files one by one (what Slurm's hostlist-style `File=` expansion gives)."""
    if "[" not in expression:
        return [expression]
    base, _, rest = expression.partition("[")
    files: list[str] = []
    for part in rest.rstrip("]").split(","):
        low, _, high = part.partition("-")
        files += [f"{base}{i}" for i in range(int(low), int(high or low) + 1)]
    return files


def gres_conf(slurm: SlurmConfig) -> str | None:
    """gres.conf: per GPU nodeset, its GPUs' type and device files (or autodetection); None when no nodeset has GPUs.

    A node takes the lines whose NodeName matches it; slurmd checks them against its `Gres=` (from the nodeset's
    `--conf`), so the count here, the GRES and the device-plugin limit all come from `gpus`."""
    if not slurm.has_gpus:
        return None
    lines = ["# hpcforge: GPUs per nodeset (hpcforge:slurm.nodesets[].gpus)"]
    for nodeset in slurm.nodesets:
        lines += gres_lines(nodeset)
    return "\n".join(lines) + "\n"


def cgroup_conf(slurm: SlurmConfig) -> str:
    cg = slurm.cgroup
    return (
        "# hpcforge: cgroup v2 confinement of jobs (hpcforge:slurm.cgroup)\n"
        "CgroupPlugin=cgroup/v2\n"
        # slurmd runs in a container without systemd: it must not ask systemd for a scope.
        "IgnoreSystemd=yes\n"
        f"ConstrainCores={_yes(cg.constrain_cores)}\n"
        f"ConstrainRAMSpace={_yes(cg.constrain_ram_space)}\n"
        f"ConstrainSwapSpace={_yes(cg.constrain_swap_space)}\n"
        f"ConstrainDevices={_yes(cg.constrain_devices)}\n"
        f"AllowedRAMSpace={cg.allowed_ram_space}\n"
    )


def mebibytes(quantity: str) -> int:
    return int(quantity_value(quantity) // 2**20)


def node_parameters(nodeset: NodeSetConfig, *, include_feature: bool = False) -> list[tuple[str, str]]:
    """slurmd `--conf` parameters of a nodeset's nodes: features, GRES and memory.

    Slinky adds `Features=<nodeset>` itself for NodeSet pods; a bare-metal node must carry it
    (include_feature=True) so the `NodeSet=<name> Feature=<name>` line puts it into the nodeset.
    """
    features = ([nodeset.name] if include_feature else []) + list(nodeset.features)
    params: list[tuple[str, str]] = []
    if features:
        params.append(("Features", ",".join(features)))
    gres = nodeset.gres_entries()
    if gres:
        # In --conf, so that a GPU node has its GRES from its first registration (slurm-operator PR #191).
        params.append(("Gres", ",".join(gres)))
    # No RealMemory/CPUs: the slurmd image (SlinkyProject/containers, slurmd-entrypoint.sh) adds
    # CoreSpecCount/MemSpecLimit = host minus the pod's limits; an explicit RealMemory would be reduced twice.
    if nodeset.weight is not None:
        params.append(("Weight", str(nodeset.weight)))
    return params


def host_parameters(nodeset: NodeSetConfig, host: Host) -> list[tuple[str, str]]:
    """slurmd `--conf` parameters of one bare-metal host: its nodeset's, with the host's own features added
    and its own GRES (when given) in place of the nodeset's."""
    params = node_parameters(nodeset, include_feature=True)
    result: list[tuple[str, str]] = []
    for key, value in params:
        own = value
        if key == "Features" and host.features:
            known = value.split(",")
            own = ",".join(known + [f for f in host.features if f not in known])
        if key == "Gres" and host.gres:
            own = ",".join(host.gres)
        result.append((key, own))
    keys = {key for key, _ in result}
    if host.features and "Features" not in keys:
        result.insert(0, ("Features", ",".join(host.features)))
    if host.gres and "Gres" not in keys:
        result.append(("Gres", ",".join(host.gres)))
    return result


def nodeset_extra_conf(nodeset: NodeSetConfig) -> str:
    """NodeSet `extraConf` (Slinky splits it on spaces into `--conf` items: no spaces in values)."""
    return " ".join(conf_token(key, value) for key, value in node_parameters(nodeset))


def conf_text(params: Sequence[tuple[str, str]]) -> str:
    """slurmd `--conf` text: `Name=Value` items joined by spaces, each checked by `conf_token`."""
    return " ".join(conf_token(key, value) for key, value in params)


def bare_metal_slurmd_argv(nodeset: NodeSetConfig, controller: str, *, node_name: str | None = None) -> list[str]:
    """The slurmd command line a bare-metal host of `nodeset` runs: a configless dynamic node."""
    conf = conf_text(node_parameters(nodeset, include_feature=True))
    argv = ["slurmd", "-Z", "--conf-server", controller, "--conf", conf]
    if node_name:
        argv += ["-N", node_name]
    return argv


def shell_command(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(part) for part in argv)
