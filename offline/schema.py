"""Tier 3: validate what a program declares against the schemas the cluster and the charts enforce.

Three checks, all offline and all reading upstream data at run time (nothing is copied into the repo):

* Built-in kinds (`apps/v1 Deployment`, `v1 Secret`, ...) against the Kubernetes OpenAPI schema of the
  target version, as shipped by the `kubernetes-validate` package, in its *strict* flavour: an unknown
  field is an error, the way `kubectl apply --validate=strict` reports it.
* Custom resources against the `openAPIV3Schema` of their upstream CustomResourceDefinition under
  `shared/crds/<project>-<version>/<Kind>.yaml` (or, for a kind shared/ has no CRD for, one the program
  declares itself). The structural schema is translated to JSON Schema 2020-12 with the Kubernetes
  extensions honoured (`x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`,
  `x-kubernetes-embedded-resource`, `nullable`, list types) and unknown fields rejected wherever the
  schema does not preserve them. CEL rules (`x-kubernetes-validations`) are not evaluated; they are
  counted (`SchemaReport.cel_rules_skipped`). Beyond what the API server checks, so that a typo cannot
  hide where the CRD is schemaless: fields that hold a Kubernetes type (the Slinky CRDs' pod templates
  and containers, `KNOWN_TYPE_FIELDS`) are checked against that built-in type, and embedded objects
  (`x-kubernetes-embedded-resource`, e.g. an AppWrapper's Job) as the object they are.
* Helm values: every key path hpcforge sets for a chart (a `HelmChart` pseudo-document of the offline
  renderer, or an Argo CD Application that installs a chart) must exist in the chart's default
  `values.yaml` under `shared/charts/<values_dir>/`, or be declared by its `values.schema.json`; the
  values are also validated against that schema (types, enums, `additionalProperties: false`; never
  `required`, since ours are a partial override). Maps that a chart copies verbatim although their
  defaults are not empty are listed in `FREE_FORM_VALUES`, each with its reason.

Entry point: `validate_documents(documents, kubernetes_version, shared_dir) -> list[str]` (empty: valid).
"""

from __future__ import annotations

import base64
import copy
import datetime
import functools
import importlib.resources
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource

from components.versions import ChartPin, Charts, Manifests

from .render import CHART_API_VERSION, CHART_KIND, MANIFEST_KIND

SECRET = "[secret]"
"""What the renderer puts where a value is secret: it stands for any value, so it never fails a type check."""

Document = tuple[str, Mapping[str, Any]]
"""(relative path, object) as `offline.render.render_documents` returns them."""


@dataclass(frozen=True, order=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version} {self.kind}"

    @classmethod
    def of(cls, document: Mapping[str, Any]) -> GroupVersionKind:
        api_version = str(document.get("apiVersion") or "")
        group, _, version = api_version.rpartition("/")
        return cls(group, version, str(document.get("kind") or ""))


# --- shared helpers --------------------------------------------------------------------------------


