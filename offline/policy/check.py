"""`./hpcforge check`: run CrossGuard policy packs against a stack, exactly as the engine does.

    ./hpcforge check --stack prod [--config FILE] \\
        --policy-pack policies/gitops-drift --policy-pack-config policies/config/prod.json ...

The program runs under the mock engine (offline/program/engine.py); the packs are driven over the Analyzer
protocol by offline/policy/driver.py (their configuration reconciled by offline/policy/config.py).
Like the engine, `check` asks the packs about each resource as the program registers it: from a
separate process (offline/policy/stream.py, `StreamedCheck`) started before the program runs; if
anything goes wrong there, the packs are run again on the finished recording (`check_stack`), which
reports it.
With `--render-charts` the charts are rendered first (offline/charts/render.py) and each rendered object is
sent as its own resource, the Chart its parent (offline/charts/objects.py `engine_view`). Charts
delivered by Argo CD (`argocd` delivery) never reach the packs, as under the real engine; for them the
check prints what Argo CD would decide: each Application's AppProject rules applied to every rendered
object it would sync (offline/admission/verdicts.py `argocd_chart_verdicts`), and the cert-manager and MetalLB
webhooks' answer to each of those objects (`argocd_chart_webhook_verdicts`), a refusal failing the check.

Diagnostics are printed like `pulumi preview`'s policy summary; exit 1 on any mandatory
violation, 2 when packs cannot be started or configured, 0 otherwise.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from components.paths import PROJECT_ROOT

from ..admission.verdicts import print_argocd_admission, print_argocd_webhooks
from ..charts.render import RenderReport
from ..program.engine import RecordedStack
from ..program.environ import ArgumentListTooLong
from ..program.recording import cache_dir, reuse_or_run
from ..program.stackfile import StackFile, read_stack_file, stack_path
from ..program.words import plural
from .config import PolicyRunError
from .packs import PackSpec
from .report import CheckResult
from .session import EXIT_ERROR, EXIT_OK, EXIT_POLICY, check_stack
from .stream import StreamedCheck

# --- running and printing ----------------------------------------------------------------------------


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


def run_check(args: argparse.Namespace) -> int:  # noqa: PLR0912 (the command's steps, each with its own exit)
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
    # The recording `offline render` kept for exactly these inputs, if any (offline/program/recording.py).
    try:
        recorded, reused = reuse_or_run(
            stack_file,
            PROJECT_ROOT,
            preview=getattr(args, "preview", False),
            reuse=not getattr(args, "no_reuse", False),
            on_resource=streamed.add if streamed else None,
            store=True,
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
    declared = recorded  # what the program declares, before the charts' objects join it as the engine sees them
    if render_charts_first:
        from ..charts.command import render_charts, report_chart_error
        from ..charts.objects import engine_view
        from ..charts.render import ChartRenderError

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
    if report is not None:
        from .owners import print_owners

        if print_owners(declared, report, sys.stdout) and exit_code == EXIT_OK:
            exit_code = EXIT_POLICY
    return exit_code
