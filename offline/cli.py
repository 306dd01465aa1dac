"""Command line of the offline runner.

    ./hpcforge preview --stack dev [--config FILE] [--preview] [--json OUT.json]
    ./hpcforge render  --stack prod [--config FILE] [--preview] --out DIR
    ./hpcforge check   --stack prod [--config FILE] [--preview] --policy-pack DIR [--policy-pack-config FILE] ... [--no-reuse]
    ./hpcforge admission --stack prod [--config FILE] [--preview] [--objects DIR] [--previous-config FILE] [--render-charts ...]
    ./hpcforge policy-config --config FILE   (the policy configuration for the stack's environmentKind)
    ./hpcforge migrate-inventory --stack prod [--config FILE] [--slurm]
    ./hpcforge urns    [--stack dev --stack prod] [--update]
    ./hpcforge live-impact --nodes HOSTLIST (--squeue FILE --sinfo FILE | --slurmrestd URL) [--format markdown]
    ./hpcforge diff    --stack prod --against REF|FILE|DIR [--config FILE] [--acknowledge] [--squeue FILE --sinfo FILE] [--format text|markdown] [--out FILE]
    (render and check: [--render-charts [--charts-from DIR] [--pull-charts]], see docs/charts.md)

`--preview` runs the program as `pulumi preview` of a new stack does: what providers compute when they
create a resource (generated passwords and keys, command output, object status, ids) is unknown, so
whatever the program builds from it is unknown too (printed and rendered as `<unknown>`).

`render` keeps what it recorded under .offline/recordings/; `check` of exactly the same inputs (stack file,
inventory files, program, environment: offline/recording.py) reuses it instead of running the program
again, and says so on stderr. HPCFORGE_RECORDING_CACHE=off keeps and reuses nothing.

Exit codes: 0 success; 1 mandatory policy violations (check), anything refused (admission), a URN
removed without an alias (urns) or an unacknowledged outage or data loss (diff, offline/diff/cli.py);
2 invalid configuration or usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from .charts.cli import add_chart_arguments, render_charts, report_chart_error
from .charts.objects import chart_documents
from .charts.render import ChartRenderError
from .engine import ProgramConfigError, RecordedStack, run_program
from .environ import ArgumentListTooLong
from .render import resource_tree, write_render
from .stackfile import PROJECT_ROOT, StackFileError, read_stack_file, stack_path
from .summary import active_check_costs, layer_summary
from .words import plural

COMMAND = "./hpcforge"
"""How the tool is invoked everywhere (the script at the repository root runs `.venv/bin/python -m offline`)."""

EXIT_OK = 0
EXIT_POLICY = 1
EXIT_CONFIG = 2


def _add_stack_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument("--config", type=Path, help="read this stack file instead of Pulumi.<stack>.yaml")


def _add_preview_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--preview",
        action="store_true",
        help="as `pulumi preview` of a new stack: outputs that providers compute are unknown",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    preview = commands.add_parser("preview", help="print the resource tree, like `pulumi preview`")
    _add_stack_arguments(preview)
    _add_preview_argument(preview)
    preview.add_argument("--json", type=Path, help="also write every recorded resource to this JSON file")
    preview.add_argument(
        "--tree", action="store_true", help="print every resource as a tree, like `pulumi preview` (default: counts per layer)"
    )

    render = commands.add_parser("render", help="write every Kubernetes object and chart as YAML")
    _add_stack_arguments(render)
    _add_preview_argument(render)
    render.add_argument("--out", type=Path, required=True, help="output directory")
    add_chart_arguments(render)

    check = commands.add_parser("check", help="run policy packs over the gRPC Analyzer protocol")
    _add_stack_arguments(check)
    _add_preview_argument(check)
    check.add_argument(
        "--policy-pack",
        action="append",
        type=Path,
        default=[],
        help="policy pack directory (repeatable; default: the three packs of policies/ with the policy configuration "
        "of the stack's hpcforge:environmentKind, as `make check` runs them)",
    )
    check.add_argument(
        "--policy-pack-config",
        action="append",
        type=Path,
        default=[],
        help="policy config JSON for the pack at the same position (repeatable)",
    )
    check.add_argument(
        "--no-reuse",
        action="store_true",
        help="run the program even when `offline render` kept a recording of the same inputs (offline/recording.py)",
    )

    admission = commands.add_parser(
        "admission", help="per-object verdicts of Pod Security, Argo CD AppProjects and API server reachability"
    )
    _add_stack_arguments(admission)
    _add_preview_argument(admission)
    admission.add_argument("--objects", type=Path, help="also judge the objects in the YAML files under DIR (rendered charts)")
    admission.add_argument(
        "--previous-config",
        type=Path,
        help="the stack file deployed before: its mariadb-operator objects make this run's updates (immutable fields)",
    )
    add_chart_arguments(admission)
    policy = commands.add_parser(
        "policy-config", help="print the policy configuration file that the stack's hpcforge:environmentKind selects"
    )
    policy.add_argument("--config", type=Path, required=True, help="stack file")
    add_chart_arguments(check)
    migrate = commands.add_parser(
        "migrate-inventory", help="move inline hosts, users and groups from the stack file into inventory/<stack>/"
    )
    _add_stack_arguments(migrate)
    migrate.add_argument(
        "--slurm", action="store_true", help="also move hpcforge:slurm.topology and .accounts into inventory/<stack>/slurm.yaml"
    )

    from .live.cli import add_live_impact_parser

    add_live_impact_parser(commands)

    urns = commands.add_parser("urns", help="compare the stacks' URNs with tests/urns/<stack>.txt (offline/urns.py)")
    urns.add_argument("--stack", action="append", default=[], help="stack name (repeatable; default: dev and prod)")
    urns.add_argument("--update", action="store_true", help="rewrite the snapshots (say why in the commit message)")

    from .diff.cli import add_arguments as add_diff_arguments

    diff = commands.add_parser("diff", help="what a change does to the running site: plan, impact, gate (offline/diff/)")
    add_diff_arguments(diff)
    return parser


DEFAULT_PACKS = ("policies/gitops-drift", "policies/security", "policies/slurm-contract")

POLICY_CONFIGS = {"production": "policies/config/prod.json", "development": "policies/config/dev.json"}
"""Policy configuration per environment kind: mandatory for production, advisory for development."""


def policy_config_for(path: Path) -> str:
    """The policy configuration of a stack file, chosen by its `hpcforge:environmentKind`."""
    stack = read_stack_file(path)
    kind = stack.config.get("hpcforge:environmentKind")
    if kind not in POLICY_CONFIGS:
        shown = "missing" if kind is None else f"{kind!r}"
        raise StackFileError(f"{path}: hpcforge:environmentKind: {shown}; expected production or development")
    return POLICY_CONFIGS[kind]


def stack_file_hints(messages: list[str], stack: str, config: Path | None) -> list[str]:
    """The program's messages, with its `migrate-inventory` hints made true for a stack file given with `--config`.

    The program knows the stack's name, not the file it was read from: its hint names `Pulumi.<stack>.yaml` of the
    project and the inventory files there. For another stack file, the command needs `--config FILE`, and the
    inventory goes beside that file (scripts/migrate_inventory.py `inventory_prefix`)."""
    if config is None or config.resolve() == stack_path(stack).resolve():
        return messages
    from components.site.inventory import KINDS, migration_hint
    from scripts.migrate_inventory import inventory_prefix

    hints = [
        (
            migration_hint(kind.section, kind.keys, stack),
            migration_hint(kind.section, kind.keys, stack, stack_file=str(config), inventory_dir=inventory_prefix(config)),
        )
        for kind in KINDS
    ]
    result = []
    for message in messages:
        rewritten = message
        for old, new in hints:
            rewritten = rewritten.replace(old, new)
        result.append(rewritten)
    return result


def _migrate(args: argparse.Namespace) -> int:
    from scripts.migrate_inventory import MigrationError, migrate_inventory

    try:
        migration = migrate_inventory(args.stack, args.config, slurm=args.slurm)
    except MigrationError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    for name in migration.files:
        print(f"wrote {name}")
    print(f"rewrote {args.config or stack_path(args.stack)} (the keys now name the files)")
    return EXIT_OK


def run_urns(args: argparse.Namespace) -> int:
    from . import urns

    failed = False
    for name in args.stack or ["dev", "prod"]:
        stack = run_program(read_stack_file(stack_path(name), name=name), PROJECT_ROOT)
        path = urns.snapshot_path(name)
        diff = urns.compare(urns.read_snapshot(path) if path.exists() else [], stack)
        for line in urns.report(name, diff):
            print(line)
        if args.update:
            urns.write_snapshot(stack, path)
            print(
                f"{name}: wrote {path.relative_to(PROJECT_ROOT)} ({len(diff.added)} new, {len(diff.removed) + len(diff.aliased)} gone);"
                " say in the commit message why URNs were removed"
            )
        elif not diff.ok:
            failed = True
    return EXIT_POLICY if failed else EXIT_OK


def load_stack(args: argparse.Namespace) -> RecordedStack:
    path = args.config if args.config else stack_path(args.stack)
    stack = read_stack_file(path, name=args.stack)
    if args.command == "render":
        # Kept for a following `offline check` of the same inputs (offline/recording.py).
        from .recording import record_and_store

        return record_and_store(stack, PROJECT_ROOT, preview=args.preview)
    return run_program(stack, PROJECT_ROOT, preview=args.preview)


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


def _check(args: argparse.Namespace) -> int:
    from .check import run_check

    if not args.policy_pack:
        if args.policy_pack_config:
            print("error: --policy-pack-config needs the --policy-pack it configures", file=sys.stderr)
            return EXIT_CONFIG
        policy = policy_config_for(args.config or stack_path(args.stack))
        args.policy_pack = [PROJECT_ROOT / pack for pack in DEFAULT_PACKS]
        args.policy_pack_config = [PROJECT_ROOT / policy] * len(DEFAULT_PACKS)
        print(f"policy packs: {', '.join(DEFAULT_PACKS)} with {policy} (hpcforge:environmentKind)", file=sys.stderr)
    return run_check(args)


def _policy_config(args: argparse.Namespace) -> int:
    print(policy_config_for(args.config))
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    from .diff.cli import run_diff

    return run_diff(args)


def _live_impact(args: argparse.Namespace) -> int:
    from .live.cli import run_live_impact

    return run_live_impact(args)


def _preview(stack: RecordedStack, args: argparse.Namespace) -> int:
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


def _admission(stack: RecordedStack, args: argparse.Namespace) -> int:
    from .admission.command import run_admission

    try:
        report = render_charts(args, stack)
    except ChartRenderError as error:
        return report_chart_error(error)
    return run_admission(stack, args, chart_documents(report) if report else [])


def _render(stack: RecordedStack, args: argparse.Namespace) -> int:
    try:
        report = render_charts(args, stack)
    except ChartRenderError as error:
        return report_chart_error(error)
    paths = write_render(stack, args.out, chart_documents(report) if report else [])
    print(f"wrote {plural(len(paths), 'file')} to {args.out}")
    return EXIT_OK


#: Commands that run the program themselves, or none (given the parsed arguments).
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "policy-config": _policy_config,
    "migrate-inventory": _migrate,
    "check": _check,
    "urns": run_urns,
    "live-impact": _live_impact,
    "diff": _diff,
}
#: Commands over the stack that this process runs under the mock engine.
STACK_COMMANDS: dict[str, Callable[[RecordedStack, argparse.Namespace], int]] = {
    "preview": _preview,
    "admission": _admission,
    "render": _render,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command in COMMANDS:
            return COMMANDS[args.command](args)
        stack = load_stack(args)
    except StackFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    except ArgumentListTooLong as error:
        print(f"error: {error.strerror}", file=sys.stderr)
        return EXIT_CONFIG
    except ProgramConfigError as error:
        print("error: invalid hpcforge configuration:", file=sys.stderr)
        for message in stack_file_hints(error.messages, args.stack, getattr(args, "config", None)):
            print(f"  {message}", file=sys.stderr)
        return EXIT_CONFIG
    return STACK_COMMANDS[args.command](stack, args)
