"""A mechanical search, from a CRD's OpenAPI schema, for an object that passes every CEL rule of the CRD and a
mutation of it that one given rule refuses (tests/offline/schema/test_cel_every_rule.py).

The start is a minimal instance reaching the rule's node (required fields filled with type-correct values that
honour `enum`, `pattern`, `format`, `minimum`, `minLength`/`maxLength` and `minItems`). Candidate values are a
bounded, deterministic list per schema type (empty, odd, long strings and the string literals of the rule;
0/-1/huge integers and the integer literals of the rule; empty, grown and duplicated lists; dropped, added and
extra keys), tried only on the properties the rule (or another rule on the same node) names. What another rule
refuses is repaired the same way, with the properties that rule names. The passing object ("base") is the
repaired start or one change of it, and must pass the structural schema too; the mutation is one more change,
one that passes the schema preferred. Changes go one property level below the node first, then deeper
(iterative deepening to `DEPTH`), within `MAX_TRIES` evaluations. For a transition rule (one that reads
`oldSelf`) the base is the stored object and the mutation the update.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from offline.schema import cel
from offline.schema.crd import CrdVersion

Obj = dict[str, Any]
Seed = Callable[[Obj, Mapping[str, Any]], None]
"""A hand-written change of the skeleton (given the CRD version's schema) the search starts from."""
Path = tuple[Any, ...]
"""A concrete place in an object: property names, list indices and map keys."""

DEPTH = 4
"""How many property levels below a rule's node the search changes values (a list item is no level of its own)."""
MAX_TRIES = 10000
"""Evaluations (CEL and schema) for one rule before the search gives up (keeps it bounded)."""
MAX_BASES = 40
"""Passing objects the search mutates before it gives up."""

STRINGS = ["", "a", "1", "/", "/a", "a/../b", "/..", "A", "a b", "https://example.com", "1.0.0"]
STRINGS += ["1s", "500ms", "1500ms", "20h", "2Gi", "x" * 300]
FORMATTED = {
    "duration": ["1m", "0s", "1s", "500ms", "1500ms", "2h", "10000h"],
    "date-time": ["2026-01-01T00:00:00Z", "2031-01-01T00:00:00Z"],
    "byte": ["YQ==", ""],
}
INTEGERS = [1, 0, -1, 2, 3, 2**40]
NUMBERS = [1.0, 0.0, -1.0, 0.5, 1e12]
MINIMAL_STRINGS = ["a", "a1", "abc", "1", "0", "1s", "1m", "a.b", "a-b", "A", "10.0.0.1", "10.0.0.0/8", "/a", "1.0.0", "1Gi"]
MINIMAL_STRINGS += ["https://example.com", "* * * * *"]
METADATA = {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}
"""What a rule sees of `metadata` (the root object's name and generateName)."""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"""(?<![rR'"])'((?:[^'\\]|\\.)*)'|(?<![rR'"])"((?:[^"\\]|\\.)*)\"""")
_INTEGER = re.compile(r"(?<![\w.])-?\d+(?![\w.])")
_LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")


@dataclass(frozen=True)
class Hints:
    """What a rule's source names: identifiers (property names as CEL sees them) and literals."""

    names: tuple[str, ...]
    """In the order the source first names them (the search changes the first named first)."""
    strings: tuple[str, ...]
    integers: tuple[int, ...]

    @staticmethod
    def of(*sources: str) -> Hints:
        names: list[str] = []
        strings: list[str] = []
        integers: list[int] = []
        for original in sources:
            source = re.sub(r"[rR]?('''|\"\"\").*?\1", "regex", original, flags=re.DOTALL)  # a pattern: no value
            for name in _IDENTIFIER.findall(_LITERAL.sub("''", source)):  # not the words inside literals
                if name not in names:
                    names.append(name)
            for single, double in _QUOTED.findall(source):
                text = single or double
                if text not in strings:
                    strings.append(text)
            for number in _INTEGER.findall(_LITERAL.sub("''", source)):
                for value in (int(number), int(number) + 1, int(number) - 1):
                    if value not in integers:
                        integers.append(value)
        return Hints(tuple(names), tuple(strings), tuple(integers))

    def __or__(self, other: Hints) -> Hints:
        strings = self.strings + tuple(s for s in other.strings if s not in self.strings)
        integers = self.integers + tuple(i for i in other.integers if i not in self.integers)
        names = self.names + tuple(n for n in other.names if n not in self.names)
        return Hints(names, strings, integers)


