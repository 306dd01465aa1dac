"""How the offline tool is invoked, how it exits, and the arguments every job over a stack takes."""

from __future__ import annotations

import argparse
from pathlib import Path

COMMAND = "./hpcforge"
"""How the tool is invoked everywhere (the script at the repository root runs `.venv/bin/python -m offline`)."""

EXIT_OK = 0
EXIT_POLICY = 1
EXIT_CONFIG = 2


def add_stack_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument("--config", type=Path, help="read this stack file instead of Pulumi.<stack>.yaml")


def add_preview_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--preview",
        action="store_true",
        help="as `pulumi preview` of a new stack: outputs that providers compute are unknown",
    )
