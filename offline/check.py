"""`python -m offline check`: run CrossGuard policy packs against a stack, exactly as the engine does.

    python -m offline check --stack prod [--config FILE] \\
        --policy-pack policies/gitops-drift --policy-pack-config policies/config/prod.json ...

The program runs under the mock engine (offline/engine.py); the packs are driven over the Analyzer
protocol by offline/policy_driver.py (their configuration reconciled by offline/policy_config.py).
With `--render-charts` the charts are rendered first (offline/charts.py) and each rendered object is
sent as its own resource, the Chart its parent (offline/chart_objects.py `engine_view`). Charts
delivered by Argo CD (`argocd` delivery) never reach the packs, as under the real engine; for them the
check prints what Argo CD would decide: each Application's AppProject rules applied to every rendered
object it would sync (offline/admission.py `argocd_chart_verdicts`), a refusal failing the check.

Diagnostics are printed like `pulumi preview`'s policy summary; exit 1 on any mandatory
violation, 2 when packs cannot be started or configured, 0 otherwise.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from policies.rules.admission import application_lines

from .admission import argocd_chart_verdicts
from .charts import RenderReport
from .engine import RecordedStack
from .environ import ArgumentListTooLong, policy_pack_environment
from .policy_config import PolicyConfig, PolicyRunError, parse_policy_config
from .policy_driver import (
    ORGANIZATION,
    START_TIMEOUT,
    Diagnostic,
    PackSpec,
    _analyze,
    _configure,
    _connect,
    _Pack,
    _read_port,
    _start_engine,
    _start_pack,
    _stop,
    _urn_name,
)
from .recording import cache_dir, reuse_or_run
from .stackfile import PROJECT_ROOT, StackFile, read_stack_file, stack_path

EXIT_OK = 0
EXIT_POLICY = 1
EXIT_ERROR = 2


# --- running and printing ----------------------------------------------------------------------------


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
    type_, name = types.get(urn, (urn.split("::")[2].rsplit("$", 1)[-1] if urn.count("::") >= 3 else "?", _urn_name(urn)))
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
        f"\nPolicy summary: {len(result.packs)} pack(s), {result.analyzed} resources analyzed: "
        f"{counts['mandatory']} mandatory, {counts['advisory']} advisory violation(s)",
        file=out,
    )


def _error_message(error: Exception) -> str:
    """gRPC errors carry their message in details()."""
    details = getattr(error, "details", None)
    return str(details()) if callable(details) else str(error)


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
    given: list[dict[str, PolicyConfig] | None] = []
    for spec in packs:
        if spec.config is None:
            given.append(None)
            continue
        try:
            given.append(parse_policy_config(spec.config.read_text()))
        except OSError as error:
            raise PolicyRunError(f"reading policy config {spec.config}: {error.strerror}") from None
    root_urn = f"urn:pulumi:{stack.stack}::{stack.project}::pulumi:pulumi:Stack::{stack.project}-{stack.stack}"
    server, engine_address = _start_engine(root_urn, err)
    env = policy_pack_environment(
        os.environ,
        stack_file.config,
        organization=ORGANIZATION,
        project=stack.project,
        stack=stack.stack,
        dry_run=True,
    )
    running: list[_Pack] = []
    memory: dict[str, float] = {}
    try:
        for spec in packs:
            running.append(_start_pack(spec, engine_address, env))
        for pack in running:
            _read_port(pack, START_TIMEOUT)
        errors: list[str] = []
        for pack, pack_config in zip(running, given, strict=True):
            try:
                _connect(pack, engine_address, stack_file, stack.project)
                errors += _configure(pack, pack_config)
            except PolicyRunError:
                raise
            except Exception as error:
                raise PolicyRunError(f'policy pack "{pack.spec.path}" failed: {_error_message(error)}') from None
        if errors:
            for problem in sorted(errors):
                print(f"error: {problem}", file=err)
            print("error: validating policy config", file=err)
            return CheckResult(EXIT_ERROR, [], [(p.name, p.version, p.spec.path) for p in running], sorted(errors))
        try:
            diagnostics = _analyze(running, stack, err)
        except Exception as error:
            raise PolicyRunError(f"failed to run policy: {_error_message(error)}") from None
        result = CheckResult(
            exit_code=EXIT_POLICY if any(d.level == "mandatory" for d in diagnostics) else EXIT_OK,
            diagnostics=diagnostics,
            packs=[(p.name, p.version, p.spec.path) for p in running],
            errors=[],
            analyzed=len(stack.resources) + 1,
            pack_memory_mib=memory,
        )
        print_report(result, stack, out)
        return result
    finally:
        for pack in running:
            _stop(pack, memory)
            for line in pack.stderr:
                print(f"    [{pack.label}] {line}", file=err)
        server.stop(0)


def check_recorded_stack(
    stack: RecordedStack,
    packs: Sequence[PackSpec],
    stack_file: StackFile | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> CheckResult:
    """`check_stack` without the printed report (benchmarks, tools): read `result.violations`."""
    return check_stack(stack, stack_file, packs, out=out or io.StringIO(), err=err or io.StringIO())


def pack_specs(policy_packs: Sequence[Path], configs: Sequence[Path]) -> list[PackSpec]:
    """Pair --policy-pack and --policy-pack-config by position, as the Pulumi CLI does."""
    if configs and len(configs) != len(policy_packs):
        raise PolicyRunError("the number of --policy-pack-config paths must match the number of --policy-pack paths")
    return [PackSpec(path, configs[i] if configs else None) for i, path in enumerate(policy_packs)]


def run_check(args: argparse.Namespace) -> int:
    try:
        specs = pack_specs(list(args.policy_pack), list(args.policy_pack_config or []))
        for spec in specs:
            if not spec.path.is_dir():
                raise PolicyRunError(f'policy pack not found at "{spec.path}"')
            if spec.config is not None and not spec.config.is_file():
                raise PolicyRunError(f"policy config {spec.config}: no such file")
    except PolicyRunError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    path = args.config if args.config else stack_path(args.stack)
    stack_file = read_stack_file(path, name=args.stack)
    # The recording `offline render` kept for exactly these inputs, if any (offline/recording.py).
    recorded, reused = reuse_or_run(
        stack_file, PROJECT_ROOT, preview=getattr(args, "preview", False), reuse=not getattr(args, "no_reuse", False)
    )
    if reused:
        print(
            f"reusing the recording of `offline render` ({cache_dir()}): same stack file, inventory files, program and"
            " environment (--no-reuse runs the program again)",
            file=sys.stderr,
        )
    report: RenderReport | None = None
    if getattr(args, "render_charts", False):
        from .chart_cli import render_charts, report_chart_error
        from .chart_objects import engine_view
        from .charts import ChartRenderError

        try:
            report = render_charts(args, recorded)
        except ChartRenderError as error:
            return report_chart_error(error)
        assert report is not None
        recorded = engine_view(recorded, report)
    print(f"Previewing update ({recorded.stack}) offline, with {len(specs)} policy pack(s):\n")
    try:
        exit_code = check_stack(recorded, stack_file, specs).exit_code
    except (PolicyRunError, ArgumentListTooLong) as error:
        print(f"error: {error.strerror if isinstance(error, ArgumentListTooLong) else error}", file=sys.stderr)
        return EXIT_ERROR
    if report is not None and any(chart.release.delivery == "argocd" for chart in report.charts):
        refused = print_argocd_admission(recorded, report, sys.stdout)
        if refused and exit_code == EXIT_OK:
            exit_code = EXIT_POLICY
    return exit_code


def print_argocd_admission(stack: RecordedStack, report: RenderReport, out: TextIO) -> int:
    """What the packs cannot see in `argocd` delivery: each chart-installing Application's AppProject
    verdict with every rendered object it would sync (Argo CD refuses the whole sync for one object).
    Returns how many Applications are refused."""
    verdicts = argocd_chart_verdicts(stack, report)
    print(
        "\nArgo CD AppProjects, charts delivered by Argo CD (each Application and every rendered object it would sync):", file=out
    )
    for verdict in verdicts:
        print("\n".join(application_lines(verdict)), file=out)
    refused = sum(1 for v in verdicts if not v.permitted)
    print(f"Argo CD summary: {refused} of {len(verdicts)} Applications refused", file=out)
    return refused
