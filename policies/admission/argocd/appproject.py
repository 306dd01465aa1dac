"""The AppProject rules themselves, as read in argo-cd (the package's docstring says where)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...rules.access import get, items, mapping, text
from ...rules.podtemplates import display, group_of, kind_of, name_of, namespace_of
from ..family import Pin

REPRODUCES = Pin("argo-cd", "10.1.1", ("Charts.ARGO_CD",), "argoproj/argo-cd v3.4.4, the app version of chart argo-cd 10.1.1")
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""


IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
IN_CLUSTER_NAME = "in-cluster"

# Kinds that are cluster-scoped in Kubernetes 1.33 and in the CRDs hpcforge uses (../shared/crds
# `scope: Cluster`). Anything else is taken as namespaced unless a `namespaced` callable says otherwise.
CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("networking.k8s.io", "IngressClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
        ("cert-manager.io", "ClusterIssuer"),
        ("kueue.x-k8s.io", "ClusterQueue"),
        ("kueue.x-k8s.io", "ResourceFlavor"),
        ("kueue.x-k8s.io", "Cohort"),
        ("kueue.x-k8s.io", "Topology"),
        ("kueue.x-k8s.io", "AdmissionCheck"),
        ("kueue.x-k8s.io", "WorkloadPriorityClass"),
        ("argoproj.io", "ClusterWorkflowTemplate"),
        ("metallb.io", "Community"),
        ("nvidia.com", "ClusterPolicy"),
        ("mellanox.com", "NicClusterPolicy"),
        ("monitoring.coreos.com", "ClusterMonitoringRule"),
    }
)


def is_namespaced(group: str, kind: str) -> bool:
    return (group, kind) not in CLUSTER_SCOPED


def scopes_from(objects: Iterable[Mapping[str, Any]]) -> Callable[[str, str], bool]:
    """`is_namespaced`, told by the CustomResourceDefinitions among `objects` (`spec.scope`)."""
    declared: dict[tuple[str, str], bool] = {}
    for obj in objects:
        if group_of(obj) == "apiextensions.k8s.io" and kind_of(obj) == "CustomResourceDefinition":
            group, kind = text(get(obj, "spec", "group")), text(get(obj, "spec", "names", "kind"))
            if group and kind:
                declared[(group, kind)] = get(obj, "spec", "scope") != "Cluster"
    return lambda group, kind: declared.get((group, kind), is_namespaced(group, kind))


# --- globs ----------------------------------------------------------------------------------------


_COMPILED: dict[tuple[str, str], re.Pattern[str] | None] = {}


def _glob_regex(pattern: str, separator: str) -> re.Pattern[str] | None:
    """gobwas/glob syntax as a regular expression (None when the pattern does not compile), cached."""
    key = (pattern, separator)
    if key not in _COMPILED:
        _COMPILED[key] = _compile_glob(pattern, separator)
    return _COMPILED[key]


def _compile_glob(pattern: str, separator: str) -> re.Pattern[str] | None:  # noqa: PLR0912 (one branch per element of the glob syntax)
    sep = re.escape(separator) if separator else ""
    out: list[str] = []
    i = 0
    depth = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "*":
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
                continue
            out.append(f"[^{sep}]*" if sep else ".*")
        elif ch == "?":
            out.append(f"[^{sep}]" if sep else ".")
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                return None
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body}]")
            i = end + 1
            continue
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    if depth:
        return None
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error:
        return None


def gobwas_match(pattern: str, value: str, separator: str = "") -> bool:
    compiled = _glob_regex(pattern, separator)
    return compiled is not None and compiled.fullmatch(value) is not None


def is_deny_pattern(pattern: str) -> bool:
    return pattern.startswith("!")


def glob_match(pattern: str, value: str, allow_negation: bool, separator: str = "") -> bool:
    """app_project_types.go globMatch."""
    if allow_negation and is_deny_pattern(pattern):
        return not gobwas_match(pattern[1:], value, separator)
    if pattern == "*":
        return True
    return gobwas_match(pattern, value, separator)


_SSH_URL = re.compile(r"^(ssh://)?([^/:]*?)@[^@]+$")


def normalize_git_url(repo: str) -> str:
    """util/git/git.go NormalizeGitURL."""
    repo = repo.strip().lower()
    if _SSH_URL.match(repo) and not repo.startswith("ssh://"):
        repo = "ssh://" + repo.replace(":", "/", 1)
    repo = repo.removesuffix(".git")
    return repo.removeprefix("ssh://")


# --- the project's rules --------------------------------------------------------------------------


def is_source_permitted(project: Mapping[str, Any], repo_url: str) -> bool:
    """IsSourcePermitted: some sourceRepos pattern matches, and no `!` pattern excludes it."""
    src = normalize_git_url(repo_url)
    matched_any = False
    for pattern in items(get(project, "spec", "sourceRepos")):
        if not isinstance(pattern, str):
            continue
        normalized = "!" + normalize_git_url(pattern[1:]) if is_deny_pattern(pattern) else normalize_git_url(pattern)
        if glob_match(normalized, src, True, "/"):
            matched_any = True
        elif is_deny_pattern(normalized):
            return False
    return matched_any


@dataclass(frozen=True)
class Destination:
    server: str
    name: str
    namespace: str


def destination_cluster(destination: Mapping[str, Any]) -> tuple[str, str]:
    """(server, name) of an Application's destination cluster; only the in-cluster one is known."""
    server, name = text(destination.get("server")) or "", text(destination.get("name")) or ""
    if server == IN_CLUSTER_SERVER and not name:
        name = IN_CLUSTER_NAME
    if name == IN_CLUSTER_NAME and not server:
        server = IN_CLUSTER_SERVER
    return server, name


