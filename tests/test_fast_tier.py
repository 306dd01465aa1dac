"""`make test-fast` (`pytest -m "not slow"`, the marker set in tests/conftest.py) leaves out exactly what is slow."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import REPO


@pytest.fixture(scope="module")
def fast_ids() -> set[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return {line for line in result.stdout.splitlines() if "::" in line}


def test_the_fast_tier_leaves_out_the_slow_tiers_and_whole_stack_runs(fast_ids: set[str]) -> None:
    files = {test_id.split("::")[0] for test_id in fast_ids}
    for slow_file in (
        "tests/components/layers/slurm/test_real_slurm.py",
        "tests/offline/schema/test_schema.py",
        "tests/offline/policy/test_policy_protocol.py",
        "tests/offline/charts/test_charts_tier.py",
    ):
        assert slow_file not in files
    # run the program: a whole-stack fixture, a CLI subprocess, a stack file variant
    assert "tests/test_program.py::test_resource_tree_is_indented_by_parent" not in fast_ids  # dev_stack
    assert "tests/test_program.py::test_cli_render_prod" not in fast_ids  # _offline(...)
    assert (
        "tests/offline/program/test_recording_cache.py::test_a_changed_stack_file_is_run_again" not in fast_ids
    )  # record_and_store
    assert not any(test_id.startswith("tests/test_fast_tier.py::") for test_id in fast_ids)  # this one: a subprocess


def test_the_fast_tier_keeps_the_unit_tests(fast_ids: set[str]) -> None:
    assert "tests/offline/preview/test_summary.py::test_plurals" in fast_ids
    assert "tests/offline/live/test_live_impact.py::test_jobs_at_risk_on_the_gpu_node_and_their_gpu_hours" in fast_ids
    assert sum(1 for test_id in fast_ids if test_id.startswith("tests/policies/test_policy_rules.py::")) > 50
    assert len(fast_ids) > 1000
