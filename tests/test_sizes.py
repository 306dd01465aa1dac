"""Issue 29's size targets, so they cannot rot: no module of the project over 600 lines, and no function over
120 lines unless LONG_FUNCTIONS records why (a module has one job and reads in one sitting)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import REPO

PACKAGES = ("components", "offline", "policies", "benchmarks", "scripts")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 120
LONG_FUNCTIONS: dict[str, str] = {}
"""`path::function` of a function allowed over MAX_FUNCTION_LINES, and the reason."""


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (REPO / package).rglob("*.py") if ".venv" not in path.parts)


def _long_functions(path: Path, root: Path = REPO) -> dict[str, int]:
    found = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                found[f"{path.relative_to(root)}::{node.name}"] = lines
    return found


def test_the_walk_sees_the_project() -> None:
    names = {str(path.relative_to(REPO)) for path in _modules()}
    assert {"components/platform.py", "offline/cli.py", "policies/families.py", "scripts/slurm/sacct_sync.py"} <= names


def test_the_function_measure_counts_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    source = tmp_path / "long.py"
    source.write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n")
    assert [key.rsplit("::", 1)[1] for key in _long_functions(source, tmp_path)] == ["long"]


def test_no_module_over_600_lines() -> None:
    long = {str(path.relative_to(REPO)): n for path in _modules() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_over_120_lines_without_a_recorded_reason() -> None:
    long = {key: n for path in _modules() for key, n in _long_functions(path).items()}
    assert {key: n for key, n in long.items() if key not in LONG_FUNCTIONS} == {}


def test_every_recorded_long_function_is_still_long() -> None:
    # A reason for a function that is no longer long (or no longer exists) is a stale exemption.
    long = {key for path in _modules() for key in _long_functions(path)}
    assert sorted(set(LONG_FUNCTIONS) - long) == []
