"""Where each active check's tools live, as prod renders it (issue 35 items 4 and 5).

- ib-link reads the ports of the RDMA devices its nodeset's pool declares (`rdma.pools[].nics[].hca`) from sysfs in the
  slurmd pod (no image: the slurmd images install no infiniband-diags, SlinkyProject/containers at SLINKY_TAG): the
  driver hands each job its nodeset's devices (ACTIVE_CHECK_HCAS), and no other device a privileged pod sees.
- dcgm-diag runs dcgmi from the DCGM image through Pyxis against the node's own host engine: GPU Operator v26.7.0's
  Service nvidia-dcgm (internalTrafficPolicy Local, in the pod network) in the operator's namespace, which the Slurm
  namespace may reach on 5555 and which lets the Slurm namespace in (NetworkPolicies); the batch script, in the slurmd
  pod, judges and records (the DCGM image has no scontrol).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.layers.gpu.face import DCGM_HOSTENGINE
from components.layers.slurm.active_checks import ACTIVE_CHECKS_MAP
from components.site.loader import ConfigError, load_config
from components.versions import Images
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config
from tests.test_layers import one


def _checks(prod_stack: RecordedStack) -> dict[str, dict[str, Any]]:
    data = one(prod_stack, "ConfigMap", "slurm", ACTIVE_CHECKS_MAP)["data"]
    return {c["name"]: c for c in json.loads(data["checks.json"])["checks"]}


def test_the_link_check_gets_its_pools_devices_and_no_image(prod_stack: RecordedStack) -> None:
    ib = _checks(prod_stack)["ib"]
    assert ib["hcas"] == {"gpu-h100": ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]}
    assert ib["env"]["IMAGE"] == ""  # the slurmd pod itself: sysfs needs no tool


def test_the_dcgm_check_asks_the_nodes_host_engine_from_the_dcgm_image(prod_stack: RecordedStack) -> None:
    dcgm = _checks(prod_stack)["dcgm"]
    assert dcgm["env"]["DCGM_HOST"] == DCGM_HOSTENGINE == "nvidia-dcgm.gpu-operator.svc"
    assert dcgm["env"]["IMAGE"] == Images.DCGM.ref


def _policy(stack: RecordedStack, namespace: str, name: str) -> dict[str, Any]:
    return one(stack, "NetworkPolicy", namespace, name)["spec"]


def test_the_slurm_namespace_reaches_the_host_engine_and_only_it(prod_stack: RecordedStack) -> None:
    egress = _policy(prod_stack, "slurm", "allow-egress-dcgm-hostengine")
    assert egress["policyTypes"] == ["Egress"]
    assert egress["egress"] == [
        {
            "to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gpu-operator"}}}],
            "ports": [{"port": 5555, "protocol": "TCP"}],
        }
    ]
    ingress = _policy(prod_stack, "gpu-operator", "allow-ingress-dcgm-hostengine")
    assert ingress["podSelector"] == {"matchLabels": {"app": "nvidia-dcgm"}}
    assert ingress["ingress"] == [
        {
            "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "slurm"}}}],
            "ports": [{"port": 5555, "protocol": "TCP"}],
        }
    ]


def _prod(mutate: Any) -> Any:
    values = config_values("prod")
    mutate(values)
    return load_config(raw_config(values))


def _h100_nics(values: dict[str, Any]) -> list[dict[str, Any]]:
    nics: list[dict[str, Any]] = next(p for p in values["hpcforge:rdma"]["pools"] if p["pool"] == "gpu-h100")["nics"]
    return nics


def _bare_metal_only(values: dict[str, Any], name: str) -> None:
    nodeset = next(n for n in values["hpcforge:slurm"]["nodesets"] if n["name"] == name)
    nodeset.update(replicas=0)
    nodeset.pop("pool", None)
    nodeset["gpus"] = {"type": nodeset["gpus"]["type"], "count": nodeset["gpus"]["count"], "autodetect": "nvidia"}


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda v: _h100_nics(v)[1].pop("hca"),
            "hpcforge:gpu.activeChecks[2].nodesets: ib-link judges the RDMA devices of pool 'gpu-h100' (nodeset "
            "'gpu-h100'): name every NIC's device there (rdma.pools[].nics[].hca, e.g. mlx5_0)",
        ),
        (
            lambda v: _bare_metal_only(v, "gpu-h100"),
            "hpcforge:gpu.activeChecks[2].nodesets: ib-link judges the RDMA devices a nodeset's pool declares "
            "(rdma.pools[].nics[].hca), and nodeset 'gpu-h100' has no pool (its nodes are bare-metal hosts only): "
            "leave it out of this check",
        ),
        (
            lambda v: v["hpcforge:gpu"]["activeChecks"][2].update(minRateGbps=800),
            "hpcforge:gpu.activeChecks[2].minRateGbps: 800 Gb/s is above the declared rate of mlx5_0 (400 Gb/s, "
            "rdma.pools[].nics[].rateGbps of pool 'gpu-h100'): every run would fail it",
        ),
        (
            lambda v: v["hpcforge:gpu"].setdefault("operator", {}).update(dcgm=False),
            "hpcforge:gpu.activeChecks[0].kind: dcgm-diag asks the node's DCGM host engine, which the GPU Operator "
            "runs: set gpu.operator.dcgm",
        ),
    ],
)
def test_a_check_without_what_it_reads_is_refused(mutate: Any, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        _prod(mutate)
    assert message in str(error.value)
