"""Checks of the files a stack config refers to (scripts in the repository)."""

from __future__ import annotations

from pathlib import Path

from ..layers.slurm.script_include import include_problem
from .root import PlatformConfig


def _script_problem(file: str, root: Path) -> str | None:
    """What is wrong with one script file of the repository, or None."""
    try:
        path = (root / file).resolve()
        if path.is_dir():
            return f"{file} is a directory, not a script file"
        if not path.is_file():
            return f"{file} does not exist (relative to {root})"
        with path.open("rb") as handle:
            start = handle.read(2)
    except (OSError, ValueError) as error:  # a name too long, a NUL byte, no permission...
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return f"cannot be read as a file of the repository ({reason})"
    if start != b"#!":
        return f"{file} has no shebang line (#!)"
    problem = include_problem(path, root)
    return f"{file}: {problem}" if problem is not None else None


def missing_files(config: PlatformConfig, root: Path) -> list[str]:
    """One message per referenced file that does not exist, naming the config key."""
    problems: list[str] = []
    for kind in ("prolog", "epilog"):
        for index, script in enumerate(getattr(config.slurm, kind)):
            if script.file is None:
                continue
            problem = _script_problem(script.file, root)
            if problem is not None:
                problems.append(f"hpcforge:slurm.{kind}[{index}].file: {problem}")
    return problems
