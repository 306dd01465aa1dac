"""Inventories (hosts, directory users and groups) in data files beside the stack config.

Whatever grows with the site lives in files in the repository, referenced from the stack config:

    hpcforge:provisioning:
      inventory: {file: inventory/prod/hosts.yaml}     # `hosts: [...]`
    hpcforge:directory:
      inventory: {file: inventory/prod/users.yaml}     # `groups: [...]`, `users: [...]`
    hpcforge:slurm:
      inventory: {file: inventory/prod/slurm.yaml}     # `topology: {...}`, `accounts: {...}`

so the stack config stays a few KiB at any site size (the Pulumi CLI hands the whole stack config
to the program and to every policy pack in ONE environment variable, and Linux refuses any single
environment string over 128 KiB). The loader reads each file (YAML 1.2 core schema, safe, bounded
size), records its sha256 in the config (`inventory.sha256`; a pinned value is checked), and puts
its lists where the models expect them, so they are validated with the rest of the config before
anything is registered. Problems inside a file are reported under the file and the path in it:
`inventory/prod/hosts.yaml: hosts[123].ip: ...`.

Hosts, users and groups must come from a file. The Slurm topology (one leaf switch per rack) and the
Slurm accounts (one per project) may also stay inline while they are small; a key set both inline
and in the file is refused.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
import yaml_rs
from pydantic import TypeAdapter, ValidationError

from ..ground.base import PRECHECKED, bulk_clean
from ..ground.hosts import Host
from ..ground.yamlv3 import YamlProblem, load_document
from ..layers.directory.config import PosixGroup, PosixUser
from .inventory_numbers import last_candidate_line, refuses_a_number_in, restore_core_strings
from .inventory_scan import (
    describe_control_character,
    describe_syntax_error,
    find_tag_or_alias,
    may_have_anchors,
    may_have_tags,
    render_path,
    second_document,
)

MAX_INVENTORY_BYTES = 64 * 1024 * 1024
"""Refuse inventory files larger than this (a 100,000-host inventory is about 15 MB)."""


@dataclass(frozen=True)
class InventoryKind:
    section: str
    """Stack config key (without `hpcforge:`) that holds the `inventory` reference."""
    keys: tuple[str, ...]
    """Top-level keys of the file; each becomes `<section>.<key>` in the config."""
    inline_allowed: bool = False
    """The keys may also be written inline in the stack config (each key in one place only)."""


KINDS = (
    InventoryKind("provisioning", ("hosts",)),
    InventoryKind("directory", ("groups", "users")),
    InventoryKind("slurm", ("topology", "accounts"), inline_allowed=True),
)

DEFAULT_FILES = {"provisioning": "hosts.yaml", "directory": "users.yaml", "slurm": "slurm.yaml"}


class InventoryError(Exception):
    def __init__(self, messages: list[str]) -> None:
        self.messages = messages
        super().__init__("\n".join(messages))


# --- YAML 1.2 core schema ------------------------------------------------------------------------------
# PyYAML resolves plain scalars by YAML 1.1 rules: `12:34:56` becomes a base-60 integer,
# `yes`/`no`/`on`/`off` booleans, `0777` octal. Inventories are full of MACs and names, so they are
# read with the YAML 1.2 core schema instead (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
# Inventory files are parsed by yaml-rs (`parse_yaml_12`); `Yaml12Loader` (libyaml with the core
# schema's implicit tags) reads stack files for `migrate-inventory`, and `Yaml12Dumper` writes
# inventories that YAML 1.1 and 1.2 readers read alike.

_CORE_RESOLVERS: list[tuple[str, re.Pattern[str], list[str]]] = [
    ("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")),
    (
        "tag:yaml.org,2002:int",
        re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
        list("-+0123456789"),
    ),
    (
        "tag:yaml.org,2002:float",
        re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
        list("-+.0123456789"),
    ),
]


def _core_resolvers() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    table: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for tag, pattern, first in _CORE_RESOLVERS:
        for char in first:
            table.setdefault(char, []).append((tag, pattern))
    return table


_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Yaml12Loader(_BASE_LOADER):
    """libyaml's safe loader with the YAML 1.2 core schema's implicit tags."""

    yaml_implicit_resolvers = _core_resolvers()


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _construct_float(loader: Any, node: yaml.ScalarNode) -> float:
    text = str(loader.construct_scalar(node)).lower()
    if text.lstrip("+-") == ".inf":
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
# YAML 1.2 has no timestamps: a date-looking plain scalar stays a string.
Yaml12Loader.add_constructor("tag:yaml.org,2002:timestamp", Yaml12Loader.construct_yaml_str)


class Yaml12Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Quotes every string that YAML 1.1, YAML 1.2 or yaml-rs would read as something else (safe for all three)."""


