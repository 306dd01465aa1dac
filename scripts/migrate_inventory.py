"""`./hpcforge migrate-inventory --stack STACK` (offline/inventory/command.py calls this): move inline inventories into
files. A one-off migration, so it lives in scripts/ with the others, not in the runner.

Hosts (`hpcforge:provisioning.hosts`) and directory users and groups (`hpcforge:directory.users`,
`.groups`) used to live in the stack config. This writes them to `inventory/STACK/hosts.yaml` and
`inventory/STACK/users.yaml` and replaces the keys in the stack file by
`inventory: {file: inventory/STACK/...}`. With `--slurm` it also moves the Slurm topology and accounts
(`hpcforge:slurm.topology`, `.accounts`, which may stay inline while small) to `inventory/STACK/slurm.yaml`.
The stack file is edited as text (its comments and the
order of the other keys stay); the result is read back and compared with the original before
anything is written, so a stack file this tool cannot edit safely is left as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.paths import PROJECT_ROOT
from components.site.inventory import DEFAULT_FILES, KINDS, Yaml12Dumper, Yaml12Loader


class MigrationError(Exception):
    pass


@dataclass(frozen=True)
class Migration:
    stack_text: str
    """The new stack file."""
    files: dict[str, str]
    """Inventory file (relative to the project) -> its YAML text."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _section_block(lines: list[str], section: str) -> tuple[int, int, int] | None:
    """(first child line, end, child indent) of `hpcforge:<section>:` in block style, or None if absent."""
    pattern = re.compile(rf"^(\s*)hpcforge:{re.escape(section)}:\s*(#.*)?$")
    for index, line in enumerate(lines):
        match = pattern.match(line)
        if match is None:
            if re.match(rf"^\s*hpcforge:{re.escape(section)}:\s*\S", line):
                raise MigrationError(f"hpcforge:{section} is written in flow style; move its inventory by hand")
            continue
        parent = len(match.group(1))
        end = index + 1
        while end < len(lines) and (not _is_content(lines[end]) or _indent(lines[end]) > parent):
            end += 1
        children = [_indent(line) for line in lines[index + 1 : end] if _is_content(line)]
        if not children:
            return None
        return index + 1, end, min(children)
    return None


def _key_range(lines: list[str], start: int, end: int, indent: int, key: str) -> tuple[int, int] | None:
    pattern = re.compile(rf"^ {{{indent}}}{re.escape(key)}:(\s|$)")
    for index in range(start, end):
        if pattern.match(lines[index]):
            stop = index + 1
            while stop < end:
                line = lines[stop]
                if _is_content(line) and (
                    _indent(line) < indent or (_indent(line) == indent and not line.lstrip().startswith("- "))
                ):
                    break
                stop += 1
            while stop > index + 1 and not _is_content(lines[stop - 1]):
                stop -= 1  # keep blank lines and comments that precede the next key
            return index, stop
    return None


def _dump(document: dict[str, Any]) -> str:
    text: str = yaml.dump(document, Dumper=Yaml12Dumper, sort_keys=False, default_flow_style=None, width=100_000)
    return text


def inventory_prefix(stack_file: Path, root: Path = PROJECT_ROOT) -> str:
    """Where the inventory of `stack_file` goes, as the stack file names it: beside the stack file. Inventory files
    are read relative to the project (`root`), so "" for a stack file in the project's directory, its directory
    relative to the project when inside it, else its absolute directory."""
    directory = stack_file.resolve().parent
    project = root.resolve()
    if directory == project:
        return ""
    if directory.is_relative_to(project):
        return f"{directory.relative_to(project).as_posix()}/"
    return f"{directory.as_posix()}/"


