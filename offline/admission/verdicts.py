"""The admission verdicts of a stack's objects: for `./hpcforge admission` (offline/admission/command.py says what it
prints) and, for the charts Argo CD delivers, for `./hpcforge check --render-charts` (`print_argocd_admission`,
`print_argocd_webhooks`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from components.paths import PROJECT_ROOT
from policies.admission.argocd import ApplicationVerdict, appproject_verdicts, is_namespaced
from policies.admission.families import families
from policies.admission.family import application_key
from policies.admission.report import admission_report
from policies.admission.rule import StackObjects, stack_objects
from policies.admission.webhooks import WebhookVerdict, bgp_type_of, webhook_verdicts
from policies.rules.access import get, mapping, text
from policies.rules.podtemplates import display, group_of, kind_of, namespace_of
from policies.rules.sources import chart_basename
from policies.rules.view import ResourceView, StackView

from ..charts.render import RenderReport
from ..program.engine import ProgramConfigError, RecordedResource, RecordedStack, run_program
from ..program.stackfile import StackFileError, read_stack_file
from ..program.words import plural
from .cel import cel_verdicts, object_key
from .cel import report_lines as cel_report_lines

RELEASE_LABELS = ("app.kubernetes.io/instance", "release")
# Helm hooks Argo CD ignores (argo-cd v3.4.4 docs/user-guide/helm.md "Helm Hooks": "Unsupported hooks
# are ignored"): test hooks and rollback hooks have no Argo CD equivalent.
ARGOCD_IGNORED_HOOKS = frozenset({"test", "test-success", "test-failure", "pre-rollback", "post-rollback"})


def argocd_runs(document: Mapping[str, Any]) -> bool:
    """Whether Argo CD applies this Helm hook (at least one of its hook events is supported)."""
    raw = text(get(document, "metadata", "annotations", "helm.sh/hook")) or ""
    events = {event.strip() for event in raw.split(",") if event.strip()}
    return not events or bool(events - ARGOCD_IGNORED_HOOKS)


def recorded_objects(stack: RecordedStack) -> StackObjects:
    """policies/admission/rule.py `stack_objects` (what the security pack's admission rules judge) over the
    recorded resources, with their plain inputs: the whole objects, and per Application the objects under it."""
    return stack_objects(
        StackView(tuple(ResourceView(r.type, r.name, r.urn, r.inputs, parent=r.parent) for r in stack.resources))
    )


@dataclass(frozen=True)
class FileObject:
    document: dict[str, Any]
    release: str | None
    """The chart release the file belongs to: `charts/<release>/...` (the layout `offline render
    --render-charts` writes), else None."""
    hook: bool
    """Under `charts/<release>/hooks/`: a Helm hook, which Argo CD runs and helm.v4.Chart does not."""


def read_objects(directory: Path) -> list[FileObject]:
    """Every Kubernetes object in the YAML files under `directory` (sorted by path). When `directory`
    is an `offline render --render-charts` output, only its `charts/` part: the rest are the stack's
    own objects, which the program run already gives."""
    found: list[FileObject] = []
    root = directory / "charts" if (directory / "charts").is_dir() else directory
    for path in sorted(root.rglob("*.y*ml")):
        parts = path.relative_to(directory).parts
        release = parts[parts.index("charts") + 1] if "charts" in parts[:-2] else None
        hook = release is not None and "hooks" in parts[parts.index("charts") + 2 : -1]
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and isinstance(document.get("kind"), str) and document.get("apiVersion"):
                found.append(FileObject(document, release, hook))
    return found


def _release(app: Mapping[str, Any]) -> str:
    return text(get(app, "spec", "source", "helm", "releaseName")) or text(get(app, "metadata", "name")) or ""


def attribute(
    applications: Sequence[Mapping[str, Any]], files: Sequence[FileObject]
) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Objects an Application would sync (its release's directory, or its Helm release label:
    `app.kubernetes.io/instance` or `release`), placed in its destination namespace when namespaced
    and without one; and every object the cluster would get (hooks only where Argo CD runs them)."""
    synced: dict[str, list[dict[str, Any]]] = {}
    applied: list[dict[str, Any]] = []
    for item in files:
        obj = item.document
        labels = mapping(get(obj, "metadata", "labels"))
        owner = next(
            (
                app
                for app in applications
                if (item.release is not None and item.release == _release(app))
                or (item.release is None and any(labels.get(key) == _release(app) for key in RELEASE_LABELS))
            ),
            None,
        )
        if owner is None:
            if not item.hook:
                applied.append(obj)
            continue
        if item.hook and not argocd_runs(obj):
            continue
        destination = text(get(owner, "spec", "destination", "namespace")) or ""
        placed = obj
        if is_namespaced(group_of(obj), kind_of(obj)) and not namespace_of(obj):
            placed = {**obj, "metadata": {**mapping(obj.get("metadata")), "namespace": destination}}
        synced.setdefault(application_key(owner), []).append(placed)
        applied.append(placed)
    return synced, applied


def rendered_objects(documents: Sequence[tuple[str, dict[str, Any]]]) -> list[FileObject]:
    """Charts rendered in process, as (relative path, object) in the `charts/<release>/...` layout that
    `offline render --render-charts` writes."""
    found: list[FileObject] = []
    for relative, document in documents:
        parts = Path(relative).parts
        if len(parts) >= 3 and parts[0] == "charts":
            found.append(FileObject(document, parts[1], parts[2] == "hooks"))
    return found


def argocd_synced_charts(stack: RecordedStack, report: RenderReport) -> dict[str, list[dict[str, Any]]]:
    """Per Application (`namespace/name`) that installs a chart (`argocd` delivery), every rendered
    object its sync would apply: the chart's CRDs and templates, and the hooks Argo CD runs. The
    renderer has already put namespaced objects without a namespace into the release namespace, which
    is the Application's destination namespace (offline/charts/render.py `chart_releases`)."""
    by_urn = {r.urn: r.inputs for r in stack.resources}
    synced: dict[str, list[dict[str, Any]]] = {}
    for chart in report.charts:
        application = by_urn.get(chart.release.urn)
        if chart.release.delivery != "argocd" or application is None:
            continue
        hooks = [dict(hook.document) for hook in chart.hooks if argocd_runs(hook.document)]
        synced.setdefault(application_key(application), []).extend([*chart.installed, *hooks])
    return synced


def argocd_chart_verdicts(stack: RecordedStack, report: RenderReport) -> list[ApplicationVerdict]:
    """The AppProject verdict of every Application that installs a chart, judged with every object of
    its sync: its children in the program and its chart's rendered objects (`argocd_synced_charts`).
    The packs never see these objects (Argo CD applies them, not Pulumi), so `offline check
    --render-charts` reports them from here."""
    found = recorded_objects(stack)
    objects, synced = found.objects, found.synced
    charts = argocd_synced_charts(stack, report)
    for key, documents in charts.items():
        synced.setdefault(key, []).extend(documents)
    return [v for v in appproject_verdicts(objects, synced) if application_key(v.application) in charts]


def argocd_chart_webhook_verdicts(stack: RecordedStack, report: RenderReport) -> list[WebhookVerdict]:
    """The cert-manager and MetalLB webhooks' answer to every rendered object an Argo CD Application syncs (a
    refusal fails its sync), judged with the stack's own objects (MetalLB judges a set). The packs never see
    these objects, so `offline check --render-charts` reports them from here."""
    objects = recorded_objects(stack).objects
    synced = [o for documents in argocd_synced_charts(stack, report).values() for o in documents]
    ours = {id(o) for o in synced}
    verdicts = webhook_verdicts([*objects, *synced], metallb_bgp_type=metallb_bgp_type(stack))
    return [v for v in verdicts if id(v.obj) in ours]


def chart_values(stack: RecordedStack, chart: str) -> Mapping[str, Any] | None:
    """The values the stack gives `chart` (a helm.v4.Chart's, or an Argo CD Application's valuesObject)."""
    for resource in stack.resources:
        if resource.is_chart and chart_basename(str(resource.inputs.get("chart", ""))) == chart:
            return mapping(resource.inputs.get("values"))
        source = mapping(get(resource.inputs, "spec", "source"))
        if resource.is_kubernetes_object and resource.inputs.get("kind") == "Application" and source.get("chart") == chart:
            return mapping(get(source, "helm", "valuesObject"))
    return None


def metallb_bgp_type(stack: RecordedStack) -> str | None:
    """The MetalLB controller's BGP backend for the values the stack gives the chart (None: MetalLB not deployed)."""
    return bgp_type_of(chart_values(stack, "metallb"))


def run_admission(stack: RecordedStack, args: argparse.Namespace, rendered: Sequence[tuple[str, dict[str, Any]]] = ()) -> int:
    """The report for `stack`, plus `--objects DIR` and `rendered` (charts rendered in process)."""
    recorded = recorded_objects(stack)
    objects, synced = recorded.objects, recorded.synced
    files = [*read_objects(args.objects)] if getattr(args, "objects", None) else []
    files += rendered_objects(rendered)
    if files:
        applications = [o for o in objects if kind_of(o) == "Application" and group_of(o) == "argoproj.io"]
        found, applied = attribute(applications, files)
        for key, documents in found.items():
            synced.setdefault(key, []).extend(documents)
        objects = [*objects, *applied]
    previous: Sequence[Mapping[str, Any]] = ()
    if getattr(args, "previous_config", None):
        try:
            deployed = run_program(read_stack_file(args.previous_config, name=stack.stack), PROJECT_ROOT, preview=stack.preview)
        except (StackFileError, ProgramConfigError) as error:
            messages = getattr(error, "messages", None) or [str(error)]
            print(f"error: --previous-config {args.previous_config}:", *messages, sep="\n  ", file=sys.stderr)
            return 2
        previous = recorded_objects(deployed).objects
    report = admission_report(objects, synced, chart_values=lambda chart: chart_values(stack, chart), previous=previous)
    titles = [family.title for family in families()]
    print(f"Admission of stack {stack.stack} ({', '.join(titles)}):\n")
    for line in unchecked_notes(stack, args, bool(rendered)):
        print(line)
    # The CRDs' CEL rules first: the summary stays the last line of the report.
    replace_paths = {object_key(r.inputs): r.replace_on_changes for r in stack.resources if r.is_kubernetes_object}
    verdicts = cel_verdicts(objects, previous, replace_on_changes=replace_paths)
    print("\n".join([*cel_report_lines(verdicts), ""]))
    print("\n".join(report.lines()))
    for line in report.advice():
        print(line)
    return 1 if report.refused or any(v.refusals for v in verdicts) else 0


def unchecked_notes(stack: RecordedStack, args: argparse.Namespace, rendered: bool) -> list[str]:
    """What this run did not judge, and the option that adds it (printed before the verdicts)."""
    notes = []
    applications = [r for r in stack.resources if r.is_kubernetes_object and r.inputs.get("kind") == "Application"]

    def sources(resource: RecordedResource) -> list[Mapping[str, Any]]:
        spec = resource.inputs.get("spec") or {}
        return [s for s in [spec.get("source"), *(spec.get("sources") or [])] if isinstance(s, Mapping)]

    charts = sorted({r.name for r in stack.resources if r.is_chart})
    chart_apps = sorted(r.name for r in applications if any(s.get("chart") for s in sources(r)))
    other_apps = sorted(r.name for r in applications if r.name not in chart_apps)
    if (charts or chart_apps) and not rendered and not getattr(args, "objects", None):
        what = [f"{plural(len(charts), 'Helm chart')} ({', '.join(charts)})"] if charts else []
        what += (
            [f"the charts of {plural(len(chart_apps), 'Argo CD Application')} ({', '.join(chart_apps)})"] if chart_apps else []
        )
        notes.append(
            f"Not checked: the objects inside {' and '.join(what)}: the mock engine does not render charts. "
            "Add --render-charts (docs/charts.md) or --objects DIR (rendered charts)."
        )
    if other_apps:
        notes.append(
            f"Not checked: what {plural(len(other_apps), 'Argo CD Application')} ({', '.join(other_apps)}) "
            "sync from their repositories: it is not part of the stack."
        )
    if not getattr(args, "previous_config", None):
        notes.append(
            "Not checked: changes to fields operators make immutable (mariadb-operator objects are judged as creates); "
            "add --previous-config FILE (the stack file deployed before)."
        )
    return [*notes, ""] if notes else []


def print_argocd_admission(stack: RecordedStack, report: RenderReport, out: TextIO) -> int:
    """What the packs cannot see in `argocd` delivery: each chart-installing Application's AppProject
    verdict with every rendered object it would sync (Argo CD refuses the whole sync for one object).
    Returns how many Applications are refused."""
    verdicts = argocd_chart_verdicts(stack, report)
    print(
        "\nArgo CD AppProjects, charts delivered by Argo CD (each Application and every rendered object it would sync):", file=out
    )
    for verdict in verdicts:
        print("\n".join(verdict.lines()), file=out)
    refused = sum(1 for v in verdicts if not v.admitted)
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
