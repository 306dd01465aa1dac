"""`./hpcforge render`: write every Kubernetes object and chart the program declares as YAML files
(offline/program/documents.py), with `--render-charts` the charts' objects too (docs/charts.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..charts.command import add_chart_arguments, render_charts, report_chart_error
from ..charts.objects import chart_documents
from ..charts.render import ChartRenderError
from ..program.documents import write_render
from ..program.engine import RecordedStack
from ..program.tool import EXIT_OK, add_preview_argument, add_stack_arguments
from ..program.words import plural


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    render = commands.add_parser("render", help="write every Kubernetes object and chart as YAML")
    add_stack_arguments(render)
    add_preview_argument(render)
    render.add_argument("--out", type=Path, required=True, help="output directory")
    add_chart_arguments(render)


def run(stack: RecordedStack, args: argparse.Namespace) -> int:
    try:
        report = render_charts(args, stack)
    except ChartRenderError as error:
        return report_chart_error(error)
    paths = write_render(stack, args.out, chart_documents(report) if report else [])
    print(f"wrote {plural(len(paths), 'file')} to {args.out}")
    return EXIT_OK
