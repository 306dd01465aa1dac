"""What the docs' generated examples are made from: the stacks of this repository and named variants of them.

A variant is a stack file of this repository with text edits applied, written with its inventory files into a
temporary folder (absolute paths, as tests/offline/diff/test_diff_corpus.py lays out its copies), and run or
checked there by the same code as `./hpcforge`. `Sources` runs each at most once per generator run.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.paths import PROJECT_ROOT
from docs.blocks import BlockError
from offline.program.engine import RecordedStack, run_program
from offline.program.stackfile import read_stack_file

Edit = Callable[[str], str]


def replace(old: str, new: str) -> Edit:
    """An edit that replaces `old` (which must be there) by `new`, once."""

    def edit(text: str) -> str:
        if old not in text:
            raise BlockError(f"the stack file no longer holds {old!r}: update the docs example's edit (docs/sources.py)")
        return text.replace(old, new, 1)

    return edit


# --- the add-a-nodeset example of docs/operations.md: four L40S nodes as nodeset gpu-l40s in partition gpu ----------

L40S_POOL = """\
- name: gpu-l40s
  labels:
    hpcforge.io/pool: gpu-l40s
  nodes: 4
  cpuPerNode: "64"
  memoryPerNode: 512Gi
  gpusPerNode: {type: l40s, count: 4}
  taints: [nvidia.com/gpu]
"""

L40S_NODESET = """\
- name: gpu-l40s
  pool: gpu-l40s
  replicas: 4                 # at most the pool's nodes: slurmd pods do not share a node
  cpu: "60"                   # request and limit (cpuLimit to differ); room left for the kubelet and system pods
  memory: 480Gi               # request and limit (memoryLimit to differ): slurmd is told the limit (POD_MEMORY)
  gpus: {type: l40s, count: 4}
  maxUnavailable: 1           # prod policy: at most 25% and at most 2 nodes
"""


def indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(keepends=True))


def add_l40s(gpus: int = 4, replicas: int = 4, max_unavailable: int = 1) -> Edit:
    """The pool, the nodeset and its place in partition `gpu`, with the given GPUs per pod, replicas and bound."""
    nodeset = L40S_NODESET.replace("gpus: {type: l40s, count: 4}", f"gpus: {{type: l40s, count: {gpus}}}")
    nodeset = nodeset.replace("replicas: 4 ", f"replicas: {replicas} ").replace(
        "maxUnavailable: 1 ", f"maxUnavailable: {max_unavailable} "
    )
    edits = (
        replace("    - name: login-gpu\n      labels:", indent(L40S_POOL, 4) + "    - name: login-gpu\n      labels:"),
        replace("    partitions:\n", indent(nodeset, 6) + "    partitions:\n"),
        replace("nodesets: [gpu-a100, gpu-h100]", "nodesets: [gpu-a100, gpu-h100, gpu-l40s]"),
    )

    def edit(text: str) -> str:
        for one in edits:
            text = one(text)
        return text

    return edit


@dataclass(frozen=True)
class Variant:
    stack: str
    """The stack file it starts from: Pulumi.<stack>.yaml."""
    edits: tuple[Edit, ...] = ()
    what: str = ""
    copy: bool = True
    """Run a copy laid out in a temporary folder (False: the repository's own file, as `--stack STACK` runs it)."""


VARIANTS: dict[str, Variant] = {
    "prod": Variant("prod", copy=False, what="the repository's prod stack"),
    "dev": Variant("dev", copy=False, what="the repository's dev stack"),
    "prod-copy": Variant("prod", what="prod, laid out like the variants (the base of their diffs)"),
    "prod+l40s": Variant("prod", (add_l40s(),), "the add-a-nodeset example"),
    "prod+l40s-too-big": Variant(
        "prod", (add_l40s(gpus=8, replicas=5),), "the example with 8 GPUs per pod and 5 replicas on the 4-GPU, 4-node pool"
    ),
    "prod+violations": Variant(
        "prod",
        (
            add_l40s(max_unavailable=3),
            replace("    rootRevision: v2.3.1\n", "    rootRevision: main\n"),
        ),
        "the example with maxUnavailable 3, and the app-of-apps root on the branch main",
    ),
    "prod+preempt-extra": Variant(
        "prod",
        (replace("      preemption:\n", "      extraParameters: {PreemptType: preempt/qos}\n      preemption:\n"),),
        "a typed setting in controller.extraParameters",
    ),
    "dev+unknown-nodeset": Variant(
        "dev",
        (replace("nodesets: [cpu, vm]", "nodesets: [cpu, gpu-x]"),),
        "a partition naming a nodeset that does not exist",
    ),
}


def variant(name: str) -> Variant:
    if name not in VARIANTS:
        raise BlockError(f"unknown stack or variant {name!r} (docs/sources.py VARIANTS: {', '.join(sorted(VARIANTS))})")
    return VARIANTS[name]


class Sources:
    """The stack files, runs and objects of the variants, each made once; `close()` removes the temporary folder."""

    def __init__(self, root: Path = PROJECT_ROOT) -> None:
        self.root = root
        self._tmp = tempfile.TemporaryDirectory(prefix="hpcforge-docs-")
        self.tmp = Path(self._tmp.name)
        self._files: dict[str, Path] = {}
        self._runs: dict[str, RecordedStack] = {}
        self._documents: dict[str, list[dict[str, Any]]] = {}

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> Sources:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stack_file(self, name: str) -> Path:
        """The variant's stack file (the repository's own for a variant that is not a copy)."""
        if name in self._files:
            return self._files[name]
        spec = variant(name)
        source = self.root / f"Pulumi.{spec.stack}.yaml"
        if not spec.copy:
            self._files[name] = source
            return source
        folder = self.tmp / name
        folder.mkdir(parents=True)
        text = source.read_text(encoding="utf-8")
        for match in re.finditer(r"^\s+file: (inventory/\S+)$", text, re.M):
            copied = folder / Path(match.group(1)).name
            shutil.copyfile(self.root / match.group(1), copied)
            text = text.replace(f"file: {match.group(1)}\n", f"file: {copied}\n")
        for edit in spec.edits:
            text = edit(text)
        path = folder / f"Pulumi.{spec.stack}.yaml"
        path.write_text(text, encoding="utf-8")
        self._files[name] = path
        return path

    def run(self, name: str) -> RecordedStack:
        """The program's resources for the variant, as `./hpcforge preview` records them."""
        if name not in self._runs:
            spec = variant(name)
            self._runs[name] = run_program(read_stack_file(self.stack_file(name), name=spec.stack), self.root)
        return self._runs[name]

    def documents(self, name: str) -> list[dict[str, Any]]:
        """The variant's objects as `./hpcforge render` writes them (secret values redacted)."""
        from offline.program.documents import render_documents

        if name not in self._documents:
            self._documents[name] = [document for _, document in render_documents(self.run(name))]
        return self._documents[name]

    def object(self, name: str, kind: str, namespace: str, object_name: str) -> dict[str, Any]:
        """One object of the variant's render."""
        for document in self.documents(name):
            meta = document.get("metadata") or {}
            if document.get("kind") == kind and meta.get("name") == object_name and (meta.get("namespace") or "") == namespace:
                return document
        raise BlockError(f"{name} renders no {kind} {namespace}/{object_name}")


__all__ = ["L40S_NODESET", "L40S_POOL", "VARIANTS", "Sources", "Variant", "add_l40s", "indent", "replace", "variant"]
