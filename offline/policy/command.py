"""`./hpcforge check` and `./hpcforge policy-config`: the policy packs over a stack (the run: offline/policy/check.py),
and the policy configuration a stack file's environment kind selects."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from components.paths import PROJECT_ROOT

from ..charts.command import add_chart_arguments
from ..program.stackfile import StackFileError, read_stack_file, stack_path
from ..program.tool import EXIT_CONFIG, EXIT_OK, add_preview_argument, add_stack_arguments

DEFAULT_PACKS = ("policies/gitops-drift", "policies/security", "policies/slurm-contract")

POLICY_CONFIGS = {"production": "policies/config/prod.json", "development": "policies/config/dev.json"}
"""Policy configuration per environment kind: mandatory for production, advisory for development."""


def add_check_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser("check", help="run policy packs over the gRPC Analyzer protocol")
    add_stack_arguments(check)
    add_preview_argument(check)
    check.add_argument(
        "--policy-pack",
        action="append",
        type=Path,
        default=[],
        help="policy pack directory (repeatable; default: the three packs of policies/ with the policy configuration "
        "of the stack's hpcforge:environmentKind, as `make check` runs them)",
    )
    check.add_argument(
        "--policy-pack-config",
        action="append",
        type=Path,
        default=[],
        help="policy config JSON for the pack at the same position (repeatable)",
    )
    check.add_argument(
        "--no-reuse",
        action="store_true",
        help="run the program even when `offline render` kept a recording of the same inputs (offline/program/recording.py)",
    )
    add_chart_arguments(check)


def add_policy_config_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    policy = commands.add_parser(
        "policy-config", help="print the policy configuration file that the stack's hpcforge:environmentKind selects"
    )
    policy.add_argument("--config", type=Path, required=True, help="stack file")


def policy_config_for(path: Path) -> str:
    """The policy configuration of a stack file, chosen by its `hpcforge:environmentKind`."""
    stack = read_stack_file(path)
    kind = stack.config.get("hpcforge:environmentKind")
    if kind not in POLICY_CONFIGS:
        shown = "missing" if kind is None else f"{kind!r}"
        raise StackFileError(f"{path}: hpcforge:environmentKind: {shown}; expected production or development")
    return POLICY_CONFIGS[kind]


def check(args: argparse.Namespace) -> int:
    """`check`: without --policy-pack, the three packs with the stack's policy configuration."""
    from .check import run_check

    if not args.policy_pack:
        if args.policy_pack_config:
            print("error: --policy-pack-config needs the --policy-pack it configures", file=sys.stderr)
            return EXIT_CONFIG
        policy = policy_config_for(args.config or stack_path(args.stack))
        args.policy_pack = [PROJECT_ROOT / pack for pack in DEFAULT_PACKS]
        args.policy_pack_config = [PROJECT_ROOT / policy] * len(DEFAULT_PACKS)
        print(f"policy packs: {', '.join(DEFAULT_PACKS)} with {policy} (hpcforge:environmentKind)", file=sys.stderr)
    return run_check(args)


def policy_config(args: argparse.Namespace) -> int:
    print(policy_config_for(args.config))
    return EXIT_OK
