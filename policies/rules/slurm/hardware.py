"""Slurm's view of a NodeSet's hardware against Kubernetes': GRES against the slurmd container's GPUs
(nodeset-gres-matches-gpus), CPU and memory limits Slurm sees (nodeset-slurm-sees-pod-resources), RDMA
devices with their networks and memory locking (nodeset-rdma-complete).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..access import as_int, get
from ..knobs import STRING_LIST, RuleConfig, knob
from ..rule import ResourceRule
from ..view import ResourceView
from ..wire import is_unknown
from .slinky import is_slinky, parse_conf, slurmd_container

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


@dataclass(frozen=True)
class GresConfig(RuleConfig):
    gres_name: str = knob("gresName", "gpu", {"type": "string"}, "The GRES name that counts GPUs.")
    resource_name: str = knob(
        "resourceName", "nvidia.com/gpu", {"type": "string"}, "The device-plugin resource that counts GPUs."
    )


def check_nodeset_gres(resource: ResourceView, config: GresConfig) -> list[str]:
    if not is_slinky(resource, "NodeSet"):
        return []
    extra = resource.spec.get("extraConf")
    slurmd = slurmd_container(resource)
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
    res = slurmd_container(resource).get("resources")
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
    "hpcforge sets limits from the nodeset's cpu/cpuLimit and memory/memoryLimit (components/layers/slurm/objects.py).",
)


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
    slurmd = slurmd_container(resource)
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
    "Describe the pool's NICs in hpcforge:rdma: GPU nodesets on it get all three (components/layers/slurm/objects.py).",
)
