"""A recorded program run kept by `offline render` for `offline check`, reused only for the same inputs.

`./hpcforge render` then `./hpcforge check` would run the program twice with the same
inputs. `render` stores what it recorded under `.offline/recordings/`; `check` reuses it only when a
content key proves the run would be the same:

1. the key, computed before anything runs, covers the stack name, `--preview`, the stack file's
   bytes, every file of the program (the entry point, `Pulumi.yaml`, `pyproject.toml` and
   requirements, every file under `components/` and `offline/`), the Python version, the versions of
   the installed distributions the program and the mock engine use, and every `PULUMI_*` and
   `HPCFORGE_*` environment variable;
2. the entry also lists every other file the program opened while it ran (inventory files wherever
   they are, scripts, dashboards: seen through a Python audit hook, `sys.addaudithook`) and every
   directory it listed, each with a SHA-256 of its content or names; all must still match.

Anything that does not match runs the program again, as before; `HPCFORGE_RECORDING_CACHE=off` (or
`--no-reuse` on `check`) never reuses, and nothing is stored when it is off; `HPCFORGE_RECORDINGS_DIR`
keeps them in another folder, `HPCFORGE_DIFF_BASE_DIR` the diff's git bases (where, not what: neither is part of
the key). Entries are pickles written
by this program into the working tree's ignored `.offline/` folder (anyone who can write there can
also change the program itself); the newest `KEEP` are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.paths import PROJECT_ROOT

from .engine import RecordedResource, RecordedStack, run_program
from .stackfile import StackFile

FORMAT = 1
KEEP = 4
ENV_SWITCH = "HPCFORGE_RECORDING_CACHE"
ENV_DIR = "HPCFORGE_RECORDINGS_DIR"
"""Where recordings are kept instead of `.offline/recordings/` (the test suite points it at a temporary folder)."""
ENV_BASE_DIR = "HPCFORGE_DIFF_BASE_DIR"
"""Where `offline diff` keeps the git bases it ran (offline/diff/base.py) instead of `.offline/diff-base/` (the test
suite points it at a temporary folder too)."""
PROGRAM_FILES = ("__main__.py", "Pulumi.yaml", "pyproject.toml", "requirements.txt")
PROGRAM_TREES = ("components", "offline")
DISTRIBUTIONS = (
    "pulumi",
    "pulumi-kubernetes",
    "pulumi-random",
    "pulumi-command",
    "pydantic",
    "pydantic-core",
    "protobuf",
    "grpcio",
    "PyYAML",
    "yaml-rs",
)
"""Installed distributions whose code the program or the mock engine runs (their versions are keyed)."""
_SKIP_DIRS = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}


def cache_dir(project: Path = PROJECT_ROOT) -> Path:
    configured = os.environ.get(ENV_DIR)
    return Path(configured) if configured else project / ".offline" / "recordings"


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "").lower() not in ("off", "0", "no", "false")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tree_files(root: Path) -> Iterator[Path]:
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            if not name.endswith((".pyc", ".pyo")):
                yield Path(directory) / name


def distribution_version(name: str) -> str:
    """The installed version of a distribution (importlib.metadata), "-" when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "-"


def run_key(stack: StackFile, project: Path = PROJECT_ROOT, *, preview: bool) -> str:
    """The content key of a run (1. in the module docstring)."""
    digest = hashlib.sha256()

    def add(*parts: str) -> None:
        for part in parts:
            digest.update(part.encode("utf-8", "surrogateescape"))
            digest.update(b"\0")

    add("format", str(FORMAT), "stack", stack.name, "preview", str(bool(preview)))
    add("stack file", sha256_file(stack.path))
    for name in PROGRAM_FILES:
        path = project / name
        add("program", name, sha256_file(path) if path.is_file() else "-")
    for tree in PROGRAM_TREES:
        for path in _tree_files(project / tree):
            add("program", path.relative_to(project).as_posix(), sha256_file(path))
    add("python", sys.version)
    for name in DISTRIBUTIONS:
        add("distribution", name, distribution_version(name))
    for key in sorted(os.environ):
        if key.startswith(("PULUMI_", "HPCFORGE_")) and key not in (ENV_SWITCH, ENV_DIR, ENV_BASE_DIR):
            add("env", key, os.environ[key])
    return digest.hexdigest()


# --- what the program reads while it runs --------------------------------------------------------------------


@dataclass
class _Reads:
    opened: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)


