"""The producers of the docs' generated blocks (docs/blocks.py): each makes its block from the real render or the
real command on a named stack or variant (docs/sources.py), never from text written here.

A marker names its producer and arguments, e.g. `<!-- generated: render prod ConfigMap slurm/slurm-config-extra
data:gres.conf -->`:

- `render VARIANT KIND NAMESPACE/NAME PATH [LANG]`: a text field of a rendered object (PATH: keys joined by `:`);
- `excerpt VARIANT KIND NAMESPACE/NAME KEY...`: those keys of the object's spec as YAML
  (`a:b` for a nested key), with a first comment line that names the object and the spec keys left out;
- `config-example`: the add-a-nodeset example's stack-file lines (docs/sources.py);
- `errors VARIANT`: what `./hpcforge preview --stack STACK --config <the variant's file>` prints on stderr;
- `policy VARIANT POLICY...`: the violations of those policies that `./hpcforge check` prints for the variant;
- `usage COMMAND`: the usage lines of `./hpcforge COMMAND --help`;
- `diff VARIANT` and `diff-comment VARIANT`: docs/diff_examples.py.
"""

from __future__ import annotations

import contextlib
import copy
import io
from collections.abc import Callable
from typing import Any

from components.paths import PROJECT_ROOT
from docs.blocks import Block, BlockError
from docs.sources import L40S_NODESET, L40S_POOL, Sources, indent, variant
from offline.program.documents import dump_yaml

Producer = Callable[[Sources, list[str]], Block]


def _at(value: Any, path: str) -> Any:
    for key in path.split(":"):
        if not isinstance(value, dict) or key not in value:
            raise BlockError(f"no {path!r} (at {key!r})")
        value = value[key]
    return value


def _object(sources: Sources, args: list[str]) -> dict[str, Any]:
    name, kind, ref = args[0], args[1], args[2]
    namespace, _, object_name = ref.rpartition("/")
    return sources.object(name, kind, namespace, object_name)


def render_field(sources: Sources, args: list[str]) -> Block:
    if len(args) not in (4, 5):
        raise BlockError("render VARIANT KIND NAMESPACE/NAME PATH [LANG]")
    value = _at(_object(sources, args), args[3])
    if not isinstance(value, str):
        raise BlockError(f"{args[3]} is not text: use excerpt")
    return Block(args[4] if len(args) == 5 else "text", value)


def _leaves(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(value, dict) and value:
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*prefix, key))]
    return [prefix]


def excerpt(sources: Sources, args: list[str]) -> Block:
    """Chosen keys of an object's spec, as the render has them; the first line says what is left out."""
    if len(args) < 4:
        raise BlockError("excerpt VARIANT KIND NAMESPACE/NAME KEY...")
    obj = _object(sources, args)
    spec = obj.get("spec") or {}
    shown: dict[str, Any] = {}
    for key in args[3:]:
        value = copy.deepcopy(_at(spec, key))
        target = shown
        *parents, last = key.split(":")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[last] = value
    keys = [key.split(":") for key in args[3:]]
    left_out = set()
    for leaf in _leaves(spec):
        parts = list(leaf)
        if any(parts[: len(key)] == key for key in keys):
            continue  # inside a key that is shown
        depth = next(n for n in range(1, len(parts) + 1) if not any(key[:n] == parts[:n] for key in keys))
        left_out.add(".".join(parts[:depth]))
    name = f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}".lstrip("/")
    head = f"# {obj['kind']} {name} ({args[0]}): spec, without {', '.join(sorted(left_out)) or 'nothing'}\n"
    return Block("yaml", head + dump_yaml({"spec": shown}))


def config_example(sources: Sources, args: list[str]) -> Block:
    del sources
    if args:
        raise BlockError("config-example takes no arguments")
    text = (
        "hpcforge:nodePools:\n  # ...\n"
        + indent(L40S_POOL, 2)
        + "hpcforge:slurm:\n  nodesets:\n    # ...\n"
        + indent(L40S_NODESET, 4)
        + "  partitions:\n    - name: gpu\n      nodesets: [gpu-a100, gpu-h100, gpu-l40s]\n      # ...\n"
    )
    return Block("yaml", text)