def _format_path(parts: Iterable[Any]) -> str:
    """`spec.template.spec.containers[0].image`; keys that contain dots are bracketed: `configs.cm["a.b"]`."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z0-9_/-]+", str(part)):
            text += f".{part}" if text else str(part)
        else:
            text += f"[{json.dumps(str(part))}]"
    return text or "(root)"


def _is_secret_error(error: jsonschema.ValidationError) -> bool:
    return bool(error.instance == SECRET)


def _unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    """The keys an `additionalProperties: false` error is about."""
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    known = set(schema.get("properties") or {})
    patterns = [re.compile(p) for p in (schema.get("patternProperties") or {})]
    return sorted(str(k) for k in instance if k not in known and not any(p.search(str(k)) for p in patterns))


def _leaf_errors(errors: Iterable[jsonschema.ValidationError]) -> Iterator[jsonschema.ValidationError]:
    """Errors with secret placeholders dropped; an anyOf/oneOf failure is replaced by its most relevant cause."""
    for error in errors:
        if _is_secret_error(error):
            continue
        if error.validator in ("anyOf", "oneOf") and error.context:
            best = jsonschema.exceptions.best_match(error.context)
            if best is not None and best.validator != "type":
                if not _is_secret_error(best):
                    yield best
                continue
        yield error


def _describe(error: jsonschema.ValidationError, prefix: Sequence[Any] = ()) -> list[str]:
    """One message per problem: `spec.replica: unknown field`, `spec.size: 'x' is not of type 'integer'`."""
    path = [*prefix, *error.absolute_path]
    if error.validator == "additionalProperties" and error.validator_value is False:
        return [f"{_format_path([*path, key])}: unknown field" for key in _unknown_keys(error)]
    if error.validator == "unevaluatedProperties" and error.validator_value is False:
        return [f"{_format_path(path)}: {error.message}"]
    if error.validator == "type" and error.instance is None:
        return [f"{_format_path(path)}: null is not allowed here (expected {error.validator_value})"]
    return [f"{_format_path(path)}: {error.message}"]


def _yaml_loader() -> type[yaml.SafeLoader]:
    base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[valid-type,misc]
        """Safe loader (libyaml when available) that also reads the `=` value tag some CRDs contain."""

    def construct_value(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        return str(node.value)

    Loader.add_constructor("tag:yaml.org,2002:value", construct_value)
    return Loader


_LOADER = _yaml_loader()


def _load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as stream:
        return yaml.load(stream, Loader=_LOADER)  # a SafeLoader subclass


# --- built-in kinds: kubernetes-validate -----------------------------------------------------------

_KV_PACKAGE = "kubernetes_validate"
_KV_SCHEMAS = "kubernetes-json-schema"


def _version_tuple(version: str) -> tuple[int, int]:
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", version.strip())
    if not match:
        raise ValueError(f"not a Kubernetes version: {version!r} (expected e.g. '1.33' or 'v1.33.2')")
    return int(match.group(1)), int(match.group(2))


@functools.cache
def supported_kubernetes_versions() -> tuple[str, ...]:
    """The schema versions kubernetes-validate ships (`1.25.0` ... `1.37.0` in 1.37.0), oldest first."""
    root = importlib.resources.files(_KV_PACKAGE).joinpath(_KV_SCHEMAS)
    found = set()
    for entry in root.iterdir():
        match = re.fullmatch(r"v(\d+\.\d+\.\d+)-local-strict", entry.name)
        if match:
            found.add(match.group(1))
    return tuple(sorted(found, key=lambda v: tuple(int(p) for p in v.split("."))))


def kubernetes_schema_version(version: str) -> str:
    """The kubernetes-validate schema set for a target version: `"1.33"` -> `"1.33.0"`.

    kubernetes-validate ships one schema set per minor release (`v1.33.0-local-strict`); a minor it
    does not ship is an error rather than a silent fall-back to an older one.
    """
    wanted = _version_tuple(version)
    for shipped in supported_kubernetes_versions():
        if _version_tuple(shipped) == wanted:
            return shipped
    import kubernetes_validate

    raise ValueError(
        f"kubernetes-validate {kubernetes_validate.__version__} has no schemas for Kubernetes {version} "
        f"(it ships {', '.join(supported_kubernetes_versions())})"
    )


def _kv_file(schema_version: str, name: str) -> Any:
    root = importlib.resources.files(_KV_PACKAGE).joinpath(_KV_SCHEMAS, f"v{schema_version}-local-strict", name)
    return json.loads(root.read_text(encoding="utf-8"))


@functools.cache
def _kv_definitions(schema_version: str) -> tuple[dict[str, Any], dict[GroupVersionKind, str]]:
    definitions: dict[str, Any] = _kv_file(schema_version, "_definitions.json")
    kinds: dict[GroupVersionKind, str] = {}
    for name, schema in definitions["$defs"].items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            kinds[GroupVersionKind(gvk.get("group", ""), gvk["version"], gvk["kind"])] = name
    return definitions, kinds


def builtin_kinds(kubernetes_version: str) -> frozenset[GroupVersionKind]:
    """Every group/version/kind the Kubernetes API of that version serves itself."""
    return _builtin_kinds(kubernetes_schema_version(kubernetes_version))


@functools.cache
def _builtin_kinds(schema_version: str) -> frozenset[GroupVersionKind]:
    return frozenset(_kv_definitions(schema_version)[1])


def builtin_definitions(kubernetes_version: str) -> frozenset[str]:
    """Every definition name (`io.k8s.api.core.v1.PodSpec`, ...) of the Kubernetes OpenAPI schema of that version."""
    return frozenset(_kv_definitions(kubernetes_schema_version(kubernetes_version))[0]["$defs"])


def is_builtin(document: Mapping[str, Any], kubernetes_version: str) -> bool:
    return GroupVersionKind.of(document) in builtin_kinds(kubernetes_version)


@functools.cache
def _builtin_validator(schema_version: str, gvk: GroupVersionKind) -> jsonschema.protocols.Validator:
    definitions, kinds = _kv_definitions(schema_version)
    # The file name scheme of kubernetes-validate: rbac.authorization.k8s.io/v1 -> rbac-v1.
    prefix = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", gvk.api_version)
    try:
        schema: dict[str, Any] = _kv_file(schema_version, f"{gvk.kind.lower()}-{prefix}.json")
    except FileNotFoundError:
        schema = {}
    declared = [
        GroupVersionKind(g.get("group", ""), g["version"], g["kind"]) for g in schema.get("x-kubernetes-group-version-kind", [])
    ]
    if gvk not in declared:  # no per-kind file, or one of another group with the same first label
        schema = {"$ref": f"{definitions['$id']}#/$defs/{kinds[gvk]}"}
    registry: Registry[Any] = Registry().with_resource(definitions["$id"], Resource.from_contents(definitions))
    return jsonschema.Draft202012Validator(schema, registry=registry)


def validate_builtin(document: Mapping[str, Any], kubernetes_version: str) -> list[str]:
    """Errors of a built-in object against the strict OpenAPI schema of `kubernetes_version` ("1.33")."""
    schema_version = kubernetes_schema_version(kubernetes_version)
    gvk = GroupVersionKind.of(document)
    if gvk not in _kv_definitions(schema_version)[1]:
        return [f"{gvk} is not a built-in kind of Kubernetes {kubernetes_version}"]
    validator = _builtin_validator(schema_version, gvk)
    messages: list[str] = []
    for error in _leaf_errors(validator.iter_errors(dict(document))):
        messages.extend(_describe(error))
    return sorted(set(messages))


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


def structural_to_json_schema(node: Mapping[str, Any], *, value_validation: bool = False) -> dict[str, Any]:
    """Translate a Kubernetes structural schema (OpenAPI v3 + extensions) to JSON Schema 2020-12.

    * An object schema that neither preserves unknown fields nor declares `additionalProperties` gets
      `additionalProperties: false`: the API server would prune the field, `--validate=strict` rejects it.
      Not inside `allOf`/`anyOf`/`oneOf`/`not`, which in a structural schema only add value checks.
    * `x-kubernetes-int-or-string` becomes an integer-or-string type; `nullable` admits null.
    * `x-kubernetes-embedded-resource` declares (and requires) `apiVersion` and `kind`, allows `metadata`.
    * `exclusiveMinimum: true` (OpenAPI 3.0) becomes the 2020-12 numeric form; Go-only regexes are dropped.
    * A required field that has a `default` is not required (the API server defaults before validating).
    * Descriptions, defaults and CEL rules are dropped (the latter are counted by `count_cel_rules`).
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
        document = _load_yaml(path)
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
    definitions, _ = _kv_definitions(schema_version)
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
            for error in _leaf_errors(errors):
                if error.validator == "required" and not error.absolute_path:
                    continue  # filled in by the operator
                group, version, kind = known.definition.split(".")[-3:]
                messages += [f"{m} (checked as {group}/{version} {kind})" for m in _describe(error, prefix)]
    return messages


