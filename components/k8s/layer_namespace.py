"""`LayerNamespace`: the namespace a layer owns (Pod Security labels, default deny and the layer's allows,
see resources.Namespace), the `Scope` of the objects the layer puts in it, and the charts it deploys there.

A layer names the namespace once; its Secrets, ConfigMaps and Certificates then come from `scope` (they wait
for the namespace and its NetworkPolicies) and its charts from `chart`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from ..charts import ChartDeployer
from ..context import DeployContext
from ..versions import ChartPin
from .resources import Allow, Namespace, PodSecurityLevel
from .scope import Scope


class LayerNamespace:
    def __init__(
        self,
        ctx: DeployContext,
        parent: pulumi.Resource,
        name: str,
        *,
        component: str,
        app: str | None = None,
        pod_security: PodSecurityLevel = "restricted",
        allows: Sequence[Allow] = (),
        depends_on: Sequence[pulumi.Resource] = (),
        charts: ChartDeployer | None = None,
        same_namespace: bool = True,
        extra_labels: Mapping[str, str] | None = None,
    ) -> None:
        self.namespace = Namespace(
            ctx,
            name,
            component=component,
            parent=parent,
            pod_security=pod_security,
            allows=allows,
            depends_on=depends_on,
            same_namespace=same_namespace,
            extra_labels=extra_labels,
        )
        self.scope = Scope(ctx, parent, name, component, app=app, depends_on=tuple(self.namespace.ready))
        self._charts = charts

    @property
    def name(self) -> str:
        return self.namespace.name

    @property
    def ready(self) -> list[pulumi.Resource]:
        """The namespace and its NetworkPolicies."""
        return self.namespace.ready

    def chart(
        self,
        release: str,
        pin: ChartPin,
        values: Mapping[str, Any],
        *,
        depends_on: Sequence[pulumi.Resource] | None = None,
        component: str = "chart",
        ignore_differences: Sequence[Mapping[str, Any]] = (),
    ) -> pulumi.Resource:
        """Release `release` of chart `pin` in this namespace, after `depends_on` (by default the namespace and
        its NetworkPolicies), through the layer's ChartDeployer (`component` and `ignore_differences`: the
        Argo CD Application's label and the fields it leaves alone, see ChartDeployer.deploy)."""
        if self._charts is None:
            raise ValueError(f"namespace {self.name!r} was made without a ChartDeployer")
        return self._charts.deploy(
            release,
            pin,
            self.name,
            values,
            parent=self.scope.parent,
            depends_on=self.ready if depends_on is None else depends_on,
            ignore_differences=ignore_differences,
            component=component,
        )
