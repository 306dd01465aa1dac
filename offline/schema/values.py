"""Helm values against the chart's defaults and its `values.schema.json`.

Every key path hpcforge sets for a chart (a `HelmChart` pseudo-document of the offline renderer, or an
Argo CD Application that installs a chart) must exist in the chart's default `values.yaml` under
`shared/charts/<values_dir>/`, or be declared by its `values.schema.json`; the values are also
validated against that schema (types, enums, `additionalProperties: false`; never `required`, since
ours are a partial override). Maps that a chart copies verbatim although their defaults are not empty
are listed in `FREE_FORM_VALUES`, each with its reason. Part of the schema tier (offline/schema/validate.py).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from components.versions import ChartPin, Charts

from ..program.documents import CHART_API_VERSION, CHART_KIND
from .kube import describe_error, format_path, leaf_errors, load_yaml, unknown_keys

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


COMMENTED_VALUES: tuple[CommentedValue, ...] = (
    *(
        CommentedValue(
            "gpu-operator",
            (component, "version"),
            f'values.yaml has `#version: ""` under {component} (\'If version is not specified, then default is to use'
            " chart.AppVersion'); hpcforge pins the image tag explicitly",
        )
        for component in ("operator", "validator", "nodeStatusExporter")
    ),
    CommentedValue(
        "gpu-operator",
        ("dcgmExporter", "config"),
        "values.yaml has `# config:` (name, create, data) under dcgmExporter: templates/dcgm_exporter_config.yaml"
        " makes the ConfigMap, templates/clusterpolicy.yaml names it in the ClusterPolicy",
    ),
    CommentedValue(
        "gpu-operator",
        ("dcgmExporter", "hpcJobMapping"),
        "values.yaml has `# hpcJobMapping:` (enabled, directory) under dcgmExporter; templates/clusterpolicy.yaml copies"
        " it into the ClusterPolicy",
    ),
    CommentedValue(
        "kube-prometheus-stack",
        ("prometheusOperator", "admissionWebhooks", "certManager", "issuerRef"),
        "values.yaml has `# issuerRef:` (name, kind) under certManager; templates/prometheus-operator/certmanager.yaml"
        " uses it instead of the chart's own self-signed Issuer",
    ),
    # grafana 12.11.1 is a dependency of kube-prometheus-stack from another repository, whose values are not
    # collected under shared/charts (INDEX.md); these keys are in its values.yaml (grafana-community/helm-charts
    # @ grafana-12.11.1 : charts/grafana/values.yaml, top-level `resources: {}` and `sidecar.resources: {}`).
    CommentedValue("kube-prometheus-stack", ("grafana", "resources"), "grafana's values.yaml `resources: {}`"),
    CommentedValue("kube-prometheus-stack", ("grafana", "sidecar", "resources"), "grafana's values.yaml `sidecar.resources: {}`"),
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
    subcharts: Mapping[str, ChartValues] = field(default_factory=dict)
    """The subcharts' own values and schemas (`charts/<name>/`), by the key the parent's values use for
    them: Helm validates `values[<name>]` against each subchart's values.schema.json."""

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
    defaults = dict(load_yaml(folder / "values.yaml") or {})
    # A subchart's own defaults (`charts/<name>/values.yaml`, where `helm package` puts it) are keys the parent's
    # values may set under `<name>:` (Helm coalesces the two), e.g. gpu-operator's node-feature-discovery.
    for sub in sorted((folder / "charts").glob("*/values.yaml")) if (folder / "charts").is_dir() else []:
        name = sub.parent.name
        own = load_yaml(sub) or {}
        given = defaults.get(name)
        defaults[name] = {**own, **given} if isinstance(given, Mapping) and isinstance(own, Mapping) else (given or own)
    schema_path = folder / "values.schema.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8")) if schema_path.exists() else None
    return ChartValues(defaults, schema, _subchart_values(folder))


