"""Slurm (Slinky slurm-operator) configuration: controller, accounting, login, nodesets, partitions."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from ...ground.base import (
    MULTILINE,
    IPv4,
    K8sName,
    LabelKey,
    LabelValue,
    ProblemCollector,
    Quantity,
    StrictModel,
    as_written,
    duplicates,
    first_by_name,
    quantity_value,
)
from ...ground.exposure import Exposure
from ...ground.gpus import GpuSpec
from ...ground.inventory_ref import InventoryRef, digest_annotations
from ...versions import SLURMD_IMAGE_HAS_NVML
from ..directory.config import validate_ssh_public_key
from .accounts import SlurmAccountsConfig
from .controller import ControllerConfig
from .partitions import PartitionConfig
from .reservations import ReservationConfig
from .slurm_types import SlurmName
from .topology import TopologyConfig


def _cluster_name(value: str) -> str:
    # Slinky 1.2.1's webhook refuses a ClusterName over 40 characters at creation (internal/webhook/
    # controller_webhook.go ValidateCreate; slurm.conf(5) ClusterName).
    if not re.fullmatch(r"[a-z][a-z0-9_]*", value) or len(value) > 40:
        raise ValueError(
            f"{value!r} is not a Slurm ClusterName (lowercase letters, digits and '_', starting with a letter, at most 40 "
            "characters: slurm-operator's webhook refuses a longer one)"
        )
    return value


ClusterName = Annotated[str, AfterValidator(_cluster_name)]


def _max_unavailable(value: Any) -> int | str:
    if isinstance(value, bool):
        raise ValueError(f"{as_written(value)} is not a count or a percentage")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"{value} must be at least 1 (0 would block every update)")
        if value > 10000:
            raise ValueError(f"{value} is more than a nodeset can have (10000 pods); use a percentage such as 25%")
        return value
    if isinstance(value, str):
        match = re.fullmatch(r"([0-9]{1,3})%", value)
        if match:
            percent = int(match.group(1))
            if not 1 <= percent <= 100:
                raise ValueError(f"{value!r} must be between 1% and 100%")
            return value
        if value.isdigit():
            return _max_unavailable(int(value))
    raise ValueError(f"{as_written(value)} is not a count (e.g. 2) or a percentage (e.g. 25%)")


MaxUnavailable = Annotated[int | str, BeforeValidator(_max_unavailable)]


def _node_feature(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", value):
        raise ValueError(
            f"{value!r} is not a Slurm node feature (letters and digits, starting with a letter; one feature per entry)"
        )
    return value


class CgroupConfig(StrictModel):
    constrain_cores: bool = True
    """`ConstrainCores` in cgroup.conf."""
    constrain_ram_space: bool = True
    """`ConstrainRAMSpace` in cgroup.conf."""
    constrain_swap_space: bool = True
    """`ConstrainSwapSpace` in cgroup.conf."""
    constrain_devices: bool = True
    """`ConstrainDevices` in cgroup.conf."""
    allowed_ram_space: int = Field(default=100, ge=1, le=100)
    """Percent of the allocated memory a job may use before it is OOM-killed."""


class Script(StrictModel):
    """A prolog or epilog script: a file in the repository or inline text."""

    name: str = Field(pattern=r"^[0-9A-Za-z][0-9A-Za-z._-]*$")
    """File name on the node, e.g. `00-health.sh` (scripts run in name order)."""
    file: str | None = None
    """Path of a file of the repository, relative to the project root; the file must exist and start with a shebang
    line (`#!`)."""
    inline: str | None = Field(default=None, json_schema_extra=MULTILINE)
    """The script's text; it must start with a shebang line (`#!`)."""

    @model_validator(mode="after")
    def _one_source(self) -> Script:
        if (self.file is None) == (self.inline is None):
            raise ValueError(f"script {self.name!r}: give exactly one of 'file' or 'inline'")
        if self.inline is not None and not self.inline.startswith("#!"):
            raise ValueError(f"script {self.name!r}: inline scripts must start with a shebang line (#!)")
        return self


class AccountingConfig(StrictModel):
    enabled: bool = True
    """Run slurmdbd (Slinky Accounting) on the MariaDB database and point the controller at it."""
    cpu: Quantity = "500m"
    """CPU request of slurmdbd."""
    memory: Quantity = "1Gi"
    """Memory request and limit of slurmdbd."""


