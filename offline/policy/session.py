"""One check's engine service and policy pack processes, started and configured as the engine does, and
`check_stack`: the packs run on a finished recording."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..program.engine import RecordedStack
from ..program.environ import policy_pack_environment
from ..program.stackfile import StackFile
from .config import PolicyConfig, PolicyRunError, parse_policy_config
from .driver import Diagnostic, analyze_recording
from .packs import (
    ORGANIZATION,
    START_TIMEOUT,
    PackSpec,
    RunningPack,
    configure_pack,
    connect_pack,
    read_port,
    start_engine,
    start_pack,
    stop_pack,
)
from .report import CheckResult, print_report

EXIT_OK = 0


EXIT_POLICY = 1


EXIT_ERROR = 2


def error_message(error: Exception) -> str:
    """gRPC errors carry their message in details()."""
    details = getattr(error, "details", None)
    return str(details()) if callable(details) else str(error)


def given_configs(packs: Sequence[PackSpec]) -> list[dict[str, PolicyConfig] | None]:
    """Each pack's --policy-pack-config, parsed (None where there is none)."""
    given: list[dict[str, PolicyConfig] | None] = []
    for spec in packs:
        if spec.config is None:
            given.append(None)
            continue
        try:
            given.append(parse_policy_config(spec.config.read_text()))
        except OSError as error:
            raise PolicyRunError(f"reading policy config {spec.config}: {error.strerror}") from None
    return given


class PackSession:
    """The engine service and the policy pack processes of one check, started and configured as the engine does."""

    def __init__(self, project: str, stack: str, stack_file: StackFile, err: TextIO) -> None:
        self.project = project
        self.stack = stack
        self.stack_file = stack_file
        self.err = err
        self.server: Any = None
        self.running: list[RunningPack] = []
        self.memory: dict[str, float] = {}

    def start(self, packs: Sequence[PackSpec], given: Sequence[dict[str, PolicyConfig] | None]) -> list[str]:
        """Start the packs and configure them; the policy config's validation errors (nothing is analyzed then)."""
        root_urn = f"urn:pulumi:{self.stack}::{self.project}::pulumi:pulumi:Stack::{self.project}-{self.stack}"
        self.server, engine_address = start_engine(root_urn, self.err)
        env = policy_pack_environment(
            os.environ,
            self.stack_file.config,
            organization=ORGANIZATION,
            project=self.project,
            stack=self.stack,
            dry_run=True,
        )
        for spec in packs:
            self.running.append(start_pack(spec, engine_address, env))
        for pack in self.running:
            read_port(pack, START_TIMEOUT)
        errors: list[str] = []
        for pack, pack_config in zip(self.running, given, strict=True):
            try:
                connect_pack(pack, engine_address, self.stack_file, self.project)
                errors += configure_pack(pack, pack_config)
            except PolicyRunError:
                raise
            except Exception as error:
                raise PolicyRunError(f'policy pack "{pack.spec.path}" failed: {error_message(error)}') from None
        return errors

    @property
    def packs(self) -> list[tuple[str, str, Path]]:
        return [(p.name, p.version, p.spec.path) for p in self.running]

    def stop(self, err: TextIO) -> None:
        """Stop the packs (their peak memory is kept in `memory`) and print what they wrote on stderr to `err`."""
        for pack in self.running:
            stop_pack(pack, self.memory)
            for line in pack.stderr:
                print(f"    [{pack.label}] {line}", file=err)
        if self.server is not None:
            self.server.stop(0)


def check_result(
    stack: RecordedStack, diagnostics: list[Diagnostic], packs: list[tuple[str, str, Path]], memory: dict[str, float]
) -> CheckResult:
    """The result of a check that analyzed `stack` (its resources and the root Stack) on `packs`."""
    return CheckResult(
        exit_code=EXIT_POLICY if any(d.level == "mandatory" for d in diagnostics) else EXIT_OK,
        diagnostics=diagnostics,
        packs=packs,
        errors=[],
        analyzed=len(stack.resources) + 1,
        pack_memory_mib=memory,
    )


def check_stack(
    stack: RecordedStack,
    stack_file: StackFile | None,
    packs: Sequence[PackSpec],
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> CheckResult:
    """Run `packs` against a recorded stack over the Analyzer protocol; print like `pulumi preview`.

    `stack_file` provides the stack config the engine hands the packs (PULUMI_CONFIG, ConfigureStack);
    None sends an empty config.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if stack_file is None:
        stack_file = StackFile(name=stack.stack, path=Path(f"Pulumi.{stack.stack}.yaml"), config={})
    given = given_configs(packs)
    session = PackSession(stack.project, stack.stack, stack_file, err)
    try:
        errors = session.start(packs, given)
        if errors:
            for problem in sorted(errors):
                print(f"error: {problem}", file=err)
            print("error: validating policy config", file=err)
            return CheckResult(EXIT_ERROR, [], session.packs, sorted(errors))
        try:
            diagnostics = analyze_recording(session.running, stack, err)
        except Exception as error:
            raise PolicyRunError(f"failed to run policy: {error_message(error)}") from None
        result = check_result(stack, diagnostics, session.packs, session.memory)
        print_report(result, stack, out)
        return result
    finally:
        session.stop(err)