def validate_custom_resource(document: Mapping[str, Any], index: CrdIndex, kubernetes_version: str | None = None) -> list[str]:
    """Errors of a custom resource against its CRD's schema (unknown fields are errors).

    With `kubernetes_version`, schemaless fields that hold a Kubernetes type (`KNOWN_TYPE_FIELDS`) are
    checked against that type too.
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
    for error in _leaf_errors(crd.validator.iter_errors(dict(document))):
        messages.extend(_describe(error))
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
        where = _format_path(path)
        messages += [f"{where}.{m} (embedded {gvk})" if not m.startswith("(") else f"{where}: {m}" for m in found]
    return messages


# --- Helm values -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FreeFormValues:
    """A values map whose keys a chart passes through verbatim, although its default is not empty.

    Keys of that map that are not in the defaults are allowed, with anything below them; keys that are
    in the defaults are still checked as usual.
    """

    chart: str
    path: tuple[str, ...]
    reason: str


FREE_FORM_VALUES: tuple[FreeFormValues, ...] = (
    FreeFormValues(
        "argo-cd",
        ("configs", "cm"),
        "every key becomes an entry of the argocd-cm ConfigMap (templates/argocd-configs/argocd-cm.yaml ranges over it);"
        " the defaults list only a few of Argo CD's settings (e.g. resource.customizations.*)",
    ),
    FreeFormValues(
        "argo-cd",
        ("configs", "params"),
        "every key becomes an argocd-cmd-params-cm entry (templates/argocd-configs/argocd-cmd-params-cm.yaml ranges over it);"
        " the defaults hold only `create` and `annotations`",
    ),
    FreeFormValues(
        "traefik",
        ("service", "spec"),
        "templates/service.yaml copies service.spec verbatim into the Service's spec (values.yaml: 'Additional entries here"
        " will be added to the Service spec'); the default holds only `type` and the schema lists only `type`",
    ),
)
"""The explicit allow-list of free-form maps with non-empty defaults. Keep it minimal: one entry per reason."""


@dataclass(frozen=True)
class CommentedValue:
    """A values key that the chart's values.yaml documents only as a comment, and its templates read."""

    chart: str
    path: tuple[str, ...]
    reason: str


