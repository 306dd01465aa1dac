"""Shared test helpers: stack files, variants of them, and the upstream data in ../shared."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.ground.yamlv3 import load_document
from components.paths import PROJECT_ROOT
from components.site.inventory import DEFAULT_FILES, KINDS, Yaml12Dumper, read_yaml_file
from offline.program.engine import RecordedStack, run_program
from offline.program.stackfile import config_string, read_stack_file

REPO = PROJECT_ROOT
FIXTURES = REPO / "tests" / "fixtures"
"""Recorded outputs of real programs (nvidia-smi, dcgmi, Slurm's JSON, ...); each folder's README says how."""


def shared_dir() -> Path:
    """../shared beside the checkout, or $HPCFORGE_SHARED."""
    return Path(os.environ.get("HPCFORGE_SHARED", REPO.parent / "shared")).resolve()


def strict() -> bool:
    """In CI (HPCFORGE_STRICT=1) a missing prerequisite fails the test instead of skipping it."""
    return os.environ.get("HPCFORGE_STRICT") == "1"


CHARTS_ENV = "HPCFORGE_CHARTS"
ALLOWED_STRICT_SKIPS = frozenset({CHARTS_ENV})
"""The prerequisites CI may lack and still skip under HPCFORGE_STRICT=1: exactly one, the upstream
charts of the `charts` tier (no chart repository is reachable from CI; see docs/charts.md)."""


def skip_or_fail(reason: str, *, allow_in_strict: str | None = None) -> None:
    """Skip for `reason`; under HPCFORGE_STRICT=1 fail instead, unless `allow_in_strict` names a
    prerequisite in ALLOWED_STRICT_SKIPS (then it skips in CI too, with the same reason)."""
    if strict() and allow_in_strict not in ALLOWED_STRICT_SKIPS:
        pytest.fail(f"HPCFORGE_STRICT=1 and a prerequisite is missing: {reason}")
    pytest.skip(reason)


def require_charts() -> Path:
    """$HPCFORGE_CHARTS: the unpacked upstream charts (`<chart>-<version>/`); the one skip CI allows."""
    value = os.environ.get(CHARTS_ENV)
    if not value or not Path(value).is_dir():
        skip_or_fail(
            f"{CHARTS_ENV} is not set to a directory of unpacked upstream charts (<chart>-<version>/; docs/charts.md)",
            allow_in_strict=CHARTS_ENV,
        )
    return Path(str(value))


def require_shared(*parts: str) -> Path:
    path = shared_dir().joinpath(*parts)
    if not path.exists():
        skip_or_fail(f"upstream data not found at {path} (set HPCFORGE_SHARED to the shared/ folder)")
    return path


def require_binaries(*names: str) -> dict[str, str]:
    """Paths of daemon/tool binaries (also searched in /usr/sbin); skip (or fail in CI) when missing.

    Slurm's binaries come only from the Slurm 26.05.3 prefix (tests/daemons/slurm_prefix.py), never from PATH.
    """
    import shutil

    from .daemons import slurm_prefix

    found: dict[str, str] = {}
    for name in names:
        if name in slurm_prefix.SLURM_BINARIES:
            slurm_path = slurm_prefix.slurm_binary(name)
            if slurm_path is None:
                skip_or_fail(slurm_prefix.missing_reason() or f"{name} is missing from {slurm_prefix.slurm_prefix()}")
            else:
                found[name] = slurm_path
            continue
        path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin")
        if path is None:
            skip_or_fail(f"{name} is not installed (Debian packages: see .ci/run)")
        else:
            found[name] = path
    return found


def stack_document(stack: str) -> dict[str, Any]:
    """A stack file read as the Pulumi CLI reads it (gopkg.in/yaml.v3 rules, components/ground/yamlv3.py)."""
    document: dict[str, Any] = load_document((REPO / f"Pulumi.{stack}.yaml").read_text())
    return document


def config_values(stack: str) -> dict[str, Any]:
    """The `config:` mapping of a stack file, as Python values (deep copy: safe to edit)."""
    return copy.deepcopy(stack_document(stack)["config"])


def raw_config(values: dict[str, Any]) -> dict[str, str]:
    """The strings the Pulumi CLI would hand the program for these config values."""
    return {k: config_string(v) for k, v in values.items()}


def inline_inventories(values: dict[str, Any], root: Path = REPO) -> dict[str, Any]:
    """Put the lists of the stack's inventory files back into `values` (to edit them like config)."""
    for kind in KINDS:
        section = values.get(f"hpcforge:{kind.section}")
        if isinstance(section, dict) and "inventory" in section:
            document, _ = read_yaml_file(root / section.pop("inventory")["file"], "inventory")
            section.update(document)
    return values


def outline_inventories(values: dict[str, Any], directory: Path) -> dict[str, Any]:
    """Move inline lists of `values` to inventory files in `directory`, referenced by absolute path (the Slurm
    topology and accounts, which may stay inline, stay inline)."""
    for kind in KINDS:
        if kind.inline_allowed:
            continue
        section = values.get(f"hpcforge:{kind.section}")
        if isinstance(section, dict) and any(key in section for key in kind.keys):
            path = directory / DEFAULT_FILES[kind.section]
            document = {key: section.pop(key) for key in kind.keys if key in section}
            path.write_text(yaml.dump(document, Dumper=Yaml12Dumper, sort_keys=False))
            section["inventory"] = {"file": str(path)}
    return values


def inventory_file(tmp_path: Path, section: str) -> str:
    """Where `write_variant` writes a variant's inventory file for `section` (provisioning, directory)."""
    return str(tmp_path / DEFAULT_FILES[section])


def write_variant(tmp_path: Path, stack: str, edit: Callable[[dict[str, Any]], None], name: str | None = None) -> Path:
    """Write Pulumi.<stack>.yaml with `edit` applied to its config to a temporary stack file.

    `edit` sees the inventories inline (`hpcforge:provisioning.hosts`, `hpcforge:directory.users`);
    they are written back to inventory files beside the stack file (see `inventory_file`).
    """
    values = inline_inventories(config_values(stack))
    edit(values)
    outline_inventories(values, tmp_path)
    path = tmp_path / f"Pulumi.{name or stack}.yaml"
    path.write_text(yaml.safe_dump({"config": values}, sort_keys=False))
    return path


def run_stack_file(path: Path, stack: str, *, preview: bool = False) -> RecordedStack:
    return run_program(read_stack_file(path, name=stack), REPO, preview=preview)


def run_stack(stack: str, *, preview: bool = False) -> RecordedStack:
    """Run Pulumi.<stack>.yaml under the mock engine; `preview`: as `pulumi preview` of a new stack."""
    return run_program(read_stack_file(REPO / f"Pulumi.{stack}.yaml", name=stack), REPO, preview=preview)


def go_program(tmp_path: Path, source: str, name: str = "program") -> Path:
    """`source` (a Go main package) built with Debian's golang-go into `tmp_path/name`; its path. Built, then run by
    the caller: `go run` answers 1 for any exit status of the program."""
    import subprocess

    go = require_binaries("go")["go"]
    work = tmp_path / f"{name}-src"
    work.mkdir(parents=True, exist_ok=True)
    (work / "main.go").write_text(source)
    env = {**os.environ, "GOCACHE": str(tmp_path / "gocache"), "GOPATH": str(tmp_path / "gopath"), "GOFLAGS": "-mod=mod"}
    subprocess.run([go, "build", "-o", str(tmp_path / name), "main.go"], cwd=work, env=env, timeout=300, check=True)
    return tmp_path / name


def go_answers(program: Path, inputs: list[str]) -> list[dict[str, Any]]:
    """Run a Go oracle built by `go_program` that reads one JSON string a line and writes one JSON object a line:
    its answer to each of `inputs`, in order."""
    import json
    import subprocess

    done = subprocess.run(
        [str(program)],
        input="\n".join(json.dumps(s) for s in inputs) + "\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(inputs), done.stderr
    return answers


def tolerates(tolerations: list[dict[str, Any]], key: str, effect: str = "NoSchedule", value: str = "") -> bool:
    """Whether a pod with `tolerations` may run on a node tainted `key[=value]:effect`: Kubernetes' rule
    (k8s.io/api core/v1 toleration.go `ToleratesTaint`): the effect matches or is empty; an empty key with Exists
    matches every key; Exists matches any value, Equal (the default) needs the same value."""
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != effect:
            continue
        operator = toleration.get("operator", "Equal")
        if not toleration.get("key"):
            if operator == "Exists":
                return True
            continue
        if toleration["key"] != key:
            continue
        if operator == "Exists" or toleration.get("value", "") == value:
            return True
    return False