class LoginConfig(StrictModel):
    name: SlurmName = "login"
    """Name of the LoginSet (and of the Deployment the operator makes of it)."""
    replicas: int = Field(default=1, ge=1, le=20)
    """Login pods behind the one login address."""
    pool: K8sName
    """MetalLB pool of the login service address."""
    address: IPv4 | None = None
    """Fixed login address inside the pool: what users `ssh` to (null: MetalLB picks one)."""
    root_ssh_authorized_keys: tuple[str, ...] = ()
    """OpenSSH public keys that may log in as root on the login pods. Refused in production: root there reads the
    Slurm key, the login pods run users' code and face the site network; use `kubectl exec` for admin access."""
    exposure: Exposure = Field(default_factory=Exposure)
    """Who may reach the login address (ssh): `sourceRanges` (default: `network.siteRanges`) or `public: true`."""
    cpu: Quantity = "1"
    """CPU request of a login pod."""
    memory: Quantity = "2Gi"
    """Memory request of a login pod."""
    memory_limit: Quantity = "4Gi"
    """Memory limit of a login pod (at least `memory`)."""
    max_unavailable: int = Field(default=0, ge=0, le=19)
    """Login pods taken down at once during an update (users' sessions die with them)."""
    node_pool: K8sName | None = None
    """Node pool (hpcforge:nodePools) the login pods run on (its labels select the nodes, its taints are
    tolerated); null: anywhere."""
    gpus: GpuSpec | None = None
    """GPUs per login pod (a GPU login pool for interactive work and builds); null: none."""

    @field_validator("root_ssh_authorized_keys")
    @classmethod
    def _keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(validate_ssh_public_key(key) for key in value)

    @model_validator(mode="after")
    def _keep_one(self) -> LoginConfig:
        if self.max_unavailable >= self.replicas:
            raise ValueError(
                f"maxUnavailable {self.max_unavailable} would take all {self.replicas} login pod(s) down at once; "
                f"use at most {self.replicas - 1}"
            )
        return self


