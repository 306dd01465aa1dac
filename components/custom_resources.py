"""Objects of kinds Pulumi has no typed class for: custom resources (and any kind with top-level fields besides
`spec`), registered from their parts. `custom_resource` is what `Scope.custom` (components/k8s/scope.py), the one way
a layer makes one, and the chart deployer's Argo CD Applications (components/charts.py) register through; nothing
else constructs them (tests/test_layout.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .context import DeployContext, Stateful


def custom_resource(
    ctx: DeployContext,
    parent: pulumi.Resource,
    api_version: str,
    kind: str,
    name: str,
    spec: Mapping[str, Any] | None,
    *,
    namespace: str | None,
    component: str,
    app: str | None = None,
    resource_name: str | None = None,
    depends_on: Sequence[pulumi.Resource] = (),
    stateful: Stateful | None = None,
    annotations: Mapping[str, str] | None = None,
    extra_labels: Mapping[str, str] | None = None,
    fields: Mapping[str, Any] | None = None,
    immutable: Sequence[str] = (),
) -> pulumi.CustomResource:
    """An object of a custom resource `kind` (or any kind Pulumi has no class for); layers make one through
    `Scope.custom`.

    Registered as `resource_name`, by default `<namespace>/<name>` (`name` when cluster-scoped: `namespace` None).
    `stateful` protects it (context.py); `fields`: top-level fields besides `spec` (e.g. a WorkloadPriorityClass's
    `value`), which `apiextensions.CustomResource` cannot carry; `immutable`: fields the API server refuses to change
    in place, so that a change there replaces the object, deleting the old one first (the new one has its name).
    """
    metadata = ctx.meta(
        name,
        component,
        namespace,
        app=app,
        annotations=dict(annotations) if annotations else None,
        extra_labels=dict(extra_labels) if extra_labels else None,
        stateful=stateful,
    )
    options = ctx.opts(
        parent,
        depends_on=list(depends_on),
        stateful=stateful,
        replace_on_changes=list(immutable) or None,
        delete_before_replace=True if immutable else None,
    )
    registered = resource_name or (name if namespace is None else f"{namespace}/{name}")
    if fields:
        body = {"spec": dict(spec)} if spec is not None else {}
        manifest = {"apiVersion": api_version, "kind": kind, "metadata": metadata, **body, **fields}
        return KubernetesObject(registered, manifest, opts=options)
    return k8s.apiextensions.CustomResource(
        registered, api_version=api_version, kind=kind, metadata=metadata, spec=spec, opts=options
    )


class KubernetesObject(pulumi.CustomResource):
    """Any Kubernetes object from its manifest, for kinds with top-level fields besides `spec`
    (e.g. Kueue's WorkloadPriorityClass has `value`), which `apiextensions.CustomResource` cannot express."""

    def __init__(self, resource_name: str, manifest: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None) -> None:
        from pulumi_kubernetes import _utilities

        api_version = str(manifest["apiVersion"])
        token_version = api_version if "/" in api_version else f"core/{api_version}"
        options = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=_utilities.get_version()))
        super().__init__(f"kubernetes:{token_version}:{manifest['kind']}", resource_name, dict(manifest), options)
