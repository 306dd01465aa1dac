from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from offline.engine import RecordedStack

from .helpers import run_stack

_RECORDINGS: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """Recordings that tests make (`offline render`) go to a temporary folder, not the user's .offline/recordings/,
    where the user's next `check` would report reusing them (offline/recording.py, ENV_DIR)."""
    from offline.recording import ENV_DIR

    if ENV_DIR not in os.environ:
        folder = tempfile.mkdtemp(prefix="hpcforge-test-recordings-")
        _RECORDINGS.append(folder)
        os.environ[ENV_DIR] = folder


SLOW_TIERS = ("program", "schema", "real_daemon", "policy_protocol", "charts")
"""Tiers that `make test-fast` leaves out (README, "Test tiers")."""
STACK_FIXTURES = {"dev_stack", "prod_stack", "any_stack", "dev_preview_stack", "prod_preview_stack"}
"""Fixtures that run the program for a whole stack (10-30 s each on a loaded 2-core machine)."""
SLOW_MODULES: dict[str, str] = {}
"""Modules whose tests each take seconds for another reason (measured with --durations), and the reason."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `slow` what the fast tier (`make test-fast`: `-m "not slow"`) leaves out: the slow tiers, tests that
    run a whole stack, and SLOW_MODULES. The full suite (`make test`, CI) runs everything, marked or not."""
    for item in items:
        module = item.path.name
        if (
            any(item.get_closest_marker(tier) for tier in SLOW_TIERS)
            or STACK_FIXTURES.intersection(getattr(item, "fixturenames", ()))
            or module in SLOW_MODULES
        ):
            item.add_marker(pytest.mark.slow)


def pytest_unconfigure(config: pytest.Config) -> None:
    from offline.recording import ENV_DIR

    for folder in _RECORDINGS:
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get(ENV_DIR) == folder:
            del os.environ[ENV_DIR]
    _RECORDINGS.clear()


@pytest.fixture(scope="session")
def dev_stack() -> RecordedStack:
    return run_stack("dev")


@pytest.fixture(scope="session")
def prod_stack() -> RecordedStack:
    return run_stack("prod")


@pytest.fixture(scope="session")
def dev_preview_stack() -> RecordedStack:
    """dev as `pulumi preview` of a new stack sees it: computed outputs unknown."""
    return run_stack("dev", preview=True)


@pytest.fixture(scope="session")
def prod_preview_stack() -> RecordedStack:
    """prod as `pulumi preview` of a new stack sees it: computed outputs unknown."""
    return run_stack("prod", preview=True)


@pytest.fixture(scope="session", params=["dev", "prod"])
def any_stack(request: pytest.FixtureRequest, dev_stack: RecordedStack, prod_stack: RecordedStack) -> RecordedStack:
    return dev_stack if request.param == "dev" else prod_stack
