"""Built-in kinds (`apps/v1 Deployment`, `v1 Secret`, ...) against the Kubernetes OpenAPI schema.

The schema of the target version is the one shipped by the `kubernetes-validate` package, in its
*strict* flavour: an unknown field is an error, the way `kubectl apply --validate=strict` reports it.
Also the helpers the other schema modules share (error paths and messages, YAML loading). Part of the
schema tier (offline/schema/validate.py).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource

SECRET = "[secret]"
"""What the renderer puts where a value is secret: it stands for any value, so it never fails a type check."""

Document = tuple[str, Mapping[str, Any]]
"""(relative path, object) as `offline.program.documents.render_documents` returns them."""


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


def format_path(parts: Iterable[Any]) -> str:
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


def unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    """The keys an `additionalProperties: false` error is about."""
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    known = set(schema.get("properties") or {})
    patterns = [re.compile(p) for p in (schema.get("patternProperties") or {})]
    return sorted(str(k) for k in instance if k not in known and not any(p.search(str(k)) for p in patterns))


def leaf_errors(errors: Iterable[jsonschema.ValidationError]) -> Iterator[jsonschema.ValidationError]:
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


def describe_error(error: jsonschema.ValidationError, prefix: Sequence[Any] = ()) -> list[str]:
    """One message per problem: `spec.replica: unknown field`, `spec.size: 'x' is not of type 'integer'`."""
    path = [*prefix, *error.absolute_path]
    if error.validator == "additionalProperties" and error.validator_value is False:
        return [f"{format_path([*path, key])}: unknown field" for key in unknown_keys(error)]
    if error.validator == "unevaluatedProperties" and error.validator_value is False:
        return [f"{format_path(path)}: {error.message}"]
    if error.validator == "type" and error.instance is None:
        return [f"{format_path(path)}: null is not allowed here (expected {error.validator_value})"]
    return [f"{format_path(path)}: {error.message}"]


def _yaml_loader() -> type[yaml.SafeLoader]:
    base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[valid-type,misc]
        """Safe loader (libyaml when available) that also reads the `=` value tag some CRDs contain."""

    def construct_value(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        return str(node.value)

    Loader.add_constructor("tag:yaml.org,2002:value", construct_value)
    return Loader


_LOADER = _yaml_loader()


def load_yaml(path: Path) -> Any:
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
def kv_definitions(schema_version: str) -> tuple[dict[str, Any], dict[GroupVersionKind, str]]:
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
    return frozenset(kv_definitions(schema_version)[1])


def builtin_definitions(kubernetes_version: str) -> frozenset[str]:
    """Every definition name (`io.k8s.api.core.v1.PodSpec`, ...) of the Kubernetes OpenAPI schema of that version."""
    return frozenset(kv_definitions(kubernetes_schema_version(kubernetes_version))[0]["$defs"])


def is_builtin(document: Mapping[str, Any], kubernetes_version: str) -> bool:
    return GroupVersionKind.of(document) in builtin_kinds(kubernetes_version)


@functools.cache
def _builtin_validator(schema_version: str, gvk: GroupVersionKind) -> jsonschema.protocols.Validator:
    definitions, kinds = kv_definitions(schema_version)
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
    if gvk not in kv_definitions(schema_version)[1]:
        return [f"{gvk} is not a built-in kind of Kubernetes {kubernetes_version}"]
    validator = _builtin_validator(schema_version, gvk)
    messages: list[str] = []
    for error in leaf_errors(validator.iter_errors(dict(document))):
        messages.extend(describe_error(error))
    return sorted(set(messages))
