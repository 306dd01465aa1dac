"""What a policy check found, printed like `pulumi preview`'s policy summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..program.engine import RecordedStack
from ..program.words import plural
from .driver import Diagnostic, urn_name


@dataclass
class CheckResult:
    exit_code: int
    diagnostics: list[Diagnostic]
    packs: list[tuple[str, str, Path]]
    """(name, version, path) of every pack that ran."""
    errors: list[str]
    analyzed: int = 0
    pack_memory_mib: dict[str, float] = field(default_factory=dict)
    """Peak resident memory of each pack process (read just before it is stopped)."""

    @property
    def violations(self) -> list[Diagnostic]:
        """Every diagnostic (all levels)."""
        return list(self.diagnostics)

    def select(self, policy: str | None = None, level: str | None = None) -> list[Diagnostic]:
        return [d for d in self.diagnostics if (policy is None or d.policy == policy) and (level is None or d.level == level)]


def _supports_emoji(stream: TextIO) -> bool:
    try:
        "✅❌⚠️".encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _describe(urn: str, types: Mapping[str, tuple[str, str]]) -> str:
    if not urn:
        return "stack"
    type_, name = types.get(urn, (urn.split("::")[2].rsplit("$", 1)[-1] if urn.count("::") >= 3 else "?", urn_name(urn)))
    return f"{type_}: {name}"


def print_report(result: CheckResult, stack: RecordedStack, out: TextIO) -> None:
    emoji = _supports_emoji(out)
    ok, failed, warn = ("✅", "❌", "⚠️ ") if emoji else ("[ok]", "[failed]", "[warn]")
    types = {r.urn: (r.type, r.name) for r in stack.resources}
    print("Policies:", file=out)
    for name, version, path in result.packs:
        mine = [d for d in result.diagnostics if d.pack == name]
        mandatory = any(d.level == "mandatory" for d in mine)
        mark = failed if mandatory else warn if mine else ok
        print(f"    {mark} {name}@v{version} (local: {path})", file=out)
        for d in sorted(mine, key=lambda d: (d.level != "mandatory", d.policy, d.urn)):
            print(f"        - [{d.level}]  {d.policy}  ({_describe(d.urn, types)})", file=out)
            for line in d.message.splitlines():
                print(f"          {line}", file=out)
    counts = {level: len(result.select(level=level)) for level in ("mandatory", "advisory")}
    print(
        f"\nPolicy summary: {plural(len(result.packs), 'pack')}, {plural(result.analyzed, 'resource')} analyzed: "
        f"{counts['mandatory']} mandatory, {plural(counts['advisory'], 'advisory violation')}",
        file=out,
    )
