"""Contract rules for the Slinky 1.2.1 pitfalls and for Slurm seeing what the pod has (issue 17).

Upstream references (read at the pinned versions, see the rules' comments): SlinkyProject/slurm-operator
v1.2.1 `slurmdConfArgs`, the slurmd image entrypoint of SlinkyProject/containers 26.05-ubuntu26.04,
slurm-operator#261 / containers#20 (empty `Topology=`), slurm-operator PR #191 (GRES missing at first
registration).
"""

from __future__ import annotations

import copy
from typing import Any

from components.versions import SLINKY_TAG, Charts
from policies.rules import slurm
from tests.policies.test_policy_rules import nodeset


def _with(resource: Any, **slurmd: Any) -> Any:
    changed = copy.deepcopy(resource)
    changed.spec["slurmd"].update(slurmd)
    return changed


def limited(extra_conf: str | None = "Gres=gpu:a100:8", gpus: int | None = 8) -> Any:
    base = nodeset(extra_conf=extra_conf, gpus=gpus)
    resources = copy.deepcopy(base.spec["slurmd"]["resources"])
    resources["limits"]["cpu"] = "120"
    return _with(base, resources=resources)


def test_pins_that_the_workarounds_were_read_against() -> None:
    # Bumping either means re-reading the upstream code: slurm-operator after v1.2.1 (main, commit ea173147)
    # always emits `Topology='"$SLINKY_TOPOLOGY"'` in --conf, which is empty without a topology (#261).
    assert Charts.SLURM_OPERATOR.version == "1.2.1" and SLINKY_TAG == "26.05-ubuntu26.04"


def test_empty_topology_is_caught_slurm_operator_261() -> None:
    problems = slurm.NODESET_EXTRA_CONF(limited("Gres=gpu:a100:8 Topology="))
    assert len(problems) == 1 and "slurm-operator#261" in problems[0] and "'Topology='" in problems[0]


def test_extra_conf_items_must_survive_slinky_splitting() -> None:
    rule = slurm.NODESET_EXTRA_CONF
    assert rule(limited()) == []
    assert "repeated whitespace" in rule(limited("Gres=gpu:a100:8  Weight=10"))[0]
    assert "is not Key=Value" in rule(limited("Gres=gpu:a100:8 avx512"))[0]
    assert "must not set" in rule(limited("Gres=gpu:a100:8 Port=6818"))[0]


def test_keys_the_image_computes_from_limits_are_refused() -> None:
    rule = slurm.NODESET_EXTRA_CONF
    assert "the last one wins" in rule(limited("Gres=gpu:a100:8 CoreSpecCount=2"))[0]
    assert "taken off RealMemory again" in rule(limited("Gres=gpu:a100:8 RealMemory=983040"))[0]
    assert "CoreSpecCount" in rule(limited("Gres=gpu:a100:8 CPUs=120"))[0]


def test_gpu_nodeset_without_gres_in_conf_is_caught_slurm_operator_pr_191() -> None:
    # Without Gres= in --conf a GPU node registers Gres=(null) (PR #191, not merged in 1.2.1).
    problems = slurm.NODESET_GRES(limited(extra_conf="Weight=1"))
    assert len(problems) == 1 and "no gpu GRES" in problems[0]


def test_mig_devices_count_as_gpus_for_the_gres_rule() -> None:
    base = limited(extra_conf="Gres=gpu:1g.10gb:7", gpus=None)
    resources = copy.deepcopy(base.spec["slurmd"]["resources"])
    resources["limits"]["nvidia.com/mig-1g.10gb"] = 7
    assert slurm.NODESET_GRES(_with(base, resources=resources)) == []
    resources["limits"]["nvidia.com/mig-1g.10gb"] = 14
    assert "gets 14" in slurm.NODESET_GRES(_with(base, resources=resources))[0]


def test_slurmd_without_cpu_limit_is_caught() -> None:
    rule = slurm.NODESET_POD_RESOURCES
    problems = rule(nodeset())  # the helper's slurmd: memory limit only
    assert len(problems) == 1 and "no CPU limit" in problems[0]
    assert rule(limited()) == []
    base = limited()
    resources = copy.deepcopy(base.spec["slurmd"]["resources"])
    resources["limits"]["cpu"] = "128"
    assert "differs from its request 120" in rule(_with(base, resources=resources))[0]
    resources["limits"]["cpu"], resources["requests"]["cpu"] = 120.0, "120000m"  # the same quantity, written otherwise
    assert rule(_with(base, resources=resources)) == []


def test_rdma_nodeset_needs_attachments_and_ipc_lock() -> None:
    rule = slurm.NODESET_RDMA
    base = limited()
    base.spec["slurmd"]["resources"]["limits"]["rdma/ib_rail0"] = 1
    base.spec["template"]["metadata"] = {"annotations": {"k8s.v1.cni.cncf.io/networks": "slurm/ib-rail0"}}
    assert rule(base) == ["NodeSet gpu-a100: slurmd uses RDMA but does not add IPC_LOCK (RDMA pins memory)."]
    base.spec["slurmd"]["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    assert rule(base) == []
    del base.spec["slurmd"]["resources"]["limits"]["rdma/ib_rail0"]
    assert "requests no RDMA device (rdma/, nvidia.com/sriov_...)" in rule(base)[0]
    base.spec["slurmd"]["resources"]["limits"]["nvidia.com/sriov_roce_rail0"] = 1  # an SR-IOV virtual function
    assert rule(base) == []
