"""Rendered chart objects as the real engine registers them, and as files.

Under the real engine a `kubernetes:helm.sh/v4:Chart` is a remote component: the provider renders
the chart and registers each object as a resource of its own type (`kubernetes:apps/v1:Deployment`,
`kubernetes:core/v1:Secret`, `kubernetes:cert-manager.io/v1:Certificate`) with the Chart as its
parent, named `<chart resource name>:<namespace>/<object name>` (`<...>:<object name>` when it is
cluster-scoped; pulumi-kubernetes yaml/v2, the default `resourcePrefix` being the Chart's name). The
Chart itself is registered WITHOUT inputs: a policy pack never sees its values, only the objects.
`engine_view` turns a recorded stack into that shape; `offline check --render-charts` sends it.

In `argocd` delivery the objects are applied by Argo CD, not by Pulumi: the packs see the
Application (and its values) as before; the rendered objects go to the files, and `offline check
--render-charts` judges them by the Application's AppProject (offline/admission/verdicts.py).
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

from ..program.engine import SECRET_SIG, SIG_KEY, UNKNOWN, RecordedResource, RecordedStack
from .render import RenderedChart, RenderReport

SECRET_FIELDS = ("data", "stringData")
"""pulumi-kubernetes marks these fields of a `v1 Secret` secret whatever the chart says."""


def chart_object_type(document: dict[str, Any]) -> str:
    """`apps/v1` + `Deployment` -> `kubernetes:apps/v1:Deployment`; the core group is `core/v1`."""
    api_version = str(document.get("apiVersion") or "")
    if "/" not in api_version:
        api_version = f"core/{api_version}"
    return f"kubernetes:{api_version}:{document.get('kind')}"


# pulumi-kubernetes' naming, read in pulumi/pulumi-kubernetes at commit 94977969d (v4.32.0+27, the
# newest snapshot the `fetch` tool holds; the v4.34.2 tag pinned in requirements.txt is not in it):
# - provider/pkg/provider/helm/v4/chart.go:183-187: the prefix is the Chart's `resourcePrefix` input,
#   else the Chart resource's name; :291 `yaml/v2.Normalize` gives namespaced objects without one the
#   release namespace (offline/charts/render.py does the same); :302 the Chart is every object's parent.
# - provider/pkg/provider/yaml/v2/yaml.go:346-352 (`register`): `<name>`, `<namespace>/<name>` when the
#   object has a namespace, then `<prefix>:` in front; :390-395 a `v1/Secret`'s data and stringData
#   marked secret.
# - sdk/go/kubernetes/yaml/v2/kinds.go:729-731 (`v1/Secret` -> `kubernetes:core/v1:Secret`, likewise every
#   core kind) and :1478-1480 (any other kind: `kubernetes:<apiVersion>:<kind>`): `chart_object_type`.
# - chart.go:173-179: while any input is unknown (a preview), the provider renders nothing and
#   registers no object under the Chart ("Input properties have unknown values. Preview is incomplete.").


def chart_resource_prefix(chart: RecordedResource) -> str:
    """The prefix of the Chart's object names: its `resourcePrefix` input, else its resource name."""
    prefix = chart.inputs.get("resourcePrefix")
    return prefix if isinstance(prefix, str) else chart.name


def has_unknown(value: Any) -> bool:
    """Whether a recorded input (wire form) holds a value unknown during the preview."""
    if isinstance(value, dict):
        return any(has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(has_unknown(v) for v in value)
    return isinstance(value, str) and value == UNKNOWN


def chart_object_name(prefix: str, document: dict[str, Any]) -> str:
    metadata = document.get("metadata") or {}
    namespace, name = metadata.get("namespace"), metadata.get("name")
    return f"{prefix}:{namespace}/{name}" if namespace else f"{prefix}:{name}"


def _child_urn(parent_urn: str, type_: str, name: str) -> str:
    head, project, qualified, _ = parent_urn.split("::", 3)
    return f"{head}::{project}::{qualified}${type_}::{name}"


def _wire(document: dict[str, Any]) -> dict[str, Any]:
    """The object in wire form: a Secret's data marked secret, as the provider marks it."""
    wire = copy.deepcopy(document)
    if document.get("kind") == "Secret" and document.get("apiVersion") == "v1":
        for key in SECRET_FIELDS:
            if key in wire:
                wire[key] = {SIG_KEY: SECRET_SIG, "value": wire[key]}
    return wire


def object_resources(rendered: RenderedChart, chart: RecordedResource) -> list[RecordedResource]:
    """The resources `helm.v4.Chart` registers for `rendered`: CRDs first, then the templates."""
    resources = []
    for document in rendered.installed:
        type_ = chart_object_type(document)
        name = chart_object_name(chart_resource_prefix(chart), document)
        secret_paths = [key for key in SECRET_FIELDS if document.get("kind") == "Secret" and key in document]
        resources.append(
            RecordedResource(
                urn=_child_urn(chart.urn, type_, name),
                type=type_,
                name=name,
                parent=chart.urn,
                custom=True,
                remote=False,
                provider=chart.provider,
                inputs=copy.deepcopy(document),
                raw_inputs=_wire(document),
                secret_paths=secret_paths,
                depends_on=list(chart.depends_on),
            )
        )
    return resources


def engine_view(stack: RecordedStack, report: RenderReport) -> RecordedStack:
    """`stack` as the real engine sees it in a preview: every pulumi-delivered Chart registered without
    inputs and followed by its rendered objects, none while any of its inputs is unknown (the provider
    then renders nothing); Application-delivered charts are left as they are."""
    by_urn = {c.release.urn: c for c in report.charts if c.release.delivery == "pulumi"}
    resources: list[RecordedResource] = []
    for resource in stack.resources:
        rendered = by_urn.get(resource.urn) if resource.is_chart else None
        if rendered is None:
            resources.append(resource)
            continue
        resources.append(dataclasses.replace(resource, inputs={}, raw_inputs={}, secret_paths=[]))
        if not has_unknown(resource.raw_inputs):
            resources += object_resources(rendered, resource)
    return dataclasses.replace(stack, resources=resources)


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", part)


def chart_documents(report: RenderReport) -> list[tuple[str, dict[str, Any]]]:
    """(relative path, object) of every rendered chart object: `charts/<release>/<namespace>/<Kind>-<name>.yaml`,
    CRDs under `charts/<release>/crds/`, hooks (not installed by helm.v4.Chart) under `charts/<release>/hooks/`."""
    documents: list[tuple[str, dict[str, Any]]] = []
    for chart in report.charts:
        base = f"charts/{_safe(chart.release.release)}"
        for document in chart.crds:
            documents.append((_document_path(base, "crds", document), document))
        for document in chart.objects:
            namespace = (document.get("metadata") or {}).get("namespace") or "_cluster"
            documents.append((_document_path(base, _safe(namespace), document), document))
        for hook in chart.hooks:
            documents.append((_document_path(base, "hooks", dict(hook.document)), dict(hook.document)))
    return documents


def _document_path(base: str, folder: str, document: dict[str, Any]) -> str:
    name = (document.get("metadata") or {}).get("name") or "unnamed"
    return f"{base}/{folder}/{_safe(str(document.get('kind')))}-{_safe(str(name))}.yaml"