for _tag, _pattern, _first in _CORE_RESOLVERS:
    Yaml12Dumper.add_implicit_resolver(_tag, _pattern, _first)
# ... and every string yaml-rs (the reader of inventory files) reads as a number though the core schema reads
# a string (`_12`, `0X1F`, `0O17`; YAML 1.1 already makes the dumper quote `1_000` and `0b101`): a superset of
# those forms (inventory_numbers.py), so that what is written is read back as written.
Yaml12Dumper.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?=[-+]?[0-9._])(?=.*(?:_|0[bBXO]|[-+]0[xXoO]))[0-9A-Za-z._+-]+$"),
    list("-+._0123456789"),
)


def read_yaml_file(
    path: Path, label: str, max_bytes: int = MAX_INVENTORY_BYTES, *, core_strings: bool = False
) -> tuple[Any, str]:
    """(document, sha256 hex) of a YAML data file; InventoryError naming `label` on any problem.

    `core_strings`: also put back as strings the plain scalars that yaml-rs reads as numbers and the
    YAML 1.2 core schema as strings (`1_000`, `0b101`, ...: inventory_numbers.py). It costs a second
    pass over the text, so the loader asks for it only after validation refused a number in the file.
    """
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise InventoryError([f"{label}: no such file"]) from None
    except IsADirectoryError:
        raise InventoryError([f"{label}: is a directory, not an inventory file"]) from None
    except OSError as error:
        raise InventoryError([f"{label}: cannot be read ({error.strerror})"]) from None
    if len(raw) > max_bytes:
        raise InventoryError([f"{label}: larger than {max_bytes // (1024 * 1024)} MiB"])
    digest = hashlib.sha256(raw).hexdigest()
    try:
        # A byte order mark may start a YAML stream (YAML 1.2.2, 5.2); yaml-rs 0.1.6 reads it as part of the first key.
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise InventoryError([f"{label}: not UTF-8 (byte {error.start})"]) from None
    found = describe_control_character(text, label, raw)
    if found is not None:
        raise InventoryError([found])
    document = parse_yaml_12(text, label)
    if core_strings:
        _, duplicates = restore_core_strings(text, document)
        if duplicates:
            raise InventoryError(
                [
                    f"{label}: the key {key!r} appears twice in one mapping (an unquoted {key} is a string in YAML 1.2)"
                    for key in duplicates
                ]
            )
    return document, digest


def parse_yaml_12(text: str, label: str) -> Any:
    """One YAML 1.2 document (core schema, no timestamps, unique keys, no aliases, no tags but the core
    schema's) as Python values.

    yaml-rs (a Rust YAML 1.2 parser) reads a 100,000-host inventory in a few seconds where
    PyYAML's libyaml loader, which builds every value in Python, takes over a minute.
    """
    try:
        document = yaml_rs.loads(
            text,
            parse_datetime=False,
            alias_limits=yaml_rs.AliasLimits(max_total_replayed_events=0),
            duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error,
        )
    except yaml_rs.YAMLDecodeError as error:
        message = str(error)
        # A tag yaml-rs cannot read (`!!set x`) or an alias: the same message as when it reads the document.
        found = find_tag_or_alias(text, label) if "alias" in message or may_have_tags(text) else None
        if found is None and "alias" in message:
            found = f"{label}: YAML anchors and aliases are not allowed in inventory files"
        found = found or describe_syntax_error(text, label, message)
        if found is not None:
            raise InventoryError([found]) from None
        where = _locate_yaml_problem(text)
        raise InventoryError([f"{label}: {where}not valid YAML: {' '.join(message.split())}"]) from None
    # yaml-rs drops tags (`!custom x` is read as "x") and anchors: find them in libyaml's events (inventory_scan.py).
    if may_have_tags(text) or may_have_anchors(text):
        found = find_tag_or_alias(text, label)
        if found is not None:
            raise InventoryError([found])
    # yaml-rs reads several documents as the list of them.
    if isinstance(document, list) and (found := second_document(text, label)) is not None:
        raise InventoryError([found])
    return document


