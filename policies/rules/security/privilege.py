"""Least privilege, kept so (issue 39): RBAC without wildcards or blanket Secret reads (rbac-least-privilege); Argo CD
AppProjects that cannot reach Argo CD itself or cluster-scoped kinds (appproject-scoped); every LoadBalancer names
its clients or says it is public (loadbalancer-source-ranges); in a namespace where users' code runs beside services,
no NetworkPolicy opens anything to every pod (user-code-policies-select-pods); the API server reached only by address
(apiserver-peers-bounded); images pinned by digest (images-by-digest).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..access import get, glob, items, mapping, text
from ..images import parse_image
from ..knobs import STRING_LIST, NoConfig, ObjectSelector, RuleConfig, knob
from ..rule import ResourceRule, StackRule
from ..sources import helm_sources, walk
from ..view import ResourceView, StackView, Violation
from ..wire import is_unknown
from ..workloads import containers

EXPOSURE_ANNOTATION = "hpcforge.io/exposure"
JOB_IMAGES_ANNOTATION = "hpcforge.io/job-images"
"""Images an object makes Slurm jobs run through Pyxis, comma-separated (components/layers/slurm/active_checks.py)."""
USER_CODE_LABEL = "hpcforge.io/user-code"
RBAC_GROUP = "rbac.authorization.k8s.io"
SECRET_READS = ("get", "list", "watch")


def _allowed(resource: ResourceView, allow_list: Iterable[ObjectSelector]) -> bool:
    return any(selector.matches(resource) for selector in allow_list)


def _reasoned_selectors(key: str, description: str) -> Any:
    """A list of {namespace, kind, name, reason}: objects (globs) a rule exempts, each saying why."""
    return knob(
        key,
        (),
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {**ObjectSelector.SCHEMA, "reason": {"type": "string", "minLength": 1}},
                "required": ["reason"],
                "additionalProperties": False,
            },
        },
        description,
        parse=lambda raw: tuple(ObjectSelector.from_json(mapping(v)) for v in items(raw)),
    )


# --- rbac-least-privilege ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RbacConfig(RuleConfig):
    allow_list: tuple[ObjectSelector, ...] = _reasoned_selectors(
        "allowList", "Roles and ClusterRoles {namespace, kind, name, reason} (globs) exempt, and why."
    )


def _strings(value: Any) -> list[str]:
    return [v for v in items(value) if isinstance(v, str)]


def check_rbac_least_privilege(resource: ResourceView, config: RbacConfig) -> list[str]:
    """A Role or ClusterRole grants no `*` (verbs, resources, API groups), never lists or watches Secrets (RBAC cannot
    narrow a list to names), and reads a Secret only by name (`resourceNames`)."""
    if not (resource.is_kind(RBAC_GROUP, "Role") or resource.is_kind(RBAC_GROUP, "ClusterRole")) or resource.is_patch:
        return []
    if _allowed(resource, config.allow_list):
        return []
    problems: list[str] = []
    for index, rule in enumerate(items(resource.props.get("rules"))):
        body = mapping(rule)
        if any(is_unknown(body.get(k)) for k in ("verbs", "resources", "apiGroups", "resourceNames")):
            continue
        verbs, resources, groups = _strings(body.get("verbs")), _strings(body.get("resources")), _strings(body.get("apiGroups"))
        for field, values in (("verbs", verbs), ("resources", resources), ("apiGroups", groups)):
            if "*" in values:
                problems.append(f"rules[{index}].{field} has '*': name what it needs.")
        reads_secrets = ("secrets" in resources or "*" in resources) and ("" in groups or "*" in groups)
        if not reads_secrets:
            continue
        wide = sorted({v for v in verbs if v in ("list", "watch")} | ({"list", "watch"} if "*" in verbs else set()))
        if wide:
            problems.append(f"rules[{index}] may {' and '.join(wide)} Secrets: every Secret of the namespace.")
        if ("get" in verbs or "*" in verbs) and not _strings(body.get("resourceNames")):
            problems.append(f"rules[{index}] may get Secrets without resourceNames: name the Secrets it reads.")
    return problems


RBAC_LEAST_PRIVILEGE = ResourceRule(
    "rbac-least-privilege",
    "Roles and ClusterRoles grant no wildcards, never list or watch Secrets, and get Secrets only by name.",
    RbacConfig,
    check_rbac_least_privilege,
    "List the verbs, resources and API groups; read Secrets with `get` and `resourceNames` "
    "(components/layers/backups/objects.py key_export_grants).",
)


# --- appproject-scoped ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AppProjectConfig(RuleConfig):
    control_namespaces: tuple[str, ...] = knob(
        "controlNamespaces",
        ("argocd",),
        STRING_LIST,
        "Argo CD's own namespaces: an Application or AppProject synced there can grant itself any project.",
    )
    trusted_projects: tuple[str, ...] = knob(
        "trustedProjects",
        ("hpcforge-platform",),
        STRING_LIST,
        "AppProjects exempt: the platform's own, whose sources are the pinned charts and whose Applications only Pulumi writes.",
    )


def check_appproject_scoped(resource: ResourceView, config: AppProjectConfig) -> list[str]:
    """An AppProject (not trusted) has no destination in Argo CD's namespaces or on every namespace or server, allows
    no cluster-scoped kind, and lists the namespaced kinds it allows (no `*`, no RBAC or Argo CD kinds)."""
    if not resource.is_kind("argoproj.io", "AppProject") or resource.object_name in config.trusted_projects:
        return []
    spec = resource.spec
    if is_unknown(spec):
        return []
    problems: list[str] = []
    for index, destination in enumerate(items(spec.get("destinations"))):
        namespace, server = text(get(destination, "namespace")) or "", text(get(destination, "server")) or ""
        if namespace == "*" or server == "*" or namespace in config.control_namespaces:
            problems.append(
                f"spec.destinations[{index}] ({server or '?'} {namespace or '?'}) reaches Argo CD's own namespace or every "
                "namespace: whoever controls the sources could create Applications, AppProjects and Argo CD Secrets."
            )
    if items(spec.get("clusterResourceWhitelist")):
        problems.append("spec.clusterResourceWhitelist allows cluster-scoped kinds: leave it empty.")
    allowed = [mapping(entry) for entry in items(spec.get("namespaceResourceWhitelist"))]
    if not allowed:
        problems.append("spec.namespaceResourceWhitelist is empty, which allows every namespaced kind: list the kinds.")
    for entry in allowed:
        group, kind = text(entry.get("group")) or "", text(entry.get("kind")) or ""
        # An Application outside Argo CD's namespaces may only use projects that list its namespace (Argo CD v3.4.4
        # app_project_types.go IsAppNamespacePermitted): with no destination there, Applications grant nothing more.
        if "*" in (group, kind) or group == RBAC_GROUP or (group == "argoproj.io" and kind != "Application"):
            problems.append(f"spec.namespaceResourceWhitelist allows {group}/{kind}: RBAC and Argo CD kinds grant rights.")
    return problems


APPPROJECT_SCOPED = ResourceRule(
    "appproject-scoped",
    "AppProjects other than the platform's reach neither Argo CD's namespace nor cluster-scoped kinds, and list their kinds.",
    AppProjectConfig,
    check_appproject_scoped,
    "Destinations: the apps' own namespaces; clusterResourceWhitelist empty; namespaceResourceWhitelist listed "
    "(components/layers/gitops/objects.py apps_project_spec).",
)


# --- loadbalancer-source-ranges ------------------------------------------------------------------------------------

SLINKY_SERVICE_KINDS = ("Controller", "LoginSet", "RestApi", "Accounting")


def _ranges_problem(where: str, spec: Mapping[str, Any], annotations: Mapping[str, Any]) -> str | None:
    if annotations.get(EXPOSURE_ANNOTATION) == "public":
        return None
    ranges = spec.get("loadBalancerSourceRanges")
    if is_unknown(ranges):
        return None
    cidrs = _strings(ranges)
    if not cidrs:
        return f"{where} is a LoadBalancer without loadBalancerSourceRanges: it takes every address."
    try:
        every = [c for c in cidrs if ipaddress.ip_network(c, strict=False).prefixlen == 0]
    except ValueError:
        return f"{where}: {cidrs} is not a list of CIDRs."
    if every:
        return f"{where} takes {every[0]}: say `{EXPOSURE_ANNOTATION}: public` if it is meant to be public."
    return None


def _values_services(resource: ResourceView) -> list[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    found = []
    for source in helm_sources(resource):
        for path, key, value in walk(source.values, source.values_path):
            if key != "service" or not isinstance(value, Mapping):
                continue
            spec = mapping(value.get("spec")) if isinstance(value.get("spec"), Mapping) else value
            if spec.get("type") == "LoadBalancer":
                found.append((path, spec, mapping(value.get("annotations"))))
    return found


def check_loadbalancer_source_ranges(resource: ResourceView, config: NoConfig) -> list[str]:
    """Every LoadBalancer (a Service, a Slinky custom resource's service, a chart's `service` values) names its
    clients in loadBalancerSourceRanges (not every address) or is annotated `hpcforge.io/exposure: public`."""
    candidates: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = []
    if resource.is_kind("", "Service") and resource.spec.get("type") == "LoadBalancer":
        candidates.append(("spec", resource.spec, resource.annotations))
    elif resource.group == "slinky.slurm.net" and resource.kind in SLINKY_SERVICE_KINDS:
        service = mapping(resource.spec.get("service"))
        spec = mapping(service.get("spec"))
        if spec.get("type") == "LoadBalancer":
            candidates.append(("spec.service.spec", spec, mapping(get(service, "metadata", "annotations"))))
    candidates += _values_services(resource)
    return [problem for where, spec, annotations in candidates if (problem := _ranges_problem(where, spec, annotations))]


LOADBALANCER_SOURCE_RANGES = ResourceRule(
    "loadbalancer-source-ranges",
    "Every LoadBalancer names its clients (loadBalancerSourceRanges) or says it is public.",
    NoConfig,
    check_loadbalancer_source_ranges,
    "Give the service an `exposure` in config (default: hpcforge:network.siteRanges), or `public: true` "
    "(components/k8s/addresses.py load_balancer_exposure).",
)


# --- user-code-policies-select-pods --------------------------------------------------------------------------------


@dataclass(frozen=True)
class UserCodeConfig(RuleConfig):
    namespaces: tuple[str, ...] = knob(
        "namespaces",
        (),
        STRING_LIST,
        f"Namespaces where users' code runs beside services, besides those labelled {USER_CODE_LABEL}: beside-services.",
    )


def _opens_named_pods_or_dns(spec: Mapping[str, Any]) -> bool:
    """Every rule of the policy opens port 53 only (a namespace's DNS egress) or only to pods it names (every peer has
    a non-empty podSelector), or the policy has no rule (a deny)."""
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for rule in items(spec.get(direction)):
            ports = [mapping(p) for p in items(get(rule, "ports"))]
            if ports and all(p.get("port") == 53 for p in ports):
                continue
            peers = [mapping(peer) for peer in items(get(rule, peers_key))]
            if not peers or not all(mapping(peer.get("podSelector")) for peer in peers):
                return False
    return True


def check_user_code_policies(stack: StackView, config: UserCodeConfig) -> list[Violation]:
    labelled = {
        ns.object_name
        for ns in stack.objects("", "Namespace")
        if ns.labels.get(USER_CODE_LABEL) == "beside-services" and not is_unknown(ns.labels.get(USER_CODE_LABEL))
    }
    watched = labelled | set(config.namespaces)
    violations = []
    for policy in stack.objects("networking.k8s.io", "NetworkPolicy"):
        spec = policy.spec
        if policy.namespace not in watched or is_unknown(spec) or is_unknown(spec.get("podSelector")):
            continue
        if mapping(spec.get("podSelector")) or _opens_named_pods_or_dns(spec):
            continue
        violations.append(
            Violation(
                f"{policy.display}: selects every pod of {policy.namespace}, where users' code runs beside services, and "
                "opens more than DNS to peers it does not name by pod: name the pods on both sides (podSelector).",
                policy.urn,
            )
        )
    return violations


USER_CODE_POLICIES = StackRule(
    "user-code-policies-select-pods",
    "Where users' code runs beside services, a NetworkPolicy for every pod opens only DNS or named pods.",
    UserCodeConfig,
    check_user_code_policies,
    "Give the Allow pod_labels/pod_apps and peers (components/layers/slurm/objects.py); no same-namespace allow "
    "(LayerNamespace(same_namespace=False)).",
)


# --- apiserver-peers-bounded ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApiServerPeersConfig(RuleConfig):
    port: int = knob("port", 6443, {"type": "integer"}, "The API server's port.")
    allow_list: tuple[ObjectSelector, ...] = _reasoned_selectors(
        "allowList", "NetworkPolicies {namespace, kind, name, reason} (globs) exempt, and why."
    )


def _reaches_port(rule: Mapping[str, Any], port: int) -> bool:
    ports = [mapping(p) for p in items(rule.get("ports"))]
    if not ports:
        return True
    for entry in ports:
        first, last = entry.get("port"), entry.get("endPort")
        if entry.get("protocol", "TCP") != "TCP":
            continue
        if first is None or first == port or (isinstance(first, int) and isinstance(last, int) and first <= port <= last):
            return True
    return False


def check_apiserver_peers_bounded(resource: ResourceView, config: ApiServerPeersConfig) -> list[str]:
    """No egress rule reaches the API server's port on an ipBlock of every address without cutting anything out:
    name the control plane's addresses (hpcforge:kubernetes.apiServerAddresses)."""
    if not resource.is_kind("networking.k8s.io", "NetworkPolicy") or _allowed(resource, config.allow_list):
        return []
    problems = []
    for index, rule in enumerate(items(resource.spec.get("egress"))):
        body = mapping(rule)
        if is_unknown(body.get("to")) or not _reaches_port(body, config.port):
            continue
        for peer in items(body.get("to")):
            block = mapping(get(peer, "ipBlock"))
            cidr = text(block.get("cidr"))
            if cidr and cidr.endswith("/0") and not items(block.get("except")):
                problems.append(
                    f"spec.egress[{index}] reaches port {config.port} at every address ({cidr}): set "
                    "hpcforge:kubernetes.apiServerAddresses, or cut them out (except)."
                )
    return problems


