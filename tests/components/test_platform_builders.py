"""What the Platform gives its layers, resolved from the config (components/site/model.py, placement.py and
checks/gpu.py) rather than in Platform.__init__: host names, the active optional layers, the bare-metal subnets
and DNS records, the node-pool maps of the RDMA layer and the GPU views (prod and dev stacks, edited copies)."""

from __future__ import annotations

from typing import Any

import pytest

from components.site.checks.gpu import dcgm_scraped, gpus_in_nvml_order
from components.site.loader import load_config
from components.site.placement import pool_labels, pool_taints
from components.site.root import PlatformConfig
from tests.helpers import config_values, raw_config


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


@pytest.fixture(scope="module")
def dev() -> PlatformConfig:
    return load_config(raw_config(config_values("dev")))


def _with(config: PlatformConfig, **update: Any) -> PlatformConfig:
    return config.model_copy(update=update)


def test_argocd_defaults_to_the_site_domain_unless_named(prod: PlatformConfig) -> None:
    assert prod.argocd_hostname == f"argocd.{prod.domain}"
    argocd = prod.gitops.argocd.model_copy(update={"hostname": "cd.example.org"})
    named = _with(prod, gitops=prod.gitops.model_copy(update={"argocd": argocd}))
    assert named.argocd_hostname == "cd.example.org"


def test_the_directory_has_a_host_name_only_when_exposed(prod: PlatformConfig, dev: PlatformConfig) -> None:
    assert prod.directory.expose and prod.directory_hostname == f"ldap.{prod.domain}"
    assert not dev.directory.expose and dev.directory_hostname is None


def test_switched_off_layers_are_not_active(prod: PlatformConfig) -> None:
    assert prod.active_rdma is prod.rdma and prod.active_provisioning is prod.provisioning and prod.monitored
    assert prod.rdma is not None and prod.provisioning is not None and prod.observability is not None
    off = _with(
        prod,
        rdma=prod.rdma.model_copy(update={"enabled": False}),
        provisioning=prod.provisioning.model_copy(update={"enabled": False}),
        observability=prod.observability.model_copy(update={"enabled": False}),
    )
    assert off.active_rdma is None and off.active_provisioning is None and not off.monitored
    assert _with(prod, rdma=None, provisioning=None, observability=None).active_rdma is None


def test_bare_metal_subnets_are_the_provisioning_subnet_then_the_routed_ones(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    assert prod.bare_metal_subnets() == [prod.provisioning.subnet, *(extra.subnet for extra in prod.provisioning.subnets)]
    assert len(prod.bare_metal_subnets()) == 2
    assert _with(prod, provisioning=prod.provisioning.model_copy(update={"enabled": False})).bare_metal_subnets() == []


def test_dns_records_name_grendel_every_host_and_each_bmc(prod: PlatformConfig, dev: PlatformConfig) -> None:
    assert prod.provisioning is not None
    records = prod.dns_records()
    assert list(records) == [prod.domain]
    zone = records[prod.domain]
    assert zone["grendel"] == prod.provisioning.grendel_ip
    host = prod.provisioning.hosts[0]
    assert host.bmc is not None
    assert zone[host.name] == host.ip and zone[f"{host.name}-bmc"] == host.bmc.ip
    with_bmc = sum(1 for h in prod.provisioning.hosts if h.bmc is not None)
    assert len(zone) == 1 + len(prod.provisioning.hosts) + with_bmc
    # dev's hosts have no BMC: no -bmc record
    assert not any(name.endswith("-bmc") for name in dev.dns_records()[dev.domain])


def test_no_dns_records_without_active_provisioning_or_hosts(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    assert _with(prod, provisioning=None).dns_records() == {}
    assert _with(prod, provisioning=prod.provisioning.model_copy(update={"enabled": False})).dns_records() == {}
    assert _with(prod, provisioning=prod.provisioning.model_copy(update={"hosts": ()})).dns_records() == {}


def test_pool_maps_cover_every_node_pool(prod: PlatformConfig) -> None:
    names = [pool.name for pool in prod.node_pools]
    assert list(pool_labels(prod)) == names and list(pool_taints(prod)) == names
    assert pool_labels(prod)["gpu-h100"] == {"hpcforge.io/pool": "gpu-h100"}
    assert pool_taints(prod)["gpu-h100"] == ("nvidia.com/gpu",) and pool_taints(prod)["cpu"] == ()
    assert pool_labels(_with(prod, node_pools=())) == {}


def test_dcgm_is_scraped_only_with_monitoring_the_operator_and_its_exporter(prod: PlatformConfig, dev: PlatformConfig) -> None:
    assert dcgm_scraped(prod) and not dcgm_scraped(dev)
    assert prod.observability is not None
    assert not dcgm_scraped(_with(prod, observability=prod.observability.model_copy(update={"enabled": False})))
    operator = prod.gpu.operator.model_copy(update={"dcgm_exporter": False})
    assert not dcgm_scraped(_with(prod, gpu=prod.gpu.model_copy(update={"operator": operator})))
    off = prod.gpu.operator.model_copy(update={"enabled": False})
    assert not dcgm_scraped(_with(prod, gpu=prod.gpu.model_copy(update={"operator": off})))


def test_nvml_order_needs_every_gpu_nodeset_on_nvml(prod: PlatformConfig, dev: PlatformConfig) -> None:
    gpu_sets = [ns for ns in prod.slurm.nodesets if ns.gpus is not None]
    assert gpu_sets and not gpus_in_nvml_order(prod)
    nodesets = tuple(
        ns.model_copy(update={"gpus": ns.gpus.model_copy(update={"autodetect": "nvml"})}) if ns.gpus is not None else ns
        for ns in prod.slurm.nodesets
    )
    assert gpus_in_nvml_order(_with(prod, slurm=prod.slurm.model_copy(update={"nodesets": nodesets})))
    # no GPU nodeset at all: nothing is out of NVML order
    assert not any(ns.gpus for ns in dev.slurm.nodesets) and gpus_in_nvml_order(dev)