def _locate_yaml_problem(text: str) -> str:
    """`<path> (line N): ` of the first construct the stack-file reader (components/ground/yamlv3.py) also refuses
    (a tag, a duplicate key, a date...), so that the message names the entry; empty when it finds none."""

    try:
        load_document(text)
    except YamlProblem as problem:
        path = render_path(problem.path) if problem.path else ""
        line = f" (line {problem.line})" if problem.line else ""
        return f"{path}{line}: " if path else (f"line {problem.line}: " if problem.line else "")
    except Exception:  # locating is best effort; the original message stands
        return ""
    return ""


# --- expanding the references ------------------------------------------------------------------------


def migration_hint(
    section: str, keys: tuple[str, ...], stack: str, *, stack_file: str | None = None, inventory_dir: str = ""
) -> str:
    """How to move an inline inventory out: the `migrate-inventory` command for this stack file and the file it writes.

    `stack_file`: the stack file when it is not `Pulumi.<stack>.yaml` of the project (given with `--config`);
    `inventory_dir`: where the inventory goes, as the stack file will name it (`scripts/migrate_inventory.py`
    `inventory_prefix`: beside the stack file), "" for the project."""
    what = " and ".join(f"{section}.{key}" for key in keys)
    file = f"{inventory_dir}inventory/{stack}/{DEFAULT_FILES[section]}"
    config = f" --config {stack_file}" if stack_file else ""
    return (
        f"inline inventories are not read from the stack config any more: move {what} to a file with "
        f"`./hpcforge migrate-inventory --stack {stack}{config}` (it writes {file} and replaces the keys by "
        f"`inventory: {{file: {file}}}`), or do it by hand"
    )


def expand_inventories(  # noqa: PLR0912 (one branch per way an inventory reference is wrong, each naming its key)
    data: dict[str, Any], root: Path, stack: str = "STACK", core_strings: Collection[str] = ()
) -> tuple[dict[str, Any], dict[tuple[str, str], tuple[str, str]]]:
    """Replace each `inventory` reference by the file's lists.

    The files named (as written) in `core_strings` are read with `read_yaml_file(..., core_strings=True)`.

    Returns (data, sources): sources maps (section, key), e.g. ("provisioning", "hosts"), to
    (file as written, key in the file) for error messages. Raises InventoryError with every problem.
    """
    problems: list[str] = []
    sources: dict[tuple[str, str], tuple[str, str]] = {}
    result = dict(data)
    for kind in KINDS:
        section = result.get(kind.section)
        if not isinstance(section, Mapping):
            continue
        section = dict(section)
        inline = tuple(key for key in kind.keys if key in section)
        if inline and not kind.inline_allowed:
            for key in inline:
                problems.append(f"hpcforge:{kind.section}.{key}: {migration_hint(kind.section, kind.keys, stack)}")
            continue
        ref = section.get("inventory")
        if ref is None:
            continue
        if not isinstance(ref, Mapping) or not isinstance(ref.get("file"), str) or not ref.get("file"):
            problems.append(f"hpcforge:{kind.section}.inventory.file: required (the path of the inventory file)")
            continue
        name = str(ref["file"])
        path = _inventory_path(name, root)
        try:
            document, digest = read_yaml_file(path, name, core_strings=name in core_strings)
        except InventoryError as error:
            problems.extend(error.messages)
            continue
        pinned = ref.get("sha256")
        if isinstance(pinned, str) and pinned and pinned != digest:
            problems.append(
                f"hpcforge:{kind.section}.inventory.sha256: {name} has sha256 {digest}, not the pinned {pinned} "
                "(update the pin if the change is intended)"
            )
            continue
        if document is None:
            document = {}
        if not isinstance(document, Mapping):
            problems.append(f"{name}: expected a mapping with the keys {', '.join(kind.keys)}")
            continue
        unknown = [key for key in document if key not in kind.keys]
        for key in unknown:
            problems.append(f"{name}: {key}: unknown key (allowed: {', '.join(kind.keys)})")
        if unknown:
            continue
        twice = [key for key in inline if key in document]
        for key in twice:
            problems.append(
                f"hpcforge:{kind.section}.{key}: set both inline and in {name}; keep one (large values belong in the file)"
            )
        if twice:
            continue
        for key in kind.keys:
            if key in document:
                section[key] = document[key]
                sources[(kind.section, key)] = (name, key)
        section["inventory"] = {**ref, "sha256": digest}
        result[kind.section] = section
    if problems:
        raise InventoryError(problems)
    return result, sources


