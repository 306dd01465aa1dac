"""Where the project's own files are: the one module that derives the repository's root from its own path, so that
no other module counts `Path(__file__).parents[N]` (tests/test_layout.py holds every module to it)."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The repository's root: the Pulumi program (__main__.py), the stack files and scripts/."""
SCRIPTS = PROJECT_ROOT / "scripts"
"""What runs in the cluster or on hosts (deployed verbatim into ConfigMaps, or run by commands)."""
