"""The CEL rules of a CRD (`x-kubernetes-validations`), evaluated from the CRD file by a maintained CEL runtime.

The runtime is Google's cel-cpp through its Python binding `cel-expr-python` (pinned in requirements-dev.txt):
parser, type checker, standard macros (`has`, `all`, `exists`, `exists_one`, `map`, `filter`), RE2 `matches`,
durations and timestamps, heterogeneous numeric comparison, and the cel-go extensions Kubernetes enables that
cel-cpp ships (strings, optional types, `cel.bind`, math, base64). What the API server adds on top, each as
Kubernetes 1.33 has it (the version hpcforge's stacks target, `hpcforge:kubernetes.version`; k8s.io/apiserver
v0.33.9, whose tag pod-security-admission is reproduced from too):

- how a rule is run (k8s.io/apiextensions-apiserver v0.33.9 pkg/apiserver/schema/cel/validation.go): the rule of a
  schema node runs on every present, non-null value at that node, with `self` bound to it and, for a transition
  rule (one that reads `oldSelf`), `oldSelf` bound to the previous value at the same place; transition rules run
  only on an update where that previous value exists (object fields and map values by key, list items of a
  `x-kubernetes-list-type: map` by their keys), unless `optionalOldSelf` makes `oldSelf` an optional that is
  empty on create. Rules that do not read `oldSelf` are ratcheted (CRDValidationRatcheting, GA in 1.33): on an
  update, a value equal to the previous one is not judged again. A refusal is the `field.Error` of `reason`
  (`FieldValueInvalid` by default) at the node's path plus `fieldPath`, with `messageExpression`'s result (when it
  is a non-blank single-line string), else `message`, else `failed rule: <rule>`; an evaluation error is
  `<error> evaluating rule: <rule>`.
- the values (k8s.io/apiserver v0.33.9 pkg/cel/common/values.go, pkg/cel/types.go): `format: duration` strings
  are durations, `format: date-time` timestamps, `format: byte` bytes, `type: number` doubles; object property
  names are escaped (pkg/cel/escaping.go); the root object shows `apiVersion`, `kind` and only `metadata.name`
  and `metadata.generateName`.
- the function libraries cel-cpp lacks (k8s.io/apiserver v0.33.9 pkg/cel/library/<file>.go): offline/schema/cel_library.py
  (`isURL`, the list functions, `find`/`findAll`, `isQuantity`, `isIP`, `isCIDR`, `isSemver`, `sets.*`). Not
  provided, because they return a Kubernetes object type the binding cannot declare: `url()`, `quantity()`,
  `ip()`, `cidr()`, `semver()`, `format.*` and the authorizer; no pinned CRD's rule uses one (`tests/offline/schema/test_cel.py`
  compiles them all).

Not modelled: the cost budget (estimated and runtime cost limits), and type checking against the schema's
object types: objects and maps are declared `dyn` (scalars and lists are typed), so a misspelled field is found
when the rule runs, as a `no such key` evaluation error, not when it compiles.
"""

from __future__ import annotations

import base64
import copy
import datetime
import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped,unused-ignore]
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings  # type: ignore[import-untyped,unused-ignore]
from google.protobuf import duration_pb2, timestamp_pb2

from policies.rules.gotime import GoError, parse_duration

from .cel_library import kubernetes_library

ITEM = "[]"
"""A data path step that stands for every item of a list."""
VALUE = "{}"
"""A data path step that stands for every value of a map (`additionalProperties`)."""

MISSING: Any = object()
"""No previous value at this place (a create, or a place the previous object does not have)."""


OLD_SELF_VALUE = "__oldSelfValue"
OLD_SELF_PRESENT = "__oldSelfPresent"


def _declared(signature: str) -> Any:
    """A `cel.Type` from a signature of `cel_type` (`list(...)` built as a list type: the binding's parser of
    signatures does not make one)."""
    if signature.startswith("list(") and signature.endswith(")"):
        return cel.Type.List(_declared(signature[5:-1]))
    return {
        "dyn": cel.Type.DYN,
        "string": cel.Type.STRING,
        "bytes": cel.Type.BYTES,
        "int": cel.Type.INT,
        "double": cel.Type.DOUBLE,
        "bool": cel.Type.BOOL,
        "google.protobuf.Duration": cel.Type.DURATION,
        "google.protobuf.Timestamp": cel.Type.TIMESTAMP,
    }[signature]