APISERVER_PEERS_BOUNDED = ResourceRule(
    "apiserver-peers-bounded",
    "No NetworkPolicy lets pods reach the API server's port at every address.",
    ApiServerPeersConfig,
    check_apiserver_peers_bounded,
    "Set hpcforge:kubernetes.apiServerAddresses (egress_to_apiserver then names them), or `except` them.",
)


# --- images-by-digest ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DigestConfig(RuleConfig):
    exempt_images: tuple[str, ...] = knob(
        "exemptImages",
        (),
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"image": {"type": "string"}, "reason": {"type": "string", "minLength": 1}},
                "required": ["image", "reason"],
                "additionalProperties": False,
            },
        },
        "Images {image (a glob on `repository:tag`), reason} that may go without a digest for now, and why.",
        parse=lambda raw: tuple(str(mapping(v).get("image", "")) for v in items(raw)),
    )


def check_images_by_digest(resource: ResourceView, config: DigestConfig) -> list[str]:
    """Every container image of an object is pinned by digest (`repo:tag@sha256:...`): a tag can be pushed again. So
    is every image its `hpcforge.io/job-images` annotation names (what its Slurm jobs run through Pyxis)."""
    found: list[tuple[str, Any]] = [(ref.path, ref.container.get("image")) for ref in containers(resource)]
    job_images = resource.annotations.get(JOB_IMAGES_ANNOTATION)
    if isinstance(job_images, str) and not is_unknown(job_images):
        where = f"metadata.annotations[{JOB_IMAGES_ANNOTATION}]"
        found += [(where, image.strip()) for image in job_images.split(",") if image.strip()]
    problems = []
    for path, image in found:
        if not isinstance(image, str) or is_unknown(image) or parse_image(image).digest_valid:
            continue
        if any(glob(pattern, image) for pattern in config.exempt_images):
            continue
        problems.append(f"{path}: {image!r} is not pinned by digest.")
    return problems


IMAGES_BY_DIGEST = ResourceRule(
    "images-by-digest",
    "Container images are pinned by digest (a tag can be pushed again).",
    DigestConfig,
    check_images_by_digest,
    "Give the ImagePin its digest (components/versions.py ImagePin.digest); docs/operations.md 'Pinning images by digest'.",
)


RULES = (
    RBAC_LEAST_PRIVILEGE,
    APPPROJECT_SCOPED,
    LOADBALANCER_SOURCE_RANGES,
    USER_CODE_POLICIES,
    APISERVER_PEERS_BOUNDED,
    IMAGES_BY_DIGEST,
)
