from __future__ import annotations

import pytest

from offline.engine import RecordedStack

from .helpers import run_stack


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
