"""offline/cli.py only dispatches: every subcommand is built and run by its job's offline/<job>/command.py (issue 37)."""

from __future__ import annotations

import argparse
import re

from offline import cli


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1
    return list(actions[0].choices)


def test_every_subcommand_is_built_and_run_by_a_jobs_command_module() -> None:
    handlers = [*cli.PARSERS, *cli.COMMANDS.values(), *cli.STACK_COMMANDS.values()]
    assert sorted({f.__module__ for f in handlers if not re.fullmatch(r"offline\.\w+\.command", f.__module__)}) == []
    # Each job is one package: the subcommands of a command module are dispatched to that same module.
    assert {f.__module__ for f in cli.PARSERS} == {f.__module__ for f in [*cli.COMMANDS.values(), *cli.STACK_COMMANDS.values()]}


def test_the_parser_knows_exactly_the_dispatched_subcommands_in_their_order() -> None:
    names = _subcommands(cli.build_parser())
    assert set(names) == set(cli.COMMANDS) | set(cli.STACK_COMMANDS)
    assert not set(cli.COMMANDS) & set(cli.STACK_COMMANDS)
    assert names == [
        "preview",
        "render",
        "check",
        "admission",
        "policy-config",
        "migrate-inventory",
        "live-impact",
        "urns",
        "diff",
    ]
