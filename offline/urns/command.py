"""`./hpcforge urns`: compare the stacks' URNs with their snapshots in tests/urns/ (offline/urns/snapshot.py);
`--update` rewrites them. Exit 1 when a URN is removed without an alias."""

from __future__ import annotations

import argparse

from components.paths import PROJECT_ROOT

from ..program.engine import run_program
from ..program.stackfile import read_stack_file, stack_path
from ..program.tool import EXIT_OK, EXIT_POLICY
from . import snapshot


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    urns = commands.add_parser("urns", help="compare the stacks' URNs with tests/urns/<stack>.txt (offline/urns/snapshot.py)")
    urns.add_argument("--stack", action="append", default=[], help="stack name (repeatable; default: dev and prod)")
    urns.add_argument("--update", action="store_true", help="rewrite the snapshots (say why in the commit message)")


def run(args: argparse.Namespace) -> int:
    failed = False
    for name in args.stack or ["dev", "prod"]:
        stack = run_program(read_stack_file(stack_path(name), name=name), PROJECT_ROOT)
        path = snapshot.snapshot_path(name)
        diff = snapshot.compare(snapshot.read_snapshot(path) if path.exists() else [], stack)
        for line in snapshot.report(name, diff):
            print(line)
        if args.update:
            snapshot.write_snapshot(stack, path)
            print(
                f"{name}: wrote {path.relative_to(PROJECT_ROOT)} ({len(diff.added)} new, {len(diff.removed) + len(diff.aliased)} gone);"
                " say in the commit message why URNs were removed"
            )
        elif not diff.ok:
            failed = True
    return EXIT_POLICY if failed else EXIT_OK
