"""The mutations, each with the verdict it must get: type swaps, injections, bad names and numbers, raw YAML,
deleted keys, targeted edits and whole-file edits of inventory files, drawn with hypothesis.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import strategies as st

from .bases import (
    CASE_KEYS,
    INVENTORY_KEYS,
    IPV4,
    MULTILINE_KEYS,
    NAME_KEYS,
    QUANTITY_KEYS,
    SIGNED_KEYS,
    cached_base,
    containers,
    in_inventory,
    is_secure,
    key_of,
    leaves,
    namespace_kind,
    single_owner,
)
from .cases import STACKS, Mutation, PathT, Raw, render_path


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
    if new == base.upper() + "X" and (key_of(path) in CASE_KEYS or "topology" in render_path(path)):
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
    key = key_of(path)
    expect = "reject" if key in NAME_KEYS or key in QUANTITY_KEYS or IPV4.match(value) else "either"
    return Mutation(stack, "separator", path, new, expect, "separator in a value")


def _number(stack: str, path: PathT, value: Any, draw: Callable[[Any], Any]) -> Mutation:
    """An integer out of any range hpcforge's consumers take: negative, 2^32 and above."""
    new = draw(st.sampled_from([-1, 2**32, 2**63, Raw("18446744073709551616"), Raw("9" * 400), Raw("0x7fffffffffffffff")]))
    # Kubernetes PriorityClass values may be negative (int32, at most 1e9 for user classes).
    expect = "either" if new == -1 and key_of(path) in SIGNED_KEYS else "reject"
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
        # Inventory files are YAML 1.2 core schema (components/site/inventory.py): no timestamps, an
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
    sections = [section for (top, key), section in INVENTORY_KEYS.items() if isinstance(cached_base(stack).get(top), dict)
                and key in cached_base(stack)[top]]  # fmt: skip
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
        return lambda path, value: isinstance(value, str) and key_of(path) in NAME_KEYS and "." not in str(value)
    if kind == "number":
        return lambda path, value: isinstance(value, int) and not isinstance(value, bool)
    if kind == "quantity":
        return lambda path, value: key_of(path) in QUANTITY_KEYS
    return lambda path, value: True


@st.composite
def mutations(draw: Callable[[Any], Any]) -> Mutation:
    stack = draw(st.sampled_from(STACKS))
    config = cached_base(stack)
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
            pool = [(p, v) for p, v in leaves(config) if isinstance(v, str) and IPV4.match(v)]
        else:
            pool = [(p, v) for p, v in leaves(config) if key_of(p) in ("namespace", "sampleNamespace")]
            pool += [((*p, "namespace"), "provisioning") for p, v in containers(config) if p == ("hpcforge:provisioning",)]
        source = draw(st.sampled_from(pool))
        targets = [(p, v) for p, v in pool if v != source[1] and p != source[0]]
        if not targets:
            return Mutation(stack, "delete", source[0], None, "either")
        target = draw(st.sampled_from(targets))
        if kind == "copy-address":
            expect = "reject" if single_owner(source[0]) and single_owner(target[0]) else "either"
            why = "two services at one address"
        else:
            kinds = {namespace_kind(source[0]), namespace_kind(target[0])}
            expect = "reject" if kinds <= {"layer", "app"} and kinds != {"app"} else "either"
            why = "two owners of one namespace"
        return Mutation(stack, kind, target[0], source[1], expect, why, other=source[0])
    keep = _leaf_filter(kind)
    candidates = [(p, v) for p, v in leaves(config) if keep(p, v) and not is_secure(v)]
    path, value = draw(st.sampled_from(candidates))
    return MUTATORS[kind](stack, path, value, draw)
