"""`./hpcforge preview`: the resources the program declares, per layer (or as a tree, like `pulumi preview`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from ..program.engine import RecordedResource, RecordedStack
from ..program.tool import COMMAND, EXIT_OK, add_preview_argument, add_stack_arguments
from ..program.words import plural
from .summary import active_check_costs, layer_summary


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    preview = commands.add_parser("preview", help="print the resource tree, like `pulumi preview`")
    add_stack_arguments(preview)
    add_preview_argument(preview)
    preview.add_argument("--json", type=Path, help="also write every recorded resource to this JSON file")
    preview.add_argument(
        "--tree", action="store_true", help="print every resource as a tree, like `pulumi preview` (default: counts per layer)"
    )


def _summary(stack: RecordedStack) -> str:
    total = len(stack.resources) + 1  # and the Stack itself
    kinds = Counter(
        "chart" if r.is_chart else "kubernetes object" if r.is_kubernetes_object else "other" for r in stack.resources
    )
    others = plural(kinds["other"] + 1, "component, provider or generated secret", "components, providers and generated secrets")
    return (
        f"Resources:\n    + {total} to create\n"
        f"      ({plural(kinds['kubernetes object'], 'Kubernetes object')}, {plural(kinds['chart'], 'Helm chart')}, {others})"
    )


def run(stack: RecordedStack, args: argparse.Namespace) -> int:
    mode = " with unknown outputs (--preview)" if stack.preview else ""
    print(f"Previewing update ({stack.stack}) offline, under Pulumi's mock engine{mode}:\n")
    if args.tree:
        print(resource_tree(stack))
    else:
        print(f"Resources per layer (`{COMMAND} preview --stack {stack.stack} --tree` lists each one):")
        print(layer_summary(stack))
    costs = active_check_costs(stack)
    if costs:
        print(f"\n{costs}")
    print()
    print(_summary(stack))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "project": stack.project,
                    "stack": stack.stack,
                    "resources": [r.to_json() for r in stack.resources],
                    "outputs": {k: ("[secret]" if k in stack.secret_outputs else v) for k, v in stack.outputs.items()},
                },
                indent=2,
            )
        )
        print(f"\nwrote {plural(len(stack.resources), 'resource')} to {args.json}", file=sys.stderr)
    return EXIT_OK


def resource_tree(stack: RecordedStack) -> str:
    """The tree `pulumi preview` prints: type and name, indented by parent."""
    children: dict[str, list[RecordedResource]] = defaultdict(list)
    urns = {r.urn for r in stack.resources}
    stack_urn = f"urn:pulumi:{stack.stack}::{stack.project}::pulumi:pulumi:Stack::{stack.project}-{stack.stack}"
    for resource in stack.resources:
        parent = resource.parent if resource.parent in urns else stack_urn
        children[parent].append(resource)
    rows: list[tuple[str, str]] = [("pulumi:pulumi:Stack", f"{stack.project}-{stack.stack}")]

    def walk(urn: str, prefix: str) -> None:
        kids = sorted(children.get(urn, []), key=lambda r: (not r.type.startswith("hpcforge:"), r.type, r.name))
        for index, child in enumerate(kids):
            last = index == len(kids) - 1
            rows.append((f"{prefix}{'└─ ' if last else '├─ '}{child.type}", child.name))
            walk(child.urn, prefix + ("   " if last else "│  "))

    walk(stack_urn, "")
    width = max(len(row[0]) for row in rows) + 2
    lines = [f"     {'Type':<{width}}Name"]
    lines += [f" +   {type_:<{width}}{name}" for type_, name in rows]
    return "\n".join(lines)
