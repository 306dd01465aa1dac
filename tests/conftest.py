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
