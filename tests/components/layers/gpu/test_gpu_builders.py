"""components/layers/gpu/objects.py: the parts of the gpu-operator chart's values (its ClusterPolicy) built one by
one: the driver, dcgm-exporter, the MIG manager (GpuOperatorConfig in, dicts out)."""

from __future__ import annotations

from typing import Any

import yaml

from components.layers.gpu.config import GpuOperatorConfig
from components.layers.gpu.objects import (
    MIG_CONFIG_MAP,
    dcgm_exporter_values,
    driver_values,
    gpu_operator_values,
    mig_manager_values,
)
from components.versions import Images


def operator(**values: Any) -> GpuOperatorConfig:
    return GpuOperatorConfig.model_validate(values)


def test_the_driver_is_pinned_unless_a_version_is_configured_and_peermem_needs_a_managed_driver() -> None:
    default = driver_values(operator())
    assert default["enabled"] is False and default["version"] == Images.GPU_DRIVER.tag
    assert driver_values(operator(driver={"managed": True, "version": "580.159.04"}))["version"] == "580.159.04"
    assert "rdma" not in driver_values(operator(), gpudirect_rdma=True)
    assert driver_values(operator(driver={"managed": True}), gpudirect_rdma=True)["rdma"] == {
        "enabled": True,
        "useHostMofed": True,
    }


def test_dcgm_exporter_service_monitor_is_off_when_the_site_scrapes_it() -> None:
    assert dcgm_exporter_values(operator())["serviceMonitor"] == {"enabled": True}
    assert dcgm_exporter_values(operator(), site_scrapes_dcgm=True)["serviceMonitor"] == {"enabled": False}


def test_job_mapping_only_without_mig_and_with_the_exporter() -> None:
    assert dcgm_exporter_values(operator())["hpcJobMapping"]["enabled"] is True
    assert "hpcJobMapping" not in dcgm_exporter_values(operator(migStrategy="single"))
    assert "hpcJobMapping" not in dcgm_exporter_values(operator(hpcJobMapping=False))


def test_the_mig_manager_runs_with_a_strategy_and_ships_layouts_only_when_configured() -> None:
    off = mig_manager_values(operator())
    assert off["enabled"] is False and off["config"]["create"] is False and off["config"]["name"] == ""
    mixed = mig_manager_values(operator(migStrategy="mixed", migProfiles={"gpu-a100": {"1g.10gb": 7}}))
    assert mixed["enabled"] is True and mixed["config"]["name"] == MIG_CONFIG_MAP
    layouts = yaml.safe_load(mixed["config"]["data"]["config.yaml"])["mig-configs"]
    assert layouts["hpcforge-gpu-a100"] == [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]
    assert mig_manager_values(operator(migStrategy="single"))["config"]["create"] is False


def test_the_values_assemble_the_parts() -> None:
    config = operator(driver={"managed": True}, migStrategy="mixed", migProfiles={"gpu-a100": {"1g.10gb": 7}})
    values = gpu_operator_values(config, site_scrapes_dcgm=True, gpudirect_rdma=True)
    assert values["driver"] == driver_values(config, gpudirect_rdma=True)
    assert values["dcgmExporter"] == dcgm_exporter_values(config, site_scrapes_dcgm=True)
    assert values["migManager"] == mig_manager_values(config)
    assert values["mig"] == {"strategy": "mixed"}
