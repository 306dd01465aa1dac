"""Command line of the offline runner.

    ./hpcforge preview --stack dev [--config FILE] [--preview] [--json OUT.json]
    ./hpcforge render  --stack prod [--config FILE] [--preview] --out DIR
    ./hpcforge check   --stack prod [--config FILE] [--preview] --policy-pack DIR [--policy-pack-config FILE] ... [--no-reuse]
    ./hpcforge admission --stack prod [--config FILE] [--preview] [--objects DIR] [--previous-config FILE] [--render-charts ...]
    ./hpcforge policy-config --config FILE   (the policy configuration for the stack's environmentKind)
    ./hpcforge migrate-inventory --stack prod [--config FILE] [--slurm]
    ./hpcforge urns    [--stack dev --stack prod] [--update]
    ./hpcforge live-impact --nodes HOSTLIST (--squeue FILE --sinfo FILE | --slurmrestd URL) [--max-unavailable N] [--format markdown]
    ./hpcforge diff    --stack prod --against REF|FILE|DIR [--drift-against REF] [--config FILE] [--acknowledge] [--squeue FILE --sinfo FILE] [--format text|markdown|json] [--out FILE] [--json FILE]
    ./hpcforge diff    --verify PREDICTION.json --observed DIR
    (render and check: [--render-charts [--charts-from DIR] [--pull-charts]], see docs/charts.md)

`--preview` runs the program as `pulumi preview` of a new stack does: what providers compute when they
create a resource (generated passwords and keys, command output, object status, ids) is unknown, so
whatever the program builds from it is unknown too (printed and rendered as `<unknown>`).

`render` keeps what it recorded under .offline/recordings/; `check` of exactly the same inputs (stack file,
inventory files, program, environment: offline/program/recording.py) reuses it instead of running the program
again, and says so on stderr. HPCFORGE_RECORDING_CACHE=off keeps and reuses nothing.

Exit codes: 0 success; 1 mandatory policy violations (check), anything refused (admission), a URN
removed without an alias (urns) or an unacknowledged outage or data loss (diff, offline/diff/command.py);
2 invalid configuration or usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from components.paths import PROJECT_ROOT

from .admission import command as admission
from .diff import command as diff
from .inventory import command as inventory
from .live import command as live
from .policy import command as policy
from .preview import command as preview
from .program.engine import ProgramConfigError, RecordedStack, run_program
from .program.environ import ArgumentListTooLong
from .program.stackfile import StackFileError, read_stack_file, stack_path
from .program.tool import COMMAND, EXIT_CONFIG
from .render import command as render
from .urns import command as urns

# Each job is offline/<job>/command.py (the engine code they share: offline/program/); this module builds the
# parser from their subcommands and hands the parsed arguments to the job.
PARSERS: tuple[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None], ...] = (
    preview.add_parser,
    render.add_parser,
    policy.add_check_parser,
    admission.add_parser,
    policy.add_policy_config_parser,
    inventory.add_parser,
    live.add_parser,
    urns.add_parser,
    diff.add_parser,
)
"""Each job's subcommand, in the order `--help` lists them."""

#: Commands that run the program themselves, or none (given the parsed arguments).
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "policy-config": policy.policy_config,
    "migrate-inventory": inventory.run,
    "check": policy.check,
    "urns": urns.run,
    "live-impact": live.run,
    "diff": diff.run,
}
#: Commands over the stack that this process runs under the mock engine.
STACK_COMMANDS: dict[str, Callable[[RecordedStack, argparse.Namespace], int]] = {
    "preview": preview.run,
    "admission": admission.run,
    "render": render.run,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for add_parser in PARSERS:
        add_parser(commands)
    return parser


def load_stack(args: argparse.Namespace) -> RecordedStack:
    path = args.config if args.config else stack_path(args.stack)
    stack = read_stack_file(path, name=args.stack)
    if args.command == "render":
        # Kept for a following `offline check` of the same inputs (offline/program/recording.py).
        from .program.recording import record_and_store

        return record_and_store(stack, PROJECT_ROOT, preview=args.preview)
    return run_program(stack, PROJECT_ROOT, preview=args.preview)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command in COMMANDS:
            return COMMANDS[args.command](args)
        stack = load_stack(args)
    except StackFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    except ArgumentListTooLong as error:
        print(f"error: {error.strerror}", file=sys.stderr)
        return EXIT_CONFIG
    except ProgramConfigError as error:
        print("error: invalid hpcforge configuration:", file=sys.stderr)
        for message in inventory.stack_file_hints(error.messages, args.stack, getattr(args, "config", None)):
            print(f"  {message}", file=sys.stderr)
        return EXIT_CONFIG
    return STACK_COMMANDS[args.command](stack, args)
