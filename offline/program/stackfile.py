"""Read a `Pulumi.<stack>.yaml` the way the Pulumi CLI hands it to a program.

How the CLI does it (pulumi `sdk/go/common/workspace/loaders.go`, `LoadProjectStackBytes`): the
file is unmarshalled with gopkg.in/yaml.v3 (see `components/ground/yamlv3.py` for its scalar rules), keys of
every mapping must be strings (`SimplifyMarshalledProject`), `config` keys without a namespace get
the project's name (`stackConfigNamespacedWithProject`), and each value becomes the string the
program receives (`sdk/go/common/resource/config/object.go`, `MarshalString`): a string as its
text, a number or boolean as its JSON text, null as `null`, lists and mappings as Go's JSON.

Encrypted values (`secure: v1:...`) cannot be decrypted without the stack's secrets provider, so
offline they become a recognisable placeholder and their keys are reported as secret.
Anything the CLI would refuse, or would pass on as something the user did not mean (an unquoted
date, `.inf`, `!!binary`), is a `StackFileError` naming the key path and line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.ground.yamlv3 import PathPart, Timestamp, YamlProblem, go_json, go_json_float, load_document
from components.paths import PROJECT_ROOT
from components.site.inventory_scan import render_path

MAX_MESSAGES = 20
"""Problems listed in one error; the rest are counted."""


class StackFileError(Exception):
    """The stack file cannot be read; `messages` has one line per problem."""

    def __init__(self, messages: list[str] | str) -> None:
        self.messages = [messages] if isinstance(messages, str) else messages
        super().__init__("\n".join(self.messages))


@dataclass(frozen=True)
class StackFile:
    name: str
    path: Path
    config: dict[str, str]
    secret_keys: list[str] = field(default_factory=list)


def _placeholder(key: str) -> str:
    return f"offline-placeholder-for-secret-{key.replace(':', '-')}"


def _is_secure(value: Any) -> bool:
    # object.go isSecureValue: a mapping of exactly one key "secure" with a string value.
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str)


def _check_json(value: Any, path: tuple[PathPart, ...], problems: list[str]) -> None:
    """Name every value that JSON (and so a Pulumi config value) cannot carry faithfully."""
    if isinstance(value, Timestamp):
        problems.append(
            f"{render_path(path)}: {value.text} is an unquoted date, which the Pulumi CLI passes on as "
            f'{value.go_string()!r}; quote it ("{value.text}") to keep it as written'
        )
    elif isinstance(value, float) and not math.isfinite(value):
        problems.append(
            f"{render_path(path)}: {'.nan' if math.isnan(value) else ('-.inf' if value < 0 else '.inf')} is not a number JSON can carry (the Pulumi CLI refuses it); "
            "give a finite number or quote it"
        )
    elif isinstance(value, dict):
        if _is_secure(value):
            return
        for key, item in value.items():
            _check_json(item, (*path, key), problems)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, (*path, index), problems)


def _replace_secure(value: Any, key: str, found: list[bool]) -> Any:
    if _is_secure(value):
        found.append(True)
        return _placeholder(key)
    if isinstance(value, dict):
        return {k: _replace_secure(v, f"{key}.{k}", found) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_secure(v, f"{key}[{i}]", found) for i, v in enumerate(value)]
    return value


def config_string(value: Any) -> str:
    """The string the program receives for one config value (object.go MarshalString)."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return go_json_float(value)
    return go_json(value)


def stack_path(stack: str, root: Path = PROJECT_ROOT) -> Path:
    return root / f"Pulumi.{stack}.yaml"


def _project_name(stack_file: Path) -> str:
    """The `name` of the Pulumi.yaml beside the stack file (else the repository's)."""
    for candidate in (stack_file.parent / "Pulumi.yaml", PROJECT_ROOT / "Pulumi.yaml"):
        try:
            document = load_document(candidate.read_text(), str(candidate))
        except (OSError, YamlProblem):
            continue
        if isinstance(document, dict) and isinstance(document.get("name"), str):
            return str(document["name"])
    return "hpcforge"


def _capped(messages: list[str]) -> list[str]:
    if len(messages) <= MAX_MESSAGES:
        return messages
    return [*messages[:MAX_MESSAGES], f"... and {len(messages) - MAX_MESSAGES} more problems like these"]


def parse_stack_text(text: str, source: str, project: str = "hpcforge") -> tuple[dict[str, str], list[str]]:  # noqa: PLR0912 (one branch per way the Pulumi CLI refuses a stack file)
    """(config key -> the string the program receives, secret keys) of a stack file's text."""
    try:
        document = load_document(text, source)
    except YamlProblem as problem:
        path = problem.path[1:] if problem.path[:1] == ("config",) else problem.path
        if len(path) > 8:
            path = path[:8]
        where = render_path(path) + ("..." if len(problem.path) > 9 else "")
        line = f" (line {problem.line})" if problem.line else ""
        raise StackFileError(f"{source}{line}: {where + ': ' if where else ''}{problem.message}") from None
    if document is None:
        return {}, []
    if not isinstance(document, dict):
        raise StackFileError(f"{source}: expected a mapping with a 'config' key")
    config = document.get("config")
    if config is None:
        return {}, []
    if not isinstance(config, dict):
        raise StackFileError(f"{source}: 'config' must be a mapping of keys to values")
    problems: list[str] = []
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    for raw_key, value in config.items():
        # config.ParseKey (resource/config/key.go): `<namespace>:<name>` or `<namespace>:config:<name>`;
        # a key without ':' is given the project's namespace (workspace/loaders.go).
        parts = raw_key.split(":")
        if len(parts) == 1:
            key = f"{project}:{raw_key}"
        elif len(parts) == 2 and all(parts):
            key = raw_key
        elif len(parts) == 3 and parts[1] == "config" and parts[0] and parts[2]:
            key = f"{parts[0]}:{parts[2]}"
        else:
            problems.append(
                f"{raw_key}: not a configuration key (keys have the form `<namespace>:<name>`, e.g. {project}:domain)"
            )
            continue
        if key in values:
            problems.append(f"{raw_key}: the key {key} is given twice")
            continue
        before = len(problems)
        _check_json(value, (key,), problems)
        if len(problems) > before:
            continue
        found: list[bool] = []
        plain = _replace_secure(value, key, found)
        if found:
            secret_keys.append(key)
        values[key] = config_string(plain)
    if problems:
        raise StackFileError([f"{source}: {message}" for message in _capped(problems)])
    return values, secret_keys


def read_stack_file(path: Path, name: str | None = None) -> StackFile:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StackFileError(f"{path}: no such stack file") from None
    except UnicodeDecodeError as exc:
        raise StackFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise StackFileError(f"{path}: {exc.strerror}") from None
    values, secret_keys = parse_stack_text(text, str(path), _project_name(path))
    stack_name = name or path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    return StackFile(name=stack_name, path=path, config=values, secret_keys=secret_keys)
