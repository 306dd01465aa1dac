"""components/site/placement.py: where each nodeset and login pool runs, resolved from the node pools of the
prod stack (nodesets cpu, gpu-a100, gpu-h100 on pools of those names, cpu-bm on none; login-gpu on its pool)."""

from __future__ import annotations

import pytest

from components.site.loader import load_config
from components.site.placement import login_node_selectors, login_pool_taints, node_selectors, nodeset_pool_taints, nodeset_pools
from components.site.root import PlatformConfig
from tests.helpers import config_values, raw_config


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def test_a_nodeset_runs_on_its_pool_and_tolerates_its_taints(prod: PlatformConfig) -> None:
    assert nodeset_pools(prod) == {"cpu": "cpu", "gpu-a100": "gpu-a100", "gpu-h100": "gpu-h100"}
    assert node_selectors(prod)["gpu-h100"] == {"hpcforge.io/pool": "gpu-h100"}
    assert nodeset_pool_taints(prod) == {"cpu": (), "gpu-a100": ("nvidia.com/gpu",), "gpu-h100": ("nvidia.com/gpu",)}


def test_a_nodeset_without_a_pool_has_only_its_own_selector(prod: PlatformConfig) -> None:
    assert node_selectors(prod)["cpu-bm"] == {}
    assert "cpu-bm" not in nodeset_pool_taints(prod)
    nodesets = tuple(
        ns.model_copy(update={"node_selector": {"site.example/rack": "r1"}}) if ns.name == "cpu-bm" else ns
        for ns in prod.slurm.nodesets
    )
    edited = prod.model_copy(update={"slurm": prod.slurm.model_copy(update={"nodesets": nodesets})})
    assert node_selectors(edited)["cpu-bm"] == {"site.example/rack": "r1"}


def test_a_nodeset_selector_adds_to_its_pool_labels(prod: PlatformConfig) -> None:
    nodesets = tuple(
        ns.model_copy(update={"node_selector": {"site.example/rack": "r1"}}) if ns.name == "cpu" else ns
        for ns in prod.slurm.nodesets
    )
    edited = prod.model_copy(update={"slurm": prod.slurm.model_copy(update={"nodesets": nodesets})})
    assert node_selectors(edited)["cpu"] == {"hpcforge.io/pool": "cpu", "site.example/rack": "r1"}


def test_only_login_pools_on_a_node_pool_get_its_labels_and_taints(prod: PlatformConfig) -> None:
    assert login_node_selectors(prod) == {"login-gpu": {"hpcforge.io/pool": "login-gpu"}}
    assert login_pool_taints(prod) == {"login-gpu": ("nvidia.com/gpu",)}
