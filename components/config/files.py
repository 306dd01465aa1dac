"""Checks of the files a stack config refers to (scripts in the repository)."""

from __future__ import annotations

from pathlib import Path

from .root import PlatformConfig


def missing_files(config: PlatformConfig, root: Path) -> list[str]:
    """One message per referenced file that does not exist, naming the config key."""
    problems: list[str] = []
    for kind in ("prolog", "epilog"):
        for index, script in enumerate(getattr(config.slurm, kind)):
            if script.file is None:
                continue
            path = (root / script.file).resolve()
            if not path.is_file():
                problems.append(f"hpcforge:slurm.{kind}[{index}].file: {script.file} does not exist (relative to {root})")
            elif not path.read_text(errors="replace").startswith("#!"):
                problems.append(f"hpcforge:slurm.{kind}[{index}].file: {script.file} has no shebang line (#!)")
    return problems
