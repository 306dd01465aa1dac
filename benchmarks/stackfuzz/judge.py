"""A mutation applied to its base and judged: read by the stack-file reader, run under the mock engine,
rendered and checked against the schemas, then classified.
"""

from __future__ import annotations

import copy
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from components.ground.yamlv3 import resolve_plain
from components.paths import PROJECT_ROOT
from offline.program.stackfile import StackFileError, parse_stack_text

from .bases import cached_base
from .cases import Mutation, Outcome, Raw
from .mutations import INVENTORY_EDITS

_PLACEHOLDER = "hpcforge-fuzz-raw-value-0e6f"


class _Dumper(yaml.SafeDumper):
    pass


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # Quote every string that yaml.v3 would not read back as this very string.
    resolved = resolve_plain(data) if data else None
    style = None if (isinstance(resolved, str) and resolved == data and data.strip() == data) else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def apply(mutation: Mutation, directory: Path) -> str:
    """The stack file text after the mutation; its inventories are written to files in `directory`."""
    from components.site.inventory import DEFAULT_FILES, KINDS, Yaml12Dumper

    config = copy.deepcopy(cached_base(mutation.stack))
    *parents, last = mutation.path
    target: Any = config
    for part in parents:
        target = target[part]
    if mutation.kind == "inventory-text":
        pass
    elif mutation.kind == "delete":
        del target[last]
    elif mutation.kind == "duplicate-item":
        target.append(copy.deepcopy(target[last]))
    else:
        target[last] = _PLACEHOLDER if isinstance(mutation.value, Raw) else mutation.value
    raw = mutation.value.text if isinstance(mutation.value, Raw) else None
    for kind in KINDS:
        if kind.inline_allowed:  # the Slurm topology and accounts stay inline, as in dev and prod
            continue
        section = config.get(f"hpcforge:{kind.section}")
        if isinstance(section, dict) and any(key in section for key in kind.keys):
            path = directory / DEFAULT_FILES[kind.section]
            inventory = {key: section.pop(key) for key in kind.keys if key in section}
            text = yaml.dump(inventory, Dumper=Yaml12Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
            if raw is not None and _PLACEHOLDER in text:
                text, raw = text.replace(_PLACEHOLDER, raw, 1), None
            if mutation.kind == "inventory-text" and mutation.path[0] == f"hpcforge:{kind.section}":
                text = INVENTORY_EDITS[mutation.value][0](text)
            path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
            section["inventory"] = {"file": str(path)}
    text = yaml.dump({"config": config}, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
    if raw is not None:
        text = text.replace(_PLACEHOLDER, raw, 1)
    return text


_NAMED = re.compile(
    r"^(\S+ \(line \d+\): |\S+: )?hpcforge:"  # a stack key (after the stack file's name)
    r"|^\S+\.ya?ml: [\w\[\]\"<>.*-]+( \(line \d+\))?: "  # a path inside an inventory file
    r"|^\S+\.ya?ml \(line \d+\): "  # a line of an inventory file (a problem outside any entry)
    r"|^\S+\.ya?ml: (not UTF-8 \(byte \d+\)|expected a mapping with the keys )"  # the file as a whole
)


def _named(messages: list[str]) -> bool:
    """Every message names where the problem is: a stack key or a path inside an inventory file."""
    return all(_NAMED.match(message) or "hpcforge:" in message for message in messages)


def judge(mutation: Mutation) -> Outcome:
    started = time.perf_counter()
    cpu_started = time.process_time()
    with tempfile.TemporaryDirectory() as directory:
        outcome = _judge(mutation, Path(directory), started)
    outcome.cpu_seconds = time.process_time() - cpu_started
    return outcome


def _judge(mutation: Mutation, directory: Path, started: float) -> Outcome:
    from offline.program.documents import write_render
    from offline.program.engine import ProgramConfigError, run_program
    from offline.program.stackfile import StackFile

    verdict, detail = "valid", ""
    try:
        text = apply(mutation, directory)
        try:
            values, secret_keys = parse_stack_text(text, f"Pulumi.{mutation.stack}.yaml")
        except StackFileError as error:
            verdict = "rejected-by-name" if _named(error.messages) else "rejected-unnamed"
            return Outcome(mutation, verdict, time.perf_counter() - started, "\n".join(error.messages))
        stack = StackFile(name=mutation.stack, path=PROJECT_ROOT / f"Pulumi.{mutation.stack}.yaml", config=values,
                          secret_keys=secret_keys)  # fmt: skip
        try:
            recorded = run_program(stack, PROJECT_ROOT)
        except ProgramConfigError as error:
            verdict = "rejected-by-name" if _named(error.messages) else "rejected-unnamed"
            return Outcome(mutation, verdict, time.perf_counter() - started, "\n".join(error.messages))
        try:
            with tempfile.TemporaryDirectory() as out:
                write_render(recorded, Path(out))
        except Exception as error:  # classifying every failure is the point
            return Outcome(mutation, "crash-after-preview", time.perf_counter() - started, f"{type(error).__name__}: {error}")
        if mutation.expect == "reject":
            verdict, detail = "wrongly-accepted", mutation.why
        else:
            # The consumer's own rules as a second oracle: every object must pass the Kubernetes
            # schema, the upstream CRDs and the charts' values schemas (offline/schema/validate.py).
            errors = _schema_errors(recorded, values)
            if errors:
                verdict, detail = "wrongly-accepted", f"Kubernetes/CRD/chart schema refuses it: {errors[0]}"
    except Exception as error:  # likewise
        verdict, detail = "traceback", f"{type(error).__name__}: {error}"
    return Outcome(mutation, verdict, time.perf_counter() - started, detail)


def _shared_dir() -> Path | None:
    import os

    shared = Path(os.environ.get("HPCFORGE_SHARED", PROJECT_ROOT.parent / "shared")).resolve()
    return shared if (shared / "crds").is_dir() else None


def _schema_errors(recorded: Any, values: dict[str, str]) -> list[str]:
    import json

    from offline.program.documents import render_documents
    from offline.schema import validate as schema

    shared = _shared_dir()
    if shared is None:
        return []
    version = json.loads(values.get("hpcforge:kubernetes", "{}") or "{}").get("version", "1.33")
    return list(schema.check_documents(render_documents(recorded), str(version), shared).errors)


def warm_up() -> None:
    """Load the schemas once (tens of seconds cold), outside any case's time."""
    from offline.program.engine import run_program
    from offline.program.stackfile import read_stack_file

    stack = read_stack_file(PROJECT_ROOT / "Pulumi.prod.yaml")
    _schema_errors(run_program(stack, PROJECT_ROOT), stack.config)
