"""Tier 4 (real daemons): the largest values hpcforge's config accepts for Slurm are values Slurm
26.05.3 takes. The config refuses one more (tests/components/site/test_config_consumers.py); here the boundary itself
is rendered and loaded into a real slurmctld, and `scontrol show config` reports it in force."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from components.site.loader import load_config
from tests.components.layers.slurm.test_real_slurm import rendered_cluster, require_root, stand_in_nodes
from tests.daemons import slurm
from tests.helpers import config_values, raw_config, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]


def test_boundary_values_load_into_slurmctld(tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    values = config_values("prod")
    controller = values["hpcforge:slurm"]["controller"]
    controller["priority"]["weights"]["qos"] = 4294967293  # SLURM_UINT32_MAX
    controller["timeouts"] = {"inactiveLimit": 65533}  # SLURM_UINT16_MAX, slurm.conf(5)
    controller["scheduler"] = {"parameters": ["bf_continue", "bf_interval=30", "sched_min_interval=2000000"]}
    controller["extraParameters"] = {"MaxJobCount": "20000"}
    config = load_config(raw_config(values))
    with rendered_cluster(config, tmp_path, nodes=stand_in_nodes(config)) as cluster:
        shown = cluster.scontrol("show", "config")
    assert re.search(r"^PriorityWeightQOS\s+= 4294967293$", shown, re.M), shown
    assert re.search(r"^InactiveLimit\s+= 65533 sec$", shown, re.M), shown
    assert re.search(r"^SchedulerParameters\s+= bf_continue,bf_interval=30,sched_min_interval=2000000$", shown, re.M)
    assert re.search(r"^MaxJobCount\s+= 20000$", shown, re.M), shown