def _subchart_values(folder: Path) -> dict[str, ChartValues]:
    """`folder/charts/<name>/` (values.yaml, values.schema.json) of every subchart, recursively.

    The key is the folder's name, which is the subchart's name (`helm package`/`helm dependency build`
    put it there): Helm validates `values[sub.Name()]` against the subchart's schema, the name being the
    dependency's alias when it has one (helm/helm at e9b85e4de, v4.1.0+698: pkg/chart/common/util/jsonschema.go:93-114
    `ValidateAgainstSchema`; alias: pkg/chart/v2/util/dependencies.go:123-124). None of the pinned
    charts aliases a subchart; shared/charts holds no Chart.yaml to read one from."""
    found: dict[str, ChartValues] = {}
    for sub in sorted((folder / "charts").glob("*/")) if (folder / "charts").is_dir() else []:
        values_path, schema_path = sub / "values.yaml", sub / "values.schema.json"
        if not (values_path.exists() or schema_path.exists()):
            continue
        own = (load_yaml(values_path) or {}) if values_path.exists() else {}
        schema = json.loads(schema_path.read_text(encoding="utf-8")) if schema_path.exists() else None
        found[sub.name] = ChartValues(own if isinstance(own, Mapping) else {}, schema, _subchart_values(sub))
    return found


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
            f"{label}: values key {format_path(path)} does not exist (the chart has no values)"
            for path in _top_level_paths(values)
        ]
    folder = shared_dir / "charts" / pin.values_dir
    if not (folder / "values.yaml").exists():
        return [f"{label}: no default values at {folder / 'values.yaml'} (values_dir {pin.values_dir!r} of the pin)"]
    chart_values = load_chart_values(shared_dir, pin.values_dir)
    free_form = [entry.path for entry in FREE_FORM_VALUES if entry.chart == chart]
    messages = []
    commented = {entry.path for entry in COMMENTED_VALUES if entry.chart == chart}
    unknown = [p for p in _subchart_unknown_keys(values, chart_values, free_form) if p not in commented]
    for path in unknown:
        where = "values.yaml" + (" or values.schema.json" if chart_values.schema is not None else "")
        messages.append(f"{label}: values key {format_path(path)} does not exist in the chart's {where}")
    if check_types:
        messages += _schema_errors(label, chart_values, values, (), set(unknown))
    return messages


def _subchart_unknown_keys(
    values: Mapping[str, Any], chart_values: ChartValues, free_form: Iterable[tuple[str, ...]]
) -> list[tuple[str, ...]]:
    """`unknown_value_keys` where a subchart's own schema also declares keys: below `<name>:` a key is
    known when the (coalesced) defaults or the subchart's values.schema.json have it."""
    unknown = unknown_value_keys(values, chart_values.defaults, chart_values.schema, free_form)
    for name, sub in chart_values.subcharts.items():
        given, defaults = values.get(name), chart_values.defaults.get(name)
        if sub.schema is None or not isinstance(given, Mapping):
            continue
        below = [path[1:] for path in free_form if path[:1] == (name,)]
        unknown = [path for path in unknown if path[:1] != (name,)]
        sub_defaults = defaults if isinstance(defaults, Mapping) else sub.defaults
        unknown += [
            (name, *path) for path in _subchart_unknown_keys(given, ChartValues(sub_defaults, sub.schema, sub.subcharts), below)
        ]
    return unknown


def _schema_errors(
    label: str, chart_values: ChartValues, values: Mapping[str, Any], prefix: tuple[str, ...], reported: set[tuple[str, ...]]
) -> list[str]:
    """`values` against the chart's values.schema.json, then `values[<name>]` against each subchart's,
    recursively, as Helm's `ValidateAgainstSchema` does (helm v4 pkg/chart/common/util/jsonschema.go:77-122:
    the chart's own schema, then for each dependency the values under its name, skipped when absent or
    null, and "invalid type for values: expected object (map)" when not a map). Helm validates the
    coalesced values; ours are an override, so `required` is left out (`partial_validator`)."""
    source = "values.schema.json" if not prefix else f"{format_path(prefix)} subchart's values.schema.json"
    messages: list[str] = []
    validator = chart_values.partial_validator
    if validator is not None:
        for error in leaf_errors(validator.iter_errors(dict(values))):
            if error.validator == "additionalProperties" and error.validator_value is False:
                base = (*prefix, *(str(p) for p in error.absolute_path))
                keys = [k for k in unknown_keys(error) if (*base, k) not in reported]
                messages += [f"{label}: values key {format_path((*base, k))} is not allowed by {source}" for k in keys]
                continue
            for text in describe_error(error, prefix):
                messages.append(f"{label}: values {text} ({source})")
    for name, sub in chart_values.subcharts.items():
        given = values.get(name)
        if given is None:
            continue
        if not isinstance(given, Mapping):
            messages.append(f"{label}: values {format_path((*prefix, name))}: invalid type for values: expected object (map)")
            continue
        messages += _schema_errors(label, sub, given, (*prefix, name), reported)
    return list(dict.fromkeys(messages))  # a `$ref` and the `type` beside it report the same error


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
