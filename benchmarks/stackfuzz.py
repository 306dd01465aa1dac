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
"""

from __future__ import annotations

import argparse
import copy
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from components.config.yamlv3 import load_document, resolve_plain
from offline.stackfile import PROJECT_ROOT, StackFileError, parse_stack_text

STACKS = ("dev", "prod", "site")
"""The two stack files, and a generated example site (benchmarks/sitegen.py: 6 nodesets, 20 hosts, 10 users)."""
CLASSES = ("rejected-by-name", "valid", "rejected-unnamed", "wrongly-accepted", "traceback", "crash-after-preview")
BAD_CLASSES = ("rejected-unnamed", "wrongly-accepted", "traceback", "crash-after-preview")

PathT = tuple[str | int, ...]


@dataclass(frozen=True)
class Raw:
    """YAML text put in place of a value, verbatim."""

    text: str


@dataclass(frozen=True)
class Mutation:
    stack: str
    kind: str
    path: PathT
    value: Any = None
    expect: str = "either"  # "reject" or "either"
    why: str = ""
    other: PathT | None = None

    def describe(self) -> str:
        shown = repr(self.value.text if isinstance(self.value, Raw) else self.value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        target = _render(self.path)
        extra = f" (from {_render(self.other)})" if self.other else ""
        return f"{self.stack}: {self.kind} {target} = {shown}{extra} [{self.expect}]"


@dataclass
class Outcome:
    mutation: Mutation
    verdict: str
    seconds: float
    detail: str = ""
    cpu_seconds: float = 0.0
    """CPU time of this process for the case (wall `seconds` minus waiting for a shared machine)."""


@dataclass
class Tally:
    outcomes: list[Outcome] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def counts(self) -> Counter[str]:
        return Counter(outcome.verdict for outcome in self.outcomes)

    def table(self, show: int = 3) -> str:
        counts = self.counts()
        total = len(self.outcomes)
        lines = [f"{'outcome':<22}{'cases':>7}", "-" * 29]
        lines += [f"{verdict:<22}{counts.get(verdict, 0):>7}" for verdict in CLASSES]
        lines.append("-" * 29)
        lines.append(f"{'total':<22}{total:>7}")
        lines += self.slowest_lines()
        lines += self.wordiest_lines()
        kinds = Counter(o.mutation.kind for o in self.outcomes)
        lines.append("mutations: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
        for verdict in BAD_CLASSES:
            examples = [o for o in self.outcomes if o.verdict == verdict][:show]
            for outcome in examples:
                lines.append(f"  {verdict}: {outcome.mutation.describe()}\n      {outcome.detail[:300]}")
        return "\n".join(lines)

    def wordiest_lines(self, count: int = 3) -> list[str]:
        """The refusals with the most messages: a one-key mutation that yields many is a cascade to fold."""
        refused = [o for o in self.outcomes if o.verdict.startswith("rejected")]
        if not refused:
            return []
        wordiest = sorted(refused, key=lambda o: o.detail.count("\n"), reverse=True)[:count]
        lines = ["most messages for one mutation:"]
        lines += [f"  {o.detail.count(chr(10)) + 1:4d}  {o.mutation.describe()}" for o in wordiest]
        return lines

    def slowest_lines(self, count: int = 5) -> list[str]:
        """The slowest cases by CPU time, with wall time beside it (wall includes waiting for the CPU)."""
        if not self.outcomes:
            return []
        slowest = sorted(self.outcomes, key=lambda o: o.cpu_seconds, reverse=True)[:count]
        walls = sorted(o.seconds for o in self.outcomes)
        lines = [f"case time: median {walls[len(walls) // 2]:.2f} s wall, max {walls[-1]:.2f} s wall; slowest by CPU:"]
        lines += [f"  {o.cpu_seconds:6.2f} s CPU {o.seconds:6.2f} s wall  {o.verdict}: {o.mutation.describe()}" for o in slowest]
        return lines


def _render(path: PathT | None) -> str:
    text = ""
    for part in path or ():
        text += f"[{part}]" if isinstance(part, int) else (part if not text else f".{part}")
    return text


# --- the base documents ----------------------------------------------------------------------------


def base_config(stack: str) -> dict[str, Any]:
    """A stack's config with its inventories (hosts, users, groups) inline, so they mutate like config;
    `apply` writes them back to inventory files."""
    if stack == "site":
        from .sitegen import generate_site

        return generate_site(hosts=20, nodesets=6, users=10)
    from components.config.inventory import KINDS, read_yaml_file

    document = load_document((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text())
    config: dict[str, Any] = document["config"]
    for kind in KINDS:
        section = config.get(f"hpcforge:{kind.section}")
        if isinstance(section, dict) and "inventory" in section:
            inventory, _ = read_yaml_file(PROJECT_ROOT / section.pop("inventory")["file"], "inventory")
            section.update(inventory)
    return config


_BASES: dict[str, dict[str, Any]] = {}


def _base(stack: str) -> dict[str, Any]:
    if stack not in _BASES:
        _BASES[stack] = base_config(stack)
    return _BASES[stack]


def leaves(value: Any, path: PathT = ()) -> list[tuple[PathT, Any]]:
    found: list[tuple[PathT, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):  # the first items stand for the rest (inventories are long)
            found += leaves(item, (*path, index))
    else:
        found.append((path, value))
    return found


def containers(value: Any, path: PathT = ()) -> list[tuple[PathT, Any]]:
    found: list[tuple[PathT, Any]] = []
    if isinstance(value, dict):
        found.append((path, value))
        for key, item in value.items():
            found += containers(item, (*path, key))
    elif isinstance(value, list):
        found.append((path, value))
        for index, item in enumerate(value[:2]):
            found += containers(item, (*path, index))
    return found


# --- oracle rules -------------------------------------------------------------------------------------

# Keys whose values are names that Kubernetes, Slurm, Linux or DNS restrict: a space, an upper-case
# letter, '=' or a leading '-' is never accepted by the consumer.
NAME_KEYS = {
    "name", "namespace", "pool", "nodeset", "nodesets", "attachment", "master", "storageClass", "node",
    "clusterName", "primaryGroup", "groups", "flavor", "clusterQueue", "sampleNamespace", "defaultImage",
    "lookupUser", "testPartition", "interfaces", "features", "domain", "hostname", "qos",
}  # fmt: skip
# Names that may hold upper-case letters: Linux interface names, Slurm node features (case-sensitive
# words in slurm.conf `Features=`, e.g. HighMem).
CASE_KEYS = {"master", "interfaces", "features"}
# Strings that may legitimately hold a line break: command arguments and inline scripts.
MULTILINE_KEYS = {"command", "inline", "args"}
# Integer keys whose consumer takes negative values.
SIGNED_KEYS = {"value"}
_IPV4 = re.compile(r"^(\d{1,3}\.){3}\d{1,3}$")
_QUANTITY_KEYS = {"cpu", "memory", "memoryLimit", "size", "cpuPerNode", "memoryPerNode"}


def _key_of(path: PathT) -> str:
    for part in reversed(path):
        if isinstance(part, str):
            return part
    return ""


def _single_owner(path: PathT) -> bool:
    """Addresses that belong to exactly one machine or service: a second user of one is always wrong.

    DNS records and upstream resolvers may name any address (two names for one host, a gateway that
    also resolves), and a DHCP range's ends (the main range's and each extra subnet's) are judged by the
    range rules (a range of one address is a range), so those are `either`.
    """
    text = _render(path)
    return not any(part in text for part in ("dns.zones", "dns.upstreams", "range.start", "range.end"))


def _namespace_kind(path: PathT) -> str:
    """layer (a layer's own namespace), app (a site app's), or other (team, sample, attachment)."""
    text = _render(path)
    if text in ("hpcforge:slurm.namespace", "hpcforge:provisioning.namespace", "hpcforge:devops.namespace"):
        return "layer"
    return "app" if text.startswith("hpcforge:gitops.apps") else "other"


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


INVENTORY_KEYS = {("hpcforge:provisioning", "hosts"): "provisioning", ("hpcforge:directory", "users"): "directory",
                  ("hpcforge:directory", "groups"): "directory"}  # fmt: skip
"""Lists that `apply` writes to inventory files (YAML 1.2, read by yaml-rs), not to the stack file."""


def in_inventory(path: PathT) -> bool:
    return tuple(path[:2]) in INVENTORY_KEYS


# --- mutations ------------------------------------------------------------------------------------------


def _type_swap(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    """A value of another JSON type: a boolean where a number or string belongs, a list for a scalar..."""
    if isinstance(value, bool):
        new = draw(st.sampled_from([2, "maybe", [True], {"a": 1}]))
        return Mutation(stack, "type-swap", path, new, "reject", "not a boolean")
    if isinstance(value, int):
        new = draw(st.sampled_from([True, False, "many", 1.5, [1], {"n": 1}]))
        return Mutation(stack, "type-swap", path, new, "reject", "not an integer")
    if isinstance(value, str):
        new = draw(st.sampled_from([True, False, [value], {"value": value}, None]))
        # null is how a stack file leaves an optional key unset: right or wrong depending on the key.
        return Mutation(stack, "type-swap", path, new, "either" if new is None else "reject", "not a string")
    return Mutation(stack, "type-swap", path, "text", "either")


def _inject(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    """A line break, NUL or carriage return inside a string: never right outside commands and scripts."""
    if not isinstance(value, str):
        return _type_swap(stack, path, value, draw)
    payload = draw(st.sampled_from(["\nSlurmUser=root", "\r\nx=1", "\x00", "\n[domain/evil]", "\ndn: cn=x", "\n#"]))
    position = draw(st.sampled_from(["end", "start"]))
    new = value + payload if position == "end" else payload.lstrip("\r\n") + "\n" + value
    multiline = any(isinstance(p, str) and p in MULTILINE_KEYS for p in path)
    return Mutation(stack, "line-break", path, new, "either" if multiline else "reject", "line break in a value")


def _bad_name(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    """A name no consumer accepts (space, upper case, '=', ',', '#', leading '-', 300 characters)."""
    base = value if isinstance(value, str) and value else "x"
    new = draw(
        st.sampled_from([f"{base} two", base.upper() + "X", f"{base}=1", f"{base},x", f"{base}#x", f"-{base}", base * 300])
    )
    if new == base.upper() + "X" and (_key_of(path) in CASE_KEYS or "topology" in _render(path)):
        # Linux interface names may hold upper-case letters (the kernel's dev_valid_name refuses only
        # '/', ':', whitespace, "." and ".." and names over 15 bytes), and so may Slurm switch and
        # block names (topology.conf SwitchName/BlockName are free-form words).
        return Mutation(stack, "bad-name", path, new, "either", "upper case where the consumer allows it")
    return Mutation(stack, "bad-name", path, new, "reject", "not a valid name")


def _separator(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    """A separator the generated file gives meaning to, appended to a free-form string."""
    if not isinstance(value, str):
        return _type_swap(stack, path, value, draw)
    new = value + draw(st.sampled_from([" Extra=1", "#x", ",x", ";x", "]", "'\"", "{{ .x }}", "\t"]))
    key = _key_of(path)
    expect = "reject" if key in NAME_KEYS or key in _QUANTITY_KEYS or _IPV4.match(value) else "either"
    return Mutation(stack, "separator", path, new, expect, "separator in a value")


def _number(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    """An integer out of any range hpcforge's consumers take: negative, 2^32 and above."""
    new = draw(st.sampled_from([-1, 2**32, 2**63, Raw("18446744073709551616"), Raw("9" * 400), Raw("0x7fffffffffffffff")]))
    # Kubernetes PriorityClass values may be negative (int32, at most 1e9 for user classes).
    expect = "either" if new == -1 and _key_of(path) in SIGNED_KEYS else "reject"
    return Mutation(stack, "number", path, new, expect, "out of range")


