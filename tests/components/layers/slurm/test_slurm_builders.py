"""The Slurm layer's builders extracted from its ComponentResource (components/layers/slurm/objects.py): the
namespaces' traffic rules, the operator chart's values, the RDMA attachments and the NCCL settings of the nodesets,
on the prod stack's config."""

from __future__ import annotations

import json

import pytest

from components.layers.slurm.config import NodeSetConfig
from components.layers.slurm.objects import (
    OPERATOR_NAMESPACE,
    attachment_spec,
    controller_host,
    nccl_config_map_name,
    nccl_files,
    nodeset_fabrics,
    operator_namespace_allows,
    operator_values,
    shared_fabrics,
    slurm_namespace_allows,
)
from components.layers.slurm.slurm_conf import SLURMCTLD_PORT
from components.site.loader import load_config
from components.site.root import PlatformConfig
from tests.helpers import config_values, raw_config


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def _nodeset(cfg: PlatformConfig, name: str) -> NodeSetConfig:
    return next(n for n in cfg.slurm.nodesets if n.name == name)


def test_the_operator_reaches_the_slurm_namespace_and_is_reached_from_it(prod: PlatformConfig) -> None:
    operator = {a.name: a for a in operator_namespace_allows("hpc")}
    assert operator["allow-egress-slurm"].namespaces == ("hpc",)
    assert operator["allow-egress-slurm"].direction == "egress"
    slurm = {a.name: a for a in slurm_namespace_allows(prod.slurm, ())}
    assert slurm["allow-ingress-from-operator"].namespaces == (OPERATOR_NAMESPACE,)
    assert slurm["allow-ingress-from-operator"].direction == "ingress"


def test_the_slurm_namespace_opens_the_database_only_with_accounting(prod: PlatformConfig) -> None:
    names = [a.name for a in slurm_namespace_allows(prod.slurm, ())]
    assert "allow-egress-database" in names
    assert ("allow-ingress-slurmctld", (SLURMCTLD_PORT,)) in [
        (a.name, tuple(p.port for p in a.ports)) for a in slurm_namespace_allows(prod.slurm, ())
    ]
    off = prod.slurm.model_copy(update={"accounting": prod.slurm.accounting.model_copy(update={"enabled": False})})
    assert "allow-egress-database" not in [a.name for a in slurm_namespace_allows(off, ())]


def test_bare_metal_subnets_add_the_slurm_rules_for_their_hosts(prod: PlatformConfig) -> None:
    without = slurm_namespace_allows(prod.slurm, ())
    with_hosts = slurm_namespace_allows(prod.slurm, ("10.80.0.0/16",))
    added = [a for a in with_hosts if a not in without]
    assert added and all(a.cidrs == ("10.80.0.0/16",) for a in added)
    assert with_hosts[: len(without)] == without


def test_operator_values_leave_the_crds_to_their_own_chart() -> None:
    values = operator_values()
    assert values["crds"] == {"enabled": False}
    assert set(values) == {"crds", "operator", "webhook"}


def test_controller_host_is_the_operators_controller_service() -> None:
    assert controller_host("hpc") == "slurm-controller.hpc.svc.cluster.local"


def test_only_shared_mode_fabrics_get_an_attachment_here(prod: PlatformConfig) -> None:
    rdma = prod.rdma
    assert rdma is not None
    shared = shared_fabrics(rdma)
    assert [f.name for f in shared] == ["ib-rail0", "ib-rail1", "ib-rail2", "ib-rail3"]
    assert shared_fabrics(None) == []
    # The attachment of ib-rail1 sits on its NIC's interface, not on another rail's.
    config = json.loads(attachment_spec(rdma, shared[1])["config"])
    assert "ibp60s0" in json.dumps(config)
    assert "ibp26s0" not in json.dumps(config)


def test_gpu_nodesets_attach_their_pools_fabrics_cpu_ones_none(prod: PlatformConfig) -> None:
    rdma = prod.rdma
    h100 = _nodeset(prod, "gpu-h100")
    fabrics = nodeset_fabrics(rdma, h100, "gpu-h100")
    assert list(fabrics) == ["ib-rail0", "ib-rail1", "ib-rail2", "ib-rail3"]
    assert nodeset_fabrics(rdma, _nodeset(prod, "gpu-a100"), "gpu-a100") == {
        "roce-rail0": "nvidia.com/sriov_roce_rail0",
        "roce-rail1": "nvidia.com/sriov_roce_rail1",
    }
    assert nodeset_fabrics(rdma, _nodeset(prod, "cpu"), "gpu-h100") == {}
    assert nodeset_fabrics(None, h100, "gpu-h100") == {}


def test_nccl_files_for_gpu_nodesets_on_rdma_pools(prod: PlatformConfig) -> None:
    h100 = _nodeset(prod, "gpu-h100")
    files = nccl_files(prod.rdma, h100, "gpu-h100")
    assert set(files) == {"nccl.conf", "nccl.env"}
    assert files["nccl.conf"] == files["nccl.env"]
    assert "NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_2,mlx5_3\n" in files["nccl.conf"]
    assert nccl_files(prod.rdma, _nodeset(prod, "cpu"), "gpu-h100") == {}
    assert nccl_files(prod.rdma, h100, "cpu") == {}
    assert nccl_config_map_name(h100) == "slurm-nccl-gpu-h100"
