"""Every Helm hook of the charts hpcforge deploys, and what replaces it: the one place that knows.

`helm.v4.Chart` (the `pulumi` delivery mode) renders a chart like `helm template` and DROPS its
hooks (objects annotated `helm.sh/hook`): whatever a chart does in a hook must be switched off by
values and done another way, or the release is incomplete. Argo CD (the `argocd` mode) would run
them, but hpcforge deploys the same values in both modes, so a hook is switched off in both.

`ChartDeployer.deploy` merges `hook_values(pin)` into the values of every release (they win over
the layer's values), and the chart renderer (offline/charts/render.py) refuses a rendered hook that is not
listed here: a chart bump that adds a hook fails `offline render --render-charts` by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .versions import ChartPin, Charts


@dataclass(frozen=True)
class HookReplacement:
    """A hook of `chart`, switched off by `values` (or, where no value can, left to be dropped: `templates`),
    and what hpcforge does instead."""

    chart: str
    hook: str
    """What the hook does upstream (its template)."""
    values: Mapping[str, Any]
    """The chart values that switch it off (empty when none can)."""
    replaced_by: str
    """What does the hook's work under hpcforge."""
    templates: tuple[str, ...] = ()
    """Only for a hook no value switches off: its templates (`<chart>/templates/x.yaml`), whose hook objects
    helm.v4.Chart may drop because `replaced_by` does their work. Empty: the hook must not render at all."""

    def covers(self, chart: str, template: str) -> bool:
        """Whether a hook object rendered from `template` of `chart` is replaced (so dropping it is fine)."""
        return self.chart == chart and template in self.templates


HOOKS: tuple[HookReplacement, ...] = (
    HookReplacement(
        Charts.ARGO_CD.chart,
        "redis-secret-init: a pre-install Job (with its ServiceAccount, Role, RoleBinding) that creates the "
        "`argocd-redis` Secret (templates/redis-secret-init/)",
        {"redisSecretInit": {"enabled": False}},
        "the gitops layer creates the `argocd-redis` Secret (key `auth`) from a RandomPassword",
    ),
    HookReplacement(
        Charts.CERT_MANAGER.chart,
        "startupapicheck: a post-install Job (with its ServiceAccount, Role, RoleBinding) that waits until the "
        "webhook answers (templates/startupapicheck-*.yaml, hook annotations from values)",
        {"startupapicheck": {"enabled": False}},
        "Pulumi waits for the webhook Deployment to be ready (Argo CD: its health check)",
    ),
    HookReplacement(
        Charts.ARGO_WORKFLOWS.chart,
        "crd-install: a pre-install/pre-upgrade Job (with its ServiceAccount, ClusterRole, ClusterRoleBinding) that "
        "downloads and applies the full CRDs (templates/crds-install-job.yaml, when crds.full=true)",
        {"crds": {"install": True, "full": False}},
        "the chart's minimal CRDs (files/crds/minimal), rendered as ordinary objects",
    ),
    HookReplacement(
        Charts.GPU_OPERATOR.chart,
        "upgrade-crd: a pre-upgrade Job (with its ServiceAccount, ClusterRole, ClusterRoleBinding) that re-applies the "
        "CRDs (templates/upgrade_crd.yaml), and the cleanup-crd pre-delete Job (templates/cleanup_crd.yaml)",
        {"operator": {"upgradeCRD": False, "cleanupCRD": False}},
        "the chart's crds/ rendered as ordinary resources (pulumi) or applied by Argo CD: a chart bump updates them "
        "through the diff; CRDs are never deleted by an uninstall",
    ),
    HookReplacement(
        Charts.GPU_OPERATOR.chart,
        "node-feature-discovery prune: a post-delete Job (with its ServiceAccount, ClusterRole, ClusterRoleBinding) "
        "that removes NFD's labels from the nodes (charts/node-feature-discovery/templates/post-delete-job.yaml)",
        {"node-feature-discovery": {"postDeleteCleanup": False}},
        "nothing: NFD's node labels stay after an uninstall (harmless; a reinstall relabels the nodes)",
    ),
    HookReplacement(
        Charts.GPU_OPERATOR.chart,
        "cleanup-gpucluster: an unconditional pre-delete Job that deletes the chart-managed GPUCluster "
        "(templates/cleanup_gpucluster.yaml)",
        {"gpuCluster": {"deployCR": False}},
        "nothing to do: hpcforge deploys no GPUCluster (gpuCluster.deployCR stays false), so the Job is a no-op",
        templates=("gpu-operator/templates/cleanup_gpucluster.yaml",),
    ),
    HookReplacement(
        Charts.KUBE_PROMETHEUS_STACK.chart,
        "admission-webhooks patch: pre/post-install Jobs (with ServiceAccount, Role, ClusterRole and bindings) that "
        "create the prometheus-operator webhook's certificate and patch its caBundle "
        "(templates/prometheus-operator/admission-webhooks/job-patch/)",
        {"prometheusOperator": {"admissionWebhooks": {"certManager": {"enabled": True}}}},
        "cert-manager: a Certificate from the site's CA ClusterIssuer (observability layer's `certManager.issuerRef`), "
        "its CA injected into the webhook configurations by cainjector",
    ),
    HookReplacement(
        Charts.NETWORK_OPERATOR.chart,
        "upgrade-crd: a pre-install/pre-upgrade Job that applies the CRDs (templates/upgrade-crd-hook.yaml)",
        {"upgradeCRDs": False},
        "the chart's crds/ (and its subcharts') rendered as ordinary resources (pulumi) or applied by Argo CD",
    ),
    HookReplacement(
        Charts.NETWORK_OPERATOR.chart,
        "keep-ncp: an unconditional pre-install/pre-upgrade Job (with its ServiceAccount, ClusterRole, "
        "ClusterRoleBinding) that marks a NicClusterPolicy made by an old chart `helm.sh/resource-policy: keep` "
        "(templates/keep-ncp-hook.yaml)",
        {},
        "nothing to keep: the RDMA layer creates the NicClusterPolicy itself (never chart-made), so no chart upgrade "
        "can delete it",
        templates=("network-operator/templates/keep-ncp-hook.yaml",),
    ),
    HookReplacement(
        Charts.NETWORK_OPERATOR.chart,
        "sriov-network-operator pre-delete: a Job that deletes the `default` SriovOperatorConfig so the operator "
        "removes the webhook configurations it made (charts/sriov-network-operator/templates/pre-delete-webooks.yaml)",
        {"sriov-network-operator": {"sriovOperatorConfig": {"deploy": False}}},
        "the RDMA layer creates the `default` SriovOperatorConfig itself, depending on the chart: a destroy deletes it "
        "(and waits for it to be gone) while the operator still runs",
        templates=("network-operator/charts/sriov-network-operator/templates/pre-delete-webooks.yaml",),
    ),
)


def merge_values(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `override` merged in, mapping by mapping (override wins)."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_values(merged[key], value)
        else:
            merged[key] = value
    return merged


def hooks_of(chart: str) -> list[HookReplacement]:
    return [hook for hook in HOOKS if hook.chart == chart]


def hook_values(pin: ChartPin) -> dict[str, Any]:
    """The values that switch off every known hook of `pin`'s chart (empty for a chart without hooks)."""
    values: dict[str, Any] = {}
    for hook in hooks_of(pin.chart):
        values = merge_values(values, hook.values)
    return values


def with_hooks_off(pin: ChartPin, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` with `hook_values(pin)` merged in (the hook switches win)."""
    return merge_values(values, hook_values(pin))
