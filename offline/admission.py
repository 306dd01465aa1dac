"""`python -m offline admission`: what the API server and Argo CD would admit, object by object.

Runs the program under the mock engine, takes every Kubernetes object it declares (plus, with
`--objects DIR`, the YAML documents under DIR, e.g. charts rendered by `offline render
--render-charts`), and prints per object: Pod Security verdicts per pod template, AppProject
verdicts per Application (with the objects it would sync: its children, or objects under DIR
labelled with its Helm release), and API server reachability per APIService/webhook.
Exit status 1 when anything is refused.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from policies.rules.admission import admission_report, application_key
from policies.rules.admission_argocd import is_namespaced
from policies.rules.common import get, text
from policies.rules.podtemplates import group_of, kind_of, namespace_of

from .engine import RecordedStack

RELEASE_LABELS = ("app.kubernetes.io/instance", "release")


def stack_objects(stack: RecordedStack) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """Whole objects (patches left out, except Namespace patches: their labels count) and, per
    Application (`namespace/name`), the objects registered under it."""
    by_urn = {r.urn: r for r in stack.resources}
    objects: list[dict[str, Any]] = []
    apps: dict[str, str] = {}
    for resource in stack.resources:
        if not resource.is_kubernetes_object:
            continue
        if resource.type.endswith("Patch") and not resource.type.endswith("NamespacePatch"):
            continue
        objects.append(resource.inputs)
        if resource.inputs.get("kind") == "Application" and group_of(resource.inputs) == "argoproj.io":
            apps[resource.urn] = application_key(resource.inputs)
    synced: dict[str, list[dict[str, Any]]] = {}
    for resource in stack.resources:
        parent, seen = resource.parent, set()
        while parent and parent not in apps and parent not in seen and parent in by_urn:
            seen.add(parent)
            parent = by_urn[parent].parent
        if parent in apps and resource.is_kubernetes_object:
            synced.setdefault(apps[parent], []).append(resource.inputs)
    return objects, synced


def read_objects(directory: Path) -> list[dict[str, Any]]:
    """Every Kubernetes object in the YAML files under `directory` (sorted by path)."""
    found: list[dict[str, Any]] = []
    for path in sorted(directory.rglob("*.y*ml")):
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and isinstance(document.get("kind"), str) and document.get("apiVersion"):
                found.append(document)
    return found


def attribute_by_release(
    applications: Sequence[Mapping[str, Any]], objects: Sequence[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Objects labelled with an Application's Helm release name (charts label their objects with
    `app.kubernetes.io/instance` or `release`), given the destination namespace when namespaced
    and without one."""
    synced: dict[str, list[dict[str, Any]]] = {}
    for app in applications:
        release = text(get(app, "spec", "source", "helm", "releaseName")) or text(get(app, "metadata", "name"))
        destination = text(get(app, "spec", "destination", "namespace")) or ""
        for obj in objects:
            labels = get(obj, "metadata", "labels") or {}
            if not any(labels.get(key) == release for key in RELEASE_LABELS):
                continue
            placed = obj
            if is_namespaced(group_of(obj), kind_of(obj)) and not namespace_of(obj):
                placed = {**obj, "metadata": {**obj["metadata"], "namespace": destination}}
            synced.setdefault(application_key(app), []).append(placed)
    return synced


def run_admission(stack: RecordedStack, args: argparse.Namespace) -> int:
    objects, synced = stack_objects(stack)
    if args.objects:
        extra = read_objects(args.objects)
        applications = [o for o in objects if kind_of(o) == "Application" and group_of(o) == "argoproj.io"]
        for key, found in attribute_by_release(applications, extra).items():
            synced.setdefault(key, []).extend(found)
        objects = [*objects, *extra]
    report = admission_report(objects, synced)
    print(f"Admission of stack {stack.stack} (Kubernetes 1.33 Pod Security, Argo CD 3.4 AppProjects, NetworkPolicies):\n")
    print("\n".join(report.lines()))
    refused = report.rejected_pods or report.refused_applications or report.unreachable
    return 1 if refused else 0
