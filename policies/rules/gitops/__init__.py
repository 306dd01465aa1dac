"""GitOps and drift rules: what is deployed is pinned, reconciled and never silently ignored.

- helm-charts-pinned: every Helm chart (helm.v4.Chart, helm.v3.Release, Argo CD Helm source) has an
  exact version.
- git-revisions-pinned: every Argo CD Git source has a tag or commit (never HEAD; branches only
  where the config allows them).
- argocd-automated-sync: Argo CD Applications sync automatically with prune and selfHeal.
- argocd-ignore-differences-scoped: ignoreDifferences entries name fields, never a whole kind.
- ignore-changes-allow-listed: the `ignoreChanges` resource option only from the config's allow-list.
- stateful-resources-protected: volumes, databases, the directory and Slurm state are protected or
  retained.
- kubernetes-labels: every object hpcforge authors says who manages it and what it is part of.
- images-pinned: container images (pod templates, Slinky CRs, Helm values) pinned by tag or digest.

One module per family: pinning.py (charts, Git revisions, images), argocd.py (sync, ignoreDifferences), protection.py
(ignoreChanges, stateful resources) and labels.py.
"""

from __future__ import annotations

from .argocd import (
    ARGOCD_AUTOMATED_SYNC,
    ARGOCD_IGNORE_DIFFERENCES_SCOPED,
    IGNORE_DIFFERENCES_CM_PREFIX,
    AutomatedSyncConfig,
    IgnoreDifferencesConfig,
    check_argocd_automated_sync,
    check_argocd_ignore_differences_scoped,
)
from .labels import KUBERNETES_LABELS, REQUIRED_LABELS, LabelsConfig, check_kubernetes_labels
from .pinning import (
    COMMIT_PATTERN,
    EXACT_VERSION,
    GIT_REVISIONS_PINNED,
    HELM_CHARTS_PINNED,
    IMAGES_PINNED,
    TAG_PATTERN,
    ChartsPinnedConfig,
    GitRevisionsConfig,
    ImagesConfig,
    check_git_revisions_pinned,
    check_helm_charts_pinned,
    check_images_pinned,
    image_problem,
)
from .protection import (
    IGNORE_CHANGES_ALLOW_LISTED,
    PROMETHEUS_STACK_STORAGE,
    PROTECTION_ANNOTATION,
    STATEFUL_RESOURCES_PROTECTED,
    STATEFUL_TYPES,
    IgnoreChangesConfig,
    IgnoreChangesGrant,
    StatefulConfig,
    check_ignore_changes_allow_listed,
    check_stateful_resources_protected,
)

RULES = (
    HELM_CHARTS_PINNED,
    GIT_REVISIONS_PINNED,
    ARGOCD_AUTOMATED_SYNC,
    ARGOCD_IGNORE_DIFFERENCES_SCOPED,
    IGNORE_CHANGES_ALLOW_LISTED,
    STATEFUL_RESOURCES_PROTECTED,
    KUBERNETES_LABELS,
    IMAGES_PINNED,
)

__all__ = [
    "ARGOCD_AUTOMATED_SYNC",
    "ARGOCD_IGNORE_DIFFERENCES_SCOPED",
    "COMMIT_PATTERN",
    "EXACT_VERSION",
    "GIT_REVISIONS_PINNED",
    "HELM_CHARTS_PINNED",
    "IGNORE_CHANGES_ALLOW_LISTED",
    "IGNORE_DIFFERENCES_CM_PREFIX",
    "IMAGES_PINNED",
    "KUBERNETES_LABELS",
    "PROMETHEUS_STACK_STORAGE",
    "PROTECTION_ANNOTATION",
    "REQUIRED_LABELS",
    "RULES",
    "STATEFUL_RESOURCES_PROTECTED",
    "STATEFUL_TYPES",
    "TAG_PATTERN",
    "AutomatedSyncConfig",
    "ChartsPinnedConfig",
    "GitRevisionsConfig",
    "IgnoreChangesConfig",
    "IgnoreChangesGrant",
    "IgnoreDifferencesConfig",
    "ImagesConfig",
    "LabelsConfig",
    "StatefulConfig",
    "check_argocd_automated_sync",
    "check_argocd_ignore_differences_scoped",
    "check_git_revisions_pinned",
    "check_helm_charts_pinned",
    "check_ignore_changes_allow_listed",
    "check_images_pinned",
    "check_kubernetes_labels",
    "check_stateful_resources_protected",
    "image_problem",
]
