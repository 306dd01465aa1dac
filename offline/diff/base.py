"""The two sides of a diff, as lists of recorded resources in `offline preview --json` form.

- head: this working tree's program run on the stack file (`State.from_recorded`);
- base from a git ref: the ref's tree exported (`git archive`) into a temporary folder and ITS program run
  there (`python -m offline preview --json`, with this interpreter), so changes to the program are seen
  too, not only changes to the stack file; kept under `.offline/diff-base/` (or $HPCFORGE_DIFF_BASE_DIR) by commit
  and stack (not with HPCFORGE_RECORDING_CACHE=off);
- base from a file: a saved `offline preview --json` recording, or what the engine last applied: a
  `pulumi stack export` file (offline/diff/stack_export.py);
- base from a folder: a saved `offline render --out DIR` (Kubernetes objects only: no Pulumi options, so
  resources are matched by object identity instead of URN).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.paths import PROJECT_ROOT

from ..program import recording
from ..program.documents import CHART_API_VERSION, MANIFEST_KIND
from ..program.engine import RecordedStack
from .stack_export import StackExport, StackExportError, is_stack_export, read_stack_export


class BaseError(Exception):
    """The base side could not be built (a bad ref, a base program that fails): a usage/config error (exit 2)."""


MANIFEST_TYPE = "kubernetes:yaml/v2:ConfigFile"
CACHE_FORMAT = 1
"""Bumped when the cached base recordings change shape."""

HASH_SUFFIX = re.compile(r"-[0-9a-f]{10}$")
"""Content-hashed object names (components/k8s/resources.py hashed Job names end in `-<10 hex digits>`)."""


def name_stem(name: str) -> str:
    """An object name without its content-hash suffix: a hashed Job and its successor share it."""
    return HASH_SUFFIX.sub("", name)


@dataclass
class State:
    """One side of a diff: every recorded resource (preview --json form), keyed for matching."""

    stack: str
    resources: list[dict[str, Any]]
    origin: str
    by_object: bool = False
    """Only Kubernetes objects are known (a render folder): match by object identity, not URN."""
    kind: str = ""
    """How the base was made: `git`, `recording`, `render`, `state` (a `pulumi stack export`), or `` for the head."""
    notes: list[str] = field(default_factory=list)
    """What the report must say about this base (what it left out, what it could not compare)."""
    export: StackExport | None = None

    @classmethod
    def from_recorded(cls, stack: RecordedStack, origin: str) -> State:
        return cls(stack.stack, [r.to_json() for r in stack.resources], origin)

    @classmethod
    def from_json(cls, path: Path) -> State:
        try:
            data = json.loads(path.read_text())
            return cls(str(data["stack"]), list(data["resources"]), path.name, kind="recording")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise BaseError(f"--against {path}: not an `offline preview --json` recording ({error})") from None

    @classmethod
    def from_stack_export(cls, path: Path) -> State:
        try:
            export = read_stack_export(path)
        except StackExportError as error:
            raise BaseError(f"--against {error}") from None
        origin = f"deployed state of {export.stack} ({path.name}, written {export.updated})"
        return cls(export.stack, export.resources, origin, kind="state", notes=list(export.notes), export=export)

    @classmethod
    def from_render_dir(cls, path: Path, stack: str) -> State:
        resources: list[dict[str, Any]] = []
        for file in sorted(path.rglob("*.y*ml")):
            if "charts" in file.relative_to(path).parts[:-1]:
                continue  # rendered chart objects: Argo CD's or the Chart's, not Pulumi resources
            for document in yaml.safe_load_all(file.read_text()):
                if not isinstance(document, dict) or not document.get("kind"):
                    continue
                resources.append(_render_resource(document, file.relative_to(path).as_posix()))
        if not resources:
            raise BaseError(f"--against {path}: no rendered objects in this folder (expected `offline render --out` output)")
        return cls(stack, resources, f"render folder {path.name}", by_object=True, kind="render")


def _render_resource(document: dict[str, Any], relative: str) -> dict[str, Any]:
    if document.get("apiVersion") == CHART_API_VERSION and document.get("kind") == "HelmChart":
        spec = document.get("spec") or {}
        inputs = {
            "chart": spec.get("chart"),
            "version": spec.get("version"),
            "namespace": spec.get("namespace"),
            "values": spec.get("values"),
            "repositoryOpts": {"repo": spec.get("repository")},
        }
        type_ = "kubernetes:helm.sh/v4:Chart"
    elif document.get("apiVersion") == CHART_API_VERSION and document.get("kind") == MANIFEST_KIND:
        inputs = {"file": (document.get("spec") or {}).get("file")}
        type_ = MANIFEST_TYPE
    else:
        inputs = document
        api = str(document.get("apiVersion", ""))
        # A Node in a render is hpcforge's NodePatch (a program patches nodes, it never creates one).
        kind = "NodePatch" if document["kind"] == "Node" and api == "v1" else document["kind"]
        type_ = f"kubernetes:{api if '/' in api else 'core/' + api}:{kind}"
    metadata = document.get("metadata") or {}
    name = f"{metadata.get('namespace')}/{metadata.get('name')}" if metadata.get("namespace") else str(metadata.get("name"))
    return {
        "urn": f"render:{relative}",
        "type": type_,
        "name": name,
        "parent": "",
        "custom": True,
        "inputs": inputs,
        "options": {},
    }


def object_identity(resource: dict[str, Any]) -> str:
    """A Kubernetes object's identity across a render: group/kind, namespace and name without a hash suffix."""
    inputs = resource.get("inputs") or {}
    if resource.get("type") == "kubernetes:helm.sh/v4:Chart":
        return f"chart:{inputs.get('namespace')}/{inputs.get('chart')}"
    if resource.get("type") == MANIFEST_TYPE:
        return f"manifest:{str(resource.get('name')).rpartition('/')[2]}"
    metadata = inputs.get("metadata") or {}
    if not isinstance(inputs.get("kind"), str):
        return str(resource.get("urn"))
    group = str(inputs.get("apiVersion", "")).rpartition("/")[0]
    return f"{group}/{inputs['kind']}:{metadata.get('namespace') or ''}/{name_stem(str(metadata.get('name')))}"