def rule_hints(rule: cel.Rule) -> Hints:
    return Hints.of(rule.rule, rule.message_expression or "")


# --- minimal instances ------------------------------------------------------------------------------------


def _string_fits(text: str, node: Mapping[str, Any]) -> bool:
    if len(text) < int(node.get("minLength", 0)) or ("maxLength" in node and len(text) > int(node["maxLength"])):
        return False
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            return re.search(pattern, text) is not None
        except re.error:
            return True
    return True


def _minimal_string(node: Mapping[str, Any]) -> str:
    form = str(node.get("format"))
    candidates = FORMATTED.get(form, []) + MINIMAL_STRINGS + ["a" * int(node.get("minLength", 1))]
    return next((c for c in candidates if _string_fits(c, node)), candidates[0])


def _minimal_integer(node: Mapping[str, Any]) -> int:
    low = node.get("minimum")
    if low is None:
        return 1
    return int(low) + (1 if node.get("exclusiveMinimum") is True else 0)


def minimal(node: Mapping[str, Any]) -> Any:
    """The smallest type-correct value of `node`: required properties only."""
    if "default" in node:
        return copy.deepcopy(node["default"])
    if node.get("enum"):
        return copy.deepcopy(next((v for v in node["enum"] if v is not None), node["enum"][0]))
    kind = node.get("type")
    if node.get("x-kubernetes-int-or-string"):
        return 1
    if kind == "string":
        return _minimal_string(node)
    if kind == "integer":
        return _minimal_integer(node)
    if kind == "number":
        return float(_minimal_integer(node))
    if kind == "boolean":
        return False
    if kind == "array":
        items = node.get("items")
        return [minimal(items if isinstance(items, Mapping) else {}) for _ in range(int(node.get("minItems", 0)))]
    if kind == "object" or "properties" in node or "additionalProperties" in node:
        properties = node.get("properties") or {}
        return {name: minimal(properties[name]) for name in node.get("required") or [] if name in properties}
    return "a"


def _child(node: Mapping[str, Any], step: str) -> Mapping[str, Any]:
    if step == cel.ITEM:
        return node.get("items") or {}
    if step == cel.VALUE:
        return node.get("additionalProperties") or {}
    return (node.get("properties") or {}).get(step) or {}


def reach(root: Obj, schema: Mapping[str, Any], steps: Sequence[str]) -> Path:
    """Fill `root` in place so that the rule data path `steps` has a value; its concrete path."""
    value: Any = root
    node = schema
    path: list[Any] = []
    for step in steps:
        child = _child(node, step)
        if step == cel.ITEM:
            if not value:
                value.append(minimal(child))
            path.append(0)
            value = value[0]
        else:
            key = next(iter(value), "a") if step == cel.VALUE else step
            if key not in value or value[key] is None:
                value[key] = minimal(child)
            path.append(key)
            value = value[key]
        node = child
    return tuple(path)


def skeleton(crd: CrdVersion) -> Obj:
    """The smallest object of the CRD version: apiVersion, kind, metadata and the required fields."""
    body = minimal(crd.openapi_schema)
    body.update(apiVersion=crd.gvk.api_version, kind=crd.gvk.kind, metadata={"name": "x"})
    if crd.scope == "Namespaced":
        body["metadata"]["namespace"] = "default"
    return body


def get(obj: Any, path: Path) -> Any:
    for step in path:
        obj = obj[step]
    return obj


