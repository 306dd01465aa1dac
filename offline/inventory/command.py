"""`./hpcforge migrate-inventory`: move inline hosts, users and groups from a stack file into inventory files
(scripts/migrate_inventory.py); and the program's hints to run it, made true for a stack file given with `--config`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..program.stackfile import stack_path
from ..program.tool import EXIT_CONFIG, EXIT_OK, add_stack_arguments


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    migrate = commands.add_parser(
        "migrate-inventory", help="move inline hosts, users and groups from the stack file into inventory/<stack>/"
    )
    add_stack_arguments(migrate)
    migrate.add_argument(
        "--slurm", action="store_true", help="also move hpcforge:slurm.topology and .accounts into inventory/<stack>/slurm.yaml"
    )


def run(args: argparse.Namespace) -> int:
    from scripts.migrate_inventory import MigrationError, migrate_inventory

    try:
        migration = migrate_inventory(args.stack, args.config, slurm=args.slurm)
    except MigrationError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    for name in migration.files:
        print(f"wrote {name}")
    print(f"rewrote {args.config or stack_path(args.stack)} (the keys now name the files)")
    return EXIT_OK


def stack_file_hints(messages: list[str], stack: str, config: Path | None) -> list[str]:
    """The program's messages, with its `migrate-inventory` hints made true for a stack file given with `--config`.

    The program knows the stack's name, not the file it was read from: its hint names `Pulumi.<stack>.yaml` of the
    project and the inventory files there. For another stack file, the command needs `--config FILE`, and the
    inventory goes beside that file (scripts/migrate_inventory.py `inventory_prefix`)."""
    if config is None or config.resolve() == stack_path(stack).resolve():
        return messages
    from components.site.inventory import KINDS, migration_hint
    from scripts.migrate_inventory import inventory_prefix

    hints = [
        (
            migration_hint(kind.section, kind.keys, stack),
            migration_hint(kind.section, kind.keys, stack, stack_file=str(config), inventory_dir=inventory_prefix(config)),
        )
        for kind in KINDS
    ]
    result = []
    for message in messages:
        rewritten = message
        for old, new in hints:
            rewritten = rewritten.replace(old, new)
        result.append(rewritten)
    return result
