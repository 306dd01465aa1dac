"""Custom resources against the `openAPIV3Schema` of their upstream CustomResourceDefinition.

The CRD is found under `shared/crds/<project>-<version>/<Kind>.yaml` (or, for a kind shared/ has no CRD
for, one the program declares itself). The structural schema is translated to JSON Schema 2020-12 with
the Kubernetes extensions honoured (`x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`,
`x-kubernetes-embedded-resource`, `nullable`, list types) and unknown fields rejected wherever the
schema does not preserve them. CEL rules (`x-kubernetes-validations`) are evaluated from the CRD by
offline/schema/cel.py (a refusal is reported like a schema error: path and message). Beyond what the API server checks, so that a typo cannot
hide where the CRD is schemaless: fields that hold a Kubernetes type (the Slinky CRDs' pod templates
and containers, `KNOWN_TYPE_FIELDS`) are checked against that built-in type, and embedded objects
(`x-kubernetes-embedded-resource`, e.g. an AppWrapper's Job) as the object they are. Part of the
schema tier (offline/schema/validate.py).
"""

from __future__ import annotations

import base64
import copy
import datetime
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from ..program.engine import UNKNOWN_TEXT
from . import cel
from .kube import (
    SECRET,
    Document,
    GroupVersionKind,
    builtin_kinds,
    describe_error,
    format_path,
    kubernetes_schema_version,
    kv_definitions,
    leaf_errors,
    load_yaml,
    validate_builtin,
)

# --- custom resources: upstream CRDs ---------------------------------------------------------------


def _int_format(bits: int) -> Callable[[object], bool]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(instance: object) -> bool:
        if isinstance(instance, bool) or not isinstance(instance, int):
            return True
        return low <= instance <= high

    return check


def _check_byte(instance: object) -> bool:
    if not isinstance(instance, str) or instance == SECRET:
        return True
    try:
        base64.b64decode(instance, validate=True)
    except ValueError:
        return False
    return True


