"""The environment the Pulumi CLI gives the program and the policy packs, and the kernel's limits on it.

The CLI hands the stack config over in ONE environment variable, `PULUMI_CONFIG`:
- to Python policy packs: `constructEnv`/`constructConfig` in pulumi's sdk/go/common/resource/plugin/analyzer_plugin.go
  (`os.Environ()` plus `PULUMI_CONFIG`, `PULUMI_ORGANIZATION`, `PULUMI_PROJECT`, `PULUMI_STACK`,
  `PULUMI_DRY_RUN`, each only when non-empty; the config is `json.Marshal` of a `map[string]string`);
- to the program, through the Python language host: `constructConfig`/`constructConfigSecretKeys` in
  sdk/python/cmd/pulumi-language-python/main.go (`PULUMI_CONFIG`, `PULUMI_CONFIG_SECRET_KEYS`).

Go's `encoding/json` writes a map with its keys sorted, no spaces, and `<`, `>`, `&`, U+2028 and
U+2029 escaped as `\\u003c` ... (HTML-safe by default); `go_json_string_map` writes the same bytes.

Linux refuses an `execve` whose single argument or environment string (`NAME=value` and its NUL)
is longer than MAX_ARG_STRLEN (32 pages: 131,072 bytes; include/uapi/linux/binfmts.h, checked in
fs/exec.c copy_strings), or whose strings and pointers together exceed
max(min(3/4 of _STK_LIM = 6 MiB, RLIMIT_STACK / 4), ARG_MAX = 128 KiB) (fs/exec.c
bprm_stack_limits). The failure is E2BIG, which Go reports as `fork/exec <binary>: argument list
too long`; the CLI wraps it as `policy pack "<name>" failed to start: ...` (analyzer_plugin.go
NewPolicyAnalyzer) or, for the program, `Problem executing program (could not run language
executor): ...` (pulumi-language-python). `check_exec` applies the same rules before a process is
started, so the offline runner refuses exactly what the CLI could not start.
"""

from __future__ import annotations

import json
import resource
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PAGE_SIZE = 4096
MAX_ARG_STRLEN = 32 * PAGE_SIZE
"""Longest single argv/envp string, its terminating NUL included (131,072 bytes)."""
ARG_MAX = 32 * PAGE_SIZE
"""The floor of the total argv+envp budget, whatever the stack limit."""
STK_LIM = 8 * 1024 * 1024
POINTER_SIZE = 8


def go_json_string_map(values: Mapping[str, str]) -> str:
    """`json.Marshal(map[string]string)` as Go writes it (sorted keys, compact, HTML-safe escapes)."""
    text = json.dumps(dict(sorted(values.items())), ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def go_json_string_list(values: Sequence[str]) -> str:
    text = json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def policy_pack_environment(
    base: Mapping[str, str], config: Mapping[str, str], *, organization: str, project: str, stack: str, dry_run: bool
) -> dict[str, str]:
    """What analyzer_plugin.go's constructEnv adds to the CLI's own environment for a Python pack."""
    env = dict(base)
    added = {
        "PULUMI_CONFIG": go_json_string_map(config) if config is not None else "",
        "PULUMI_ORGANIZATION": organization,
        "PULUMI_PROJECT": project,
        "PULUMI_STACK": stack,
        "PULUMI_DRY_RUN": "true" if dry_run else "false",
    }
    env.update({key: value for key, value in added.items() if value != ""})
    return env


def program_environment(base: Mapping[str, str], config: Mapping[str, str], secret_keys: Sequence[str]) -> dict[str, str]:
    """The config part of what pulumi-language-python gives the program's process."""
    env = dict(base)
    env["PULUMI_CONFIG"] = go_json_string_map(config)
    env["PULUMI_CONFIG_SECRET_KEYS"] = go_json_string_list(secret_keys)
    return env


@dataclass(frozen=True)
class ExecRefusal:
    """Why execve would fail with E2BIG."""

    what: str
    """`environment variable PULUMI_CONFIG`, `argument 3`, or `arguments and environment together`."""
    size: int
    """Bytes the kernel counts (the string with its NUL, or the total with pointers)."""
    limit: int


class ArgumentListTooLong(OSError):  # noqa: N818 (named after the errno text)
    """E2BIG, raised before the process is started, with the CLI's wording and the reason."""

    def __init__(self, cli_message: str, refusal: ExecRefusal) -> None:
        self.cli_message = cli_message
        self.refusal = refusal
        super().__init__(
            7,
            f"{cli_message}\n  ({refusal.what} is {refusal.size:,} bytes; Linux allows {refusal.limit:,}. "
            "Keep what grows with the site out of the stack config: inventories belong in files "
            "(`./hpcforge migrate-inventory --stack STACK`).)",
        )


def total_limit() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    stack_quarter = STK_LIM // 4 * 3 if soft == resource.RLIM_INFINITY else soft // 4
    return max(min(STK_LIM // 4 * 3, stack_quarter), ARG_MAX)


def exec_refusal(argv: Sequence[str], env: Mapping[str, str]) -> ExecRefusal | None:
    """The first reason execve(argv, env) would fail with E2BIG, or None."""
    total = 0
    for index, arg in enumerate(argv):
        size = len(arg.encode()) + 1
        if size > MAX_ARG_STRLEN:
            return ExecRefusal(f"argument {index}", size, MAX_ARG_STRLEN)
        total += size
    for name, value in env.items():
        size = len(name.encode()) + 1 + len(value.encode()) + 1
        if size > MAX_ARG_STRLEN:
            return ExecRefusal(f"environment variable {name}", size, MAX_ARG_STRLEN)
        total += size
    total += (max(len(argv), 1) + len(env)) * POINTER_SIZE
    limit = total_limit()
    if total > limit:
        return ExecRefusal("arguments and environment together", total, limit)
    return None


def check_exec(argv: Sequence[str], env: Mapping[str, str], cli_prefix: str) -> None:
    """Raise ArgumentListTooLong as the CLI would report it: `<cli_prefix>fork/exec <argv[0]>: argument list too long`."""
    refusal = exec_refusal(argv, env)
    if refusal is not None:
        raise ArgumentListTooLong(f"{cli_prefix}fork/exec {argv[0]}: argument list too long", refusal)