def reaches(obj: Any, path: Path) -> bool:
    try:
        get(obj, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def replaced(obj: Obj, path: Path, value: Any) -> Obj:
    out = copy.deepcopy(obj)
    if not path:
        return dict(value)
    *parents, last = path
    get(out, tuple(parents))[last] = value
    return out


# --- candidate values -------------------------------------------------------------------------------------


def scalars(node: Mapping[str, Any], hints: Hints) -> list[Any]:
    """The bounded list of scalar values tried at `node`."""
    kind = node.get("type")
    found: list[Any] = list(node.get("enum") or [])
    if node.get("x-kubernetes-int-or-string"):
        found += [*hints.strings, *STRINGS, *hints.integers, *INTEGERS]
    elif kind == "string":
        found += [*hints.strings, *FORMATTED.get(str(node.get("format")), []), *STRINGS]
    elif kind == "integer":
        found += [*hints.integers, *INTEGERS]
    elif kind == "number":
        found += [float(i) for i in hints.integers] + NUMBERS
    elif kind == "boolean":
        found += [True, False]
    out: list[Any] = []
    for value in found:
        if value not in out or any(type(value) is not type(o) for o in out if o == value):
            out.append(value)
    return out


def variants(value: Any, node: Mapping[str, Any], hints: Hints, depth: int = DEPTH) -> Iterator[Any]:
    """Changed copies of `value` (schema `node`): other scalars, emptied, grown or duplicated lists, properties
    the rule names dropped, added or changed (recursively, `depth` levels), map keys added."""
    kind = node.get("type")
    if kind in ("string", "integer", "number", "boolean") or node.get("x-kubernetes-int-or-string"):
        yield from (c for c in scalars(node, hints) if c != value or type(c) is not type(value))
        return
    if kind == "array" and isinstance(value, list):
        yield from _list_variants(value, node.get("items") or {}, hints, depth)
        return
    if isinstance(value, Mapping):
        yield from _object_variants(value, node, hints, depth)


def _list_variants(value: list[Any], items: Mapping[str, Any], hints: Hints, depth: int) -> Iterator[Any]:
    if value:
        yield []
        yield [*value, copy.deepcopy(value[0])]
    yield [*value, minimal(items)]
    first = value[0] if value else minimal(items)
    for changed in variants(first, items, hints, depth):  # an item is no level of its own
        yield [changed, *value[1:]]
        yield [*value, changed] if value else [first, changed]


def _object_variants(value: Mapping[str, Any], node: Mapping[str, Any], hints: Hints, depth: int) -> Iterator[Any]:
    properties = node.get("properties") or {}
    named = {cel.escape_property(name): name for name in properties}
    for escaped in (n for n in hints.names if n in named):
        name = named[escaped]
        child = properties[name]
        if name == "metadata" and not child.get("properties"):
            child = METADATA
        if name in value:
            yield {k: v for k, v in value.items() if k != name}
            current = value[name]
        else:
            current = minimal(child)
            yield {**value, name: current}
        if depth > 0:
            for changed in variants(current, child, hints, depth - 1):
                yield {**value, name: changed}
    additional = node.get("additionalProperties")
    if isinstance(additional, Mapping):
        yield {**value, "a": minimal(additional)}
        yield {**value, "b": minimal(additional)}
        if value:
            yield {}
            if depth > 0:
                key = next(iter(value))
                for changed in variants(value[key], additional, hints, depth - 1):
                    yield {**value, key: changed}
    if not properties and node.get("x-kubernetes-preserve-unknown-fields"):
        yield {**value, "x": "y"}


# --- the search ------------------------------------------------------------------------------------------


def only(compiled: cel.CrdRules, rule: cel.Rule) -> cel.CrdRules:
    return cel.CrdRules(compiled.schema, (rule,))


def is_rule_message(rule: cel.Rule, finding: str) -> bool:
    """Whether `finding` is the rule's refusal (its message), not an evaluation error."""
    if " evaluating rule: " in finding:
        return False
    if rule.message_expression:
        return True
    return finding.endswith(": " + (rule.message or f"failed rule: {rule.rule}"))


@dataclass
class Found:
    """A passing object and a mutation the rule refuses (`old` set for a transition rule: the stored object)."""

    valid: Obj
    mutated: Obj
    old: Obj | None
    findings: list[str]
    mutation_schema_valid: bool
    """Whether the mutation passes the CRD's structural schema too (the search prefers one that does)."""


class Search:
    """The search for one rule of one CRD version."""

    def __init__(self, crd: CrdVersion, rule: cel.Rule, seed: Seed | None = None) -> None:
        """`seed` changes the skeleton before the search starts (a hand-written entry, for a rule the search
        cannot reach from the skeleton alone)."""
        self.compiled = crd.compiled_rules
        self.validator = crd.validator
        self.rule = rule
        self.single = only(self.compiled, rule)
        self.tries = 0
        self.seen: list[Obj] = []
        """Objects already tried as a base (a repair does not go back to one)."""
        self.start = skeleton(crd)
        if seed is not None:
            seed(self.start, crd.openapi_schema)
        self.path = reach(self.start, self.compiled.schema, rule.data_path)
        self.hints = rule_hints(rule)
        for other in self.compiled.rules:
            if other.data_path == rule.data_path and other is not rule:
                self.hints |= rule_hints(other)  # the rules on the same node constrain the same value
        properties = {cel.escape_property(name) for name in rule.node.get("properties") or {}}
        if properties and not properties & set(self.hints.names):  # the rule judges the whole value (`self == oldSelf`)
            self.hints |= Hints(tuple(p for p in properties if p), (), ())

    def schema_valid(self, obj: Obj) -> bool:
        """Whether `obj` passes the CRD's structural schema (types, required fields, enum, pattern, bounds)."""
        self.tries += 1
        return next(self.validator.iter_errors(obj), None) is None

    def refused_by(self, rule: cel.Rule, obj: Obj) -> bool:
        self.tries += 1
        return bool(cel.evaluate(only(self.compiled, rule), obj) or cel.evaluate(only(self.compiled, rule), obj, obj))

    def refusals(self, obj: Obj) -> int:
        """How many refusals `obj` gets from all the rules, as a create and as an unchanged update."""
        self.tries += 1
        return len(cel.evaluate(self.compiled, obj)) + len(cel.evaluate(self.compiled, obj, obj))

    def failing(self, obj: Obj) -> list[tuple[cel.Rule, list[Path]]]:
        """The rules `obj` does not pass, with the places they judge."""
        if not self.refusals(obj):
            return []
        return [(rule, cel.judged_paths(self.compiled, rule, obj)) for rule in self.compiled.rules if self.refused_by(rule, obj)]

    def repaired(self, obj: Obj, depth: int) -> Obj:
        """`obj` changed, one refused rule at a time, until every rule passes (or it cannot be)."""
        for _ in range(8):
            failing = self.failing(obj)
            if not failing:
                break
            rule, paths = failing[0]
            better = next(self._repairs(obj, rule, paths, self.refusals(obj), depth), None)
            if better is None:
                break
            obj = better
        return obj

    def _repairs(self, obj: Obj, rule: cel.Rule, paths: list[Path], count: int, depth: int) -> Iterator[Obj]:
        """Changes of `obj` at the places of a refused `rule` that it passes: first one that leaves fewer rules
        refused, else the first one it passes."""
        hints = rule_hints(rule) | self.hints
        fallback = None
        for path in paths:
            for value in variants(get(obj, path), rule.node, hints, depth):
                if self.tries > MAX_TRIES:
                    break
                candidate = replaced(obj, path, value)
                if candidate in self.seen or not reaches(candidate, self.path) or self.refused_by(rule, candidate):
                    continue
                if self.refusals(candidate) < count:
                    yield candidate
                    return
                fallback = fallback or candidate
        if fallback is not None:
            yield fallback

    def refuses(self, new: Obj, old: Obj | None) -> list[str]:
        self.tries += 1
        return [f for f in cel.evaluate(self.single, new, old) if is_rule_message(self.rule, f)]

    def bases(self, depth: int) -> Iterator[Obj]:
        """Objects the mutations start from: the repaired skeleton, then its variants (repaired when refused)."""
        base = self.repaired(self.start, depth)
        if not reaches(base, self.path):
            base = self.start
        self.seen = [base]
        yield base
        for value in variants(get(base, self.path), self.rule.node, self.hints, depth):
            candidate = replaced(base, self.path, value)
            if candidate in self.seen:
                continue
            self.seen.append(candidate)
            if self.refusals(candidate):
                candidate = self.repaired(candidate, depth)
                if candidate in self.seen[:-1]:
                    continue
            yield candidate

    def run(self) -> Found | None:
        """Iterative deepening: changes one level below the rule's node first, then deeper (until a mutation
        that passes the schema is found, else the first one found)."""
        first = None
        for depth in range(DEPTH + 1):
            found = self._run(depth)
            if found is not None and found.mutation_schema_valid:
                return found
            first = first or found
            if self.tries > MAX_TRIES:
                break
        return first

    def _run(self, depth: int) -> Found | None:
        """The first refused mutation that passes the schema, else the first refused one."""
        tried = 0
        fallback = None
        for base in self.bases(depth):
            if self.tries > MAX_TRIES or tried >= MAX_BASES:
                return fallback
            if self.refusals(base) or not reaches(base, self.path) or not self.schema_valid(base):
                continue
            tried += 1
            for value in variants(get(base, self.path), self.rule.node, self.hints, depth):
                if self.tries > MAX_TRIES:
                    return fallback
                mutated = replaced(base, self.path, value)
                old = base if self.rule.transition else None
                if self.refuses(mutated, old):
                    valid = self.schema_valid(mutated)
                    found = Found(base, mutated, old, cel.evaluate(self.compiled, mutated, old), valid)
                    if valid:
                        return found
                    fallback = fallback or found
        return fallback