COMMENTED_VALUES: tuple[CommentedValue, ...] = tuple(
    CommentedValue(
        "gpu-operator",
        (component, "version"),
        f'values.yaml has `#version: ""` under {component} (\'If version is not specified, then default is to use'
        " chart.AppVersion'); hpcforge pins the image tag explicitly",
    )
    for component in ("operator", "validator", "nodeStatusExporter")
)
"""Keys that exist although values.yaml only mentions them in a comment. Keep it minimal: one entry per key."""


@dataclass(frozen=True)
class HelmRelease:
    """A chart hpcforge installs, with the values it sets, wherever it came from."""

    document: str
    """Path of the document that declares it."""
    chart: str
    """Chart name (the last element of an `oci://` reference)."""
    version: str
    repository: str | None
    values: Mapping[str, Any]
    origin: str
    """`HelmChart spec.values`, `Application spec.source.helm.valuesObject`, ..."""
    check_types: bool = True
    """False for `--set`-style parameters, whose values are strings until Helm parses them."""


def _chart_name(chart: str) -> tuple[str, str | None]:
    """`oci://quay.io/jetstack/charts/cert-manager` -> (`cert-manager`, `oci://quay.io/jetstack/charts`)."""
    if chart.startswith("oci://"):
        repository, _, name = chart.rstrip("/").rpartition("/")
        return name, repository
    return chart, None