class Toleration(StrictModel):
    key: LabelKey
    """Taint key to tolerate (a Kubernetes label-style key, e.g. `nvidia.com/gpu`)."""
    operator: Literal["Equal", "Exists"] = "Exists"
    """`Exists` (any value) or `Equal` (`value` must match)."""
    value: LabelValue | None = None
    """Taint value (with `operator: Equal`; a Kubernetes label value)."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    """Taint effect to tolerate (null: every effect)."""


class NodeSetConfig(StrictModel):
    name: SlurmName
    """Name of the NodeSet: the Slurm NodeSet and node feature of its nodes; partitions and bare-metal hosts refer to it."""
    replicas: int = Field(default=1, ge=0, le=10000)
    """slurmd pods (0: a nodeset only for bare-metal hosts that join it)."""
    pool: K8sName | None = None
    """Node pool (hpcforge:nodePools) the pods run on; its labels become the node selector."""
    cpu: Quantity
    """CPU request of each slurmd pod."""
    memory: Quantity
    """Memory request of each slurmd pod; what Slurm may give jobs is the memory limit minus `reservedMemory`."""
    memory_limit: Quantity | None = None
    """Default: equal to the request (guaranteed memory for jobs)."""
    cpu_limit: Quantity | None = None
    """CPU limit of each slurmd pod; default: equal to the request. The Slinky slurmd image turns the limits into
    `CoreSpecCount`/`MemSpecLimit` (host minus pod), so Slurm schedules what the pod has, not the whole host."""
    reserved_cpus: int = Field(default=0, ge=0)
    """CPUs of the pod kept from jobs for slurmd/slurmstepd themselves (added to `CoreSpecCount`)."""
    reserved_memory: Quantity | None = None
    """Memory of the pod kept from jobs for slurmd/slurmstepd themselves (added to `MemSpecLimit`)."""
    gpus: GpuSpec | None = None
    """GPUs per slurmd pod: the device-plugin limit and the nodes' `Gres=gpu:<type>:<count>` (null: no GPUs)."""
    gres: tuple[str, ...] = ()
    """Explicit GRES entries (`gpu:a100:8`, `shard:8`); GPU entries must agree with `gpus`."""
    features: tuple[Annotated[str, AfterValidator(_node_feature)], ...] = ()
    """Further Slurm node features (the nodeset's name is always one)."""
    node_selector: dict[LabelKey, LabelValue] = Field(default_factory=dict)
    """Node labels the pods must run on, on top of the pool's labels (Kubernetes label keys and values)."""
    tolerations: tuple[Toleration, ...] = ()
    """Tolerations of the slurmd pods. The taints of the nodeset's `pool` are tolerated automatically
    (`operator: Exists`, effect `NoSchedule`), except a key that is already listed here."""
    max_unavailable: MaxUnavailable = "25%"
    """Pods replaced at once in a rolling update; each is drained in Slurm before deletion."""
    workload_disruption_protection: bool = True
    """Let the operator protect pods that run jobs with a PodDisruptionBudget."""
    scaling_mode: Literal["StatefulSet", "DaemonSet"] = "StatefulSet"
    """`StatefulSet`: `replicas` pods; `DaemonSet`: one pod on every selected node."""
    weight: int | None = Field(default=None, ge=1, le=65533)
    """Node `Weight` of the nodeset's nodes: Slurm allocates the lowest weights first (null: Slurm's default, 1)."""
    shm_size: Quantity | None = None
    """Size of the pods' memory-backed `/dev/shm` (an emptyDir with medium Memory mounted there; Pyxis/enroot bind it
    into job containers). Default for GPU nodesets: a quarter of the memory limit, at most 64Gi: NCCL puts its
    intra-node buffers there, and the container runtime's own /dev/shm is 64 MiB ("Error while creating shared memory
    segment", NVIDIA/nccl#525). Without GPUs: none unless set. What jobs write there counts against the pod's memory
    limit (tmpfs pages are charged to the pod's memory cgroup), so it must be below it."""

    @property
    def effective_shm_size(self) -> str | None:
        """`shm_size`, or for GPU nodesets the default (a quarter of the memory limit, at most 64Gi, in Mi)."""
        if self.shm_size is not None or self.gpus is None:
            return self.shm_size
        limit_mib = int(quantity_value(self.memory_limit or self.memory) // 2**20)
        return f"{min(64 * 1024, limit_mib // 4)}Mi"

    @field_validator("gres")
    @classmethod
    def _gres_form(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            if not re.fullmatch(r"[a-z_]+(:([a-z0-9_]+|[1-7]g\.[0-9]+gb(\+me)?))?(:[0-9]+)?", entry):
                raise ValueError(f"{entry!r} is not a GRES entry (name[:type][:count], e.g. gpu:a100:8)")
        return value

    @property
    def has_pods(self) -> bool:
        """Whether slurmd runs in pods (the pinned Slinky image) for this nodeset, not only on bare-metal hosts."""
        return self.scaling_mode == "DaemonSet" or self.replicas > 0

    def gpu_gres(self) -> str | None:
        return f"gpu:{self.gpus.type}:{self.gpus.count}" if self.gpus else None

    def gres_entries(self) -> tuple[str, ...]:
        """GRES as it goes into `Gres=`: explicit entries, plus the GPU entry derived from `gpus`."""
        derived = self.gpu_gres()
        if derived and not any(entry.startswith("gpu") for entry in self.gres):
            return (derived, *self.gres)
        return self.gres

    @model_validator(mode="after")
    def _gres_agrees_with_devices(self) -> NodeSetConfig:
        problems = ProblemCollector()
        gpu_entries = [entry for entry in self.gres if entry.split(":")[0] == "gpu"]
        if gpu_entries and self.gpus is None:
            problems.add(
                ["gres"],
                f"nodeset {self.name!r}: GRES {gpu_entries[0]!r} asks Slurm for GPUs but 'gpus' requests no "
                "nvidia.com/gpu devices from Kubernetes",
            )
        for entry in gpu_entries:
            parts = entry.split(":")
            gres_type = parts[1] if len(parts) >= 2 and not parts[1].isdigit() else None
            gres_count = int(parts[-1]) if parts[-1].isdigit() else 1
            if self.gpus is not None and (gres_count != self.gpus.count or gres_type != self.gpus.type):
                problems.add(
                    ["gres"],
                    f"nodeset {self.name!r}: GRES {entry!r} disagrees with the device request "
                    f"{self.gpus.resource}={self.gpus.count} of type {self.gpus.type!r} "
                    f"(expected {self.gpu_gres()!r})",
                )
        if self.memory_limit is not None and quantity_value(self.memory_limit) < quantity_value(self.memory):
            problems.add(["memoryLimit"], f"{self.memory_limit} is below the memory request {self.memory}")
        if self.gpus is not None and self.gpus.autodetect == "nvml" and self.has_pods and not SLURMD_IMAGE_HAS_NVML:
            problems.add(
                ["gpus", "autodetect"],
                f"nodeset {self.name!r}: autodetect: nvml cannot work in its slurmd pods: the pinned slurmd image "
                "builds Slurm without NVML (SlinkyProject/containers#14; components/versions.py SLURMD_IMAGE_HAS_NVML), "
                "so slurmd detects no GPU and slurmctld drains the node ('gres/gpu count reported lower than configured'); "
                + (
                    "MIG devices need NVML (AutoDetect=nvidia does not detect them): run MIG GPUs as whole GPUs in pods, "
                    "or on bare-metal hosts with their own NVML-enabled slurmd (replicas: 0)"
                    if self.gpus.is_mig
                    else "use autodetect: nvidia (slurmd reads /proc/driver/nvidia, no NVML needed) or off"
                ),
            )
        if self.gpus is not None and self.gpus.autodetect == "off" and (self.scaling_mode == "DaemonSet" or not self.replicas):
            problems.add(
                ["gpus", "autodetect"],
                f"nodeset {self.name!r}: its node names are not known in advance (DaemonSet or bare-metal hosts), so "
                "gres.conf cannot name them: set autodetect (nvidia; nvml only on bare-metal hosts whose slurmd has NVML)",
            )
        if self.shm_size is not None and quantity_value(self.shm_size) >= quantity_value(self.memory_limit or self.memory):
            problems.add(
                ["shmSize"],
                f"nodeset {self.name!r}: /dev/shm of {self.shm_size} is charged to the pod's memory limit "
                f"{self.memory_limit or self.memory}: it must be below it",
            )
        if self.cpu_limit is not None and quantity_value(self.cpu_limit) < quantity_value(self.cpu):
            problems.add(["cpuLimit"], f"{self.cpu_limit} is below the CPU request {self.cpu}")
        if self.reserved_cpus and self.reserved_cpus >= quantity_value(self.cpu_limit or self.cpu):
            problems.add(["reservedCpus"], f"nodeset {self.name!r}: reserving {self.reserved_cpus} CPU(s) leaves jobs none")
        if self.reserved_memory is not None and quantity_value(self.reserved_memory) >= quantity_value(
            self.memory_limit or self.memory
        ):
            problems.add(["reservedMemory"], f"nodeset {self.name!r}: reserving {self.reserved_memory} leaves jobs no memory")
        if isinstance(self.max_unavailable, int) and self.replicas and self.max_unavailable > self.replicas:
            problems.add(
                ["maxUnavailable"],
                f"nodeset {self.name!r}: {self.max_unavailable} is more than its {self.replicas} replica(s)",
            )
        problems.raise_if_any()
        return self


class RestApiConfig(StrictModel):
    enabled: bool = False
    """Run slurmrestd (Slinky RestApi)."""
    replicas: int = Field(default=1, ge=1, le=10)
    """slurmrestd replicas."""


class SlurmConfig(StrictModel):
    cluster_name: ClusterName
    """`ClusterName` of the Slurm cluster (also the SSSD domain on the login nodes). Fixed once deployed: Slinky's
    webhook refuses to change the Controller's `clusterName` ("cannot change ClusterName after deployment"), so a
    changed value stops `pulumi up`; a new name is a new cluster (docs/layers/slurm.md, "Fixed after the first
    deploy")."""
    namespace: K8sName = "slurm"
    """Namespace of the Slurm custom resources and pods; no other layer's or site app's namespace."""
    controller: ControllerConfig = Field(default_factory=ControllerConfig)
    """slurmctld: its volume, its optional LoadBalancer address and the typed slurm.conf settings."""
    accounting: AccountingConfig = Field(default_factory=AccountingConfig)
    """slurmdbd (Slinky Accounting)."""
    login: LoginConfig
    """The login nodes (Slinky LoginSet)."""
    extra_logins: tuple[LoginConfig, ...] = ()
    """Further login pools, each its own LoginSet with its own address (e.g. a GPU login pool on GPU nodes)."""
    nodesets: tuple[NodeSetConfig, ...] = Field(min_length=1)
    """Compute nodesets, one Slinky NodeSet each."""
    partitions: tuple[PartitionConfig, ...] = Field(min_length=1)
    """Partitions, written into the Controller's `extraConf`; every nodeset must be in one."""
    restapi: RestApiConfig = Field(default_factory=RestApiConfig)
    """slurmrestd (Slinky RestApi)."""
    inventory: InventoryRef | None = None
    """A YAML file with the keys `topology` and/or `accounts` (each as described under `topology` and `accounts`
    below), e.g. `{file: inventory/prod/slurm.yaml}`: one leaf switch per rack and one account per project grow with
    the site and belong in a file, not in the stack config. Small values may stay inline; a key set both inline and
    in the file is an error."""
    accounts: SlurmAccountsConfig | None = None
    """Accounting as code: accounts, users' associations, QOS and coordinators, reconciled into slurmdbd by a Job
    (null: slurmdbd's associations are managed by hand, and no partition may name a QOS). Inline, or from
    `inventory.file` (its `accounts` key)."""
    cgroup: CgroupConfig = Field(default_factory=CgroupConfig)
    """cgroup.conf (cgroup v2)."""
    prolog: tuple[Script, ...] = ()
    """Prolog scripts (ConfigMap `slurm-prolog-scripts`); one that fails drains the node."""
    epilog: tuple[Script, ...] = ()
    """Epilog scripts (ConfigMap `slurm-epilog-scripts`)."""
    topology: TopologyConfig | None = None
    """Network topology (switch tree, blocks) for topology-aware scheduling (null: flat). Inline, or from
    `inventory.file` (its `topology` key)."""
    reservations: tuple[ReservationConfig, ...] = ()
    """Standing reservations such as maintenance windows, made with `scontrol create reservation` by a Job."""
    pyxis: bool | None = None
    """Containers in jobs (`srun --container-image`, NVIDIA Pyxis and enroot): GPU nodesets run Slinky's
    `slurmd-pyxis` image, login pods its `login-pyxis` image (srun must load the plugin to know the option), and
    `plugstack.conf` includes Pyxis' SPANK configuration. Null: on when a nodeset has GPUs (the NCCL evidence needs
    it)."""

    @property
    def pyxis_enabled(self) -> bool:
        return self.pyxis if self.pyxis is not None else self.has_gpus

    def inventory_annotations(self) -> dict[str, str]:
        """`hpcforge.io/inventory-sha256` of `inventory.file` for the objects made from the topology and the accounts
        (empty without a file; the digest covers the whole file)."""
        return digest_annotations(self.inventory)

    def _check_partition_options(self, problems: ProblemCollector) -> None:
        preemption = self.controller.preemption
        partition_names = {p.name for p in self.partitions}
        for index, partition in enumerate(self.partitions):
            if partition.preempt_mode is not None and preemption.type == "preempt/none":
                problems.add(
                    ["partitions", index, "preemptMode"],
                    f"partition {partition.name!r}: a preempt mode needs controller.preemption.type other than preempt/none",
                )
            if partition.preempt_mode == "SUSPEND" and not preemption.gang:
                problems.add(
                    ["partitions", index, "preemptMode"],
                    f"partition {partition.name!r}: SUSPEND needs controller.preemption.gang: true (slurm.conf(5), PreemptMode)",
                )
            if partition.def_mem_per_gpu is not None:
                gpu_sets = [name for name in partition.nodesets if (ns := self.nodeset(name)) is not None and ns.gpus]
                if partition.nodesets and not gpu_sets and not partition.features:
                    problems.add(
                        ["partitions", index, "defMemPerGpu"],
                        f"partition {partition.name!r} has no GPU nodeset: DefMemPerGPU would never apply",
                    )
            for feature_index, feature in enumerate(partition.features):
                if partition.feature_nodeset(feature) in {ns.name for ns in self.nodesets}:
                    problems.add(
                        ["partitions", index, "features", feature_index],
                        f"NodeSet name {partition.feature_nodeset(feature)!r} is already a nodeset's",
                    )
        reservation_names: list[str] = []
        for index, reservation in enumerate(self.reservations):
            reservation_names += reservation.command_names()
            for p_index, partition_name in enumerate(reservation.partitions):
                if partition_name not in partition_names:
                    problems.add(
                        ["reservations", index, "partitions", p_index],
                        f"reservation {reservation.name!r}: unknown partition {partition_name!r}",
                    )
        for name in duplicates(reservation_names):
            problems.add(["reservations"], f"duplicate reservation name {name!r}")

    def login_sets(self) -> tuple[LoginConfig, ...]:
        """Every login pool: `login` first, then `extraLogins`."""
        return (self.login, *self.extra_logins)

    def nodeset(self, name: str) -> NodeSetConfig | None:
        return self._nodesets_by_name.get(name)

    @cached_property
    def _nodesets_by_name(self) -> dict[str, NodeSetConfig]:
        """The first nodeset of each name (what a scan finds), so that a lookup costs one step, not one per nodeset."""
        return first_by_name(self.nodesets)

    def partitions_of(self, nodeset: str) -> list[str]:
        """Partitions that take the nodeset's nodes: by name, or by a feature every node of it carries."""
        spec = self.nodeset(nodeset)
        features = {nodeset, *(spec.features if spec else ())}
        return [p.name for p in self.partitions if nodeset in p.nodesets or features & set(p.features)]

    @property
    def has_gpus(self) -> bool:
        return any(ns.gpus for ns in self.nodesets)

    @model_validator(mode="after")
    def _cross_checks(self) -> SlurmConfig:  # noqa: PLR0912 (one branch per cross-reference checked, each with its own message)
        problems = ProblemCollector()
        nodeset_names = [ns.name for ns in self.nodesets]
        known = ", ".join(nodeset_names)
        for index, ns in enumerate(self.nodesets):
            if ns.name in nodeset_names[:index]:
                problems.add(["nodesets", index, "name"], f"duplicate nodeset name {ns.name!r}")
            if ns.name == self.login.name:
                problems.add(["nodesets", index, "name"], f"{ns.name!r} is already the login set's name")
        login_names = [self.login.name]
        for index, extra in enumerate(self.extra_logins):
            if extra.name in login_names or extra.name in nodeset_names:
                problems.add(["extraLogins", index, "name"], f"login set name {extra.name!r} is already used")
            login_names.append(extra.name)
        addresses = [lg.address for lg in self.login_sets() if lg.address is not None]
        for address in duplicates(addresses):
            problems.add(["extraLogins"], f"login address {address} is used by two login sets")
        partition_names = [p.name for p in self.partitions]
        for index, partition in enumerate(self.partitions):
            if partition.name in partition_names[:index]:
                problems.add(["partitions", index, "name"], f"duplicate partition name {partition.name!r}")
            for ns_index, nodeset in enumerate(partition.nodesets):
                if nodeset not in nodeset_names:
                    problems.add(
                        ["partitions", index, "nodesets", ns_index],
                        f"partition {partition.name!r}: unknown nodeset {nodeset!r} (known: {known})",
                    )
            for name in duplicates(partition.nodesets):
                problems.add(["partitions", index, "nodesets"], f"nodeset {name!r} is listed twice")
        self._check_partition_options(problems)
        defaults = [p.name for p in self.partitions if p.default]
        if len(defaults) > 1:
            problems.add(["partitions"], f"only one partition can be the default, found {', '.join(defaults)}")
        for index, ns in enumerate(self.nodesets):
            if not self.partitions_of(ns.name):
                problems.add(["nodesets", index], f"nodeset {ns.name!r} is in no partition: its nodes could never run jobs")
        for kind in ("prolog", "epilog"):
            scripts: tuple[Script, ...] = getattr(self, kind)
            for name in duplicates(script.name for script in scripts):
                problems.add([kind], f"duplicate {kind} script name {name!r}")
        problems.raise_if_any()
        return self