def _check_date_time(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", instance):
        return False
    try:
        datetime.datetime.fromisoformat(instance.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


_GO_DURATION = re.compile(r"[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+)")
_OPENAPI_DURATION = re.compile(
    r"\d+\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)"
)


def _check_duration(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    return bool(_GO_DURATION.fullmatch(instance) or _OPENAPI_DURATION.fullmatch(instance))


def _crd_format_checker() -> jsonschema.FormatChecker:
    """The formats CRDs use that the API server checks: int32/int64 ranges, byte, date-time, duration."""
    checker = jsonschema.FormatChecker(formats=())
    checker.checks("int32")(_int_format(32))
    checker.checks("int64")(_int_format(64))
    checker.checks("byte")(_check_byte)
    checker.checks("date-time")(_check_date_time)
    checker.checks("duration")(_check_duration)
    return checker


def _list_type(
    validator: jsonschema.protocols.Validator, list_type: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """`x-kubernetes-list-type`: `set` items are unique; `map` items are unique by their `list-map-keys`."""
    if not isinstance(instance, list):
        return
    seen: dict[str, int] = {}
    keys = list(schema.get("x-kubernetes-list-map-keys") or [])
    for index, item in enumerate(instance):
        if list_type == "set":
            identity = json.dumps(item, sort_keys=True)
        elif list_type == "map" and isinstance(item, Mapping):
            identity = json.dumps({k: item.get(k) for k in keys}, sort_keys=True)
        else:
            continue
        if identity in seen:
            what = "value" if list_type == "set" else f"key {identity}"
            yield jsonschema.ValidationError(
                f"duplicate {what} (also at index {seen[identity]}; x-kubernetes-list-type: {list_type})", path=[index]
            )
        else:
            seen[identity] = index


_CRDValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"x-kubernetes-list-type": _list_type})
_FORMAT_CHECKER = _crd_format_checker()

# Keywords of a structural schema copied into JSON Schema unchanged.
_PASSTHROUGH = frozenset(
    {
        "type",
        "enum",
        "required",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "multipleOf",
        "minProperties",
        "maxProperties",
        "format",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-embedded-resource",  # kept as a marker for `_embedded_objects` (jsonschema ignores it)
    }
)


def _valid_pattern(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def structural_to_json_schema(node: Mapping[str, Any], *, value_validation: bool = False) -> dict[str, Any]:  # noqa: PLR0912 (one branch per keyword of a structural schema)
    """Translate a Kubernetes structural schema (OpenAPI v3 + extensions) to JSON Schema 2020-12.

    * An object schema that neither preserves unknown fields nor declares `additionalProperties` gets
      `additionalProperties: false`: the API server would prune the field, `--validate=strict` rejects it.
      Not inside `allOf`/`anyOf`/`oneOf`/`not`, which in a structural schema only add value checks.
    * `x-kubernetes-int-or-string` becomes an integer-or-string type; `nullable` admits null.
    * `x-kubernetes-embedded-resource` declares (and requires) `apiVersion` and `kind`, allows `metadata`.
    * `exclusiveMinimum: true` (OpenAPI 3.0) becomes the 2020-12 numeric form; Go-only regexes are dropped.
    * A required field that has a `default` is not required (the API server defaults before validating).
    * Descriptions, defaults and CEL rules are dropped (the latter are evaluated by offline/schema/cel.py).
    """
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            out["properties"] = {
                name: structural_to_json_schema(child, value_validation=value_validation) for name, child in value.items()
            }
        elif key == "items" and isinstance(value, Mapping):
            out["items"] = structural_to_json_schema(value, value_validation=value_validation)
        elif key == "additionalProperties":
            out[key] = (
                structural_to_json_schema(value, value_validation=value_validation) if isinstance(value, Mapping) else bool(value)
            )
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            out[key] = [structural_to_json_schema(child, value_validation=True) for child in value]
        elif key == "not" and isinstance(value, Mapping):
            out[key] = structural_to_json_schema(value, value_validation=True)
        elif key == "pattern" and isinstance(value, str):
            if _valid_pattern(value):
                out[key] = value
        elif key in _PASSTHROUGH:
            out[key] = copy.deepcopy(value)
    if isinstance(out.get("required"), list) and isinstance(node.get("properties"), Mapping):
        # The API server applies defaults before it validates: a required field with a default is never missing.
        defaulted = {name for name, child in node["properties"].items() if isinstance(child, Mapping) and "default" in child}
        out["required"] = [name for name in out["required"] if name not in defaulted]
    for bound in ("Minimum", "Maximum"):
        if node.get(f"exclusive{bound}") is True and bound.lower() in out:
            out[f"exclusive{bound}"] = out.pop(bound.lower())
    if node.get("x-kubernetes-int-or-string") is True:
        out["type"] = ["integer", "string", "null"] if node.get("nullable") is True else ["integer", "string"]
        if out.get("anyOf") == [{"type": "integer"}, {"type": "string"}]:
            del out["anyOf"]  # the canonical spelling of int-or-string, which `type` now says
        elif node.get("nullable") is True and "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    if node.get("x-kubernetes-embedded-resource") is True and not value_validation:
        properties = out.setdefault("properties", {})
        properties.setdefault("apiVersion", {"type": "string"})
        properties.setdefault("kind", {"type": "string"})
        properties.setdefault("metadata", {"type": "object"})
        out["required"] = sorted({*out.get("required", []), "apiVersion", "kind"})
    if node.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    is_object = node.get("type") == "object" or "properties" in node
    preserves = node.get("x-kubernetes-preserve-unknown-fields") is True
    if is_object and not value_validation and not preserves and "additionalProperties" not in node:
        out["additionalProperties"] = False
    return out


def count_cel_rules(node: Any) -> int:
    """How many CEL rules (`x-kubernetes-validations` entries) a schema holds."""
    if isinstance(node, Mapping):
        own = len(node.get("x-kubernetes-validations") or [])
        return own + sum(count_cel_rules(v) for k, v in node.items() if k != "x-kubernetes-validations")
    if isinstance(node, list):
        return sum(count_cel_rules(v) for v in node)
    return 0


@dataclass(frozen=True)
class CrdVersion:
    """One served version of a CustomResourceDefinition."""

    gvk: GroupVersionKind
    scope: str
    """`Namespaced` or `Cluster`."""
    source: str
    """Where the CRD came from: a path under shared/, or `program: <document path>`."""
    openapi_schema: Mapping[str, Any] = field(repr=False, compare=False, hash=False)

    @functools.cached_property
    def cel_rules(self) -> int:
        return count_cel_rules(self.openapi_schema)

    @functools.cached_property
    def compiled_rules(self) -> cel.CrdRules:
        """Its CEL rules, compiled (offline/schema/cel.py)."""
        return cel.compile_rules(self.openapi_schema)

    @functools.cached_property
    def validator(self) -> jsonschema.protocols.Validator:
        schema = structural_to_json_schema(self.openapi_schema)
        properties = schema.setdefault("properties", {})
        # Metadata is the API server's business (ObjectMeta); only name/namespace presence is checked.
        properties["metadata"] = {"type": "object"}
        properties.setdefault("apiVersion", {"type": "string"})
        properties.setdefault("kind", {"type": "string"})
        return _CRDValidator(schema, format_checker=_FORMAT_CHECKER)


def crd_versions(crd: Mapping[str, Any], source: str) -> list[CrdVersion]:
    """The served versions of a CustomResourceDefinition document (apiextensions.k8s.io/v1)."""
    spec = crd.get("spec") or {}
    kind = (spec.get("names") or {}).get("kind", "")
    found: list[CrdVersion] = []
    for version in spec.get("versions") or []:
        if not version.get("served", False):
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        }
        found.append(
            CrdVersion(
                GroupVersionKind(spec.get("group", ""), version["name"], kind), spec.get("scope", "Namespaced"), source, schema
            )
        )
    return found


@dataclass
class CrdIndex:
    """(group, version, kind) -> served CRD version, from shared/crds plus CRDs the program declares."""

    entries: dict[GroupVersionKind, CrdVersion]

    def get(self, gvk: GroupVersionKind) -> CrdVersion | None:
        return self.entries.get(gvk)

    def versions_of(self, group: str, kind: str) -> list[str]:
        return sorted(g.version for g in self.entries if g.group == group and g.kind == kind)

    def with_program_crds(self, documents: Iterable[Document]) -> CrdIndex:
        """This index plus the CRDs among `documents`, for the kinds it does not already have (shared/ wins)."""
        entries = dict(self.entries)
        for path, document in documents:
            if document.get("kind") == "CustomResourceDefinition" and str(document.get("apiVersion", "")).startswith(
                "apiextensions.k8s.io/"
            ):
                for version in crd_versions(document, f"program: {path}"):
                    entries.setdefault(version.gvk, version)
        return CrdIndex(entries)


@functools.cache
def load_crd_index(shared_dir: Path) -> CrdIndex:
    """Every CRD under `shared_dir/crds/*/*.yaml` (served versions only). Cached per folder."""
    entries: dict[GroupVersionKind, CrdVersion] = {}
    for path in sorted((shared_dir / "crds").glob("*/*.yaml")):
        document = load_yaml(path)
        if not isinstance(document, Mapping) or document.get("kind") != "CustomResourceDefinition":
            continue
        for version in crd_versions(document, str(path.relative_to(shared_dir))):
            if version.gvk in entries:
                raise ValueError(f"{version.gvk} is defined twice: {entries[version.gvk].source} and {version.source}")
            entries[version.gvk] = version
    return CrdIndex(entries)


@dataclass(frozen=True)
class KnownTypeField:
    """A schemaless field of a CRD (`x-kubernetes-preserve-unknown-fields`) that holds a Kubernetes type.

    The API server accepts anything there, and the operator decodes it into the Go type, silently
    dropping what it does not know: so a misspelled field would never be reported. Such fields are
    validated against the strict built-in schema of that type (like Argo CD's `knownTypeFields`),
    except for the type's own top-level `required` fields, which the operator fills in (a container's
    `name`, a pod's `containers`).
    """

    group: str
    kinds: tuple[str, ...]
    path: tuple[str, ...]
    """Field path below the object; `[]` stands for every item of a list."""
    definition: str
    """Definition name in the Kubernetes OpenAPI schema, e.g. `io.k8s.api.core.v1.PodSpec`."""


_SLINKY = "slinky.slurm.net"
_CORE = "io.k8s.api.core.v1"
KNOWN_TYPE_FIELDS: tuple[KnownTypeField, ...] = (
    # slurm-operator 1.2.1: PodTemplate.spec is a PodSpecWrapper, ServiceSpec a ServiceSpecWrapper, and each
    # container a ContainerWrapper: an inline corev1 type marked schemaless (the CRD descriptions say so).
    KnownTypeField(
        _SLINKY, ("Accounting", "Controller", "LoginSet", "NodeSet", "RestApi"), ("spec", "template", "spec"), f"{_CORE}.PodSpec"
    ),
    KnownTypeField(
        _SLINKY, ("Accounting", "Controller", "LoginSet", "RestApi"), ("spec", "service", "spec"), f"{_CORE}.ServiceSpec"
    ),
    KnownTypeField(_SLINKY, ("Accounting",), ("spec", "slurmdbd"), f"{_CORE}.Container"),
    KnownTypeField(_SLINKY, ("Controller",), ("spec", "slurmctld"), f"{_CORE}.Container"),
    KnownTypeField(_SLINKY, ("Controller",), ("spec", "reconfigure"), f"{_CORE}.Container"),
    KnownTypeField(_SLINKY, ("Controller", "NodeSet"), ("spec", "logfile"), f"{_CORE}.Container"),
    KnownTypeField(_SLINKY, ("LoginSet",), ("spec", "login"), f"{_CORE}.Container"),
    KnownTypeField(_SLINKY, ("LoginSet",), ("spec", "initconf"), f"{_CORE}.Container"),
    KnownTypeField(_SLINKY, ("NodeSet",), ("spec", "slurmd"), f"{_CORE}.Container"),
    KnownTypeField(_SLINKY, ("RestApi",), ("spec", "slurmrestd"), f"{_CORE}.Container"),
    KnownTypeField(_SLINKY, ("NodeSet",), ("spec", "volumeClaimTemplates", "[]"), f"{_CORE}.PersistentVolumeClaim"),
)


def _values_at(node: Any, path: Sequence[str], prefix: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if not path:
        yield prefix, node
        return
    head, rest = path[0], path[1:]
    if head == "[]":
        if isinstance(node, list):
            for index, item in enumerate(node):
                yield from _values_at(item, rest, (*prefix, index))
    elif isinstance(node, Mapping) and head in node:
        yield from _values_at(node[head], rest, (*prefix, head))


@functools.cache
def _definition_validator(schema_version: str, definition: str) -> jsonschema.protocols.Validator:
    definitions, _ = kv_definitions(schema_version)
    if definition not in definitions["$defs"]:
        raise ValueError(f"Kubernetes {schema_version} has no definition {definition}")
    registry: Registry[Any] = Registry().with_resource(definitions["$id"], Resource.from_contents(definitions))
    return jsonschema.Draft202012Validator({"$ref": f"{definitions['$id']}#/$defs/{definition}"}, registry=registry)


def validate_known_type_fields(document: Mapping[str, Any], kubernetes_version: str) -> list[str]:
    """Errors of the `KNOWN_TYPE_FIELDS` of a custom resource against the built-in type they hold."""
    gvk = GroupVersionKind.of(document)
    schema_version = kubernetes_schema_version(kubernetes_version)
    messages: list[str] = []
    for known in KNOWN_TYPE_FIELDS:
        if known.group != gvk.group or gvk.kind not in known.kinds:
            continue
        validator = _definition_validator(schema_version, known.definition)
        for prefix, value in _values_at(document, known.path):
            errors = validator.iter_errors(value)
            for error in leaf_errors(errors):
                if error.validator == "required" and not error.absolute_path:
                    continue  # filled in by the operator
                group, version, kind = known.definition.split(".")[-3:]
                messages += [f"{m} (checked as {group}/{version} {kind})" for m in describe_error(error, prefix)]
    return messages


def _not_known(value: Any) -> bool:
    """A value the renderer hides or does not know yet: a CEL rule that reads it is not run."""
    return value in (SECRET, UNKNOWN_TEXT)


def validate_custom_resource(
    document: Mapping[str, Any],
    index: CrdIndex,
    kubernetes_version: str | None = None,
    previous: Mapping[str, Any] | None = None,
) -> list[str]:
    """Errors of a custom resource against its CRD's schema (unknown fields are errors) and CEL rules.

    With `kubernetes_version`, schemaless fields that hold a Kubernetes type (`KNOWN_TYPE_FIELDS`) are
    checked against that type too. With `previous` (the object as deployed), it is judged as an update:
    the CRD's transition rules run and unchanged values are ratcheted (offline/schema/cel.py).
    """
    gvk = GroupVersionKind.of(document)
    crd = index.get(gvk)
    if crd is None:
        served = index.versions_of(gvk.group, gvk.kind)
        if served:
            return [f"{gvk}: the CRD does not serve {gvk.version} (served: {', '.join(served)})"]
        return [f"{gvk}: no CustomResourceDefinition for this kind under shared/crds (nor declared by the program)"]
    messages: list[str] = []
    metadata = document.get("metadata") or {}
    if not (metadata.get("name") or metadata.get("generateName")):
        messages.append("metadata.name: required")
    if crd.scope == "Namespaced" and not metadata.get("namespace"):
        messages.append(f"metadata.namespace: required ({gvk.kind} is namespaced)")
    if crd.scope == "Cluster" and metadata.get("namespace"):
        messages.append(f"metadata.namespace: must not be set ({gvk.kind} is cluster-scoped)")
    for error in leaf_errors(crd.validator.iter_errors(dict(document))):
        messages.extend(describe_error(error))
    messages += cel.evaluate(crd.compiled_rules, document, previous, unknown=_not_known)
    if kubernetes_version is not None:
        messages += validate_known_type_fields(document, kubernetes_version)
        messages += _validate_embedded_objects(crd, document, index, kubernetes_version)
    return sorted(set(messages))


def _embedded_objects(
    node: Mapping[str, Any], instance: Any, path: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, object) of every `x-kubernetes-embedded-resource` value in `instance` (converted schema)."""
    if node.get("x-kubernetes-embedded-resource") is True and isinstance(instance, Mapping):
        yield path, instance
        return
    if isinstance(instance, Mapping):
        properties = node.get("properties") or {}
        additional = node.get("additionalProperties")
        for key, value in instance.items():
            child = properties.get(key, additional if isinstance(additional, Mapping) else None)
            if isinstance(child, Mapping):
                yield from _embedded_objects(child, value, (*path, key))
    elif isinstance(instance, list) and isinstance(node.get("items"), Mapping):
        for index, item in enumerate(instance):
            yield from _embedded_objects(node["items"], item, (*path, index))


def _validate_embedded_objects(
    crd: CrdVersion, document: Mapping[str, Any], index: CrdIndex, kubernetes_version: str
) -> list[str]:
    """A complete object embedded in a custom resource (an AppWrapper's Job, ...) is checked as that object.

    The API server only checks its apiVersion/kind/metadata; the operator creates it later, when a bad
    field would fail (or be dropped) far from here. Built-in kinds and kinds with a CRD are checked.
    """
    messages: list[str] = []
    for path, embedded in _embedded_objects(crd.validator.schema, document):
        gvk = GroupVersionKind.of(embedded)
        if gvk in builtin_kinds(kubernetes_version):
            found = validate_builtin(embedded, kubernetes_version)
        elif index.get(gvk) is not None:
            found = [m for m in validate_custom_resource(embedded, index, kubernetes_version) if not m.startswith("metadata.")]
        else:
            continue
        where = format_path(path)
        messages += [f"{where}.{m} (embedded {gvk})" if not m.startswith("(") else f"{where}: {m}" for m in found]
    return messages