def _parameters_as_values(parameters: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Argo CD `helm.parameters` (`--set name=value`) as nested values, cut at the first list index."""
    values: dict[str, Any] = {}
    for parameter in parameters:
        parts = [p.replace("\\.", ".") for p in re.split(r"(?<!\\)\.", str(parameter.get("name", "")))]
        node = values
        for position, part in enumerate(parts):
            key, bracket, _ = part.partition("[")
            last = position == len(parts) - 1 or bool(bracket)
            if last:
                node[key] = [] if bracket else parameter.get("value")
                break
            node = node.setdefault(key, {})
    return values


def helm_releases(path: str, document: Mapping[str, Any]) -> list[HelmRelease]:
    """The charts a document installs: a HelmChart pseudo-document, or an Argo CD Application's chart sources."""
    api_version, kind = document.get("apiVersion"), document.get("kind")
    spec = document.get("spec") or {}
    if api_version == CHART_API_VERSION and kind == CHART_KIND:
        name, oci_repository = _chart_name(str(spec.get("chart", "")))
        return [
            HelmRelease(
                path,
                name,
                str(spec.get("version", "")),
                spec.get("repository") or oci_repository,
                spec.get("values") or {},
                "HelmChart spec.values",
            )
        ]
    if not (str(api_version).startswith("argoproj.io/") and kind == "Application"):
        return []
    sources: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(spec.get("source"), Mapping):
        sources.append(("spec.source", spec["source"]))
    sources += [(f"spec.sources[{i}]", s) for i, s in enumerate(spec.get("sources") or []) if isinstance(s, Mapping)]
    releases: list[HelmRelease] = []
    for where, source in sources:
        if not source.get("chart"):
            continue
        chart, version, repository = str(source["chart"]), str(source.get("targetRevision", "")), source.get("repoURL")
        helm = source.get("helm") or {}
        if helm.get("valuesObject") is not None or not (helm.get("values") or helm.get("parameters")):
            releases.append(
                HelmRelease(
                    path, chart, version, repository, helm.get("valuesObject") or {}, f"Application {where}.helm.valuesObject"
                )
            )
        if isinstance(helm.get("values"), str) and helm["values"].strip():
            parsed = yaml.safe_load(helm["values"]) or {}
            releases.append(HelmRelease(path, chart, version, repository, parsed, f"Application {where}.helm.values"))
        if helm.get("parameters"):
            releases.append(
                HelmRelease(
                    path,
                    chart,
                    version,
                    repository,
                    _parameters_as_values(helm["parameters"]),
                    f"Application {where}.helm.parameters",
                    False,
                )
            )
    return releases


def find_pin(chart: str, version: str, pins: Iterable[ChartPin] | None = None) -> ChartPin | None:
    for pin in Charts.all() if pins is None else pins:
        if pin.chart == chart and pin.version == version:
            return pin
    return None


@dataclass(frozen=True)
class ChartValues:
    """A chart's default values and (when it ships one) its values.schema.json."""

    defaults: Mapping[str, Any]
    schema: Mapping[str, Any] | None

    @functools.cached_property
    def partial_validator(self) -> jsonschema.protocols.Validator | None:
        """The schema without `required`: our values are an override, merged over the defaults by Helm."""
        if self.schema is None:
            return None
        schema = _without_required(self.schema)
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
        return cls(schema)


def _without_required(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {k: _without_required(v) for k, v in node.items() if not (k == "required" and isinstance(v, list))}
    if isinstance(node, list):
        return [_without_required(v) for v in node]
    return node


@functools.cache
def load_chart_values(shared_dir: Path, values_dir: str) -> ChartValues:
    """`shared_dir/charts/<values_dir>/values.yaml` and, when present, `values.schema.json`. Cached."""
    folder = shared_dir / "charts" / values_dir
    defaults = _load_yaml(folder / "values.yaml") or {}
    schema_path = folder / "values.schema.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8")) if schema_path.exists() else None
    return ChartValues(defaults, schema)


