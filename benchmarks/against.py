"""Measure another git ref's program beside this checkout's, in the same run (`--against REF` of benchmarks/scale.py
and benchmarks/diff_scale.py): absolute seconds on a shared machine mean little, a ratio taken in one run does.

The ref is checked out into a temporary git worktree (`git worktree add --detach`, removed afterwards; the `shared`
folder beside this checkout is linked beside it, as the program may read it). Each measurement is a fresh process of
this interpreter in the tree measured (its own `components` and `offline` packages), running that tree's program on
the same generated stack file; the head's and the ref's runs alternate, so that load on the machine falls on both.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.paths import PROJECT_ROOT

PROGRAM_TIMER = """
import gc, json, resource, sys, time
from pathlib import Path
try:
    from offline.program.engine import run_program
    from offline.program.stackfile import read_stack_file
except ModuleNotFoundError:  # refs before offline/program/ (e.g. b7ad5ae): offline/engine.py, offline/stackfile.py
    from offline.engine import run_program
    from offline.stackfile import read_stack_file
stack = read_stack_file(Path(sys.argv[1]), name=sys.argv[2])
root = Path.cwd()
started, started_cpu = time.perf_counter(), time.process_time()
recorded = run_program(stack, root)
wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
peak = 0.0
with open("/proc/self/status") as status:
    for line in status:
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
print(json.dumps({"wall": wall, "cpu": cpu, "peak_mib": peak, "resources": len(recorded.resources) + 1}))
"""
"""Times one run of the program of the tree it runs in (cwd) on a stack file: wall and CPU seconds, peak memory."""


@contextlib.contextmanager
def ref_worktree(ref: str, project: Path = PROJECT_ROOT) -> Iterator[tuple[Path, str]]:
    """(folder, commit) of a temporary detached worktree of `ref`; removed on exit."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], cwd=project, check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="hpcforge-against-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), commit], cwd=project, check=True)
        shared = project.parent / "shared"
        if shared.exists():
            (Path(tmp) / "shared").symlink_to(shared.resolve())
        try:
            yield tree, commit
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=project, check=False, capture_output=True)


def time_program(tree: Path, config: Path, stack: str) -> dict[str, Any]:
    """One fresh-process run of `tree`'s program on `config` (PROGRAM_TIMER's figures); RuntimeError when it fails."""
    env = {key: value for key, value in __import__("os").environ.items() if key != "PYTHONPATH"}
    env["HPCFORGE_RECORDING_CACHE"] = "off"
    completed = subprocess.run(
        [sys.executable, "-c", PROGRAM_TIMER, str(config), stack], cwd=tree, capture_output=True, text=True, check=False, env=env
    )
    if completed.returncode != 0:
        raise RuntimeError(f"the program of {tree} failed on {config.name}:\n{completed.stderr[-3000:]}")
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


@dataclass
class Compared:
    head: list[dict[str, Any]]
    ref: list[dict[str, Any]]

    def median(self, side: str, key: str) -> float:
        return statistics.median(run[key] for run in (self.head if side == "head" else self.ref))

    def ratio(self, key: str) -> float:
        """head / ref of the medians (below 1: the head is faster)."""
        return self.median("head", key) / self.median("ref", key)

    def line(self, label: str, ref: str) -> str:
        return (
            f"{label}: program wall {self.median('head', 'wall'):.2f} s vs {self.median('ref', 'wall'):.2f} s at {ref} "
            f"(ratio {self.ratio('wall'):.2f}), cpu {self.median('head', 'cpu'):.2f} s vs {self.median('ref', 'cpu'):.2f} s "
            f"(ratio {self.ratio('cpu'):.2f}), peak {self.median('head', 'peak_mib'):.0f} MiB vs "
            f"{self.median('ref', 'peak_mib'):.0f} MiB; medians of {len(self.head)} alternating runs each"
        )


def alternate(config: Path, stack: str, ref_tree: Path, repeat: int, head_tree: Path = PROJECT_ROOT) -> Compared:
    """`repeat` runs of each program on `config`, alternating head, ref, head, ref..."""
    compared = Compared([], [])
    for _ in range(repeat):
        compared.head.append(time_program(head_tree, config, stack))
        compared.ref.append(time_program(ref_tree, config, stack))
    return compared
