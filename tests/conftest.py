from __future__ import annotations

import inspect
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from offline.program.engine import RecordedStack
from tests.helpers import run_stack

_RECORDINGS: list[tuple[str, str]] = []
"""(environment variable, the temporary folder this run set it to)."""


def pytest_configure(config: pytest.Config) -> None:
    """Recordings that tests make (`offline render`) go to a temporary folder, not the user's .offline/recordings/,
    where the user's next `check` would report reusing them (offline/program/recording.py, ENV_DIR); so do the git bases
    `offline diff` keeps, and the user's own .offline/diff-base/ is not read either (ENV_BASE_DIR)."""
    from offline.program.recording import ENV_BASE_DIR, ENV_DIR

    for variable, prefix in ((ENV_DIR, "hpcforge-test-recordings-"), (ENV_BASE_DIR, "hpcforge-test-diff-base-")):
        if variable not in os.environ:
            folder = tempfile.mkdtemp(prefix=prefix)
            _RECORDINGS.append((variable, folder))
            os.environ[variable] = folder


SLOW_TIERS = ("program", "schema", "real_daemon", "policy_protocol", "charts")
"""Tiers that `make test-fast` leaves out (README, "Tests")."""
STACK_FIXTURES = {"dev_stack", "prod_stack", "any_stack", "dev_preview_stack", "prod_preview_stack"}
"""Fixtures that run the program for a whole stack (10-30 s each on a loaded 2-core machine)."""
SLOW_CALLS = (
    "run_stack(",
    "run_stack_file(",
    "run_program(",
    "record_and_store(",
    "reuse_or_run(",
    "load_edited(",
    "subprocess",
    "_offline(",
    "_hpcforge(",
    "hypothesis",
    "given(",
)
"""Calls that run the program for a stack, start a process or generate many cases: a test whose code, a helper of
its module it calls, or a fixture it uses contains one is slow."""
SLOW_TESTS: dict[str, str] = {
    "test_the_pinned_nic_cluster_policy_crd_has_no_whereabouts_option": "reads every pinned CRD (22 s under load)",
    "test_other_delivery_mode_custom_resources_are_admitted": "runs the program for a stack (through a helper)",
}
"""Tests that take seconds for a reason SLOW_CALLS does not see (measured with --durations), and the reason."""


def _sources(function: object, module: object, depth: int = 2, seen: set[int] | None = None) -> Iterator[str]:
    """The source of `function` and of the functions of `module` it calls by name, `depth` calls deep."""
    seen = set() if seen is None else seen
    function = inspect.unwrap(function)  # type: ignore[arg-type]
    if id(function) in seen or not inspect.isfunction(function):
        return
    seen.add(id(function))
    try:
        yield inspect.getsource(function)
    except (OSError, TypeError):
        return
    if depth:
        for name in function.__code__.co_names:
            called = getattr(module, name, None)
            if inspect.isfunction(called) and called.__module__ == getattr(module, "__name__", None):
                yield from _sources(called, module, depth - 1, seen)


def _is_slow(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(tier) for tier in SLOW_TIERS) or getattr(item, "originalname", item.name) in SLOW_TESTS:
        return True
    names = set(getattr(item, "fixturenames", ()))
    if STACK_FIXTURES & names:
        return True
    module = getattr(item, "module", None)
    functions = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for name in names:
        for definition in info.name2fixturedefs.get(name, ()) if info else ():
            functions.append(definition.func)
    for function in functions:
        if function is not None and any(call in text for text in _sources(function, module) for call in SLOW_CALLS):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `slow` what the fast tier (`make test-fast`: `-m "not slow"`) leaves out: the slow tiers, tests that
    run a whole stack or a process (SLOW_CALLS) and SLOW_TESTS. `make test` (and CI) runs everything."""
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)


def pytest_unconfigure(config: pytest.Config) -> None:
    for variable, folder in _RECORDINGS:
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get(variable) == folder:
            del os.environ[variable]
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
