"""`./hpcforge admission`: what the API server and Argo CD would admit, object by object.

Runs the program under the mock engine, takes every Kubernetes object it declares (plus, with
`--objects DIR`, the YAML documents under DIR, e.g. charts rendered by `offline render
--render-charts`), and prints per object: Pod Security verdicts per pod template, AppProject
verdicts per Application (with the objects it would sync: its children, the files under
`charts/<its release>/`, or objects labelled with its Helm release), API server reachability
per APIService/webhook, slurm-operator's admission of each Slinky custom resource (with the
webhook scope the stack's slurm-operator chart values give), Kueue's verdict per Kueue object
and per job its webhooks see (with the scope the stack's kueue chart values give, when known),
the cert-manager and MetalLB webhooks' answer per object (MetalLB's BGP backend from the stack's
metallb chart values), and per mariadb-operator object its validating webhook's verdict. With
`--previous-config FILE` (the stack file deployed before, e.g. `git show origin/main:Pulumi.prod.yaml`),
the mariadb-operator objects both declare are judged as updates: a changed immutable field is refused
there, before `pulumi up` is (the other families are judged as created either way). Last, every custom
resource against its CRD's CEL rules (offline/admission/cel.py): as an update of the object the previous
stack file declares, where there is one (transition rules run there only).
Exit status 1 when anything is refused, 2 when the previous stack file is invalid.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..charts.command import add_chart_arguments, render_charts, report_chart_error
from ..charts.objects import chart_documents
from ..charts.render import ChartRenderError
from ..program.engine import RecordedStack
from ..program.tool import add_preview_argument, add_stack_arguments


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    admission = commands.add_parser(
        "admission", help="per-object verdicts of Pod Security, Argo CD AppProjects and API server reachability"
    )
    add_stack_arguments(admission)
    add_preview_argument(admission)
    admission.add_argument("--objects", type=Path, help="also judge the objects in the YAML files under DIR (rendered charts)")
    admission.add_argument(
        "--previous-config",
        type=Path,
        help="the stack file deployed before: its mariadb-operator objects make this run's updates (immutable fields)",
    )
    add_chart_arguments(admission)


def run(stack: RecordedStack, args: argparse.Namespace) -> int:
    from .verdicts import run_admission

    try:
        report = render_charts(args, stack)
    except ChartRenderError as error:
        return report_chart_error(error)
    return run_admission(stack, args, chart_documents(report) if report else [])
