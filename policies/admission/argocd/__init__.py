"""Argo CD AppProject rules, as Argo CD 3.4.4 computes them, for an Application and every object it
would sync.

Reproduced from argo-cd v3.4.4:
- pkg/apis/application/v1alpha1/app_project_types.go: `IsSourcePermitted` (sourceRepos, globs with
  `/` as separator, `!` negation), `isDestinationMatched` / `IsDestinationPermitted` (server or name,
  and namespace, globs with `!` negation), `IsGroupKindNamePermitted` (namespace/cluster resource
  white- and blacklists), `globMatch`.
- pkg/apis/application/v1alpha1/types.go: `isResourceInList`, `isNamedResourceInList` (Go
  `filepath.Match` on group, kind and name).
- util/argo/argo.go `ValidatePermissions`: the Application's own source and destination checks and
  their messages (an Application that fails them never syncs anything).
- controller/sync.go `validateSyncPermissions`: each object's group/kind, then for namespaced objects
  the object's namespace as a destination ("namespace X is not permitted in project 'P'"); one refused
  object makes the whole sync fail.
- util/git/git.go `NormalizeGitURL`: repository URLs compared lower-cased, `.git` trimmed, scp-style
  SSH URLs rewritten.
- The in-cluster destination: server `https://kubernetes.default.svc` is the cluster named
  `in-cluster` (util/db/cluster.go).
Globs are gobwas/glob (util/glob/glob.go): `*` (not across a separator), `**`, `?`, `[...]`, `[!...]`,
`{a,b}`.

`PermitOnlyProjectScopedClusters` is not modelled: hpcforge deploys to the in-cluster destination.

One module per job: appproject.py (the rules), verdicts.py (every Application of a set of objects) and family.py
(the admission family and its rule).
"""

from __future__ import annotations

from .appproject import (
    IN_CLUSTER_NAME,
    IN_CLUSTER_SERVER,
    REPRODUCES,
    Destination,
    Refusal,
    application_repos,
    check_application,
    check_application_sync,
    check_sync_object,
    destination_cluster,
    glob_match,
    gobwas_match,
    is_deny_pattern,
    is_destination_matched,
    is_group_kind_name_permitted,
    is_namespaced,
    is_source_permitted,
    normalize_git_url,
    scopes_from,
)
from .family import ARGOCD_APPPROJECT_ADMISSION, FAMILY, AppProjectAdmissionConfig, judge_appprojects
from .verdicts import ApplicationVerdict, appproject_verdicts

__all__ = [
    "ARGOCD_APPPROJECT_ADMISSION",
    "FAMILY",
    "IN_CLUSTER_NAME",
    "IN_CLUSTER_SERVER",
    "REPRODUCES",
    "AppProjectAdmissionConfig",
    "ApplicationVerdict",
    "Destination",
    "Refusal",
    "application_repos",
    "appproject_verdicts",
    "check_application",
    "check_application_sync",
    "check_sync_object",
    "destination_cluster",
    "glob_match",
    "gobwas_match",
    "is_deny_pattern",
    "is_destination_matched",
    "is_group_kind_name_permitted",
    "is_namespaced",
    "is_source_permitted",
    "judge_appprojects",
    "normalize_git_url",
    "scopes_from",
]