@functools.cache
def environment(self_type: str, with_old_self: bool = True) -> Any:
    """A CEL environment with `self` (and `oldSelf`) of the given type signature (`dyn`, `string`, `list(int)`...)."""
    declared = _declared(self_type)
    variables = {"self": declared}
    if with_old_self:
        variables |= {"oldSelf": declared, OLD_SELF_VALUE: declared, OLD_SELF_PRESENT: cel.Type.BOOL}
    extensions = [
        ext_strings.ExtStrings(),
        ext_optional.ExtOptional(),
        ext_bindings.ExtBindings(),
        ext_math.ExtMath(),
        ext_encoders.ExtEncoders(),
        kubernetes_library(),
    ]
    return cel.NewEnv(variables=variables, extensions=extensions)


# --- schema -> CEL types and values ------------------------------------------------------------------

_RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_IDENTIFIER = re.compile(r"[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*")


def escape_property(name: str) -> str | None:
    """A property name as CEL sees it (k8s.io/apiserver v0.33.9 pkg/cel/escaping.go `Escape`); None when a rule
    cannot reach it by name."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _IDENTIFIER.fullmatch(name):
        return None
    return name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")


def cel_type(node: Mapping[str, Any]) -> str:
    """The declared type of `self` for a schema node: scalars and lists typed, objects and maps `dyn`."""
    if node.get("x-kubernetes-int-or-string") or node.get("nullable") or node.get("x-kubernetes-preserve-unknown-fields"):
        return "dyn"
    kind = node.get("type")
    if kind == "string":
        return {"duration": "google.protobuf.Duration", "date-time": "google.protobuf.Timestamp", "byte": "bytes"}.get(
            str(node.get("format")), "string"
        )
    if kind in ("integer", "number", "boolean"):
        return {"integer": "int", "number": "double", "boolean": "bool"}[kind]
    if kind == "array" and isinstance(node.get("items"), Mapping):
        return f"list({cel_type(node['items'])})"
    return "dyn"


def _duration(text: str) -> Any:
    # The OpenAPI `duration` format (go-openapi strfmt ParseDuration): Go durations, plus `d` and `w` units.
    try:
        nanoseconds = parse_duration(text)
    except GoError:
        match = re.fullmatch(r"(\d+)\s*(d|w|days?|weeks?)", text)
        if not match:
            return text
        nanoseconds = int(match.group(1)) * (86400 if match.group(2).startswith("d") else 604800) * 10**9
    value = duration_pb2.Duration()
    value.FromNanoseconds(nanoseconds)
    return value


def _timestamp(text: str) -> Any:
    try:
        moment = datetime.datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:
        return text
    value = timestamp_pb2.Timestamp()
    value.FromDatetime(moment.astimezone(datetime.UTC).replace(tzinfo=None))
    return value


def to_cel(value: Any, node: Mapping[str, Any], *, root: bool = False) -> Any:  # noqa: PLR0911, PLR0912 (one branch per OpenAPI type and format the API server converts, common/values.go)
    """`value` as the API server hands it to CEL under schema `node` (common/values.go)."""
    if value is None or node.get("x-kubernetes-int-or-string"):
        return value
    if isinstance(value, Mapping):
        properties = node.get("properties") or {}
        additional = node.get("additionalProperties")
        out: dict[str, Any] = {}
        for key, child in value.items():
            if key in properties:
                name = escape_property(key)
                if name is not None:
                    out[name] = to_cel(child, properties[key])
            elif isinstance(additional, Mapping):
                out[key] = to_cel(child, additional)
            else:
                out[key] = child
        if root or node.get("x-kubernetes-embedded-resource"):
            metadata = value.get("metadata")
            if isinstance(metadata, Mapping):
                out["metadata"] = {k: metadata[k] for k in ("name", "generateName") if k in metadata}
        return out
    if isinstance(value, list):
        items = node.get("items")
        return [to_cel(item, items) if isinstance(items, Mapping) else item for item in value]
    kind, form = node.get("type"), node.get("format")
    if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "string" and isinstance(value, str):
        if form == "duration":
            return _duration(value)
        if form == "date-time":
            return _timestamp(value)
        if form == "byte":
            try:
                return base64.b64decode(value, validate=True)
            except ValueError:
                return value
    return value


# --- the rules of a CRD ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One `x-kubernetes-validations` entry, where it sits, compiled."""

    rule: str
    message: str | None
    message_expression: str | None
    reason: str | None
    field_path: str | None
    optional_old_self: bool
    schema_path: tuple[str, ...]
    """Where the rule sits in `openAPIV3Schema` (`properties`, `spec`, `items`, ...)."""
    data_path: tuple[str, ...]
    """The values it judges: property names, `ITEM` (every list item), `VALUE` (every map value)."""
    node: Mapping[str, Any] = field(repr=False, compare=False, hash=False)
    program: Any = field(default=None, repr=False, compare=False, hash=False)
    message_program: Any = field(default=None, repr=False, compare=False, hash=False)
    transition: bool = False
    """Reads `oldSelf`: judged only on an update with a previous value (unless `optional_old_self`)."""
    compile_error: str | None = None

    @property
    def where(self) -> str:
        return "".join("[*]" if step in (ITEM, VALUE) else f".{step}" for step in self.data_path).lstrip(".") or "<root>"


