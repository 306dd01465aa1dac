"""The Slurm/Kubernetes contract: Slurm's view of the hardware and Kubernetes' view agree, and updates
never break running jobs or lock users out (Slinky slurm-operator v1beta1 CRs).

- nodeset-gres-matches-gpus: a NodeSet's `Gres=gpu...` equals the slurmd container's nvidia.com/gpu.
- slurm-partitions-reference-nodesets (stack): every partition in a Controller's extraConf names
  NodeSets of that Controller.
- nodeset-rolling-update-bounded: a NodeSet rolls at most the configured share of its nodes at once.
- nodeset-disruption-protection: busy NodeSet pods are protected by a PodDisruptionBudget.
- loginset-update-keeps-login-available: a login update never takes every login pod down.
- argocd-nodeset-customization (stack): where Argo CD and NodeSets meet, Argo CD knows that a
  NodeSet's spec.template.spec is a PodSpec.
- nodeset-extraconf-well-formed: a NodeSet's extraConf is `Key=Value` items with values, none of the
  keys that Slinky 1.2.1 or its slurmd image own (an empty `Topology=` swallows the next item:
  slurm-operator#261).
- nodeset-slurm-sees-pod-resources: slurmd has CPU and memory limits (the CPU limit equal to the
  request), so the Slinky image's CoreSpecCount/MemSpecLimit make Slurm schedule what the pod has.
- nodeset-rdma-complete: a NodeSet that requests RDMA devices (`rdma/*`) attaches networks and may
  lock memory (IPC_LOCK), and one that attaches networks requests their RDMA devices.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .access import as_int, get, int_or_percent, items, mapping, resolve_int_or_percent, text
from .knobs import STRING_LIST, RuleConfig, knob
from .rule import ResourceRule, StackRule
from .sources import chart_basename, helm_sources
from .view import ResourceView, StackView, Violation
from .wire import is_unknown
from .workloads import SLINKY_GROUP, containers


def is_slinky(resource: ResourceView, kind: str) -> bool:
    return resource.is_kind(SLINKY_GROUP, kind)


def parse_conf(line: str) -> dict[str, str]:
    """`Key=Value Key2=Value2` (slurm.conf / slurmd --conf syntax) with lower-cased keys."""
    result: dict[str, str] = {}
    for token in line.split():
        key, sep, value = token.partition("=")
        if sep:
            result[key.strip().lower()] = value.strip()
    return result


_COUNT = re.compile(r"^([0-9]+)([KMG]?)$")
_MULTIPLIER = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def gres_count(gres: str, name: str) -> int:
    """Total count of GRES `name` in a `Gres=` value such as `gpu:a100:4,gpu:h100:4` or `gpu:8(S:0-1)`."""
    total = 0
    for raw in gres.split(","):
        entry = raw.split("(", 1)[0].strip()
        if not entry:
            continue
        parts = entry.split(":")
        if parts[0] != name:
            continue
        match = _COUNT.match(parts[-1]) if len(parts) > 1 else None
        total += int(match.group(1)) * _MULTIPLIER[match.group(2)] if match else 1
    return total


# --- nodeset-gres-matches-gpus --------------------------------------------------------------------


@dataclass(frozen=True)
class GresConfig(RuleConfig):
    gres_name: str = knob("gresName", "gpu", {"type": "string"}, "The GRES name that counts GPUs.")
    resource_name: str = knob(
        "resourceName", "nvidia.com/gpu", {"type": "string"}, "The device-plugin resource that counts GPUs."
    )


def _slurmd(resource: ResourceView) -> Mapping[str, Any]:
    return next((c.container for c in containers(resource) if c.path == "spec.slurmd"), {})


def check_nodeset_gres(resource: ResourceView, config: GresConfig) -> list[str]:
    if not is_slinky(resource, "NodeSet"):
        return []
    extra = resource.spec.get("extraConf")
    slurmd = _slurmd(resource)
    res = slurmd.get("resources")
    if is_unknown(extra) or is_unknown(res):
        return []
    conf = parse_conf(extra) if isinstance(extra, str) else {}
    declared = gres_count(conf["gres"], config.gres_name) if "gres" in conf else 0
    limit_raw = get(res, "limits", config.resource_name)
    request_raw = get(res, "requests", config.resource_name)
    if is_unknown(limit_raw) or is_unknown(request_raw):
        return []
    limit, request = as_int(limit_raw), as_int(request_raw)
    if config.resource_name == "nvidia.com/gpu":
        # MIG devices (mixed strategy: nvidia.com/mig-<profile>) are GPUs to Slurm too (Gres=gpu:<profile>:<n>).
        for key, value in (get(res, "limits") or {}).items():
            if isinstance(key, str) and key.startswith("nvidia.com/mig-") and as_int(value) is not None:
                limit = (limit or 0) + (as_int(value) or 0)
                limit_raw = limit
    name = resource.object_name
    problems: list[str] = []
    if limit_raw is not None and limit is None:
        problems.append(f"NodeSet {name}: slurmd limits.{config.resource_name} is {limit_raw!r}, not a whole number.")
        return problems
    if request is not None and limit is not None and request != limit:
        problems.append(
            f"NodeSet {name}: slurmd requests {request} but limits {limit} {config.resource_name}; extended resources "
            "must request exactly their limit."
        )
    gpus = limit if limit is not None else (request or 0)
    if declared != gpus:
        gres_text = f"Gres={conf['gres']}" if "gres" in conf else f"no {config.gres_name} GRES"
        problems.append(
            f"NodeSet {name}: extraConf declares {declared} {config.gres_name} ({gres_text}) but the slurmd container "
            f"gets {gpus} {config.resource_name}: Slurm would schedule GPUs that the pod cannot see (or leave GPUs the "
            "pod holds idle). Make Gres=gpu:<type>:<n> and the device-plugin limit agree."
        )
    return problems


NODESET_GRES = ResourceRule(
    "nodeset-gres-matches-gpus",
    "A NodeSet's Slurm GRES (gpu) and its slurmd nvidia.com/gpu resources agree.",
    GresConfig,
    check_nodeset_gres,
    "Derive both the Gres= entry and the nvidia.com/gpu limit from the same nodeset config (gpus: {type, count}).",
)

# --- slurm-partitions-reference-nodesets ----------------------------------------------------------


@dataclass(frozen=True)
class PartitionsConfig(RuleConfig):
    allow_all: bool = knob("allowAll", True, {"type": "boolean"}, "Accept Nodes=ALL.")
    allow_empty: bool = knob("allowEmpty", False, {"type": "boolean"}, "Accept partitions without Nodes=.")


def _controller_nodesets(stack: StackView, controller: ResourceView) -> list[ResourceView]:
    found: list[ResourceView] = []
    for nodeset in stack.objects(SLINKY_GROUP, "NodeSet"):
        ref = mapping(nodeset.spec.get("controllerRef"))
        ref_ns = text(ref.get("namespace")) or nodeset.namespace
        if ref.get("name") == controller.object_name and ref_ns == controller.namespace:
            found.append(nodeset)
    return found


def check_partitions(stack: StackView, config: PartitionsConfig) -> list[Violation]:
    violations: list[Violation] = []
    for controller in stack.objects(SLINKY_GROUP, "Controller"):
        extra = controller.spec.get("extraConf")
        if not isinstance(extra, str):
            continue
        nodesets = {n.object_name for n in _controller_nodesets(stack, controller)}
        # `NodeSet=<name> Feature=<f>` lines in the same extraConf define nodesets by feature too.
        nodesets |= {name for line in extra.splitlines() if (name := parse_conf(line).get("nodeset"))}
        known = ", ".join(sorted(nodesets)) or "none"
        for line in extra.splitlines():
            conf = parse_conf(line)
            partition = conf.get("partitionname")
            if partition is None or partition.upper() == "DEFAULT":
                continue
            nodes = conf.get("nodes", "")
            if not nodes:
                if not config.allow_empty:
                    violations.append(
                        Violation(f"Controller {controller.object_name}: partition {partition} has no Nodes=.", controller.urn)
                    )
                continue
            for item in nodes.split(","):
                if item.upper() == "ALL" and config.allow_all:
                    continue
                if item not in nodesets:
                    violations.append(
                        Violation(
                            f"Controller {controller.object_name}: partition {partition} references {item!r}, which is "
                            f"not a NodeSet of this controller (its NodeSets: {known}): the partition would never get "
                            "those nodes.",
                            controller.urn,
                        )
                    )
    return violations


PARTITIONS_REFERENCE_NODESETS = StackRule(
    "slurm-partitions-reference-nodesets",
    "Slurm partitions (Controller extraConf) reference NodeSets that exist for that controller.",
    PartitionsConfig,
    check_partitions,
    "List only NodeSet names of the same Controller in the partition's nodesets.",
)

# --- nodeset-rolling-update-bounded ---------------------------------------------------------------


@dataclass(frozen=True)
class RollingUpdateConfig(RuleConfig):
    max_unavailable: str = knob(
        "maxUnavailable",
        "25%",
        {"type": "string", "pattern": "^[0-9]{1,3}%$"},
        "Upper bound on a NodeSet's rolling-update maxUnavailable, as a share of its replicas (at least 1 node).",
    )
    max_unavailable_count: int | None = knob(
        "maxUnavailableCount",
        None,
        {"type": ["integer", "null"], "minimum": 1},
        "Upper bound as a node count (null: no count bound).",
    )


def check_nodeset_rolling_update(resource: ResourceView, config: RollingUpdateConfig) -> list[str]:  # noqa: PLR0911 (one return per rule of the update strategy)
    if not is_slinky(resource, "NodeSet"):
        return []
    strategy = resource.spec.get("updateStrategy")
    if is_unknown(strategy):
        return []
    kind = text(get(strategy, "type")) or "RollingUpdate"
    if kind != "RollingUpdate":
        return []  # OnDelete and ScheduledUpdate do not roll by themselves
    raw = get(strategy, "rollingUpdate", "maxUnavailable")
    replicas_raw = resource.spec.get("replicas")
    if is_unknown(raw) or is_unknown(replicas_raw):
        return []
    value = int_or_percent(raw) if raw is not None else "25%"
    name = resource.object_name
    if value is None:
        return [f"NodeSet {name}: updateStrategy.rollingUpdate.maxUnavailable {raw!r} is not a count or a percentage."]
    if value in {0, "0%"}:
        return [f"NodeSet {name}: maxUnavailable is 0, so a rolling update can never start."]
    replicas = as_int(replicas_raw)
    replicas = 1 if replicas is None else replicas
    daemonset = resource.spec.get("scalingMode") == "DaemonSet"
    bound_percent = int(config.max_unavailable.rstrip("%"))
    problems: list[str] = []
    if daemonset:
        # No fixed replica count: compare like with like.
        if isinstance(value, str) and int(value.rstrip("%")) > bound_percent:
            problems.append(f"NodeSet {name}: maxUnavailable {value} exceeds the bound {config.max_unavailable}.")
        if isinstance(value, int) and config.max_unavailable_count is not None and value > config.max_unavailable_count:
            problems.append(f"NodeSet {name}: maxUnavailable {value} exceeds the bound of {config.max_unavailable_count} nodes.")
        return problems
    if replicas <= 0:
        return []
    unavailable = resolve_int_or_percent(value, replicas, round_up=True)
    bound = max(1, resolve_int_or_percent(config.max_unavailable, replicas, round_up=True))
    if config.max_unavailable_count is not None:
        bound = min(bound, config.max_unavailable_count)
    if unavailable > bound:
        problems.append(
            f"NodeSet {name}: a rolling update may take {unavailable} of {replicas} nodes out at once (maxUnavailable "
            f"{value}), more than the bound of {bound} (maxUnavailable {config.max_unavailable}"
            + (f", at most {config.max_unavailable_count}" if config.max_unavailable_count is not None else "")
            + "): too much of the partition drains at the same time."
        )
    return problems


NODESET_ROLLING_UPDATE = ResourceRule(
    "nodeset-rolling-update-bounded",
    "A NodeSet's rolling update takes at most the configured share of its nodes out at once.",
    RollingUpdateConfig,
    check_nodeset_rolling_update,
    "Lower the nodeset's maxUnavailable in the stack file (a count such as 1, or a percentage within the bound).",
)

# --- nodeset-disruption-protection ----------------------------------------------------------------


@dataclass(frozen=True)
class DisruptionConfig(RuleConfig):
    require_explicit: bool = knob(
        "requireExplicit",
        False,
        {"type": "boolean"},
        "Require workloadDisruptionProtection: true to be set explicitly (the CRD default is true).",
    )


def check_nodeset_disruption(resource: ResourceView, config: DisruptionConfig) -> list[str]:
    if not is_slinky(resource, "NodeSet"):
        return []
    value = resource.spec.get("workloadDisruptionProtection")
    if is_unknown(value) or value is True or (value is None and not config.require_explicit):
        return []
    state = "not set" if value is None else f"{value!r}"
    return [
        f"NodeSet {resource.object_name}: workloadDisruptionProtection is {state}: node drains and upgrades could "
        "evict pods that are running Slurm jobs. Set it to true."
    ]


NODESET_DISRUPTION = ResourceRule(
    "nodeset-disruption-protection",
    "NodeSets protect pods that run Slurm jobs with a PodDisruptionBudget (workloadDisruptionProtection).",
    DisruptionConfig,
    check_nodeset_disruption,
    "Set workloadDisruptionProtection: true on the NodeSet.",
)

# --- loginset-update-keeps-login-available --------------------------------------------------------


@dataclass(frozen=True)
class LoginUpdateConfig(RuleConfig):
    min_available: int = knob(
        "minAvailable", 1, {"type": "integer", "minimum": 1}, "Login pods that must stay up during an update."
    )


def check_loginset_update(resource: ResourceView, config: LoginUpdateConfig) -> list[str]:  # noqa: PLR0911 (one return per rule of the update strategy)
    if not is_slinky(resource, "LoginSet"):
        return []
    spec = resource.spec
    strategy, replicas_raw = spec.get("strategy"), spec.get("replicas")
    if is_unknown(strategy) or is_unknown(replicas_raw):
        return []
    replicas = as_int(replicas_raw)
    replicas = 1 if replicas is None else replicas
    if replicas <= 0:
        return []
    name = resource.object_name
    kind = text(get(strategy, "type")) or "RollingUpdate"
    if kind == "Recreate":
        return [f"LoginSet {name}: strategy Recreate stops all {replicas} login pods before starting new ones."]
    raw_unavailable = get(strategy, "rollingUpdate", "maxUnavailable")
    raw_surge = get(strategy, "rollingUpdate", "maxSurge")
    if is_unknown(raw_unavailable) or is_unknown(raw_surge):
        return []
    unavailable_value = int_or_percent(raw_unavailable) if raw_unavailable is not None else "25%"
    surge_value = int_or_percent(raw_surge) if raw_surge is not None else "25%"
    if unavailable_value is None or surge_value is None:
        return [f"LoginSet {name}: strategy.rollingUpdate has a value that is not a count or a percentage."]
    # Kubernetes' ResolveFenceposts: surge rounds up, unavailable rounds down, never both 0.
    surge = resolve_int_or_percent(surge_value, replicas, round_up=True)
    unavailable = resolve_int_or_percent(unavailable_value, replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    available = replicas - unavailable
    if available < min(config.min_available, replicas) or available <= 0:
        return [
            f"LoginSet {name}: a rolling update may take {unavailable} of {replicas} login pods down at once "
            f"(maxUnavailable {unavailable_value}, maxSurge {surge_value}), leaving {max(available, 0)} up; users "
            f"would be locked out. Keep at least {config.min_available} up (maxUnavailable 0 with maxSurge 1)."
        ]
    return []


LOGINSET_UPDATE = ResourceRule(
    "loginset-update-keeps-login-available",
    "A LoginSet update never takes all login pods down at once.",
    LoginUpdateConfig,
    check_loginset_update,
    "Use strategy RollingUpdate with maxUnavailable 0 and maxSurge 1 (or more replicas than maxUnavailable).",
)

# --- argocd-nodeset-customization -----------------------------------------------------------------

NODESET_KEY = "resource.customizations.knownTypeFields.slinky.slurm.net_NodeSet"


@dataclass(frozen=True)
class CustomizationConfig(RuleConfig):
    key: str = knob("key", NODESET_KEY, {"type": "string"}, "The argocd-cm key of the NodeSet customization.")
    field_path: str = knob("field", "spec.template.spec", {"type": "string"}, "The field Argo CD must know.")
    field_type: str = knob("fieldType", "core/v1/PodSpec", {"type": "string"}, "Its type.")
    argocd_charts: tuple[str, ...] = knob("argocdCharts", ("argo-cd",), STRING_LIST, "Chart names that install Argo CD.")
    nodeset_charts: tuple[str, ...] = knob(
        "nodesetCharts", ("slurm",), STRING_LIST, "Chart names whose releases contain NodeSets (Slinky's `slurm`)."
    )


@dataclass(frozen=True)
class _ArgoInstall:
    resource: ResourceView
    data: Mapping[str, Any] | None
    """argocd-cm data from the chart values (None if the chart sets no configs.cm)."""


def _argocd_installs(stack: StackView, config: CustomizationConfig) -> list[_ArgoInstall]:
    found: list[_ArgoInstall] = []
    for resource in stack.resources:
        for source in helm_sources(resource):
            if chart_basename(source.chart) in config.argocd_charts:
                cm = get(source.values, "configs", "cm")
                found.append(_ArgoInstall(resource, mapping(cm) if isinstance(cm, Mapping) else None))
        if resource.is_kind("", "ConfigMap") and resource.object_name == "argocd-cm":
            found.append(_ArgoInstall(resource, mapping(resource.props.get("data"))))
    return found


def _has_nodesets(stack: StackView, config: CustomizationConfig) -> bool:
    if stack.objects(SLINKY_GROUP, "NodeSet"):
        return True
    return any(
        chart_basename(source.chart) in config.nodeset_charts for resource in stack.resources for source in helm_sources(resource)
    )


def _customization_problem(value: Any, config: CustomizationConfig) -> str | None:
    if is_unknown(value):
        return None
    if not isinstance(value, str):
        return f"{config.key} is not set"
    import yaml

    try:
        entries = yaml.safe_load(value)
    except yaml.YAMLError:
        return f"{config.key} is not YAML"
    for entry in items(entries):
        if get(entry, "field") == config.field_path and get(entry, "type") == config.field_type:
            return None
    return f"{config.key} does not map {config.field_path} to {config.field_type}"


def check_argocd_nodeset_customization(stack: StackView, config: CustomizationConfig) -> list[Violation]:
    installs = _argocd_installs(stack, config)
    if not installs or not _has_nodesets(stack, config):
        return []
    problems = [(i, _customization_problem(mapping(i.data).get(config.key), config)) for i in installs]
    if any(problem is None for _, problem in problems):
        return []
    return [
        Violation(
            f"{install.resource.display}: {problem}: Argo CD diffs a NodeSet's pod template as an opaque object, so "
            "defaulted fields show as permanent drift and syncs fight the operator. Add the customization to the "
            "argo-cd values (configs.cm).",
            install.resource.urn,
        )
        for install, problem in problems
    ]


ARGOCD_NODESET_CUSTOMIZATION = StackRule(
    "argocd-nodeset-customization",
    "When Argo CD and Slinky NodeSets share a cluster, Argo CD knows that NodeSet spec.template.spec is a PodSpec.",
    CustomizationConfig,
    check_argocd_nodeset_customization,
    "Keep NODESET_KNOWN_TYPE_FIELDS in the argo-cd values (components/layers/gitops/layer.py).",
)


# --- nodeset-extraconf-well-formed ----------------------------------------------------------------
#
# Read in SlinkyProject/slurm-operator at tag v1.2.1 (internal/builder/workerbuilder/worker_app.go,
# slurmdConfArgs): extraConf is split on single spaces, each item must be Key=Value (the operator panics
# on "malformed --conf item" otherwise), keys are title-cased and passed as `slurmd --conf`. The slurmd image
# (SlinkyProject/containers, schedmd/slurm/26.05/ubuntu26.04 slurmd-entrypoint.sh) appends CoreSpecCount and
# MemSpecLimit computed from the pod's limits. An item with no value such as an empty `Topology=` makes slurmd
# read the next item as its value (slurm-operator#261, containers#20: "Failed to set topology
# 'CoreSpecCount=36'", node DRAIN+INVALID_REG).


@dataclass(frozen=True)
class ExtraConfConfig(RuleConfig):
    forbidden_keys: tuple[str, ...] = knob(
        "forbiddenKeys",
        ("NodeName", "Port", "NodeHostname"),
        STRING_LIST,
        "slurmd --conf keys a NodeSet must not set (slurmd refuses NodeName/Port in --conf; the pod's name is its host).",
    )


_IMAGE_OWNED = {"corespeccount": "CoreSpecCount", "memspeclimit": "MemSpecLimit"}
_LIMIT_REDUCED = {"realmemory": "RealMemory", "cpus": "CPUs"}


def check_nodeset_extra_conf(resource: ResourceView, config: ExtraConfConfig) -> list[str]:
    if not is_slinky(resource, "NodeSet"):
        return []
    extra = resource.spec.get("extraConf")
    res = _slurmd(resource).get("resources")
    if is_unknown(extra) or is_unknown(res) or not isinstance(extra, str) or not extra:
        return []
    name = resource.object_name
    problems: list[str] = []
    if extra != extra.strip() or "  " in extra or "\n" in extra or "\t" in extra:
        problems.append(
            f"NodeSet {name}: extraConf {extra!r} has leading, trailing or repeated whitespace; Slinky 1.2.1 splits it "
            "on single spaces and fails on an empty item."
        )
    limits = get(res, "limits") or {}
    forbidden = {key.lower() for key in config.forbidden_keys}
    for item in extra.split():
        key, sep, value = item.partition("=")
        lowered = key.lower()
        if not sep or not key:
            problems.append(f"NodeSet {name}: extraConf item {item!r} is not Key=Value (Slinky 1.2.1 rejects it).")
        elif not value:
            problems.append(
                f"NodeSet {name}: extraConf item {item!r} has no value; slurmd would read the next item as its value "
                "(an empty Topology= drains the node as INVALID_REG: slurm-operator#261)."
            )
        elif lowered in forbidden:
            problems.append(f"NodeSet {name}: extraConf sets {key}, which a NodeSet must not set in slurmd --conf.")
        elif lowered in _IMAGE_OWNED and ("cpu" in limits or "memory" in limits):
            problems.append(
                f"NodeSet {name}: extraConf sets {_IMAGE_OWNED[lowered]}, but the slurmd image appends its own from the "
                "pod's limits and the last one wins; set reservations through the pod's limits instead."
            )
        elif lowered in _LIMIT_REDUCED and lowered == "realmemory" and "memory" in limits:
            problems.append(
                f"NodeSet {name}: extraConf sets RealMemory while slurmd has a memory limit: the image's MemSpecLimit "
                "(host minus limit) is taken off RealMemory again, so jobs get less than the pod has."
            )
        elif lowered in _LIMIT_REDUCED and lowered == "cpus" and "cpu" in limits:
            problems.append(
                f"NodeSet {name}: extraConf sets CPUs while slurmd has a CPU limit: the image's CoreSpecCount "
                "(host minus limit) is taken off again."
            )
    return problems


NODESET_EXTRA_CONF = ResourceRule(
    "nodeset-extraconf-well-formed",
    "A NodeSet's extraConf is Key=Value items that Slinky 1.2.1 and its slurmd image pass on intact.",
    ExtraConfConfig,
    check_nodeset_extra_conf,
    "Render extraConf from typed config (components/layers/slurm/slurm_conf.py nodeset_extra_conf).",
)


# --- nodeset-slurm-sees-pod-resources --------------------------------------------------------------
#
# The Slinky 1.2.1 operator passes the slurmd container's (else the pod's) CPU and memory limits to the image as
# POD_CPUS/POD_MEMORY; the entrypoint sets CoreSpecCount/MemSpecLimit = host minus those. Without a CPU limit
# POD_CPUS is 0, nothing is reserved, and Slurm schedules every CPU of the host on a pod that requested fewer.


@dataclass(frozen=True)
class PodResourcesConfig(RuleConfig):
    require_cpu_limit_equal_request: bool = knob(
        "requireCpuLimitEqualRequest",
        True,
        {"type": "boolean"},
        "Also require the CPU limit to equal the request (a guaranteed pod that Slurm can fill exactly).",
    )


def _cpus(value: Any) -> float | str:
    """A CPU quantity as a number (`500m` -> 0.5, `8` and 8.0 -> 8.0); unparseable values compare as text."""
    raw = str(value).strip()
    try:
        return float(raw[:-1]) / 1000 if raw.endswith("m") else float(raw)
    except ValueError:
        return raw


def check_nodeset_pod_resources(resource: ResourceView, config: PodResourcesConfig) -> list[str]:
    if not is_slinky(resource, "NodeSet"):
        return []
    res = _slurmd(resource).get("resources")
    if is_unknown(res):
        return []
    name = resource.object_name
    limits = get(res, "limits") or {}
    requests = get(res, "requests") or {}
    problems: list[str] = []
    if "cpu" not in limits:
        problems.append(
            f"NodeSet {name}: slurmd has no CPU limit, so the Slinky image reserves nothing (CoreSpecCount) and Slurm "
            "schedules every CPU of the host, not the pod's."
        )
    elif config.require_cpu_limit_equal_request and "cpu" in requests and _cpus(limits["cpu"]) != _cpus(requests["cpu"]):
        problems.append(
            f"NodeSet {name}: slurmd CPU limit {limits['cpu']} differs from its request {requests['cpu']}: Slurm schedules "
            "the limit while Kubernetes guarantees only the request."
        )
    if "memory" not in limits:
        problems.append(
            f"NodeSet {name}: slurmd has no memory limit, so the Slinky image reserves nothing (MemSpecLimit) and Slurm "
            "hands out the host's memory."
        )
    return problems


NODESET_POD_RESOURCES = ResourceRule(
    "nodeset-slurm-sees-pod-resources",
    "A NodeSet's slurmd has CPU (= request) and memory limits, so Slurm schedules what the pod has.",
    PodResourcesConfig,
    check_nodeset_pod_resources,
    "hpcforge sets limits from the nodeset's cpu/cpuLimit and memory/memoryLimit (components/layers/slurm/layer.py).",
)


# --- nodeset-rdma-complete ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RdmaConfig(RuleConfig):
    resource_prefixes: tuple[str, ...] = knob(
        "resourcePrefixes",
        ("rdma/", "nvidia.com/sriov_"),
        STRING_LIST,
        "Prefixes of the RDMA device-plugin resources (shared device plugin, SR-IOV virtual functions).",
    )


def check_nodeset_rdma(resource: ResourceView, config: RdmaConfig) -> list[str]:
    if not is_slinky(resource, "NodeSet"):
        return []
    slurmd = _slurmd(resource)
    res = slurmd.get("resources")
    template = resource.spec.get("template")
    if is_unknown(res) or is_unknown(template):
        return []
    limits = get(res, "limits") or {}
    rdma = sorted(key for key in limits if isinstance(key, str) and key.startswith(tuple(config.resource_prefixes)))
    networks = get(template, "metadata", "annotations", "k8s.v1.cni.cncf.io/networks")
    if is_unknown(networks):
        return []
    name = resource.object_name
    problems: list[str] = []
    if rdma and not networks:
        problems.append(
            f"NodeSet {name}: slurmd requests {', '.join(rdma)} but attaches no network "
            "(k8s.v1.cni.cncf.io/networks): the RDMA devices would have no addresses to talk over."
        )
    if networks and not rdma:
        problems.append(
            f"NodeSet {name}: attaches {networks} but requests no RDMA device ({', '.join(config.resource_prefixes)}...): the pod gets the "
            "interfaces without the RDMA devices behind them (NCCL falls back to TCP)."
        )
    if rdma:
        added = get(slurmd, "securityContext", "capabilities", "add") or []
        if is_unknown(added):
            return problems
        if "IPC_LOCK" not in added and "CAP_IPC_LOCK" not in added:
            problems.append(f"NodeSet {name}: slurmd uses RDMA but does not add IPC_LOCK (RDMA pins memory).")
    return problems


NODESET_RDMA = ResourceRule(
    "nodeset-rdma-complete",
    "A NodeSet's RDMA devices, network attachments and IPC_LOCK come together.",
    RdmaConfig,
    check_nodeset_rdma,
    "Describe the pool's NICs in hpcforge:rdma: GPU nodesets on it get all three (components/layers/slurm/layer.py).",
)


RULES = (
    NODESET_EXTRA_CONF,
    NODESET_RDMA,
    NODESET_POD_RESOURCES,
    NODESET_GRES,
    PARTITIONS_REFERENCE_NODESETS,
    NODESET_ROLLING_UPDATE,
    NODESET_DISRUPTION,
    LOGINSET_UPDATE,
    ARGOCD_NODESET_CUSTOMIZATION,
)
