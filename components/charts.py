"""The single choke point through which every third-party Helm chart is deployed.

Two delivery modes, chosen per stack (`hpcforge:delivery`):

- `pulumi`: a `kubernetes.helm.v4.Chart`. Rendered client-side, each object is a Pulumi resource,
  so `pulumi preview --refresh` reports drift object by object. Helm hooks are dropped: every
  chart's hooks are replaced by values or objects of our own (see the layer modules).
- `argocd`: an Argo CD `Application` with the same chart, version and values (`helm.valuesObject`),
  automated sync with prune and self-heal, in an `AppProject` that allows exactly the repositories
  and namespaces of the planned charts. Argo CD repairs drift continuously.

Every (chart, release, namespace) must be planned up front (`ChartUse`), so that the AppProject
lists exactly what the Applications need and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .chart_hooks import with_hooks_off
from .chart_security import with_security
from .context import DeployContext
from .custom_resources import custom_resource
from .versions import ChartPin

IN_CLUSTER = "https://kubernetes.default.svc"
ARGOCD_NAMESPACE = "argocd"
ARGO_API = "argoproj.io/v1alpha1"
"""The API version of Argo CD's Application and AppProject (and of Argo Workflows' objects)."""
PLATFORM_PROJECT = "hpcforge-platform"


@dataclass(frozen=True)
class ChartUse:
    """A planned release of a chart: its release name and target namespace."""

    release: str
    pin: ChartPin
    namespace: str


@dataclass(frozen=True)
class SyncRetry:
    limit: int = 5
    duration: str = "5s"
    factor: int = 2
    max_duration: str = "3m"


def application_spec(
    use: ChartUse,
    values: Mapping[str, Any],
    *,
    project: str,
    retry: SyncRetry,
    ignore_differences: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The Argo CD Application spec that delivers `use` with `values` (pure: tested directly)."""
    spec: dict[str, Any] = {
        "project": project,
        "source": {
            "repoURL": use.pin.argocd_repo_url,
            "chart": use.pin.chart,
            "targetRevision": use.pin.version,
            "helm": {"releaseName": use.release, "valuesObject": dict(values)},
        },
        "destination": {"server": IN_CLUSTER, "namespace": use.namespace},
        "syncPolicy": {
            "automated": {"prune": True, "selfHeal": True},
            "syncOptions": ["CreateNamespace=true", "ServerSideApply=true"],
            "retry": {
                "limit": retry.limit,
                "backoff": {"duration": retry.duration, "factor": retry.factor, "maxDuration": retry.max_duration},
            },
        },
    }
    if ignore_differences:
        spec["ignoreDifferences"] = [dict(entry) for entry in ignore_differences]
        # Without it a sync (a chart bump, a self-heal of another field) applies the ignored fields again.
        spec["syncPolicy"]["syncOptions"].append("RespectIgnoreDifferences=true")
    return spec


WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"


def application_wait_conditions(target_revision: str) -> list[str]:
    """What `pulumi up` waits for on an Application: Argo CD has synced `target_revision` and the
    release is healthy.

    Health alone is satisfied by the old status during an upgrade (the Application stays Healthy
    on the previous version until Argo CD refreshes and syncs). Argo CD's ApplicationStatus
    (pkg/apis/application/v1alpha1/types.go) records the revision the live state was compared
    with (`status.sync.revision`, with `status.sync.status` Synced when it matches) and the last
    sync operation (`status.operationState.phase`, `.syncResult.revision`); for a Helm source the
    revision is the chart version, here the exact pinned `targetRevision`.
    """
    return [
        f"jsonpath={{.status.sync.revision}}={target_revision}",
        "jsonpath={.status.sync.status}=Synced",
        f"jsonpath={{.status.operationState.syncResult.revision}}={target_revision}",
        "jsonpath={.status.operationState.phase}=Succeeded",
        "jsonpath={.status.health.status}=Healthy",
    ]


def application_wait_for(target_revision: str) -> str:
    """The `pulumi.com/waitFor` value: a JSON array of conditions, which pulumi-kubernetes requires
    ALL of (provider/pkg/metadata/overrides.go `ReadyCondition`; documented in the provider's
    CHANGELOG for 4.18.0: "A string containing a JSON array of multiple `jsonpath=` and
    `condition=` expressions"). Each `jsonpath={path}=value` is split on a single `=`
    (provider/pkg/jsonpath/jsonpath.go `Parse`), so a revision must not contain one."""
    if "=" in target_revision.replace("==", ""):
        raise ValueError(f"target revision {target_revision!r} contains '=': pulumi.com/waitFor cannot express it")
    return json.dumps(application_wait_conditions(target_revision))


