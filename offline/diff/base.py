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
import hashlib
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

from components.ground.yamlv3 import load_document
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
    def from_json_text(cls, text: str, origin: str) -> State:
        """A git base: the text of the recording its program wrote (`run_base_program`)."""
        try:
            data = json.loads(text)
            return cls(str(data["stack"]), list(data["resources"]), origin, kind="git")
        except (ValueError, KeyError, TypeError) as error:
            raise BaseError(f"the base program of {origin} wrote no `offline preview --json` recording ({error})") from None

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


def dependency_versions(project: Path = PROJECT_ROOT) -> list[tuple[str, str]]:
    """(distribution, installed version) of what the base program runs with: pulumi, pulumi-kubernetes and the
    other distributions the program and the mock engine use (recording.DISTRIBUTIONS), and every requirement of the
    project (requirements.txt), read with importlib.metadata ("-" when not installed)."""
    names = set(recording.DISTRIBUTIONS)
    with contextlib.suppress(OSError):
        for line in (project / "requirements.txt").read_text().splitlines():
            found = _REQUIREMENT.match(line)
            if found:
                names.add(found.group(1))
    return sorted((name, recording.distribution_version(name)) for name in names)


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _blob(commit: str, name: str, project: Path) -> str:
    """The git object id of `name` in `commit` ("-" when it has none)."""
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{commit}:{name}", cwd=project).strip() or "-"
    except BaseError:
        return "-"


def _inventory_names(stack_text: str) -> list[str]:
    """The inventory files a stack file names (`hpcforge:<section>.inventory.file`), as written."""
    try:
        config = load_document(stack_text).get("config") or {}
    except Exception:  # an unreadable stack file: its base program fails, and nothing is cached
        return []
    names = []
    for section in ("provisioning", "directory", "slurm"):
        value = config.get(f"hpcforge:{section}")
        reference = value.get("inventory") if isinstance(value, dict) else None
        if isinstance(reference, dict) and isinstance(reference.get("file"), str):
            names.append(reference["file"])
    return names


def base_key(commit: str, stack: str, project: Path = PROJECT_ROOT) -> str:
    """What a base recording depends on: the commit (its program, its stack file `Pulumi.<stack>.yaml` and the
    inventories inside the tree), the content of inventory files the stack file names outside the tree (absolute
    paths), the Python version, the installed dependency versions (`dependency_versions`) and every `PULUMI_*` and
    `HPCFORGE_*` environment variable (as the recording cache, offline/program/recording.py)."""
    digest = hashlib.sha256()

    def add(*parts: str) -> None:
        for part in parts:
            digest.update(part.encode("utf-8", "surrogateescape"))
            digest.update(b"\0")

    add("format", str(CACHE_FORMAT), "commit", commit, "stack", stack)
    stack_blob = _blob(commit, f"Pulumi.{stack}.yaml", project)
    add("stack file", stack_blob)
    if stack_blob != "-":
        with contextlib.suppress(BaseError):
            for name in _inventory_names(_git("show", stack_blob, cwd=project)):
                if Path(name).is_absolute():
                    path = Path(name)
                    add("inventory", name, recording.sha256_file(path) if path.is_file() else "-")
                else:
                    add("inventory", name, _blob(commit, name, project))
    add("python", sys.version)
    for name, version in dependency_versions(project):
        add("distribution", name, version)
    for key in sorted(os.environ):
        if key.startswith(("PULUMI_", "HPCFORGE_")) and key not in (
            recording.ENV_SWITCH,
            recording.ENV_DIR,
            recording.ENV_BASE_DIR,
        ):
            add("env", key, os.environ[key])
    return digest.hexdigest()


def base_cache_file(commit: str, stack: str, project: Path = PROJECT_ROOT) -> Path:
    """Where the base recording of `commit` for `stack` is kept, named by its inputs (`base_key`)."""
    return base_cache_dir(project) / f"{commit}-{stack}-{base_key(commit, stack, project)[:24]}.json"


def run_base_program(ref: str, commit: str, stack: str, *, project: Path = PROJECT_ROOT, progress: Any = None) -> str:
    """The `offline preview --json` recording (its text) of the program at `commit`, run in an export of its tree."""
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
    return text


def from_git(ref: str, stack: str, *, project: Path = PROJECT_ROOT, progress: Any = None) -> State:
    """The stack as the program at `ref` records it: `git archive` of the ref, then its own `offline preview --json`;
    kept by its inputs (`base_cache_file`) and reused while they stay the same."""
    commit = resolve_ref(ref, project)
    if not commit:
        raise BaseError(f"--against {ref}: neither a git ref of this repository nor a recording or render folder")
    cache = base_cache_file(commit, stack, project)
    if recording.enabled() and cache.is_file():
        if progress:
            shown = cache.relative_to(project) if cache.is_relative_to(project) else cache
            progress(f"base: {ref} ({commit[:12]}), recorded before ({shown})")
        state = State.from_json(cache)
        state.origin, state.kind = f"{ref} ({commit[:12]})", "git"
        return state
    text = run_base_program(ref, commit, stack, project=project, progress=progress)
    state = State.from_json_text(text, f"{ref} ({commit[:12]})")
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
