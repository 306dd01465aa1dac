"""`./hpcforge check`: run CrossGuard policy packs against a stack, exactly as the engine does.

    ./hpcforge check --stack prod [--config FILE] \\
        --policy-pack policies/gitops-drift --policy-pack-config policies/config/prod.json ...

The program runs under the mock engine (offline/engine.py); the packs are driven over the Analyzer
protocol by offline/policy_driver.py (their configuration reconciled by offline/policy_config.py).
Like the engine, `check` asks the packs about each resource as the program registers it: from a
separate process (offline/policy_stream.py, `StreamedCheck`) started before the program runs; if
anything goes wrong there, the packs are run again on the finished recording (`check_stack`), which
reports it.
With `--render-charts` the charts are rendered first (offline/charts.py) and each rendered object is
sent as its own resource, the Chart its parent (offline/chart_objects.py `engine_view`). Charts
delivered by Argo CD (`argocd` delivery) never reach the packs, as under the real engine; for them the
check prints what Argo CD would decide: each Application's AppProject rules applied to every rendered
object it would sync (offline/admission.py `argocd_chart_verdicts`), and the cert-manager and MetalLB
webhooks' answer to each of those objects (`argocd_chart_webhook_verdicts`), a refusal failing the check.

Diagnostics are printed like `pulumi preview`'s policy summary; exit 1 on any mandatory
violation, 2 when packs cannot be started or configured, 0 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from policies.rules.admission import application_lines
from policies.rules.podtemplates import display

from .admission import argocd_chart_verdicts, argocd_chart_webhook_verdicts
from .charts import RenderReport
from .engine import PROJECT, RecordedResource, RecordedStack
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
from .policy_stream import StreamAnswer
from .recording import cache_dir, reuse_or_run
from .stackfile import PROJECT_ROOT, StackFile, read_stack_file, stack_path
from .summary import plural

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
        f"\nPolicy summary: {plural(len(result.packs), 'pack')}, {plural(result.analyzed, 'resource')} analyzed: "
        f"{counts['mandatory']} mandatory, {plural(counts['advisory'], 'advisory violation')}",
        file=out,
    )


def _error_message(error: Exception) -> str:
    """gRPC errors carry their message in details()."""
    details = getattr(error, "details", None)
    return str(details()) if callable(details) else str(error)


def _given_configs(packs: Sequence[PackSpec]) -> list[dict[str, PolicyConfig] | None]:
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


class _Session:
    """The engine service and the policy pack processes of one check, started and configured as the engine does."""

    def __init__(self, project: str, stack: str, stack_file: StackFile, err: TextIO) -> None:
        self.project = project
        self.stack = stack
        self.stack_file = stack_file
        self.err = err
        self.server: Any = None
        self.running: list[_Pack] = []
        self.memory: dict[str, float] = {}

    def start(self, packs: Sequence[PackSpec], given: Sequence[dict[str, PolicyConfig] | None]) -> list[str]:
        """Start the packs and configure them; the policy config's validation errors (nothing is analyzed then)."""
        root_urn = f"urn:pulumi:{self.stack}::{self.project}::pulumi:pulumi:Stack::{self.project}-{self.stack}"
        self.server, engine_address = _start_engine(root_urn, self.err)
        env = policy_pack_environment(
            os.environ,
            self.stack_file.config,
            organization=ORGANIZATION,
            project=self.project,
            stack=self.stack,
            dry_run=True,
        )
        for spec in packs:
            self.running.append(_start_pack(spec, engine_address, env))
        for pack in self.running:
            _read_port(pack, START_TIMEOUT)
        errors: list[str] = []
        for pack, pack_config in zip(self.running, given, strict=True):
            try:
                _connect(pack, engine_address, self.stack_file, self.project)
                errors += _configure(pack, pack_config)
            except PolicyRunError:
                raise
            except Exception as error:
                raise PolicyRunError(f'policy pack "{pack.spec.path}" failed: {_error_message(error)}') from None
        return errors

    @property
    def packs(self) -> list[tuple[str, str, Path]]:
        return [(p.name, p.version, p.spec.path) for p in self.running]

    def stop(self, err: TextIO) -> None:
        """Stop the packs (their peak memory is kept in `memory`) and print what they wrote on stderr to `err`."""
        for pack in self.running:
            _stop(pack, self.memory)
            for line in pack.stderr:
                print(f"    [{pack.label}] {line}", file=err)
        if self.server is not None:
            self.server.stop(0)