def errors(sources: Sources, args: list[str]) -> Block:
    """stderr of `./hpcforge preview` on the variant (it must fail with exit 2)."""
    from offline.cli import main

    if len(args) != 1:
        raise BlockError("errors VARIANT")
    spec = variant(args[0])
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["preview", "--stack", spec.stack, "--config", str(sources.stack_file(args[0]))])
    if code != 2:
        raise BlockError(f"./hpcforge preview of {args[0]} exited {code}, not 2: the example no longer fails")
    return Block("text", err.getvalue().replace(str(sources.tmp), "..."))


def policy(sources: Sources, args: list[str]) -> Block:
    """The lines `./hpcforge check` prints for each violation of the named policies (with the config of the stack's
    environmentKind), dedented to the violation."""
    from offline.policy.command import policy_config_for
    from offline.policy.packs import PackSpec
    from offline.policy.session import check_stack
    from offline.program.stackfile import read_stack_file

    if len(args) < 2:
        raise BlockError("policy VARIANT POLICY...")
    path = sources.stack_file(args[0])
    config = PROJECT_ROOT / policy_config_for(path)
    packs = [PackSpec(PROJECT_ROOT / "policies" / pack, config) for pack in ("gitops-drift", "security", "slurm-contract")]
    out = io.StringIO()
    stack_file = read_stack_file(path, name=variant(args[0]).stack)
    check_stack(sources.run(args[0]), stack_file, packs, out=out, err=io.StringIO())
    lines = out.getvalue().splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        words = line.split()
        if line.startswith("        - [") and len(words) > 2 and words[2] in args[1:]:
            found.append(line[8:])
            found += [more[8:] for more in _continuation(lines, i + 1)]
    named = {line.split()[2] for line in found if line.startswith("- [")}
    if named != set(args[1:]):
        raise BlockError(f"{args[0]}: no violation of {sorted(set(args[1:]) - named)}")
    return Block("text", "\n".join(found))


def _continuation(lines: list[str], start: int) -> list[str]:
    more = []
    for line in lines[start:]:
        if not line.startswith("          "):
            break
        more.append(line)
    return more


def usage(sources: Sources, args: list[str]) -> Block:
    """The usage lines of `./hpcforge COMMAND --help`, as argparse writes them on a 100-column terminal."""
    import argparse
    import os

    from offline.cli import build_parser

    del sources
    if len(args) != 1:
        raise BlockError("usage COMMAND")
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if args[0] not in commands.choices:
        raise BlockError(f"./hpcforge has no command {args[0]!r}")
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        text = commands.choices[args[0]].format_usage()
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return Block("text", text)


def _diff(sources: Sources, args: list[str]) -> Block:
    from docs.diff_examples import diff_report

    return diff_report(sources, args)


def _diff_comment(sources: Sources, args: list[str]) -> Block:
    from docs.diff_examples import diff_comment

    return diff_comment(sources, args)


PRODUCERS: dict[str, Producer] = {
    "render": render_field,
    "excerpt": excerpt,
    "config-example": config_example,
    "errors": errors,
    "policy": policy,
    "usage": usage,
    "diff": _diff,
    "diff-comment": _diff_comment,
}


def producer_for(sources: Sources) -> Callable[[str], Block]:
    """`produce(spec)` for docs/blocks.py's refresh: the block a marker's words name."""

    def produce(spec: str) -> Block:
        words = spec.split()
        if not words or words[0] not in PRODUCERS:
            raise BlockError(f"unknown producer in `generated: {spec}` (docs/examples.py: {', '.join(PRODUCERS)})")
        return PRODUCERS[words[0]](sources, words[1:])

    return produce


__all__ = ["PRODUCERS", "Producer", "config_example", "errors", "excerpt", "policy", "producer_for", "render_field", "usage"]