# --- a git ref ------------------------------------------------------------------------------------------------


def _git(*args: str, cwd: Path = PROJECT_ROOT) -> str:
    try:
        return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        raise BaseError("git is not installed: --against a git ref needs it") from None
    except subprocess.CalledProcessError as error:
        raise BaseError(f"git {' '.join(args)}: {error.stderr.strip() or error}") from None


def resolve_ref(ref: str, project: Path = PROJECT_ROOT) -> str:
    """The commit `ref` names, or "" when it names none."""
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=project).strip()
    except BaseError:
        return ""


def base_cache_dir(project: Path = PROJECT_ROOT) -> Path:
    configured = os.environ.get(recording.ENV_BASE_DIR)
    return Path(configured) if configured else project / ".offline" / "diff-base"


def from_git(ref: str, stack: str, *, project: Path = PROJECT_ROOT, progress: Any = None) -> State:
    """The stack as the program at `ref` records it: `git archive` of the ref, then its own `offline preview --json`."""
    commit = resolve_ref(ref, project)
    if not commit:
        raise BaseError(f"--against {ref}: neither a git ref of this repository nor a recording or render folder")
    cache = base_cache_dir(project) / f"{commit}-{stack}-{CACHE_FORMAT}.json"
    if recording.enabled() and cache.is_file():
        if progress:
            shown = cache.relative_to(project) if cache.is_relative_to(project) else cache
            progress(f"base: {ref} ({commit[:12]}), recorded before ({shown})")
        state = State.from_json(cache)
        state.origin, state.kind = f"{ref} ({commit[:12]})", "git"
        return state
    with tempfile.TemporaryDirectory(prefix="hpcforge-diff-base-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        archive = Path(tmp) / "tree.tar"
        with archive.open("wb") as out:
            try:
                subprocess.run(["git", "archive", "--format=tar", commit], cwd=project, check=True, stdout=out)
            except subprocess.CalledProcessError as error:
                raise BaseError(f"git archive {commit}: {error}") from None
        with tarfile.open(archive) as tar:
            tar.extractall(tree, filter="data")
        if not (tree / f"Pulumi.{stack}.yaml").is_file():
            raise BaseError(f"--against {ref}: the ref has no Pulumi.{stack}.yaml")
        out_json = Path(tmp) / "base.json"
        if progress:
            progress(f"base: running the program of {ref} ({commit[:12]}) for stack {stack}")
        env = {**os.environ, "HPCFORGE_RECORDING_CACHE": "off", "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTHONPATH", None)
        result = subprocess.run(
            [sys.executable, "-m", "offline", "preview", "--stack", stack, "--json", str(out_json)],
            check=False,
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if result.returncode != 0:
            raise BaseError(f"--against {ref}: the base program failed (exit {result.returncode}):\n{result.stderr.strip()}")
        # The program's own folder shows in some inputs (a local Command's `dir`): the base ran in a copy.
        text = out_json.read_text().replace(json.dumps(str(tree))[1:-1], json.dumps(str(project))[1:-1])
        out_json.write_text(text)
        state = State.from_json(out_json)
        with contextlib.suppress(OSError):
            if not recording.enabled():
                raise OSError("HPCFORGE_RECORDING_CACHE=off: nothing is kept")
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(text)
    state.origin, state.kind = f"{ref} ({commit[:12]})", "git"
    return state


def load_base(against: str, stack: str, *, project: Path = PROJECT_ROOT, progress: Any = None) -> State:
    """`--against`: a recording or `pulumi stack export` file, a render folder, or else a git ref."""
    path = Path(against)
    if path.is_file():
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise BaseError(f"--against {path.name}: neither a recording nor a `pulumi stack export` file ({error})") from None
        if is_stack_export(data):
            return State.from_stack_export(path)
        return State.from_json(path)
    if path.is_dir():
        recording = path / "resources.json"
        return State.from_json(recording) if recording.is_file() else State.from_render_dir(path, stack)
    return from_git(against, stack, project=project, progress=progress)
