"""The Slurm configuration the Slinky CRs carry: partitions name NodeSets of their Controller
(slurm-partitions-reference-nodesets), a NodeSet's extraConf is well formed (nodeset-extraconf-well-formed).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..access import get, mapping, text
from ..knobs import STRING_LIST, RuleConfig, knob
from ..rule import ResourceRule, StackRule
from ..view import ResourceView, StackView, Violation
from ..wire import is_unknown
from ..workloads import SLINKY_GROUP
from .slinky import is_slinky, parse_conf, slurmd_container


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
    res = slurmd_container(resource).get("resources")
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