def project_spec(uses: Iterable[ChartUse], description: str) -> dict[str, Any]:
    """An AppProject that allows exactly the repositories and namespaces of `uses`."""
    uses = list(uses)
    repos = sorted({use.pin.argocd_repo_url for use in uses})
    namespaces = sorted({use.namespace for use in uses})
    return {
        "description": description,
        "sourceRepos": repos,
        "destinations": [{"server": IN_CLUSTER, "namespace": ns} for ns in namespaces],
        # Platform charts install CRDs, cluster roles and webhooks.
        "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
    }


class ChartDeployer:
    """Deploys planned charts in the stack's delivery mode."""

    def __init__(
        self,
        ctx: DeployContext,
        planned: Sequence[ChartUse],
        *,
        mode: str | None = None,
        project: str = PLATFORM_PROJECT,
        retry: SyncRetry = SyncRetry(),
        argocd_ready: Sequence[pulumi.Resource] = (),
    ) -> None:
        self._ctx = ctx
        self._planned = {(use.release, use.namespace): use for use in planned}
        self.mode = mode or ctx.delivery
        self._project = project
        self._retry = retry
        self._argocd_ready = list(argocd_ready)

    def with_argocd(self, argocd_ready: Sequence[pulumi.Resource]) -> ChartDeployer:
        """The same plan, delivering through Argo CD once `argocd_ready` (chart, AppProject) exist."""
        return ChartDeployer(
            self._ctx,
            list(self._planned.values()),
            mode=self._ctx.delivery,
            project=self._project,
            retry=self._retry,
            argocd_ready=argocd_ready,
        )

    def deploy(
        self,
        release: str,
        pin: ChartPin,
        namespace: str,
        values: Mapping[str, Any],
        *,
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource | None] = (),
        ignore_differences: Sequence[Mapping[str, Any]] = (),
        component: str = "chart",
    ) -> pulumi.Resource:
        use = self._planned.get((release, namespace))
        if use is None or use.pin != pin:
            raise ValueError(
                f"chart release {release!r} ({pin.chart} {pin.version}) in namespace {namespace!r} was not planned; "
                "add it to the layer's CHARTS so the AppProject allows it"
            )
        # Security contexts the charts lack (chart_security.py), under the layer's values; hooks that
        # helm.v4.Chart would drop switched off over them, for every chart (chart_hooks.py).
        values = with_hooks_off(pin, with_security(pin, values))
        if self.mode == "argocd":
            return self._application(use, values, parent, depends_on, ignore_differences, component)
        return self._chart(use, values, parent, depends_on)

    def _chart(
        self,
        use: ChartUse,
        values: Mapping[str, Any],
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource | None],
    ) -> pulumi.Resource:
        pin = use.pin
        return k8s.helm.v4.Chart(
            use.release,
            chart=pin.oci_reference if pin.is_oci else pin.chart,
            version=pin.version,
            namespace=use.namespace,
            repository_opts=None if pin.is_oci else k8s.helm.v4.RepositoryOptsArgs(repo=pin.repository),
            values=dict(values),
            opts=self._ctx.opts(parent, depends_on=list(depends_on)),
        )

    def _application(
        self,
        use: ChartUse,
        values: Mapping[str, Any],
        parent: pulumi.Resource,
        depends_on: Sequence[pulumi.Resource | None],
        ignore_differences: Sequence[Mapping[str, Any]],
        component: str,
    ) -> pulumi.Resource:
        annotations = {
            # Make `pulumi up` wait until Argo CD has synced THIS version and reports it healthy, so that
            # hpcforge's own custom resources (issuers, CRs) are created only once their CRDs and
            # webhooks exist, and an upgrade is not taken as done on the previous version's status.
            WAIT_FOR_ANNOTATION: application_wait_for(use.pin.version),
        }
        return custom_resource(
            self._ctx,
            parent,
            ARGO_API,
            "Application",
            use.release,
            application_spec(use, values, project=self._project, retry=self._retry, ignore_differences=ignore_differences),
            namespace=ARGOCD_NAMESPACE,
            component=component,
            app=use.pin.chart,
            annotations=annotations,
            extra_labels={"app.kubernetes.io/version": use.pin.version.lstrip("v")},
            depends_on=[d for d in (*self._argocd_ready, *depends_on) if d is not None],
        )