def _result(
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
    given = _given_configs(packs)
    session = _Session(stack.project, stack.stack, stack_file, err)
    try:
        errors = session.start(packs, given)
        if errors:
            for problem in sorted(errors):
                print(f"error: {problem}", file=err)
            print("error: validating policy config", file=err)
            return CheckResult(EXIT_ERROR, [], session.packs, sorted(errors))
        try:
            diagnostics = _analyze(session.running, stack, err)
        except Exception as error:
            raise PolicyRunError(f"failed to run policy: {_error_message(error)}") from None
        result = _result(stack, diagnostics, session.packs, session.memory)
        print_report(result, stack, out)
        return result
    finally:
        session.stop(err)


class StreamedCheck:
    """`check_stack`, with the packs analyzing each resource while the program registers it.

    The engine asks the analyzers about each resource as the program registers it. Here a separate
    process (offline/policy_stream.py) starts the packs while the program runs and is handed each
    resource as the mock engine records it (`add`, `run_program`'s `on_resource`): it and the packs
    work on the second core while the program runs on the first, instead of after it (in this process
    they would wait on the program for Python's global lock). Only the time changes: the requests,
    their order and what is printed are those of `check_stack`, run by the same code
    (`analyze_resources`, `analyze_stack`). Anything that goes wrong over there (a pack that does not
    start, a config the packs refuse, a failed request) is dropped without a word: `finish` then
    answers None and the caller runs `check_stack` on the recording, which reports it as before.
    """

    def __init__(self, stack_file: StackFile, packs: Sequence[PackSpec], project: str = PROJECT) -> None:
        self.project = project
        self.stack = stack_file.name
        self.broken = False
        # Same working directory and environment as this process: the packs' paths and environment
        # (policy_pack_environment of os.environ) are the same as check_stack's.
        code = f"import sys; sys.path.insert(0, {str(PROJECT_ROOT)!r}); from offline.policy_stream import main; sys.exit(main())"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.writer = threading.Thread(target=self._write, name="policy-stream", daemon=True)
        self.writer.start()
        self._send(("setup", project, stack_file.name, stack_file, list(packs)))

    def _send(self, message: tuple[Any, ...]) -> None:
        self.outbox.put(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    def _write(self) -> None:
        """Hand the messages over from a thread of its own: the program's threads never wait on the pipe."""
        stdin = self.process.stdin
        assert stdin is not None
        while (data := self.outbox.get()) is not None:
            if self.broken:
                continue
            try:
                stdin.write(data)
                stdin.flush()
            except (OSError, ValueError):
                self.broken = True
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    def add(self, resource: RecordedResource) -> None:
        """Hand the packs a resource the program registered (in registration order). Its plain inputs
        stay here: the packs get the wire form (`raw_inputs`)."""
        self._send(("resource", dataclasses.replace(resource, inputs={})))

    def _close(self) -> None:
        self.outbox.put(None)
        self.writer.join()

    def _answer(self) -> StreamAnswer | None:
        """Close the stream and read the streaming process's answer (None: none came); the process has ended."""
        self._close()
        try:
            assert self.process.stdout is not None
            answer = pickle.load(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError):
            answer = None
        finally:
            self.process.wait()
        return answer if isinstance(answer, StreamAnswer) else None

    def abandon(self) -> StreamAnswer | None:
        """The program failed: stop the packs, report nothing (the answer is for tests)."""
        return self._answer()

    def finish(self, stack: RecordedStack, *, out: TextIO | None = None, err: TextIO | None = None) -> CheckResult | None:
        """Once every resource of `stack` was added: the check's result, printed like `check_stack`'s;
        None when the packs could not analyze the stack (the caller then runs `check_stack`)."""
        out = out or sys.stdout
        err = err or sys.stderr
        self._send(("finish", dataclasses.replace(stack, resources=[])))
        answer = self._answer()
        if answer is None or self.broken or not answer.analyzed:
            return None
        if (stack.project, stack.stack) != (self.project, self.stack) or answer.urns != [r.urn for r in stack.resources]:
            return None
        err.write(answer.log)
        result = _result(stack, answer.diagnostics, answer.packs, answer.memory)
        print_report(result, stack, out)
        err.write(answer.stopped)
        return result


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
    render_charts_first = getattr(args, "render_charts", False)
    # Without rendered charts (which reshape the stack once the program is done), the packs analyze
    # each resource while the program runs (StreamedCheck).
    streamed = None if render_charts_first else StreamedCheck(stack_file, specs)
    # The recording `offline render` kept for exactly these inputs, if any (offline/recording.py).
    try:
        recorded, reused = reuse_or_run(
            stack_file,
            PROJECT_ROOT,
            preview=getattr(args, "preview", False),
            reuse=not getattr(args, "no_reuse", False),
            on_resource=streamed.add if streamed else None,
        )
    except BaseException:
        if streamed is not None:
            streamed.abandon()
        raise
    if reused and streamed is not None:
        for resource in recorded.resources:
            streamed.add(resource)
    if reused:
        print(
            f"reusing the recording of `offline render` ({cache_dir()}): same stack file, inventory files, program and"
            " environment (--no-reuse runs the program again)",
            file=sys.stderr,
        )
    report: RenderReport | None = None
    if render_charts_first:
        from .chart_cli import render_charts, report_chart_error
        from .chart_objects import engine_view
        from .charts import ChartRenderError

        try:
            report = render_charts(args, recorded)
        except ChartRenderError as error:
            return report_chart_error(error)
        assert report is not None
        recorded = engine_view(recorded, report)
    print(f"Previewing update ({recorded.stack}) offline, with {plural(len(specs), 'policy pack')}:\n")
    try:
        result = streamed.finish(recorded) if streamed is not None else None
        exit_code = (result or check_stack(recorded, stack_file, specs)).exit_code
    except (PolicyRunError, ArgumentListTooLong) as error:
        print(f"error: {error.strerror if isinstance(error, ArgumentListTooLong) else error}", file=sys.stderr)
        return EXIT_ERROR
    if report is not None and any(chart.release.delivery == "argocd" for chart in report.charts):
        refused = print_argocd_admission(recorded, report, sys.stdout)
        refused += print_argocd_webhooks(recorded, report, sys.stdout)
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
    print(f"Argo CD summary: {refused} of {plural(len(verdicts), 'Application')} refused", file=out)
    return refused


def print_argocd_webhooks(stack: RecordedStack, report: RenderReport, out: TextIO) -> int:
    """The cert-manager and MetalLB webhooks' answer to each object of the charts Argo CD delivers (nothing
    printed when they have none). Returns how many are refused."""
    verdicts = argocd_chart_webhook_verdicts(stack, report)
    if not verdicts:
        return 0
    print("\nOperator webhooks, objects of charts delivered by Argo CD (cert-manager v1.21.1, MetalLB v0.16.1):", file=out)
    for verdict in verdicts:
        print(f"  {'ok  ' if verdict.admitted else 'DENY'} {display(verdict.obj)} ({verdict.webhook})", file=out)
        if verdict.refusal:
            print(f"         {verdict.refusal}", file=out)
    refused = sum(1 for v in verdicts if not v.admitted)
    print(f"Operator webhook summary: {refused} of {plural(len(verdicts), 'object')} refused", file=out)
    return refused
