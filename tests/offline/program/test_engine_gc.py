"""The program switches Python's garbage collector off for its own process (__main__.py, for speed at
large sites); the offline engine runs it inside its caller's process and must hand the collector back
as it found it, or every later test in the session would run without one."""

from __future__ import annotations

import gc
from typing import Any

from tests.helpers import run_stack


def test_program_run_leaves_the_callers_collector_settings_unchanged() -> None:
    before = gc.get_threshold()
    gc.enable()
    gc.set_threshold(700, 10, 10)
    try:
        run_stack("dev")
        assert gc.isenabled()
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_program_runs_with_the_collector_off() -> None:
    seen: list[bool] = []
    from components import platform

    original = platform.Platform.__init__

    def spy(self: platform.Platform, *args: Any, **kwargs: Any) -> None:
        seen.append(gc.isenabled())
        original(self, *args, **kwargs)

    platform.Platform.__init__ = spy  # type: ignore[method-assign]
    try:
        run_stack("dev")
    finally:
        platform.Platform.__init__ = original  # type: ignore[method-assign]
    assert seen == [False]