class CelCompileError(ValueError):
    """A rule the CEL runtime cannot compile."""


def _compile(source: str, self_type: str, optional_old_self: bool) -> tuple[Any, bool]:
    """(program, reads oldSelf). A rule reads oldSelf when it does not compile without it (the check that the
    API server does on the checked AST, pkg/apiserver/schema/cel/compilation.go `UsesOldSelf`)."""
    try:
        environment(self_type, with_old_self=False).compile(source)
        transition = False
    except RuntimeError as error:
        if "undeclared reference to 'oldSelf" not in str(error):
            raise CelCompileError(_first_line(error)) from error
        transition = True
    if transition and optional_old_self:
        source = f"cel.bind(oldSelf, {OLD_SELF_PRESENT} ? optional.of({OLD_SELF_VALUE}) : optional.none(), ({source}))"
    try:
        return environment(self_type).compile(source), transition
    except RuntimeError as error:
        raise CelCompileError(_first_line(error)) from error


def _first_line(error: BaseException) -> str:
    return str(error).split("\n", 1)[0].replace("INVALID_ARGUMENT: ", "")


def _walk(
    node: Any, schema_path: tuple[str, ...], data_path: tuple[str, ...]
) -> Iterator[tuple[Mapping[str, Any], tuple[str, ...], tuple[str, ...]]]:
    if not isinstance(node, Mapping):
        return
    yield node, schema_path, data_path
    for name, child in (node.get("properties") or {}).items():
        yield from _walk(child, (*schema_path, "properties", name), (*data_path, name))
    if isinstance(node.get("items"), Mapping):
        yield from _walk(node["items"], (*schema_path, "items"), (*data_path, ITEM))
    if isinstance(node.get("additionalProperties"), Mapping):
        yield from _walk(node["additionalProperties"], (*schema_path, "additionalProperties"), (*data_path, VALUE))
    # allOf/anyOf/oneOf/not hold value validations only: a structural schema has no rules there.


@dataclass(frozen=True)
class CrdRules:
    """The compiled rules of one CRD version and the schema they sit in."""

    schema: Mapping[str, Any] = field(repr=False)
    rules: tuple[Rule, ...]


def compile_rules(openapi_schema: Mapping[str, Any]) -> CrdRules:
    """Every `x-kubernetes-validations` rule of a CRD version's schema, compiled; a rule that does not compile
    carries its `compile_error` (and is reported, never silently skipped)."""
    found: list[Rule] = []
    for node, schema_path, data_path in _walk(openapi_schema, (), ()):
        for entry in node.get("x-kubernetes-validations") or []:
            source = str(entry.get("rule", ""))
            self_type = cel_type(node)
            optional_old_self = entry.get("optionalOldSelf") is True
            program, message_program, transition, error = None, None, False, None
            try:
                program, transition = _compile(source, self_type, optional_old_self)
                if entry.get("messageExpression"):
                    message_program, _ = _compile(str(entry["messageExpression"]), self_type, optional_old_self)
            except CelCompileError as failure:
                error = str(failure)
            found.append(
                Rule(
                    rule=source,
                    message=entry.get("message"),
                    message_expression=entry.get("messageExpression"),
                    reason=entry.get("reason"),
                    field_path=entry.get("fieldPath"),
                    optional_old_self=optional_old_self,
                    schema_path=schema_path,
                    data_path=data_path,
                    node=node,
                    program=program,
                    message_program=message_program,
                    transition=transition,
                    compile_error=error,
                )
            )
    return CrdRules(openapi_schema, tuple(found))


