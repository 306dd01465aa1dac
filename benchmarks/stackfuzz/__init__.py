"""Mutated stack files, as a careless or hostile user would write them, and what hpcforge makes of each.

    python -m benchmarks.stackfuzz [--cases 2000] [--seed 14] [--show 5] [--progress 100]

Each case takes one of the project's stack files (`Pulumi.dev.yaml`, `Pulumi.prod.yaml`) or a
generated example site (benchmarks/sitegen.py), with its inventory files (hosts, users, groups),
applies one mutation (a value of the wrong type, a line break or separator injected into a string,
an out-of-range number or quantity, raw YAML the CLI reads differently, a duplicated list item, an
address or namespace copied onto another key, a deleted key, a whole-file edit of an inventory
file), reads the text with the stack-file reader, runs the real program under the mock engine and
writes the rendered objects. Values inside the inventories' lists are mutated like config values
and written to the inventory files (YAML 1.2, read by yaml-rs). Each outcome is classified:

- `rejected-by-name`: refused before any resource was registered, every message naming a key;
- `rejected-unnamed`: refused, but some message names no key;
- `valid`: accepted, and the oracle has no objection;
- `wrongly-accepted`: accepted although the oracle says the mutation makes the file wrong, or although
  a rendered object fails the Kubernetes schema, an upstream CRD or a chart's values schema (../shared);
- `traceback`: any other exception while reading or running;
- `crash-after-preview`: the program ran but rendering its objects failed.

The table ends with the slowest cases by CPU time, wall time beside it (wall time also counts
waiting for a CPU that other jobs hold). The oracle is the mutation itself: each mutation says whether the file it produces must be refused
(`reject`) or may go either way (`either`), from rules stated next to each mutation below.

One module per job: cases.py (a case, its outcome, the tally), bases.py (the base documents and the oracle's rules),
mutations.py, judge.py (a mutation applied and classified), runner.py (a seeded run) and __main__.py (the command).
"""

from __future__ import annotations

from .bases import (
    CASE_KEYS,
    INVENTORY_KEYS,
    IPV4,
    MULTILINE_KEYS,
    NAME_KEYS,
    QUANTITY_KEYS,
    SIGNED_KEYS,
    base_config,
    cached_base,
    containers,
    in_inventory,
    is_secure,
    key_of,
    leaves,
    namespace_kind,
    single_owner,
)
from .cases import BAD_CLASSES, CLASSES, STACKS, Mutation, Outcome, PathT, Raw, Tally, render_path
from .judge import apply, judge, warm_up
from .mutations import INVENTORY_EDITS, MUTATORS, TARGETED, mutations
from .runner import run

__all__ = [
    "BAD_CLASSES",
    "CASE_KEYS",
    "CLASSES",
    "INVENTORY_EDITS",
    "INVENTORY_KEYS",
    "IPV4",
    "MULTILINE_KEYS",
    "MUTATORS",
    "NAME_KEYS",
    "QUANTITY_KEYS",
    "SIGNED_KEYS",
    "STACKS",
    "TARGETED",
    "Mutation",
    "Outcome",
    "PathT",
    "Raw",
    "Tally",
    "apply",
    "base_config",
    "cached_base",
    "containers",
    "in_inventory",
    "is_secure",
    "judge",
    "key_of",
    "leaves",
    "mutations",
    "namespace_kind",
    "render_path",
    "run",
    "single_owner",
    "warm_up",
]