def is_destination_matched(project: Mapping[str, Any], dst: Destination) -> bool:
    """isDestinationMatched, as in argo-cd v3.4.4 (the operator precedence of its `case` kept)."""
    matched_any = False
    for item in items(get(project, "spec", "destinations")):
        item_name = text(get(item, "name")) or ""
        item_server = text(get(item, "server")) or ""
        item_namespace = text(get(item, "namespace")) or ""
        name_matched = dst.name != "" and glob_match(item_name, dst.name, True)
        server_matched = dst.server != "" and glob_match(item_server, dst.server, True)
        namespace_matched = glob_match(item_namespace, dst.namespace, True)
        matched = (server_matched or name_matched) and namespace_matched
        if matched:
            matched_any = True
        elif (not name_matched and is_deny_pattern(item_name)) or (  # noqa: SIM114 (upstream's switch, case by case)
            not server_matched and is_deny_pattern(item_server) and namespace_matched
        ):
            return False
        elif not namespace_matched and is_deny_pattern(item_namespace) and server_matched:
            return False
    return matched_any


def _in_list(group: str, kind: str, name: str | None, entries: list[Any]) -> bool:
    """isResourceInList (name None) / isNamedResourceInList: filepath.Match on kind, group, name."""
    for entry in entries:
        body = mapping(entry)
        if not fnmatch.fnmatchcase(kind, str(body.get("kind", ""))):
            continue
        if not fnmatch.fnmatchcase(group, str(body.get("group", ""))):
            continue
        item_name = text(body.get("name")) or ""
        if name is None or item_name == "" or fnmatch.fnmatchcase(name, item_name):
            return True
    return False


def is_group_kind_name_permitted(project: Mapping[str, Any], group: str, kind: str, name: str, namespaced: bool) -> bool:
    """IsGroupKindNamePermitted: a namespaced kind needs no whitelist unless one is set (an empty
    list allows nothing); a cluster-scoped kind must be whitelisted. Blacklists win."""
    spec = mapping(project.get("spec"))
    if namespaced:
        white, black = spec.get("namespaceResourceWhitelist"), items(spec.get("namespaceResourceBlacklist"))
        whitelisted = white is None or (bool(items(white)) and _in_list(group, kind, None, items(white)))
        return whitelisted and not (black and _in_list(group, kind, None, black))
    white_c, black_c = items(spec.get("clusterResourceWhitelist")), items(spec.get("clusterResourceBlacklist"))
    whitelisted = bool(white_c) and _in_list(group, kind, name, white_c)
    return whitelisted and not (black_c and _in_list(group, kind, name, black_c))


# --- an Application and what it syncs -------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """Why Argo CD refuses an Application (`where` is `application`) or one object of its sync."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def application_repos(application: Mapping[str, Any]) -> list[str]:
    spec = mapping(application.get("spec"))
    if isinstance(spec.get("sources"), list) and spec.get("sources"):
        return [text(get(s, "repoURL")) or "" for s in items(spec.get("sources"))]
    return [text(get(spec, "source", "repoURL")) or ""]


def check_application(project: Mapping[str, Any], application: Mapping[str, Any]) -> list[Refusal]:
    """util/argo/argo.go ValidatePermissions: the Application's sources and destination."""
    project_name = name_of(project)
    refusals: list[Refusal] = []
    if text(get(application, "spec", "project")) not in (project_name, None) and project_name:
        refusals.append(Refusal("application", f"uses project {get(application, 'spec', 'project')!r}, not {project_name!r}"))
    for repo in application_repos(application):
        if not is_source_permitted(project, repo):
            refusals.append(Refusal("application", f"application repo {repo} is not permitted in project '{project_name}'"))
    destination = mapping(get(application, "spec", "destination"))
    server, name = destination_cluster(destination)
    namespace = text(destination.get("namespace")) or ""
    if not is_destination_matched(project, Destination(server, name, namespace)):
        shown = text(destination.get("name")) or server
        refusals.append(
            Refusal(
                "application",
                f"application destination server '{shown}' and namespace '{namespace}' do not match any of the allowed "
                f"destinations in project '{project_name}'",
            )
        )
    return refusals


def check_sync_object(
    project: Mapping[str, Any],
    application: Mapping[str, Any],
    obj: Mapping[str, Any],
    namespaced: Callable[[str, str], bool] = is_namespaced,
) -> list[Refusal]:
    """controller/sync.go validateSyncPermissions for one object of the sync. A namespaced object
    without a namespace is applied in the Application's destination namespace."""
    project_name = name_of(project)
    group, kind = group_of(obj), kind_of(obj)
    scoped = namespaced(group, kind)
    if not is_group_kind_name_permitted(project, group, kind, name_of(obj), scoped):
        return [Refusal(display(obj), f"resource {group}:{kind} is not permitted in project {project_name}")]
    if scoped:
        destination = mapping(get(application, "spec", "destination"))
        server, name = destination_cluster(destination)
        namespace = namespace_of(obj) or text(destination.get("namespace")) or ""
        if not is_destination_matched(project, Destination(server, name, namespace)):
            return [Refusal(display(obj), f"namespace {namespace} is not permitted in project '{project_name}'")]
    return []


def check_application_sync(
    project: Mapping[str, Any],
    application: Mapping[str, Any],
    objects: Iterable[Mapping[str, Any]],
    namespaced: Callable[[str, str], bool] = is_namespaced,
) -> list[Refusal]:
    """Every reason Argo CD would refuse `application` in `project`, or a sync of `objects` (the
    chart's rendered objects): empty means the sync is permitted."""
    refusals = check_application(project, application)
    for obj in objects:
        refusals += check_sync_object(project, application, obj, namespaced)
    return refusals
