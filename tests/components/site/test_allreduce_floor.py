"""An all-reduce floor must be reachable (issue 35 item 8): without SHARP, the bus bandwidth of an all-reduce across
nodes cannot exceed a node's NIC bandwidth, the sum of the declared rails (`rdma.pools[].nics[].rateGbps`). Prod's
H100 nodes have 4 x 400 Gb/s = 200 GB/s; main's prod asked for 300 GB/s (checks and evidence), which always fails."""

from __future__ import annotations

from typing import Any

import pytest

from components.site.loader import ConfigError, load_config
from tests.helpers import config_values, raw_config


def _prod(mutate: Any) -> Any:
    values = config_values("prod")
    mutate(values)
    return load_config(raw_config(values))


def _nccl(values: dict[str, Any]) -> dict[str, Any]:
    check: dict[str, Any] = next(c for c in values["hpcforge:gpu"]["activeChecks"] if c["kind"] == "nccl-allreduce")
    return check


def _h100_nics(values: dict[str, Any]) -> list[dict[str, Any]]:
    nics: list[dict[str, Any]] = next(p for p in values["hpcforge:rdma"]["pools"] if p["pool"] == "gpu-h100")["nics"]
    return nics


def test_prods_floors_are_below_its_h100_nodes_nic_bandwidth() -> None:
    config = load_config(raw_config(config_values("prod")))
    ceiling = config.rdma.pool_nics("gpu-h100").bandwidth_gbytes
    assert ceiling == 200.0  # 4 x 400 Gb/s
    nccl = next(c for c in config.gpu.active_checks if c.kind == "nccl-allreduce")
    assert nccl.min_bus_bandwidth <= ceiling and config.gpu.evidence.min_bus_bandwidth <= ceiling


def test_the_floor_main_had_is_refused_naming_the_key_and_the_ceiling() -> None:
    with pytest.raises(ConfigError) as error:
        _prod(lambda v: _nccl(v).update(minBusBandwidth=300))
    assert (
        "hpcforge:gpu.activeChecks[1].minBusBandwidth: 300 GB/s cannot be reached across nodes of nodeset 'gpu-h100': "
        "without SHARP an all-reduce's bus bandwidth is at most a node's NIC bandwidth, (400 + 400 + 400 + 400) Gb/s = "
        "200 GB/s (rdma.pools[].nics[].rateGbps of pool 'gpu-h100'); set at most 200"
    ) in str(error.value)


def test_the_evidence_floor_is_held_to_the_same_ceiling() -> None:
    with pytest.raises(ConfigError) as error:
        _prod(lambda v: v["hpcforge:gpu"]["evidence"].update(minBusBandwidth=300))
    assert "hpcforge:gpu.evidence.minBusBandwidth: 300 GB/s cannot be reached" in str(error.value)


def test_the_ceiling_itself_is_accepted() -> None:
    assert _prod(lambda v: _nccl(v).update(minBusBandwidth=200)).gpu.active_checks[1].min_bus_bandwidth == 200


def test_a_check_on_rails_without_declared_rates_is_refused() -> None:
    def unrated(values: dict[str, Any]) -> None:
        del _h100_nics(values)[2]["rateGbps"]

    with pytest.raises(ConfigError) as error:
        _prod(unrated)
    assert (
        "hpcforge:gpu.activeChecks[1].minBusBandwidth: the all-reduce across nodes of nodeset 'gpu-h100' cannot be "
        "bounded: declare the link rate of every RDMA port of pool 'gpu-h100' (rdma.pools[].nics[].rateGbps)"
    ) in str(error.value)


def test_faster_rails_raise_the_ceiling() -> None:
    def ndr800(values: dict[str, Any]) -> None:
        for nic in _h100_nics(values):
            nic["rateGbps"] = 800
        _nccl(values).update(minBusBandwidth=300)

    assert _prod(ndr800).gpu.active_checks[1].min_bus_bandwidth == 300
