"""Generate the docs that are made, not written: docs/configuration.md, and every generated block of the other docs.

    python -m docs.generate                      # (re)write docs/configuration.md and every generated block
    python -m docs.generate --check              # exit 1 when any of them is stale (a hand edit included)
    python -m docs.generate --only reference     # docs/configuration.md only (--output FILE: write or check FILE)
    python -m docs.generate --only examples      # the generated blocks only

docs/configuration.md is the reference of every `hpcforge:*` key, written from the pydantic models
(docs/reference.py). A generated block is a fenced block between `<!-- generated: PRODUCER ARGS -->` and
`<!-- end generated -->` in README.md or a page under docs/ (docs/blocks.py); its producer (docs/examples.py) makes
it from the real render or the real command of a named stack or variant (docs/sources.py). The prose around the
blocks is hand-written and stays as it is.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

from components.paths import PROJECT_ROOT
from docs.blocks import BlockError, find, refresh
from docs.reference import OUTPUT, all_rows, render

STALE_MESSAGE = "docs/configuration.md is stale: run make docs"


def pages(root: Path = PROJECT_ROOT) -> list[Path]:
    """The files that may hold generated blocks: README.md and every page under docs/ but the reference."""
    found = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [path for path in found if path.resolve() != (root / "docs" / "configuration.md").resolve()]


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def check(path: Path, text: str) -> bool:
    """True when the file at `path` holds exactly `text`."""
    return path.is_file() and path.read_text(encoding="utf-8") == text


def _print_diff(old_text: str, new_text: str) -> None:
    old = old_text.splitlines()
    diff = list(difflib.unified_diff(old, new_text.splitlines(), "committed", "generated", lineterm="", n=1))
    for line in diff[:40]:
        print(f"  {line}", file=sys.stderr)
    if len(diff) > 40:
        print(f"  ... ({len(diff) - 40} more diff lines)", file=sys.stderr)


def reference(output: Path, check_only: bool) -> int:
    text = render()
    if check_only:
        if check(output, text):
            print(f"{_relative(output)} is up to date")
            return 0
        message = STALE_MESSAGE if output.resolve() == OUTPUT else f"{_relative(output)} is stale: run make docs"
        print(message, file=sys.stderr)
        _print_diff(output.read_text(encoding="utf-8") if output.is_file() else "", text)
        return 1
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    rows = all_rows()
    undocumented = sum(1 for row in rows if not row.description)
    print(f"wrote {_relative(output)} ({len(rows)} keys, {undocumented} without a description)")
    return 0


def examples(files: Sequence[Path], check_only: bool) -> int:
    """Write (or check) every generated block of `files`; 1 when a block is stale (checking) or cannot be made."""
    from docs.examples import producer_for
    from docs.sources import Sources

    stale = 0
    count = 0
    with Sources() as sources:
        produce = producer_for(sources)
        for path in files:
            old = path.read_text(encoding="utf-8")
            where = _relative(path)
            try:
                marked = find(old, where)
                if not marked:
                    continue
                print(f"{where}: {len(marked)} generated block(s)", file=sys.stderr)
                new = refresh(old, produce, where)
            except BlockError as error:
                print(f"error: {error}", file=sys.stderr)
                return 1
            count += len(marked)
            if new == old:
                continue
            if check_only:
                stale += 1
                print(f"{where}: a generated block is stale (or was edited by hand): run make docs", file=sys.stderr)
                _print_diff(old, new)
            else:
                path.write_text(new, encoding="utf-8")
                print(f"wrote {where}")
    if stale:
        return 1
    print(f"{count} generated block(s) {'up to date' if check_only else 'written'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docs.generate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 when anything is stale")
    parser.add_argument("--only", choices=("reference", "examples"), help="only the reference, or only the generated blocks")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"the reference to write (default: {_relative(OUTPUT)})")
    parser.add_argument("files", nargs="*", type=Path, help="the pages whose generated blocks to write (default: all)")
    args = parser.parse_args(argv)
    only = args.only or ("reference" if args.output.resolve() != OUTPUT else None)
    code = 0
    if only in (None, "reference"):
        code = max(code, reference(args.output, args.check))
    if only in (None, "examples"):
        code = max(code, examples(args.files or pages(), args.check))
    return code


if __name__ == "__main__":
    sys.exit(main())