BUILD_CHUNK = 8192
"""Inventory entries validated in one call: large enough that pydantic-core does the work, small enough that the parsed
YAML and the models of a 100,000-host inventory are not both in memory whole."""

_ADAPTERS: dict[type, TypeAdapter[list[Any]]] = {}


def build_items(data: dict[str, Any], sources: Mapping[tuple[str, str], tuple[str, str]]) -> set[str]:
    """Turn each inventory entry into its model in place, dropping the parsed YAML as it goes.

    Entries are validated a chunk at a time (`BUILD_CHUNK`), each chunk in one pydantic-core call (a TypeAdapter over
    the list), after one search of the whole chunk for what `StrictModel`'s per-model check refuses (`bulk_clean`;
    when it finds anything, the chunk's models run their own checks, which name the field). A 100,000-host inventory
    parsed is ~150 MB of dicts and validated ~200 MB of models: converting chunk by chunk keeps one of the two in
    memory at a time, not both. From the first chunk that does not validate on, the entries stay as parsed, so
    validating the whole config reports every problem under its index, as before. Returns the files (as named in the
    config) where the first entry that does not validate refused a number: it may be a string of the core schema
    (inventory_numbers.py).
    """
    models: dict[tuple[str, str], Any] = {
        ("provisioning", "hosts"): Host,
        ("directory", "groups"): PosixGroup,
        ("directory", "users"): PosixUser,
    }
    refused_numbers: set[str] = set()
    for (section, key), model in models.items():
        if (section, key) not in sources:
            continue
        items = data[section].get(key)
        if not isinstance(items, list):
            continue
        adapter = _ADAPTERS.get(model)
        if adapter is None:
            adapter = _ADAPTERS[model] = TypeAdapter(list[model])  # type: ignore[valid-type]
        for start in range(0, len(items), BUILD_CHUNK):
            chunk = items[start : start + BUILD_CHUNK]
            context = {PRECHECKED: True} if bulk_clean(model, chunk) else None
            try:
                items[start : start + BUILD_CHUNK] = adapter.validate_python(chunk, context=context)
            except ValidationError as error:
                if _first_entry_refuses_a_number(error):
                    refused_numbers.add(sources[(section, key)][0])
                break
            except (ValueError, TypeError):
                break
    return refused_numbers


def _first_entry_refuses_a_number(error: ValidationError) -> bool:
    """`refuses_a_number_in` of the first entry of a list that did not validate (what validating it alone raised)."""
    errors = error.errors(include_url=False)
    first = min((e["loc"][0] for e in errors if e["loc"] and isinstance(e["loc"][0], int)), default=None)
    return refuses_a_number_in([e for e in errors if e["loc"][:1] == (first,)])


def _inventory_path(name: str, root: Path) -> Path:
    return Path(name) if Path(name).is_absolute() else root / name


def with_core_candidates(names: Collection[str], root: Path) -> set[str]:
    """The files among `names` that hold a token yaml-rs reads as a number and the core schema as a string
    (`inventory_numbers.last_candidate_line`: one regex search per file, no parsing)."""
    found: set[str] = set()
    for name in names:
        try:
            with _inventory_path(name, root).open("rb") as handle:
                text = handle.read(MAX_INVENTORY_BYTES + 1).decode("utf-8", errors="replace")
        except OSError:
            continue
        if last_candidate_line(text):
            found.add(name)
    return found


__all__ = [
    "InventoryError",
    "Yaml12Dumper",
    "Yaml12Loader",
    "expand_inventories",
    "read_yaml_file",
    "with_core_candidates",
]
