"""The Slurm layer's builders extracted from its ComponentResource (components/layers/slurm/objects.py): the
namespaces' traffic rules, the operator chart's values, the RDMA attachments and the NCCL settings of the nodesets,
on the prod stack's config."""

from __future__ import annotations

import json

import pytest

from components.layers.slurm.config import NodeSetConfig
from components.layers.slurm.nccl import attachment_spec, nccl_config_map_name, nccl_files, nodeset_fabrics, shared_fabrics
from components.layers.slurm.objects import (
    OPERATOR_NAMESPACE,
    controller_host,
    operator_namespace_allows,
    operator_values,
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


def test_the_operator_reaches_slurmrestd_and_slurmctld_only(prod: PlatformConfig) -> None:
    operator = {a.name: a for a in operator_namespace_allows("hpc")}
    egress = operator["allow-egress-slurm"].to_spec()["egress"][0]
    assert {p["port"] for p in egress["ports"]} == {SLURMCTLD_PORT, 6820}
    assert [peer["podSelector"]["matchLabels"]["app.kubernetes.io/name"] for peer in egress["to"]] == ["slurmrestd", "slurmctld"]
    slurm = {a.name: a for a in slurm_namespace_allows(prod.slurm, (), site_ranges=("10.10.0.0/16",))}
    restd = slurm["allow-ingress-slurmrestd"]
    assert (restd.namespaces, restd.pod_labels) == ((OPERATOR_NAMESPACE,), {"app.kubernetes.io/name": "slurmrestd"})
    assert "allow-ingress-from-operator" not in slurm


def test_the_slurm_namespace_opens_the_database_only_with_accounting_and_only_to_slurmdbd(prod: PlatformConfig) -> None:
    allows = {a.name: a for a in slurm_namespace_allows(prod.slurm, (), site_ranges=("10.10.0.0/16",))}
    assert allows["allow-egress-database"].pod_labels == {"app.kubernetes.io/name": "slurmdbd"}
    assert allows["allow-ingress-slurmctld"].ports[0].port == SLURMCTLD_PORT
    off = prod.slurm.model_copy(update={"accounting": prod.slurm.accounting.model_copy(update={"enabled": False})})
    names = [a.name for a in slurm_namespace_allows(off, (), site_ranges=("10.10.0.0/16",))]
    assert "allow-egress-database" not in names and "allow-ingress-slurmdbd" not in names


def test_bare_metal_subnets_add_the_slurm_rules_for_their_hosts(prod: PlatformConfig) -> None:
    without = slurm_namespace_allows(prod.slurm, (), site_ranges=("10.10.0.0/16",))
    with_hosts = slurm_namespace_allows(prod.slurm, ("10.80.0.0/16",), site_ranges=("10.10.0.0/16",))
    added = [a for a in with_hosts if a.name not in {b.name for b in without}]
    assert added and all(a.cidrs == ("10.80.0.0/16",) for a in added)
    # slurmctld's address takes the hosts' subnets instead of the site's ranges
    ctld = {a.name: a for a in with_hosts}["allow-ingress-slurmctld"]
    assert ctld.cidrs == ("10.80.0.0/16",)
    assert {a.name: a for a in without}["allow-ingress-slurmctld"].cidrs == ("10.10.0.0/16",)


def test_a_public_login_says_so_and_takes_every_address(prod: PlatformConfig) -> None:
    public = prod.slurm.login.model_copy(update={"exposure": prod.slurm.login.exposure.model_copy(update={"public": True})})
    cfg = prod.slurm.model_copy(update={"login": public})
    ssh = {a.name: a for a in slurm_namespace_allows(cfg, (), site_ranges=("10.10.0.0/16",))}["allow-ingress-ssh"]
    assert ssh.cidrs == ("0.0.0.0/0",)
    assert ssh.pod_labels == {"app.kubernetes.io/name": "login", "app.kubernetes.io/instance": "login"}


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
