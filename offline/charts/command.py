"""`--render-charts`, `--charts-from`, `--pull-charts` of `offline render` and `offline check` (docs/charts.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..program.engine import RecordedStack
from ..program.stackfile import read_stack_file, stack_path
from .cluster import extra_api_versions, kubernetes_version
from .render import ChartRenderError, RenderReport, render_stack

EXIT_CHARTS = 2
"""Charts that cannot be rendered are a usage/configuration error, like an invalid stack."""


def add_chart_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--render-charts",
        action="store_true",
        help="render every chart like helm.v4.Chart (render: write the objects; check: send them to the packs)",
    )
    parser.add_argument(
        "--charts-from",
        type=Path,
        help="directory of unpacked charts, <chart>-<version>/ (default: $HPCFORGE_CHARTS)",
    )
    parser.add_argument(
        "--pull-charts",
        action="store_true",
        help="download charts missing from --charts-from from their repositories into the cache ($HPCFORGE_CHARTS_CACHE)",
    )


def render_charts(args: argparse.Namespace, stack: RecordedStack) -> RenderReport | None:
    """The stack's charts rendered (None without --render-charts); ChartRenderError on any problem."""
    if not getattr(args, "render_charts", False):
        return None
    from .source import ChartSource

    stack_file = read_stack_file(args.config if args.config else stack_path(args.stack), name=args.stack)
    source = ChartSource.from_environment(args.charts_from, pull=args.pull_charts)
    report = render_stack(stack, source, kubernetes_version(stack_file), extra_api_versions=extra_api_versions(stack_file))
    for release, objects, crds, hooks in report.counts():
        print(f"rendered chart {release}: {objects} objects, {crds} CRDs, {hooks} hooks", file=sys.stderr)
    if report.errors:
        raise ChartRenderError(report.errors)
    return report


def report_chart_error(error: ChartRenderError) -> int:
    print("error: charts could not be rendered as helm.v4.Chart renders them:", file=sys.stderr)
    for message in error.messages:
        print(f"  {message}", file=sys.stderr)
    return EXIT_CHARTS