def plan_migration(  # noqa: PLR0912 (one branch per key moved and per refusal)
    stack: str, stack_text: str, *, slurm: bool = False, prefix: str = "", stack_file_name: str | None = None
) -> Migration:
    """The new stack file and inventory files; MigrationError if the stack file cannot be edited safely.
    `slurm`: also move `slurm.topology` and `slurm.accounts` (otherwise they stay inline). `prefix`: the directory the
    inventory files go to, as the stack file names them (`inventory_prefix`); `stack_file_name`: the stack file's
    name, for the files' header (default `Pulumi.<stack>.yaml`)."""
    try:
        document = yaml.load(stack_text, Loader=Yaml12Loader) or {}
    except yaml.YAMLError as error:
        raise MigrationError(f"the stack file is not valid YAML: {error}") from None
    config = document.get("config") or {}
    lines = stack_text.splitlines(keepends=True)
    files: dict[str, str] = {}
    expected = dict(config)
    for kind in KINDS:
        if kind.inline_allowed and not slurm:
            continue
        values = config.get(f"hpcforge:{kind.section}")
        if not isinstance(values, dict) or not any(key in values for key in kind.keys):
            continue
        if "inventory" in values:
            raise MigrationError(f"hpcforge:{kind.section} has both an inventory file and inline {', '.join(kind.keys)}")
        found = _section_block(lines, kind.section)
        if found is None:
            raise MigrationError(f"hpcforge:{kind.section}: cannot find the section in block style; move it by hand")
        start, end, indent = found
        ranges = []
        for key in kind.keys:
            if key in values:
                key_range = _key_range(lines, start, end, indent, key)
                if key_range is None:
                    raise MigrationError(f"hpcforge:{kind.section}.{key}: cannot find the key; move it by hand")
                ranges.append(key_range)
        if _contains_secure(values):
            raise MigrationError(f"hpcforge:{kind.section}: holds encrypted values; inventories may not hold secrets")
        name = f"{prefix}inventory/{stack}/{DEFAULT_FILES[kind.section]}"
        header = (
            f"# {' and '.join(kind.keys)} of stack {stack}, named by hpcforge:{kind.section}.inventory in"
            f" {stack_file_name or f'Pulumi.{stack}.yaml'}\n"
        )
        files[name] = header + _dump({key: values[key] for key in kind.keys if key in values})
        first = min(r[0] for r in ranges)
        replacement = [f"{' ' * indent}inventory:\n", f"{' ' * (indent + 2)}file: {name}\n"]
        for begin, stop in sorted(ranges, reverse=True):
            lines[begin:stop] = replacement if begin == first else []
        rest = {key: value for key, value in values.items() if key not in kind.keys}
        expected[f"hpcforge:{kind.section}"] = {**rest, "inventory": {"file": name}}
    if not files:
        also = ", slurm.topology, slurm.accounts" if slurm else ""
        raise MigrationError(f"no inline inventory (provisioning.hosts, directory.users, directory.groups{also}) to move")
    new_text = "".join(lines)
    reread = (yaml.load(new_text, Loader=Yaml12Loader) or {}).get("config") or {}
    if reread != expected:  # mapping equality: key order does not matter
        raise MigrationError("rewriting the stack file as text would change other keys; move the inventory by hand")
    for name, text in files.items():
        kind_keys = yaml.load(text, Loader=Yaml12Loader)
        section = next(k.section for k in KINDS if DEFAULT_FILES[k.section] == Path(name).name)
        original = config[f"hpcforge:{section}"]
        if any(kind_keys[key] != original[key] for key in kind_keys):
            raise MigrationError(f"{name}: writing the inventory would change it; move it by hand")
    return Migration(stack_text=new_text, files=files)


def _contains_secure(value: Any) -> bool:
    if isinstance(value, dict):
        return set(value) == {"secure"} or any(_contains_secure(v) for v in value.values())
    if isinstance(value, list):
        return any(_contains_secure(v) for v in value)
    return False


def migrate_inventory(stack: str, stack_file: Path | None = None, root: Path = PROJECT_ROOT, *, slurm: bool = False) -> Migration:
    """Write the inventory files beside the stack file (named relative to `root`, the project, when inside it) and
    rewrite the stack file; refuses to overwrite files."""
    path = stack_file or root / f"Pulumi.{stack}.yaml"
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise MigrationError(f"{path}: no such stack file") from None
    migration = plan_migration(stack, text, slurm=slurm, prefix=inventory_prefix(path, root), stack_file_name=path.name)
    for name in migration.files:
        if (root / name).exists():
            raise MigrationError(f"{name} already exists; not overwriting it")
    for name, content in migration.files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    path.write_text(migration.stack_text)
    return migration