# --- evaluation -----------------------------------------------------------------------------------


def _format_path(path: Sequence[Any], field_path: str | None = None) -> str:
    """A concrete path as field.Path prints it (`spec.groups[0].flavors[key]`; the root `<nil>`), with a rule's
    `fieldPath` (a JSONPath below the node: `.a.b`, `['key']`, `[0]`) appended."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, (int, _Key)) else f".{step}"
    if field_path:
        out += re.sub(r"\['([^']*)'\]", r"[\1]", field_path if field_path.startswith((".", "[")) else f".{field_path}")
    return out.lstrip(".") or "<nil>"


class _Key(str):
    """A map key in a concrete path (printed `[key]`, as field.Path.Key does)."""


def _list_map_key(item: Any, keys: Sequence[str]) -> Any:
    return tuple((k, repr(item.get(k))) for k in keys) if isinstance(item, Mapping) else None


def _values(
    value: Any, old: Any, node: Mapping[str, Any], steps: Sequence[str], path: tuple[Any, ...]
) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """(concrete path, value, previous value or MISSING) at the data path `steps` below `value`."""
    if not steps:
        yield path, value, old
        return
    step, rest = steps[0], steps[1:]
    if step == ITEM:
        if not isinstance(value, list):
            return
        items = node.get("items") or {}
        keys = list(node.get("x-kubernetes-list-map-keys") or [])
        before: dict[Any, Any] = {}
        if node.get("x-kubernetes-list-type") == "map" and isinstance(old, list):
            before = {_list_map_key(item, keys): item for item in old}
        for index, item in enumerate(value):
            previous = before.get(_list_map_key(item, keys), MISSING) if before else MISSING
            yield from _values(item, previous, items, rest, (*path, index))
    elif step == VALUE:
        if not isinstance(value, Mapping):
            return
        for key, item in value.items():
            previous = old.get(key, MISSING) if isinstance(old, Mapping) else MISSING
            yield from _values(item, previous, node["additionalProperties"], rest, (*path, _Key(key)))
    elif isinstance(value, Mapping) and step in value:
        previous = old.get(step, MISSING) if isinstance(old, Mapping) else MISSING
        yield from _values(value[step], previous, node["properties"][step], rest, (*path, step))


def _schema_type(node: Mapping[str, Any]) -> str:
    return str(node.get("type") or "")


def _field_error(path: str, node: Mapping[str, Any], detail: str, reason: str | None) -> str:
    """`field.Error` text of `fieldErrorForReason` (apiextensions-apiserver pkg/apiserver/schema/cel/validation.go)."""
    shown = f'"{_schema_type(node)}"'
    if reason == "FieldValueForbidden":
        return f"{path}: Forbidden: {detail}"
    if reason == "FieldValueRequired":
        return f"{path}: Required value: {detail}"
    if reason == "FieldValueDuplicate":
        return f"{path}: Duplicate value: {shown}"
    return f"{path}: Invalid value: {shown}: {detail}"


def _is_error(result: Any) -> bool:
    return bool(result.type() == cel.Type.ERROR)


def _bindings(rule: Rule, value: Any, old: Any) -> dict[str, Any]:
    data = {"self": to_cel(value, rule.node, root=not rule.data_path)}
    if rule.transition:
        previous = None if old is MISSING else to_cel(old, rule.node, root=not rule.data_path)
        data |= {"oldSelf": previous, OLD_SELF_VALUE: previous, OLD_SELF_PRESENT: old is not MISSING}
    return data


def _message(rule: Rule, data: Mapping[str, Any]) -> str:
    if rule.message_program is not None:
        result = rule.message_program.eval(data=data)
        text = None if _is_error(result) else result.value()
        if isinstance(text, str) and text.strip() and "\n" not in text:
            return text
    return rule.message or f"failed rule: {rule.rule}"


def _non_nullable_null(value: Any, node: Mapping[str, Any]) -> bool:
    return value is None and node.get("nullable") is not True


def apply_defaults(value: Any, node: Mapping[str, Any]) -> Any:
    """A copy of `value` with the schema's defaults applied, as the API server does before it validates
    (k8s.io/apiextensions-apiserver v0.33.9 pkg/apiserver/schema/defaulting/algorithm.go `Default`: a missing
    or non-nullable null property gets its default, then every property, map value and list item is defaulted,
    the defaults themselves included)."""
    if isinstance(value, Mapping):
        properties = node.get("properties") or {}
        additional = node.get("additionalProperties")
        out = dict(value)
        for key, child in properties.items():
            if isinstance(child, Mapping) and "default" in child and (key not in out or _non_nullable_null(out[key], child)):
                out[key] = copy.deepcopy(child["default"])
        for key, item in out.items():
            if key in properties and isinstance(properties[key], Mapping):
                out[key] = apply_defaults(item, properties[key])
            elif isinstance(additional, Mapping):
                out[key] = apply_defaults(item, additional)
        return out
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [apply_defaults(item, node["items"]) for item in value]
    return value


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list),
}


def _type_matches(value: Any, node: Mapping[str, Any]) -> bool:
    """Whether `value` has the JSON type its schema declares (a mismatch is the schema check's error; the rule
    is not run on it)."""
    if node.get("x-kubernetes-int-or-string"):
        return isinstance(value, int | str) and not isinstance(value, bool)
    check = _JSON_TYPES.get(str(node.get("type")))
    return check is None or check(value)


def _contains(value: Any, unknown: Callable[[Any], bool]) -> bool:
    if unknown(value):
        return True
    if isinstance(value, Mapping):
        return any(_contains(v, unknown) for v in value.values())
    if isinstance(value, list):
        return any(_contains(v, unknown) for v in value)
    return False


def evaluate(
    compiled: CrdRules,
    document: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    unknown: Callable[[Any], bool] | None = None,
) -> list[str]:
    """The refusals of `document` by the rules of its CRD version (`compile_rules`), as the API server words
    them; `old` is the object as stored, for an update. Both are defaulted first (`apply_defaults`). With
    `unknown` (a test for a value not known yet, `pulumi preview`), a rule whose `self` or `oldSelf` holds one
    is not judged."""
    messages: list[str] = []
    document = apply_defaults(document, compiled.schema)
    root_old: Any = MISSING if old is None else apply_defaults(old, compiled.schema)
    for rule in compiled.rules:
        if rule.compile_error is not None:
            messages.append(f"{rule.where}: rule does not compile: {rule.compile_error} (rule: {rule.rule})")
            continue
        for path, value, previous in _values(document, root_old, compiled.schema, rule.data_path, ()):
            if value is None or not _type_matches(value, rule.node):
                continue
            if rule.transition and previous is MISSING and not rule.optional_old_self:
                continue
            if not rule.transition and previous is not MISSING and previous == value:
                continue  # ratcheting: an unchanged value is not judged again
            if unknown is not None and (_contains(value, unknown) or (rule.transition and _contains(previous, unknown))):
                continue
            data = _bindings(rule, value, previous)
            result = rule.program.eval(data=data)
            where = _format_path(path, rule.field_path)
            if _is_error(result):
                messages.append(_field_error(where, rule.node, f"{result.value()} evaluating rule: {rule.rule}", None))
            elif result.value() is not True:
                messages.append(_field_error(where, rule.node, _message(rule, data), rule.reason))
    return messages


def judged_paths(compiled: CrdRules, rule: Rule, document: Any) -> list[tuple[Any, ...]]:
    """The concrete paths of the values of `document` (as given, defaults not applied) that `rule` judges: every
    non-null value at its data path (list items by index, map values by key)."""
    return [path for path, value, _ in _values(document, MISSING, compiled.schema, rule.data_path, ()) if value is not None]


def applicable(compiled: CrdRules, document: Mapping[str, Any]) -> list[tuple[Rule, str]]:
    """(rule, path) of every value of `document` (defaulted) that a rule judges on a create (transition rules
    left out unless `optionalOldSelf`)."""
    defaulted = apply_defaults(document, compiled.schema)
    return [
        (rule, _format_path(path))
        for rule in compiled.rules
        if not rule.transition or rule.optional_old_self
        for path in judged_paths(compiled, rule, defaulted)
    ]


def transition_applicable(compiled: CrdRules, document: Mapping[str, Any]) -> list[tuple[Rule, str]]:
    """(rule, path) of every value of `document` a transition rule judges on an update to itself."""
    defaulted = apply_defaults(document, compiled.schema)
    return [
        (rule, _format_path(path))
        for rule in compiled.rules
        if rule.transition
        for path in judged_paths(compiled, rule, defaulted)
    ]