_active: list[_Reads] = []
_hook: list[bool] = []
"""Non-empty once the audit hook is installed (hooks cannot be removed: it stays, idle outside a run)."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _active:
        return
    if event == "open":
        path, mode = args[0], args[1]
        if isinstance(path, str | bytes | os.PathLike) and (mode is None or not any(c in str(mode) for c in "wax+")):
            _active[-1].opened.add(os.fsdecode(path))
    elif event in ("os.listdir", "os.scandir") and args and isinstance(args[0], str | bytes | os.PathLike):
        _active[-1].listed.add(os.fsdecode(args[0]))


@contextmanager
def _watch_reads() -> Iterator[_Reads]:
    if not _hook:
        sys.addaudithook(_audit)
        _hook.append(True)
    reads = _Reads()
    _active.append(reads)
    try:
        yield reads
    finally:
        _active.remove(reads)


def _outside_program(path: Path, project: Path) -> bool:
    """A data file: not Python's or an installed package's, and not a file the key already covers."""
    text = str(path)
    if path.suffix in (".py", ".pyc", ".so") and not text.startswith(str(project)):
        return False
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        if text.startswith(prefix.rstrip("/") + "/"):
            return False
    try:
        relative = path.relative_to(project)
    except ValueError:
        return True
    return not (relative.parts and (relative.parts[0] in PROGRAM_TREES or relative.as_posix() in PROGRAM_FILES))


def _listing_digest(path: Path) -> str:
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return "-"
    return hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def _file_digest(path: Path) -> str:
    try:
        return sha256_file(path) if path.is_file() else "-"
    except OSError:
        return "-"


@dataclass
class Entry:
    format: int
    key: str
    files: list[tuple[str, str]]
    """(absolute path, SHA-256 or '-' when it was not a readable file) of every data file the run opened."""
    listings: list[tuple[str, str]]
    """(absolute directory, SHA-256 of its sorted names) of every directory the run listed."""
    stack: RecordedStack

    def still_valid(self) -> bool:
        return all(_file_digest(Path(path)) == digest for path, digest in self.files) and all(
            _listing_digest(Path(path)) == digest for path, digest in self.listings
        )


def _store(entry: Entry, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pickle")
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(entry, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, folder / f"{entry.key}.pickle")
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    entries = sorted(folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)


def _load(key: str, folder: Path) -> Entry | None:
    path = folder / f"{key}.pickle"
    try:
        with path.open("rb") as handle:
            entry = pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None
    if not isinstance(entry, Entry) or entry.format != FORMAT or entry.key != key or not entry.still_valid():
        return None
    return entry


def record_and_store(
    stack: StackFile, project: Path = PROJECT_ROOT, *, preview: bool = False, folder: Path | None = None
) -> RecordedStack:
    """Run the program (`run_program`) and, unless the cache is off, keep the recording for `reuse_or_run`
    (in `folder`, default `cache_dir(project)`)."""
    return _record(stack, project, preview=preview, folder=folder)


def _record(
    stack: StackFile,
    project: Path,
    *,
    preview: bool,
    folder: Path | None,
    on_resource: Callable[[RecordedResource], None] | None = None,
) -> RecordedStack:
    if not enabled():
        return run_program(stack, project, preview=preview, on_resource=on_resource)
    key = run_key(stack, project, preview=preview)
    with _watch_reads() as reads:
        recorded = run_program(stack, project, preview=preview, on_resource=on_resource)
    resolved = {Path(path) if os.path.isabs(path) else (project / path) for path in reads.opened}
    files = sorted((str(p), _file_digest(p)) for p in resolved if _outside_program(p, project))
    listings = sorted((str(p), _listing_digest(p)) for p in {Path(d) if os.path.isabs(d) else project / d for d in reads.listed})
    with contextlib.suppress(OSError):  # a read-only checkout: nothing is kept, nothing breaks
        _store(Entry(FORMAT, key, files, listings, recorded), folder or cache_dir(project))
    return recorded


def reuse_or_run(
    stack: StackFile,
    project: Path = PROJECT_ROOT,
    *,
    preview: bool = False,
    reuse: bool = True,
    folder: Path | None = None,
    on_resource: Callable[[RecordedResource], None] | None = None,
    store: bool = False,
) -> tuple[RecordedStack, bool]:
    """The recording `record_and_store` kept for exactly these inputs, else a fresh run; and whether it was reused.

    `on_resource` sees each resource of a fresh run as it is recorded (`run_program`), not those of a reused one.
    `store`: keep a fresh run's recording as `record_and_store` does, so that the next command with the same inputs
    (`offline check` then `offline diff` in one pull-request job) reuses it instead of running the program again."""
    if reuse and enabled():
        entry = _load(run_key(stack, project, preview=preview), folder or cache_dir(project))
        if entry is not None:
            return entry.stack, True
    if store:
        return _record(stack, project, preview=preview, folder=folder, on_resource=on_resource), False
    return run_program(stack, project, preview=preview, on_resource=on_resource), False


__all__ = [
    "ENV_BASE_DIR",
    "ENV_DIR",
    "ENV_SWITCH",
    "Entry",
    "cache_dir",
    "distribution_version",
    "enabled",
    "record_and_store",
    "reuse_or_run",
    "run_key",
    "sha256_file",
]
