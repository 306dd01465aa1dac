"""What the scheduled active GPU checks cost (issue 35 item 7): every node of a check's nodesets is held for the
check's reservation, which is its time limit plus 5 minutes (scripts/gpu/active_checks.py: `Duration=<limit + 5>`, and
it waits the limit plus --grace 300 s), whatever the scaling mode of the nodeset (a DaemonSet runs on every node of its
pool) and with the bare-metal hosts that join it. The figures below are computed by hand from Pulumi.prod.yaml."""

from __future__ import annotations

from typing import Any

import pytest

from components.layers.slurm.active_checks import RESERVATION_MARGIN_MINUTES, weekly_gpu_hours
from components.site.loader import ConfigError, load_config
from components.site.placement import nodeset_nodes
from offline.preview.summary import active_check_costs
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config


def _prod(mutate: Any = None) -> Any:
    values = config_values("prod")
    if mutate is not None:
        mutate(values)
    return load_config(raw_config(values))


def test_prods_checks_cost_what_their_reservations_hold() -> None:
    config = _prod()
    # dcgm: Sunday 03:00, gpu-a100 (8 nodes) + gpu-h100 (4 nodes) x 8 GPUs = 96 GPUs, 20 + 5 min: 96 x 25 / 60 = 40.0
    # nccl: Sunday 04:00, gpu-h100 4 x 8 = 32 GPUs, 15 + 5 min: 32 x 20 / 60 = 10.67
    # ib:   daily 02:30, 32 GPUs, 5 + 5 min (the margin doubles it): 7 x 32 x 10 / 60 = 37.33
    assert weekly_gpu_hours(config.slurm, config.gpu.active_checks, nodeset_nodes(config)) == {
        "dcgm": 40.0,
        "nccl": 10.7,
        "ib": 37.3,
    }
    assert RESERVATION_MARGIN_MINUTES == 5


def test_a_daemonset_nodeset_is_costed_at_every_node_of_its_pool() -> None:
    def daemonset(values: dict[str, Any]) -> None:
        nodeset = next(ns for ns in values["hpcforge:slurm"]["nodesets"] if ns["name"] == "gpu-a100")
        nodeset["scalingMode"] = "DaemonSet"
        nodeset["gpus"]["autodetect"] = "nvidia"

    config = _prod(daemonset)
    assert nodeset_nodes(config)["gpu-a100"] == 8  # the gpu-a100 pool's nodes
    # The dcgm check covers gpu-a100: still 96 GPUs x 25 min, not 32 (main before issue 35 costed a DaemonSet at 0).
    assert weekly_gpu_hours(config.slurm, config.gpu.active_checks, nodeset_nodes(config))["dcgm"] == 40.0


def test_preview_prints_the_weekly_cost_of_prods_checks(prod_stack: RecordedStack) -> None:
    line = active_check_costs(prod_stack)
    assert line == (
        "Scheduled GPU checks (3 CronJobs) hold up to 88.0 GPU-hours a week away from jobs: "
        "gpu-check-dcgm 40.0, gpu-check-ib 37.3, gpu-check-nccl 10.7"
    )


@pytest.mark.parametrize("minutes", [1, 30, 1440])
def test_every_check_is_charged_its_limit_plus_the_margin(minutes: int) -> None:
    def limit(values: dict[str, Any]) -> None:
        values["hpcforge:gpu"]["activeChecks"][1]["timeLimitMinutes"] = minutes

    config = _prod(limit)
    hours = weekly_gpu_hours(config.slurm, config.gpu.active_checks, nodeset_nodes(config))["nccl"]
    assert hours == round(32 * (minutes + 5) / 60, 1)


def test_a_checked_daemonset_nodeset_without_a_pool_is_refused() -> None:
    def poolless(values: dict[str, Any]) -> None:
        nodeset = next(ns for ns in values["hpcforge:slurm"]["nodesets"] if ns["name"] == "gpu-a100")
        nodeset.update(scalingMode="DaemonSet", nodeSelector={"hpcforge.io/pool": "gpu-a100"})
        nodeset["gpus"]["autodetect"] = "nvidia"
        del nodeset["pool"]

    with pytest.raises(ConfigError) as error:
        _prod(poolless)
    assert (
        "hpcforge:gpu.activeChecks[0].nodesets[0]: nodeset 'gpu-a100' is a DaemonSet without a node pool: the nodes the "
        "check holds, and what it costs, are not known; give the nodeset its pool"
    ) in str(error.value)