def _resolve(node: Any, root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A schema node with local `$ref`s followed and `allOf`/`anyOf`/`oneOf` branches flattened."""
    if isinstance(node, bool):
        return [{}] if node else []
    if not isinstance(node, Mapping):
        return []
    found: list[Mapping[str, Any]] = [node]
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, Mapping) else {}
        found += _resolve(target, root)
    for keyword in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(keyword) or []:
            found += _resolve(branch, root)
    return found


def _is_free_form_schema(nodes: list[Mapping[str, Any]]) -> bool:
    """A schema that says nothing about an object's keys: any key is allowed below it."""
    if not nodes:
        return False
    keyed = any("properties" in n or "patternProperties" in n or n.get("additionalProperties") is False for n in nodes)
    return not keyed


def _schema_child(nodes: list[Mapping[str, Any]], key: str, root: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The schema nodes of `key` below `nodes`, or None when the schema does not declare that key."""
    children: list[Mapping[str, Any]] = []
    declared = False
    for node in nodes:
        properties = node.get("properties") or {}
        if key in properties:
            declared = True
            children += _resolve(properties[key], root)
            continue
        for pattern, child in (node.get("patternProperties") or {}).items():
            if re.search(pattern, key):
                declared = True
                children += _resolve(child, root)
        additional = node.get("additionalProperties")
        if isinstance(additional, Mapping) or additional is True:
            declared = True
            children += _resolve(additional, root)
    if not declared and _is_free_form_schema(nodes):
        return [{}]
    return children if declared else None


_MISSING = object()


def _is_free_form_default(default: Any) -> bool:
    return default is None or default == {} or isinstance(default, list)


def unknown_value_keys(
    values: Mapping[str, Any],
    defaults: Mapping[str, Any],
    schema: Mapping[str, Any] | None = None,
    free_form: Iterable[tuple[str, ...]] = (),
) -> list[tuple[str, ...]]:
    """Key paths of `values` that neither the chart's defaults nor its schema know.

    Below a default that is `{}`, null or a list anything goes; so do keys that are not in the defaults
    directly below a `free_form` path (see `FreeFormValues`).
    """
    allowed = set(free_form)
    root_schema = schema or {}
    unknown: list[tuple[str, ...]] = []

    def walk(node: Mapping[str, Any], default: Any, schemas: list[Mapping[str, Any]] | None, path: tuple[str, ...]) -> None:
        for key, value in node.items():
            key_path = (*path, str(key))
            child_schemas = _schema_child(schemas, str(key), root_schema) if schemas is not None else None
            child_default = default.get(key, _MISSING) if isinstance(default, Mapping) else _MISSING
            if child_default is _MISSING:
                if path in allowed:
                    continue
                if child_schemas is None:
                    unknown.append(key_path)
                    continue
                if _is_free_form_schema(child_schemas):
                    continue
            elif _is_free_form_default(child_default):
                continue
            if isinstance(value, Mapping):
                walk(value, child_default, child_schemas, key_path)

    walk(values, defaults, _resolve(schema, root_schema) if schema is not None else None, ())
    return unknown


def validate_helm_values(
    chart: str,
    version: str,
    values: Mapping[str, Any],
    shared_dir: Path,
    *,
    check_types: bool = True,
    pins: Iterable[ChartPin] | None = None,
) -> list[str]:
    """Errors of the values we set for a pinned chart: unknown keys, and values.schema.json violations."""
    label = f"{chart} {version}"
    pin = find_pin(chart, version, pins)
    if pin is None:
        return [f"{label}: not pinned in components/versions.py (Charts.all())"]
    if pin.values_dir is None:
        return [
            f"{label}: values key {_format_path(path)} does not exist (the chart has no values)"
            for path in _top_level_paths(values)
        ]
    folder = shared_dir / "charts" / pin.values_dir
    if not (folder / "values.yaml").exists():
        return [f"{label}: no default values at {folder / 'values.yaml'} (values_dir {pin.values_dir!r} of the pin)"]
    chart_values = load_chart_values(shared_dir, pin.values_dir)
    free_form = [entry.path for entry in FREE_FORM_VALUES if entry.chart == chart]
    messages = []
    commented = {entry.path for entry in COMMENTED_VALUES if entry.chart == chart}
    unknown = [p for p in unknown_value_keys(values, chart_values.defaults, chart_values.schema, free_form) if p not in commented]
    for path in unknown:
        where = "values.yaml" + (" or values.schema.json" if chart_values.schema is not None else "")
        messages.append(f"{label}: values key {_format_path(path)} does not exist in the chart's {where}")
    validator = chart_values.partial_validator
    if validator is not None and check_types:
        reported = set(unknown)
        for error in _leaf_errors(validator.iter_errors(dict(values))):
            if error.validator == "additionalProperties" and error.validator_value is False:
                base = tuple(str(p) for p in error.absolute_path)
                keys = [k for k in _unknown_keys(error) if (*base, k) not in reported]
                messages += [f"{label}: values key {_format_path((*base, k))} is not allowed by values.schema.json" for k in keys]
                continue
            for text in _describe(error):
                messages.append(f"{label}: values {text} (values.schema.json)")
    return messages


def _top_level_paths(values: Mapping[str, Any]) -> list[tuple[str, ...]]:
    return [(str(k),) for k in values]


def validate_helm_release(release: HelmRelease, shared_dir: Path, pins: Iterable[ChartPin] | None = None) -> list[str]:
    """`validate_helm_values` for one release, plus: the repository it comes from is the pinned one."""
    pin_list = list(Charts.all() if pins is None else pins)
    messages = [
        f"{release.origin}: {m}"
        for m in validate_helm_values(
            release.chart, release.version, release.values, shared_dir, check_types=release.check_types, pins=pin_list
        )
    ]
    pin = find_pin(release.chart, release.version, pin_list)
    if pin is not None and release.repository is not None:
        expected = {pin.repository.rstrip("/"), pin.argocd_repo_url.rstrip("/")}
        if release.repository.rstrip("/") not in expected:
            messages.append(
                f"{release.chart} {release.version}: repository {release.repository} is not the pinned {pin.repository}"
            )
    return messages


# --- everything ------------------------------------------------------------------------------------


def validate_pseudo_document(document: Mapping[str, Any]) -> list[str]:
    """A document of the offline renderer (`offline.hpcforge.dev/v1`): a known kind that names a pin.

    A HelmChart's values are checked by `helm_releases`/`validate_helm_release`. The objects of a
    ManifestFile (a release manifest applied by yaml.v2.ConfigFile) are not known offline; only its
    source is checked against `Manifests.all()`.
    """
    kind, spec = document.get("kind"), document.get("spec") or {}
    if kind == CHART_KIND:
        return []
    if kind == MANIFEST_KIND:
        pinned = {pin.url for pin in Manifests.all()}
        if spec.get("file") not in pinned:
            return [f"{MANIFEST_KIND} file {spec.get('file')!r} is not pinned in components/versions.py (Manifests.all())"]
        return []
    return [f"{CHART_API_VERSION} {kind} is not a document kind of the offline renderer"]


@dataclass
class SchemaReport:
    errors: list[str] = field(default_factory=list)
    builtin: int = 0
    """Built-in objects validated against the Kubernetes schema."""
    custom: int = 0
    """Custom resources validated against a CRD."""
    charts: int = 0
    """Helm releases whose values were checked."""
    pseudo: int = 0
    """Documents of the offline renderer itself (HelmChart, ManifestFile): no Kubernetes schema applies."""
    crd_sources: dict[str, str] = field(default_factory=dict)
    """`group/version Kind` -> where its CRD came from, for every custom resource validated."""
    cel_rules_skipped: int = 0
    """CEL rules in the CRD versions used, which this tier does not evaluate."""


def check_documents(documents: Iterable[Document], kubernetes_version: str, shared_dir: Path) -> SchemaReport:
    """Validate every document; each error is `<document path>: <message>`."""
    documents = list(documents)
    report = SchemaReport()
    builtins = builtin_kinds(kubernetes_version)
    index = load_crd_index(shared_dir).with_program_crds(documents)
    used: dict[GroupVersionKind, CrdVersion] = {}
    for path, document in documents:
        gvk = GroupVersionKind.of(document)
        if gvk.api_version == CHART_API_VERSION:
            report.pseudo += 1
            messages: list[str] = validate_pseudo_document(document)
        elif gvk in builtins:
            report.builtin += 1
            messages = validate_builtin(document, kubernetes_version)
        else:
            report.custom += 1
            crd = index.get(gvk)
            if crd is not None:
                used[gvk] = crd
                report.crd_sources[str(gvk)] = crd.source
            messages = validate_custom_resource(document, index, kubernetes_version)
            name = (document.get("metadata") or {}).get("name")
            messages = [f"{gvk} {name}: {m}" for m in messages]
        for release in helm_releases(path, document):
            report.charts += 1
            messages += validate_helm_release(release, shared_dir)
        report.errors += [f"{path}: {m}" for m in messages]
    report.cel_rules_skipped = sum(crd.cel_rules for crd in used.values())
    return report


def validate_documents(documents: Iterable[Document], kubernetes_version: str, shared_dir: Path) -> list[str]:
    """Every schema error of `documents` (`render_documents` output) for Kubernetes `kubernetes_version`.

    `shared_dir` is the folder holding `crds/` and `charts/`. An empty list means every document is valid.
    """
    return check_documents(documents, kubernetes_version, shared_dir).errors
