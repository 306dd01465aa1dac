"""Render the charts a stack deploys, the way `helm.v4.Chart` and Argo CD render them.

For every chart release the recorded program declares (a `kubernetes:helm.sh/v4:Chart` in `pulumi`
delivery, an Argo CD `Application` with a Helm source in `argocd` delivery) the chart is loaded
from its source (offline/charts/source.py) and rendered with helm-python-sdk (Helm v4 as a library):
the exact values, release name and namespace as deployed, `is_install` (a first install: `lookup`
returns nothing), and the target's Kubernetes version (`hpcforge:kubernetes.version`) and API
versions (offline/charts/cluster.py: the built-in group/versions of that Kubernetes release, from kubernetes-validate's
OpenAPI data, plus every CRD that the stack installs: those of the charts, rendered in a first
pass, and those the program declares itself). That is `helm template --kube-version --api-versions
--is-upgrade=false`, which is what `helm.v4.Chart` runs client-side.

What comes out, per release:

* `objects`: the rendered templates, one dict per object, namespaced objects given the release
  namespace when the template sets none (as `helm.v4.Chart` and Argo CD do);
* `crds`: the chart's (and enabled subcharts') `crds/` files, which both install first;
* `hooks`: objects annotated `helm.sh/hook`. `helm.v4.Chart` drops them: in `pulumi` delivery each
  one is an error naming the chart and the hook (components/chart_hooks.py lists the known hooks and
  the values that switch them off). Test hooks (`helm test`) are dropped by every installer and are
  only counted.

Secret values (a RandomPassword inside the values) are rendered as the placeholder `[secret]`:
nothing secret reaches the rendered files or the policy packs in plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.chart_hooks import HOOKS, HookReplacement
from components.versions import ChartPin, Charts

from ..program.engine import RecordedStack
from ..schema.values import find_pin
from .cluster import (
    builtin_api_versions,
    crd_api_versions,
    crd_scopes,
    helm_kube_version,
    is_crd,
    is_namespaced,
)
from .dependencies import missing_dependencies
from .kube_version import KubeVersionError, satisfies
from .source import ChartSource, ChartSourceError

HOOK_ANNOTATION = "helm.sh/hook"
TEST_HOOKS = frozenset({"test", "test-success", "test-failure"})
REVISION = 1


class ChartRenderError(Exception):
    """Charts could not be rendered, or rendered hooks that would be dropped; one line per problem."""

    def __init__(self, messages: Sequence[str]) -> None:
        self.messages = list(messages)
        super().__init__("\n".join(self.messages))


@dataclass(frozen=True)
class ChartRelease:
    """A chart release as the program declares it."""

    release: str
    pin: ChartPin
    namespace: str
    values: Mapping[str, Any]
    delivery: str
    """`pulumi` (a helm.v4.Chart) or `argocd` (an Application)."""
    urn: str
    """The declaring resource: the Chart (rendered objects become its children) or the Application."""

    @property
    def label(self) -> str:
        return f"chart {self.pin.chart} {self.pin.version} (release {self.release!r} in namespace {self.namespace!r})"


@dataclass(frozen=True)
class Hook:
    template: str
    kind: str
    name: str
    events: tuple[str, ...]
    document: Mapping[str, Any]

    @property
    def is_test(self) -> bool:
        return bool(self.events) and set(self.events) <= TEST_HOOKS

    def describe(self) -> str:
        return f"{self.kind} {self.name} ({','.join(self.events)}; {self.template})"


@dataclass
class RenderedChart:
    release: ChartRelease
    objects: list[dict[str, Any]] = field(default_factory=list)
    crds: list[dict[str, Any]] = field(default_factory=list)
    hooks: list[Hook] = field(default_factory=list)

    @property
    def installed(self) -> list[dict[str, Any]]:
        """What an installer applies: CRDs first, then the templates (hooks excluded)."""
        return [*self.crds, *self.objects]

    def dropped_hooks(self) -> list[Hook]:
        """Hooks `helm.v4.Chart` would drop (test hooks aside), in `pulumi` delivery."""
        if self.release.delivery != "pulumi":
            return []
        return [hook for hook in self.hooks if not hook.is_test]


@dataclass
class RenderReport:
    charts: list[RenderedChart]
    errors: list[str]

    def counts(self) -> list[tuple[str, int, int, int]]:
        """(release, objects, crds, hooks) per chart."""
        return [(c.release.release, len(c.objects), len(c.crds), len(c.hooks)) for c in self.charts]


# --- which releases a stack declares ----------------------------------------------------------------


def _chart_name(reference: str) -> str:
    return reference.rstrip("/").rsplit("/", 1)[-1] if reference.startswith("oci://") else reference


def chart_releases(stack: RecordedStack, pins: Iterable[ChartPin] | None = None) -> list[ChartRelease]:
    """Every chart release of `stack`, values with secrets redacted, in registration order.

    `pins`: the charts that may be deployed (default: components/versions.py); any other is an error."""
    pins = list(Charts.all() if pins is None else pins)
    releases: list[ChartRelease] = []
    for resource in stack.resources:
        inputs = resource.redacted_inputs()
        if resource.is_chart:
            chart, version = _chart_name(str(inputs.get("chart"))), str(inputs.get("version"))
            release, namespace = str(inputs.get("name") or resource.name), str(inputs.get("namespace") or "default")
            values, delivery = inputs.get("values") or {}, "pulumi"
        elif resource.is_kubernetes_object and inputs.get("kind") == "Application":
            source = (inputs.get("spec") or {}).get("source") or {}
            if not source.get("chart"):
                continue
            helm = source.get("helm") or {}
            chart, version = str(source["chart"]), str(source.get("targetRevision"))
            release = str(helm.get("releaseName") or inputs["metadata"]["name"])
            namespace = str(((inputs.get("spec") or {}).get("destination") or {}).get("namespace") or "default")
            values, delivery = helm.get("valuesObject") or {}, "argocd"
        else:
            continue
        pin = find_pin(chart, version, pins)
        if pin is None:
            raise ChartRenderError([f"{resource.urn}: chart {chart} {version} is not pinned in components/versions.py"])
        releases.append(ChartRelease(release, pin, namespace, values, delivery, resource.urn))
    return releases


# --- API versions -----------------------------------------------------------------------------------


# --- rendering ----------------------------------------------------------------------------------------


# Helm's own manifest splitter (pkg/release/util/manifest.go SplitManifests): `---` followed by
# anything, even a comment on the same line (`---# Source ...`), starts a new document.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SEPARATOR = re.compile(r"(?:^|\s*\n)---\s*")


def _documents(text: str, cache: dict[str, list[dict[str, Any]]] | None = None, scope: str = "") -> list[dict[str, Any]]:
    """The objects of one rendered file. With `cache`, a text parsed before is not parsed again (the
    second rendering pass gets mostly identical files; its objects replace the first pass's)."""
    key = f"{scope}\0{text}"
    if cache is not None and key in cache:
        return cache[key]
    documents = (yaml.load(part, Loader=_LOADER) for part in _SEPARATOR.split(text) if part.strip())
    parsed = [d for d in documents if isinstance(d, dict) and d]
    if cache is not None:
        cache[key] = parsed
    return parsed


def _subchart_prefixes(paths: Iterable[str]) -> set[str]:
    """`metallb/charts/crds` for `metallb/charts/crds/templates/x.yaml`: the subcharts that rendered."""
    return {path.split("/templates/", 1)[0] for path in paths if "/templates/" in path}


def render_release(
    release: ChartRelease,
    chart_dir: Path,
    *,
    kubernetes_version: str,
    api_versions: Iterable[str],
    scopes: Mapping[tuple[str, str], str] | None = None,
    parse_cache: dict[str, list[dict[str, Any]]] | None = None,
) -> RenderedChart:
    """Render one release from its unpacked chart; raises ChartRenderError naming the chart."""
    import helm_python as helm
    from helm_python import _native

    rendered = RenderedChart(release)
    values = json.loads(json.dumps(dict(release.values)))
    options = {
        "name": release.release,
        "namespace": release.namespace,
        "revision": REVISION,
        "is_install": True,
        "kube_version": helm_kube_version(kubernetes_version),
        "api_versions": sorted(api_versions),
    }
    try:
        with helm.Chart.load(chart_dir) as chart:
            constraint = chart.metadata.get("kubeVersion")
            if constraint and not satisfies(str(constraint), kubernetes_version):
                # Helm's install action refuses it before rendering (pkg/action/install.go).
                raise ChartRenderError(
                    [
                        f"{release.label}: chart requires kubeVersion: {constraint} which is incompatible with "
                        f"Kubernetes {helm_kube_version(kubernetes_version)}"
                    ]
                )
            merged = chart.merge_values(values)
            chart.validate_schema(merged)
            missing = missing_dependencies(chart.metadata.get("dependencies") or (), chart.dependencies, merged)
            if missing:
                # helm.v4.Chart refuses it (offline/charts/dependencies.py); rendered here, it would lack their objects.
                raise ChartRenderError(
                    [
                        f"{release.label}: found in Chart.yaml and enabled by the values, but missing in charts/ "
                        f"directory: {', '.join(missing)} (a chart from its repository carries them; unpack them under "
                        "the chart's charts/ for a git export, docs/charts.md)"
                    ]
                )
            # Chart.render() does not expose the Kubernetes and API versions; helm_render (the C ABI
            # under it) takes them in its options (helm-c-sdk wrapper renderOptions).
            manifests: dict[str, str] = json.loads(
                _native.call_string("helm_render", chart._raw(), json.dumps(values), json.dumps(options))
            )
            crd_files = chart.crds
    except (helm.HelmError, KubeVersionError) as error:
        raise ChartRenderError([f"{release.label}: {error}"]) from None
    # NOTES.txt and other non-manifest files are not installed.
    manifests = {path: text for path, text in manifests.items() if path.endswith((".yaml", ".yml", ".tpl", ".json"))}
    try:
        parsed = {template: _documents(manifests[template], parse_cache, release.namespace) for template in sorted(manifests)}
    except yaml.YAMLError as error:
        raise ChartRenderError([f"{release.label}: rendered YAML does not parse: {error}"]) from None
    enabled = _subchart_prefixes(manifests)
    top = release.pin.chart
    for crd_file in crd_files:
        owner = crd_file["filename"].split("/crds/", 1)[0]
        if owner != top and owner not in enabled:
            continue  # the crds/ of a subchart its condition switched off
        for document in _documents(crd_file["data"], parse_cache):
            rendered.crds.append(document)
    all_scopes = dict(scopes or {})
    all_scopes.update(crd_scopes(rendered.crds))
    all_scopes.update(crd_scopes(d for documents in parsed.values() for d in documents if is_crd(d)))
    for template, documents in parsed.items():
        for cached in documents:
            # The parse cache hands both passes the same dicts: copy what is changed here, so that a
            # namespace given in the first pass (before a chart's CRD scopes were known) does not stay.
            metadata = dict(cached.get("metadata") or {})
            document = {**cached, "metadata": metadata}
            if is_namespaced(document, all_scopes) and not metadata.get("namespace"):
                metadata["namespace"] = release.namespace
            hook = (metadata.get("annotations") or {}).get(HOOK_ANNOTATION)
            if hook:
                events = tuple(e.strip() for e in str(hook).split(",") if e.strip())
                rendered.hooks.append(Hook(template, str(document.get("kind")), str(metadata.get("name")), events, document))
                continue
            rendered.objects.append(document)
    return rendered


def hook_errors(rendered: RenderedChart, known: Sequence[HookReplacement] = HOOKS) -> list[str]:
    """One error per hook `helm.v4.Chart` would drop that nothing replaces, naming the chart and the hook."""
    chart = rendered.release.pin.chart
    mine = [h for h in known if h.chart == chart]
    hint = "; hpcforge switches off " + "; ".join(h.hook.split(":", 1)[0] for h in mine) + " by values" if mine else ""
    return [
        f"{rendered.release.label}: hook {hook.describe()} would be dropped by helm.v4.Chart: switch it off by values "
        f"or replace it, and list it in components/chart_hooks.py{hint}"
        for hook in rendered.dropped_hooks()
        if not any(h.covers(chart, hook.template) for h in mine)
    ]


def render_stack(
    stack: RecordedStack,
    source: ChartSource,
    kubernetes_version: str,
    *,
    pins: Iterable[ChartPin] | None = None,
    extra_api_versions: Iterable[str] = (),
    only: Iterable[str] | None = None,
) -> RenderReport:
    """Render every chart release of `stack`; errors (render failures, dropped hooks) are collected.

    `extra_api_versions`: what the cluster serves beyond its built-in APIs and the stack's CRDs
    (`hpcforge:kubernetes.extraApiVersions`). `only`: render just these releases (by release name)."""
    releases = chart_releases(stack, pins)
    if only is not None:
        wanted = set(only)
        releases = [release for release in releases if release.release in wanted]
    errors: list[str] = []
    located: list[tuple[ChartRelease, Path]] = []
    for release in releases:
        try:
            located.append((release, source.locate(release.pin)))
        except ChartSourceError as error:
            errors.append(f"{release.label}: {error}")
    program_crds = [r.inputs for r in stack.kubernetes_objects() if is_crd(r.inputs)]
    base = builtin_api_versions(kubernetes_version) | set(extra_api_versions)

    parse_cache: dict[str, list[dict[str, Any]]] = {}

    def render_all(api_versions: set[str], scopes: Mapping[tuple[str, str], str]) -> tuple[list[RenderedChart], list[str]]:
        charts: list[RenderedChart] = []
        problems: list[str] = []
        for release, chart_dir in located:
            try:
                charts.append(
                    render_release(
                        release,
                        chart_dir,
                        kubernetes_version=kubernetes_version,
                        api_versions=api_versions,
                        scopes=scopes,
                        parse_cache=parse_cache,
                    )
                )
            except ChartRenderError as error:
                problems += error.messages
        return charts, problems

    # First pass: which CRDs the stack installs (they decide `.Capabilities.APIVersions.Has ...`).
    first, _ = render_all(base | crd_api_versions(program_crds), crd_scopes(program_crds))
    installed_crds = [*program_crds, *(d for c in first for d in c.installed if is_crd(d))]
    charts, problems = render_all(base | crd_api_versions(installed_crds), crd_scopes(installed_crds))
    errors += problems
    for rendered in charts:
        errors += hook_errors(rendered)
    return RenderReport(charts, errors)