def _quantity(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    """Kubernetes quantities: too large, negative, not a quantity, or valid exponent forms."""
    new, expect = draw(
        st.sampled_from(
            [("1e30Gi", "reject"), ("-1Gi", "reject"), ("4 Gi", "reject"), ("4GB", "reject"), ("1e3", "either"),
             ("0.5Gi", "either"), ("12e9", "either"), (Raw("1e3"), "either"), ("1E3Mi", "reject"), ("", "reject")]
        )
    )  # fmt: skip
    return Mutation(stack, "quantity", path, new, expect, "quantity")


def _raw_yaml(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    """YAML the CLI reads as something else or refuses: dates, tags, deep nesting, bombs, huge numbers."""
    bomb = "{a: &a [x,x,x,x,x,x,x,x,x], " + ", ".join(
        f"{n}: &{n} [{','.join(['*' + p] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    ) + "}"  # fmt: skip
    choices: list[tuple[str, str]] = [
        ("2025-03-01", "reject"),
        ("2025-03-01T10:00:00Z", "reject"),
        ("!!binary aGVsbG8=", "reject"),
        ("!!set {a, b}", "reject"),
        ("!!timestamp 2025-03-01", "reject"),
        ("[" * 200 + "]" * 200, "reject"),
        # yaml.v3 cannot make a number of it, so the CLI passes the digits on as a string: right for a
        # string (a command argument), wrong for anything else.
        ("9" * 5000, "either" if isinstance(value, str) else "reject"),
        (bomb, "reject"),
        (".inf", "reject"),
        ("{k: 1, k: 2}", "reject"),
        ("!custom x", "reject"),
    ]
    if isinstance(value, str):
        # What YAML 1.1 readers get wrong: these stay strings for the Pulumi CLI, but are not this value.
        choices += [("yes", "either"), ("30:00", "either"), ("010", "either")]
    if in_inventory(path):
        # Inventory files are YAML 1.2 core schema (components/config/inventory.py): no timestamps, an
        # unquoted date is the string as written, which is right or wrong by the key's own rules.
        choices = [(text, "either" if text.startswith("2025-") else expect) for text, expect in choices]
    text, expect = draw(st.sampled_from(choices))
    return Mutation(stack, "raw-yaml", path, Raw(text), expect, "YAML the CLI reads differently")


def _delete(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    return Mutation(stack, "delete", path, None, "either", "key deleted")


# Targeted edits for what the issue lists (injection into files, consumer ranges, relations between
# values, YAML the CLI reads its own way), each with the verdict it must get. Paths exist in every base.
TARGETED: list[tuple[PathT, Any, str, str]] = [
    (("hpcforge:slurm", "controller", "extraParameters"), {"MaxJobCount": "1\nSlurmUser=root"}, "reject", "slurm.conf line injected"),
    (("hpcforge:slurm", "controller", "extraParameters"), {"MaxJobCount": "10000 #x"}, "reject", "slurm.conf comment"),
    (("hpcforge:slurm", "controller", "extraParameters"), {"MaxJobCount": "10000"}, "either", "a plain extra parameter"),
    (("hpcforge:slurm", "controller", "scheduler"), {"parameters": ["bf_continue,x y"]}, "reject", "list separator in an item"),
    (("hpcforge:slurm", "controller", "timeouts"), {"inactiveLimit": 65534}, "reject", "InactiveLimit over 65533"),
    (("hpcforge:slurm", "controller", "timeouts"), {"inactiveLimit": 65533}, "either", "InactiveLimit at its maximum"),
    (("hpcforge:slurm", "controller", "priority"), {"weights": {"age": 2**32}}, "reject", "weight over 32 bits"),
    (("hpcforge:slurm", "controller", "priority"), {"weights": {"age": True}}, "reject", "boolean for an integer"),
    (("hpcforge:slurm", "nodesets", 0, "tolerations"), [{"key": "a b"}], "reject", "toleration key Kubernetes refuses"),
    (("hpcforge:slurm", "nodesets", 0, "nodeSelector"), {"zone": "eu west"}, "reject", "label value Kubernetes refuses"),
    (("hpcforge:slurm", "nodesets", 0, "features"), ["avx512,gpu"], "reject", "feature list separator"),
    (("hpcforge:slurm", "login", "memoryLimit"), "1Mi", "reject", "limit below request"),
    (("hpcforge:slurm", "partitions", 0, "oversubscribe"), Raw("NO"), "either", "YAML 1.2: NO is a string"),
    (("hpcforge:slurm", "partitions", 0, "oversubscribe"), Raw("false"), "reject", "a boolean for a string"),
    (("hpcforge:slurm", "partitions", 0, "maxTime"), Raw("30:00"), "either", "YAML 1.2: 30:00 is a string"),
    (("hpcforge:database", "memoryLimit"), "1Mi", "reject", "limit below request and InnoDB pool"),
    (("hpcforge:database", "innodbBufferPoolSize"), "64G", "reject", "InnoDB pool above the memory limit"),
    (("hpcforge:tls", "renewBefore"), "100000h", "reject", "renewBefore longer than the duration"),
    (("hpcforge:kubernetes", "storageClass"), "Fast SSD", "reject", "storage class Kubernetes refuses"),
    (("hpcforge:network", "dns", "zones", 0, "hosts"), {"bad name": "10.99.0.1"}, "reject", "hosts-file name with a space"),
    (("hpcforge:provisioning", "images", 0, "cmdline"), "console=ttyS0 {{ .x", "reject", "unbalanced Grendel template"),
    (("hpcforge:provisioning", "images", 0, "cmdline"), "console=ttyS0\nroot=/dev/evil", "reject", "kernel cmdline line break"),
    (("hpcforge:directory", "users", 0, "fullName"), "Alice\ndn: cn=evil", "reject", "LDIF line injected"),
    (("hpcforge:directory", "groups", 0, "gidNumber"), Raw("010000"), "either", "an inventory file (YAML 1.2): decimal"),
    (("hpcforge:slurm", "controller", "timeouts"), Raw("{inactiveLimit: 0100}"), "reject", "yaml.v3 reads it as octal 64"),
    (("hpcforge:environment",), "production", "either", "a name only; the kind decides"),
    (("hpcforge:environmentKind",), "prod", "reject", "kind is production or development"),
    (("hpcforge:domain",), Raw("true"), "reject", "a boolean for the domain"),
]  # fmt: skip


def _flow(text: str) -> str:
    """The same document in flow style (JSON is YAML)."""
    import json

    return json.dumps(yaml.safe_load(text)) + "\n"


# Whole-file edits of an inventory file (hosts.yaml or users.yaml), as a hand edit or a bad export
# would leave it: (name, what it does to the text, expected verdict).
INVENTORY_EDITS: dict[str, tuple[Callable[[str], str], str]] = {
    "unknown top-level key": (lambda text: text + "extra: 1\n", "reject"),
    "list replaced by a scalar": (lambda text: text.split(":", 1)[0] + ": none\n", "reject"),
    "an entry that is a string": (lambda text: text.replace("\n- ", "\n- just-a-name\n- ", 1), "reject"),
    "a tab before an entry": (lambda text: text.replace("\n- ", "\n\t- ", 1), "reject"),
    "a byte that is not UTF-8": (lambda text: text.replace("\n- ", "\n- \udcff", 1), "reject"),
    "a second document": (lambda text: text + "---\n" + text, "reject"),
    "an entry repeated by an alias": (lambda text: re.sub(r"\n- ", "\n- &first ", text, count=1) + "- *first\n", "reject"),
    "a tagged entry": (lambda text: text.replace("\n- ", "\n- !entry\n  ", 1), "reject"),
    "a binary value": (lambda text: re.sub(r"(\n  [a-zA-Z]+: )", r"\1!!binary ", text, count=1), "reject"),
    "a set": (lambda text: re.sub(r"(\n  [a-zA-Z]+: )", r"\1!!set ", text, count=1), "reject"),
    "a BOM and a comment": (lambda text: "\ufeff# exported\n" + text, "either"),
    "a %YAML 1.2 directive": (lambda text: "%YAML 1.2\n---\n" + text, "either"),
    "flow style": (_flow, "either"),
    "truncated": (lambda text: text[: len(text) * 2 // 3], "either"),
    "emptied": (lambda text: "", "either"),
}


def _inventory_text(stack: str, draw: Callable[[Any], Any]) -> Mutation:
    sections = [section for (top, key), section in INVENTORY_KEYS.items() if isinstance(_base(stack).get(top), dict)
                and key in _base(stack)[top]]  # fmt: skip
    section = draw(st.sampled_from(sorted(set(sections))))
    edit = draw(st.sampled_from(sorted(INVENTORY_EDITS)))
    return Mutation(stack, "inventory-text", (f"hpcforge:{section}", "inventory"), edit, INVENTORY_EDITS[edit][1], edit)


def _targeted(stack: str, draw: Callable[[Any], Any]) -> Mutation:
    path, value, expect, why = draw(st.sampled_from(TARGETED))
    return Mutation(stack, "targeted", path, value, expect, why)


MUTATORS: dict[str, Callable[[str, PathT, Any, Callable[[Any], Any]], Mutation]] = {
    "type-swap": _type_swap,
    "line-break": _inject,
    "bad-name": _bad_name,
    "separator": _separator,
    "number": _number,
    "quantity": _quantity,
    "raw-yaml": _raw_yaml,
    "delete": _delete,
}


def _leaf_filter(kind: str) -> Callable[[PathT, Any], bool]:
    if kind in {"line-break", "separator"}:
        return lambda path, value: isinstance(value, str)
    if kind == "bad-name":
        return lambda path, value: isinstance(value, str) and _key_of(path) in NAME_KEYS and "." not in str(value)
    if kind == "number":
        return lambda path, value: isinstance(value, int) and not isinstance(value, bool)
    if kind == "quantity":
        return lambda path, value: _key_of(path) in _QUANTITY_KEYS
    return lambda path, value: True


@st.composite
def mutations(draw: Callable[[Any], Any]) -> Mutation:
    stack = draw(st.sampled_from(STACKS))
    config = _base(stack)
    kind = draw(
        st.sampled_from([*MUTATORS, "duplicate-item", "copy-address", "copy-namespace", "targeted", "targeted", "inventory-text"])
    )
    if kind == "targeted":
        return _targeted(stack, draw)
    if kind == "inventory-text":
        return _inventory_text(stack, draw)
    if kind == "duplicate-item":
        lists = [(p, v) for p, v in containers(config) if isinstance(v, list) and v and isinstance(v[0], dict) and "name" in v[0]]
        path, items = draw(st.sampled_from(lists))
        index = draw(st.integers(0, min(len(items), 3) - 1))
        return Mutation(stack, "duplicate-item", (*path, index), None, "reject", "two items with one name")
    if kind in ("copy-address", "copy-namespace"):
        if kind == "copy-address":
            pool = [(p, v) for p, v in leaves(config) if isinstance(v, str) and _IPV4.match(v)]
        else:
            pool = [(p, v) for p, v in leaves(config) if _key_of(p) in ("namespace", "sampleNamespace")]
            pool += [((*p, "namespace"), "provisioning") for p, v in containers(config) if p == ("hpcforge:provisioning",)]
        source = draw(st.sampled_from(pool))
        targets = [(p, v) for p, v in pool if v != source[1] and p != source[0]]
        if not targets:
            return Mutation(stack, "delete", source[0], None, "either")
        target = draw(st.sampled_from(targets))
        if kind == "copy-address":
            expect = "reject" if _single_owner(source[0]) and _single_owner(target[0]) else "either"
            why = "two services at one address"
        else:
            kinds = {_namespace_kind(source[0]), _namespace_kind(target[0])}
            expect = "reject" if kinds <= {"layer", "app"} and kinds != {"app"} else "either"
            why = "two owners of one namespace"
        return Mutation(stack, kind, target[0], source[1], expect, why, other=source[0])
    keep = _leaf_filter(kind)
    candidates = [(p, v) for p, v in leaves(config) if keep(p, v) and not _is_secure(v)]
    path, value = draw(st.sampled_from(candidates))
    return MUTATORS[kind](stack, path, value, draw)


# --- applying and judging ---------------------------------------------------------------------------------

_PLACEHOLDER = "hpcforge-fuzz-raw-value-0e6f"


class _Dumper(yaml.SafeDumper):
    pass


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # Quote every string that yaml.v3 would not read back as this very string.
    resolved = resolve_plain(data) if data else None
    style = None if (isinstance(resolved, str) and resolved == data and data.strip() == data) else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def apply(mutation: Mutation, directory: Path) -> str:
    """The stack file text after the mutation; its inventories are written to files in `directory`."""
    from components.config.inventory import DEFAULT_FILES, KINDS, Yaml12Dumper

    config = copy.deepcopy(_base(mutation.stack))
    *parents, last = mutation.path
    target: Any = config
    for part in parents:
        target = target[part]
    if mutation.kind == "inventory-text":
        pass
    elif mutation.kind == "delete":
        del target[last]
    elif mutation.kind == "duplicate-item":
        target.append(copy.deepcopy(target[last]))
    else:
        target[last] = _PLACEHOLDER if isinstance(mutation.value, Raw) else mutation.value
    raw = mutation.value.text if isinstance(mutation.value, Raw) else None
    for kind in KINDS:
        if kind.inline_allowed:  # the Slurm topology and accounts stay inline, as in dev and prod
            continue
        section = config.get(f"hpcforge:{kind.section}")
        if isinstance(section, dict) and any(key in section for key in kind.keys):
            path = directory / DEFAULT_FILES[kind.section]
            inventory = {key: section.pop(key) for key in kind.keys if key in section}
            text = yaml.dump(inventory, Dumper=Yaml12Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
            if raw is not None and _PLACEHOLDER in text:
                text, raw = text.replace(_PLACEHOLDER, raw, 1), None
            if mutation.kind == "inventory-text" and mutation.path[0] == f"hpcforge:{kind.section}":
                text = INVENTORY_EDITS[mutation.value][0](text)
            path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
            section["inventory"] = {"file": str(path)}
    text = yaml.dump({"config": config}, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
    if raw is not None:
        text = text.replace(_PLACEHOLDER, raw, 1)
    return text


_NAMED = re.compile(
    r"^(\S+ \(line \d+\): |\S+: )?hpcforge:"  # a stack key (after the stack file's name)
    r"|^\S+\.ya?ml: [\w\[\]\"<>.*-]+( \(line \d+\))?: "  # a path inside an inventory file
    r"|^\S+\.ya?ml \(line \d+\): "  # a line of an inventory file (a problem outside any entry)
    r"|^\S+\.ya?ml: (not UTF-8 \(byte \d+\)|expected a mapping with the keys )"  # the file as a whole
)


def _named(messages: list[str]) -> bool:
    """Every message names where the problem is: a stack key or a path inside an inventory file."""
    return all(_NAMED.match(message) or "hpcforge:" in message for message in messages)


def judge(mutation: Mutation) -> Outcome:
    started = time.perf_counter()
    cpu_started = time.process_time()
    with tempfile.TemporaryDirectory() as directory:
        outcome = _judge(mutation, Path(directory), started)
    outcome.cpu_seconds = time.process_time() - cpu_started
    return outcome


def _judge(mutation: Mutation, directory: Path, started: float) -> Outcome:
    from offline.engine import ProgramConfigError, run_program
    from offline.render import write_render
    from offline.stackfile import StackFile

    verdict, detail = "valid", ""
    try:
        text = apply(mutation, directory)
        try:
            values, secret_keys = parse_stack_text(text, f"Pulumi.{mutation.stack}.yaml")
        except StackFileError as error:
            verdict = "rejected-by-name" if _named(error.messages) else "rejected-unnamed"
            return Outcome(mutation, verdict, time.perf_counter() - started, "\n".join(error.messages))
        stack = StackFile(name=mutation.stack, path=PROJECT_ROOT / f"Pulumi.{mutation.stack}.yaml", config=values,
                          secret_keys=secret_keys)  # fmt: skip
        try:
            recorded = run_program(stack, PROJECT_ROOT)
        except ProgramConfigError as error:
            verdict = "rejected-by-name" if _named(error.messages) else "rejected-unnamed"
            return Outcome(mutation, verdict, time.perf_counter() - started, "\n".join(error.messages))
        try:
            with tempfile.TemporaryDirectory() as out:
                write_render(recorded, Path(out))
        except Exception as error:  # classifying every failure is the point
            return Outcome(mutation, "crash-after-preview", time.perf_counter() - started, f"{type(error).__name__}: {error}")
        if mutation.expect == "reject":
            verdict, detail = "wrongly-accepted", mutation.why
        else:
            # The consumer's own rules as a second oracle: every object must pass the Kubernetes
            # schema, the upstream CRDs and the charts' values schemas (offline/schema/validate.py).
            errors = _schema_errors(recorded, values)
            if errors:
                verdict, detail = "wrongly-accepted", f"Kubernetes/CRD/chart schema refuses it: {errors[0]}"
    except Exception as error:  # likewise
        verdict, detail = "traceback", f"{type(error).__name__}: {error}"
    return Outcome(mutation, verdict, time.perf_counter() - started, detail)


def _shared_dir() -> Path | None:
    import os

    shared = Path(os.environ.get("HPCFORGE_SHARED", PROJECT_ROOT.parent / "shared")).resolve()
    return shared if (shared / "crds").is_dir() else None


def _schema_errors(recorded: Any, values: dict[str, str]) -> list[str]:
    import json

    from offline.render import render_documents
    from offline.schema import validate as schema

    shared = _shared_dir()
    if shared is None:
        return []
    version = json.loads(values.get("hpcforge:kubernetes", "{}") or "{}").get("version", "1.33")
    return list(schema.check_documents(render_documents(recorded), str(version), shared).errors)


def _warm_up() -> None:
    """Load the schemas once (tens of seconds cold), outside any case's time."""
    from offline.engine import run_program
    from offline.stackfile import read_stack_file

    stack = read_stack_file(PROJECT_ROOT / "Pulumi.prod.yaml")
    _schema_errors(run_program(stack, PROJECT_ROOT), stack.config)


def run(cases: int, seed: int, report: Callable[[int, Outcome], None] | None = None) -> Tally:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    tally = Tally()
    _warm_up()

    @hypothesis_seed(seed)
    @settings(
        max_examples=cases,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(mutations())
    def one(mutation: Mutation) -> None:
        outcome = judge(mutation)
        tally.add(outcome)
        if report is not None:
            report(len(tally.outcomes), outcome)

    one()
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stackfuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--show", type=int, default=5, help="examples shown per bad outcome")
    parser.add_argument("--progress", type=int, default=0, metavar="N",
                        help="print each bad outcome as it happens, and a line every N cases")  # fmt: skip
    args = parser.parse_args(argv)
    started = time.perf_counter()

    def report(done: int, outcome: Outcome) -> None:
        if outcome.verdict in BAD_CLASSES:
            print(f"[{done}] {outcome.verdict}: {outcome.mutation.describe()}\n      {outcome.detail[:600]}", flush=True)
        if args.progress and done % args.progress == 0:
            print(f"[{done}] {time.perf_counter() - started:.0f} s", flush=True)

    tally = run(args.cases, args.seed, report if args.progress else None)
    print(f"{len(tally.outcomes)} mutated stack files (seed {args.seed}) in {time.perf_counter() - started:.0f} s\n")
    print(tally.table(args.show))
    bad = sum(tally.counts().get(verdict, 0) for verdict in BAD_CLASSES)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
