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
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .access import get, glob, items, mapping, text
from .images import parse_image
from .knobs import STRING_LIST, RuleConfig, knob
from .rule import ResourceRule
from .sources import HELM_CHART_TYPES, HelmSource, git_sources, helm_sources, is_application, walk
from .view import ResourceView
from .wire import is_unknown
from .workloads import ContainerRef, containers

# --- helm-charts-pinned ---------------------------------------------------------------------------

EXACT_VERSION = r"^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"


@dataclass(frozen=True)
class ChartsPinnedConfig(RuleConfig):
    exact_version_pattern: str = knob(
        "exactVersionPattern",
        EXACT_VERSION,
        {"type": "string", "format": "regex"},
        "A chart version must match this regular expression (default: an exact SemVer version, optional 'v').",
    )
    allow_local_charts: bool = knob(
        "allowLocalCharts",
        True,
        {"type": "boolean"},
        "Charts from a local path (./chart, /abs/chart, file://) are versioned by the repository itself.",
    )


def _is_local_chart(chart: str) -> bool:
    return chart.startswith((".", "/", "file://"))


def check_helm_charts_pinned(resource: ResourceView, config: ChartsPinnedConfig) -> list[str]:
    problems: list[str] = []
    for source in helm_sources(resource):
        if source.chart is None:
            # helm.v4.Chart under the real engine: the component's inputs are not sent to analyzers.
            continue
        if config.allow_local_charts and _is_local_chart(source.chart):
            continue
        version = source.version
        if is_unknown(version):
            continue
        field = "targetRevision" if source.where.startswith("spec.") else "version"
        where = f"{source.where}.{field}" if source.where.startswith("spec.") else field
        if not isinstance(version, str) or not version.strip():
            problems.append(
                f"chart {source.chart!r} has no {field}: Helm resolves the newest release on every run, so the "
                f"deployed version drifts. Pin an exact version (e.g. in components/versions.py)."
            )
        elif not re.fullmatch(config.exact_version_pattern, version.strip()):
            problems.append(
                f"chart {source.chart!r} {where} is {version!r}, not an exact version: ranges, wildcards, 'latest', "
                f"'HEAD' and branch names float. Pin an exact version such as 1.2.3."
            )
    return problems


HELM_CHARTS_PINNED = ResourceRule(
    "helm-charts-pinned",
    "Every Helm chart (helm.v4.Chart, helm.v3.Release and Argo CD Helm sources) is pinned to an exact version.",
    ChartsPinnedConfig,
    check_helm_charts_pinned,
    "Set the chart's exact version in components/versions.py (ChartPin); never a range, '*' or 'latest'.",
)

# --- git-revisions-pinned -------------------------------------------------------------------------

TAG_PATTERN = r"^v?[0-9]+(\.[0-9]+){0,3}([-+][0-9A-Za-z.-]+)?$"
COMMIT_PATTERN = r"^([0-9a-f]{40}|[0-9a-f]{64})$"


@dataclass(frozen=True)
class GitRevisionsConfig(RuleConfig):
    allow_branches: bool = knob(
        "allowBranches",
        False,
        {"type": "boolean"},
        "Accept branch names as targetRevision (HEAD and an empty revision are never accepted). Off in prod.",
    )
    tag_pattern: str = knob(
        "tagPattern",
        TAG_PATTERN,
        {"type": "string", "format": "regex"},
        "A revision matching this regular expression is a release tag (default: v1.2.3-style tags).",
    )
    commit_pattern: str = knob(
        "commitPattern",
        COMMIT_PATTERN,
        {"type": "string", "format": "regex"},
        "A revision matching this regular expression is a commit (default: a full SHA-1 or SHA-256).",
    )


def check_git_revisions_pinned(resource: ResourceView, config: GitRevisionsConfig) -> list[str]:
    problems: list[str] = []
    for source in git_sources(resource):
        revision = source.revision
        if is_unknown(revision):
            continue
        where = f"{source.where}.targetRevision"
        repo = source.repo or "?"
        value = revision.strip() if isinstance(revision, str) else ""
        if not value or value.upper() == "HEAD":
            problems.append(
                f"{where} of {repo} is {'HEAD' if value else 'empty (Argo CD then follows HEAD)'}: every push to the "
                f"default branch changes the cluster without a change to this stack. Pin a tag or a commit."
            )
            continue
        if re.fullmatch(config.commit_pattern, value) or re.fullmatch(config.tag_pattern, value):
            continue
        if config.allow_branches and not re.search(r"[*^~<>=|\s]", value):
            continue
        problems.append(
            f"{where} of {repo} is {value!r}, which is neither a release tag (tagPattern) nor a full commit SHA: "
            f"a branch or a range moves without a change to this stack. Pin a tag or a commit."
        )
    return problems


GIT_REVISIONS_PINNED = ResourceRule(
    "git-revisions-pinned",
    "Every Argo CD Git source is pinned to a tag or a commit (never HEAD; branches only where allowed).",
    GitRevisionsConfig,
    check_git_revisions_pinned,
    "Set the app's targetRevision to a release tag (v2.3.1) or a full commit SHA in the stack file.",
)

# --- argocd-automated-sync ------------------------------------------------------------------------


@dataclass(frozen=True)
class AutomatedSyncConfig(RuleConfig):
    require_prune: bool = knob("requirePrune", True, {"type": "boolean"}, "Require syncPolicy.automated.prune: true.")
    require_self_heal: bool = knob("requireSelfHeal", True, {"type": "boolean"}, "Require syncPolicy.automated.selfHeal: true.")


def check_argocd_automated_sync(resource: ResourceView, config: AutomatedSyncConfig) -> list[str]:
    if not is_application(resource):
        return []
    policy = resource.spec.get("syncPolicy")
    if is_unknown(policy):
        return []
    automated = get(policy, "automated")
    if is_unknown(automated):
        return []
    if not isinstance(automated, Mapping) or automated.get("enabled") is False:
        return [
            "spec.syncPolicy.automated is not set: Argo CD only reports drift and waits for a manual sync. "
            "Set automated: {prune: true, selfHeal: true}."
        ]
    problems: list[str] = []
    if config.require_prune and automated.get("prune") is not True:
        problems.append("spec.syncPolicy.automated.prune is not true: objects removed from Git stay in the cluster.")
    if config.require_self_heal and automated.get("selfHeal") is not True:
        problems.append("spec.syncPolicy.automated.selfHeal is not true: manual changes in the cluster are not reverted.")
    return problems


ARGOCD_AUTOMATED_SYNC = ResourceRule(
    "argocd-automated-sync",
    "Argo CD Applications sync automatically, with prune and selfHeal.",
    AutomatedSyncConfig,
    check_argocd_automated_sync,
    "Give the Application syncPolicy.automated {prune: true, selfHeal: true} (components/charts.py does).",
)

# --- argocd-ignore-differences-scoped -------------------------------------------------------------

IGNORE_DIFFERENCES_CM_PREFIX = "resource.customizations.ignoreDifferences."


@dataclass(frozen=True)
class IgnoreDifferencesConfig(RuleConfig):
    allow_managed_fields_managers: bool = knob(
        "allowManagedFieldsManagers",
        False,
        {"type": "boolean"},
        "Accept entries scoped only by managedFieldsManagers (they ignore every field a manager owns).",
    )


def _entry_problem(entry: Mapping[str, Any], config: IgnoreDifferencesConfig) -> str | None:
    pointers = [p for p in items(entry.get("jsonPointers")) if isinstance(p, str)]
    expressions = [e for e in items(entry.get("jqPathExpressions")) if isinstance(e, str)]
    managers = items(entry.get("managedFieldsManagers"))
    if any(p.strip() in ("", "/") for p in pointers) or any(e.strip() in ("", ".") for e in expressions):
        return "ignores the whole object (pointer '/' or expression '.')"
    if pointers or expressions:
        return None
    if managers and config.allow_managed_fields_managers:
        return None
    return "names no field (no jsonPointers or jqPathExpressions), so it ignores every difference of the kind"


def _argocd_cm_sources(resource: ResourceView) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, argocd-cm data) from argo-cd chart values and from a rendered argocd-cm ConfigMap."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    for source in helm_sources(resource):
        cm = get(source.values, "configs", "cm")
        if isinstance(cm, Mapping):
            found.append((f"{source.values_path}.configs.cm", cm))
    if resource.is_kind("", "ConfigMap") and resource.object_name == "argocd-cm":
        found.append(("data", mapping(resource.props.get("data"))))
    return found


def check_argocd_ignore_differences_scoped(resource: ResourceView, config: IgnoreDifferencesConfig) -> list[str]:
    problems: list[str] = []
    if is_application(resource):
        entries = items(resource.spec.get("ignoreDifferences"))
        for index, entry in enumerate(entries):
            body = mapping(entry)
            problem = _entry_problem(body, config)
            if problem:
                what = "/".join(x for x in (text(body.get("group")) or "", text(body.get("kind")) or "?") if x)
                problems.append(
                    f"spec.ignoreDifferences[{index}] ({what}) {problem}: drift there would never be repaired. "
                    "Scope it with jsonPointers or jqPathExpressions."
                )
        options = items(get(resource.spec, "syncPolicy", "syncOptions"))
        if entries and not is_unknown(options) and "RespectIgnoreDifferences=true" not in options:
            # Argo CD's sync options: ignoreDifferences only affect the diff; without RespectIgnoreDifferences=true a
            # sync (any later one) applies the ignored fields from the desired state again.
            problems.append(
                "spec.ignoreDifferences is set but spec.syncPolicy.syncOptions lacks RespectIgnoreDifferences=true: "
                "the next sync would apply the ignored fields again."
            )
    import yaml

    for path, data in _argocd_cm_sources(resource):
        for key, value in data.items():
            if not key.startswith(IGNORE_DIFFERENCES_CM_PREFIX) or not isinstance(value, str):
                continue
            try:
                parsed = yaml.safe_load(value)
            except yaml.YAMLError:
                problems.append(f"{path}[{key!r}] is not YAML.")
                continue
            problem = _entry_problem(mapping(parsed), config)
            if problem:
                problems.append(f"{path}[{key!r}] {problem}: scope it with jsonPointers or jqPathExpressions.")
    return problems


ARGOCD_IGNORE_DIFFERENCES_SCOPED = ResourceRule(
    "argocd-ignore-differences-scoped",
    "Argo CD ignoreDifferences are scoped to fields (jsonPointers / jqPathExpressions), never a whole kind.",
    IgnoreDifferencesConfig,
    check_argocd_ignore_differences_scoped,
    "Name the fields to ignore with jsonPointers or jqPathExpressions (e.g. /spec/replicas).",
)

# --- ignore-changes-allow-listed ------------------------------------------------------------------


@dataclass(frozen=True)
class IgnoreChangesGrant:
    type: str = "*"
    name: str = "*"
    paths: tuple[str, ...] = ()
    reason: str = ""

    @classmethod
    def from_json(cls, value: Any) -> IgnoreChangesGrant:
        body = mapping(value)
        return cls(
            type=str(body.get("type", "*")),
            name=str(body.get("name", "*")),
            paths=tuple(str(p) for p in items(body.get("paths"))),
            reason=str(body.get("reason", "")),
        )

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "paths": list(self.paths), "reason": self.reason}


@dataclass(frozen=True)
class IgnoreChangesConfig(RuleConfig):
    allow_list: tuple[IgnoreChangesGrant, ...] = knob(
        "allowList",
        (),
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string"},
                    "name": {"type": "string"},
                    "paths": STRING_LIST,
                    "reason": {"type": "string"},
                },
                "required": ["paths"],
                "additionalProperties": False,
            },
        },
        "Entries {type, name, paths, reason}: resources (type token and Pulumi name, shell globs) that may "
        "ignore changes to these property paths (globs).",
        parse=lambda raw: tuple(IgnoreChangesGrant.from_json(v) for v in items(raw)),
    )


def check_ignore_changes_allow_listed(resource: ResourceView, config: IgnoreChangesConfig) -> list[str]:
    problems: list[str] = []
    for path in resource.ignore_changes:
        allowed = any(
            glob(grant.type, resource.type) and glob(grant.name, resource.name) and any(glob(p, path) for p in grant.paths)
            for grant in config.allow_list
        )
        if not allowed:
            problems.append(
                f"ignoreChanges {path!r} is not in the allow-list: Pulumi would never report or repair drift on it. "
                "Remove the option, or add {type, name, paths, reason} to allowList in the policy config."
            )
    return problems


IGNORE_CHANGES_ALLOW_LISTED = ResourceRule(
    "ignore-changes-allow-listed",
    "The ignoreChanges resource option is only used where the policy config allows it.",
    IgnoreChangesConfig,
    check_ignore_changes_allow_listed,
    "Drop ignore_changes, or add the resource and paths (with a reason) to allowList in policies/config/<stack>.json.",
)

# --- stateful-resources-protected -----------------------------------------------------------------

PROTECTION_ANNOTATION = "hpcforge.io/protection"
STATEFUL_TYPES = (
    "kubernetes:core/v1:PersistentVolumeClaim",
    "kubernetes:k8s.mariadb.com/v1alpha1:MariaDB",
    "kubernetes:k8s.mariadb.com/v1alpha1:Database",
    "kubernetes:k8s.mariadb.com/v1alpha1:Backup",
    "kubernetes:slinky.slurm.net/v1beta1:Controller",
)


@dataclass(frozen=True)
class StatefulConfig(RuleConfig):
    stateful_types: tuple[str, ...] = knob(
        "statefulTypes",
        STATEFUL_TYPES,
        STRING_LIST,
        "Resource type tokens (shell globs) that hold state: volumes, databases, backup schedules, Slurm's controller state.",
    )
    volume_claim_templates: bool = knob(
        "volumeClaimTemplates",
        True,
        {"type": "boolean"},
        "Also treat any object with spec.volumeClaimTemplates (StatefulSets, e.g. 389ds; NodeSets), or with "
        "spec.storage.volumeClaimTemplate (Prometheus, Alertmanager), as stateful.",
    )
    protection_annotation: str = knob(
        "protectionAnnotation",
        PROTECTION_ANNOTATION,
        {"type": "string"},
        "Annotation recording protect|retain on the object (the Analyzer protocol does not carry retainOnDelete).",
    )
    accept_helm_keep: bool = knob(
        "acceptHelmKeep",
        True,
        {"type": "boolean"},
        "Accept `helm.sh/resource-policy: keep` (helm.v4.Chart retains such objects).",
    )


# kube-prometheus-stack values: (section, CR spec key, storage key) of each operator-made volume.
PROMETHEUS_STACK_STORAGE = (("prometheus", "prometheusSpec", "storageSpec"), ("alertmanager", "alertmanagerSpec", "storage"))


def _prometheus_stack_claims_not_retained(resource: ResourceView) -> list[str]:
    """kube-prometheus-stack deployed with storage but without Retain claim retention (Chart or Application values)."""
    problems = []
    for source in helm_sources(resource):
        if not (source.chart or "").rstrip("/").endswith("kube-prometheus-stack"):
            continue
        for section, spec_key, storage_key in PROMETHEUS_STACK_STORAGE:
            values = mapping(source.values.get(section))
            spec = mapping(values.get(spec_key))
            if values.get("enabled") is False or not mapping(mapping(spec.get(storage_key)).get("volumeClaimTemplate")):
                continue
            if mapping(spec.get("persistentVolumeClaimRetentionPolicy")).get("whenDeleted") != "Retain":
                problems.append(
                    f"{resource.display} gives {section} a volume ({source.values_path}.{section}.{spec_key}.{storage_key}) "
                    "that the operator's StatefulSet makes, out of Pulumi's reach, without retaining it: set "
                    f"{section}.{spec_key}.persistentVolumeClaimRetentionPolicy.whenDeleted to Retain."
                )
    return problems


def check_stateful_resources_protected(resource: ResourceView, config: StatefulConfig) -> list[str]:  # noqa: PLR0911 (one return per way a stateful resource is left unprotected)
    if resource.is_patch:
        return []
    if config.volume_claim_templates and (resource.type in HELM_CHART_TYPES or is_application(resource)):
        return _prometheus_stack_claims_not_retained(resource)
    reason = None
    if any(glob(pattern, resource.type) for pattern in config.stateful_types):
        reason = resource.type.rsplit(":", 1)[-1]
    elif config.volume_claim_templates and resource.is_object and items(resource.spec.get("volumeClaimTemplates")):
        reason = f"{resource.kind} with volumeClaimTemplates"
    elif config.volume_claim_templates and resource.is_object and _operator_claims(resource.spec):
        # Prometheus/Alertmanager (prometheus-operator): the operator's StatefulSet makes the claims, out of
        # Pulumi's reach; they outlive the CR when the StatefulSet's claim retention policy (copied from the
        # CR's spec.persistentVolumeClaimRetentionPolicy) is Retain on deletion.
        retention = resource.spec.get("persistentVolumeClaimRetentionPolicy")
        kept = resource.protect or resource.annotations.get(config.protection_annotation) == "retain"
        if kept or (isinstance(retention, Mapping) and retention.get("whenDeleted") == "Retain"):
            return []
        return [
            f"{resource.display} keeps its data in claims that its operator's StatefulSet makes "
            "(spec.storage.volumeClaimTemplate), out of Pulumi's reach, and does not retain them: set "
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted to Retain (kube-prometheus-stack values: "
            "prometheus.prometheusSpec and alertmanager.alertmanagerSpec)."
        ]
    if reason is None:
        return []
    annotation = resource.annotations.get(config.protection_annotation)
    if is_unknown(annotation):
        return []
    if resource.protect:
        return []
    if annotation == "protect":
        return [
            f"{resource.display} is annotated {config.protection_annotation}: protect, but the protect resource option "
            "is not set: the annotation and the options disagree. Set both from DeployContext.protection_options()."
        ]
    if annotation == "retain":
        return []
    if config.accept_helm_keep and resource.annotations.get("helm.sh/resource-policy") == "keep":
        return []
    return [
        f"{resource.display} holds state ({reason}) but is neither protected (resource option protect) nor retained "
        f"({config.protection_annotation}: retain with retainOnDelete): a config change could delete the data."
    ]


def _operator_claims(spec: Mapping[str, Any]) -> bool:
    storage = spec.get("storage")
    return isinstance(storage, Mapping) and isinstance(storage.get("volumeClaimTemplate"), Mapping)


STATEFUL_RESOURCES_PROTECTED = ResourceRule(
    "stateful-resources-protected",
    "Stateful resources (volumes, databases, directory, Slurm state) are protected or retained.",
    StatefulConfig,
    check_stateful_resources_protected,
    "Pass stateful=Stateful.<kind> to ctx.opts() and ctx.meta() so the object gets protect/retainOnDelete and the "
    "hpcforge.io/protection annotation.",
)

# --- kubernetes-labels ----------------------------------------------------------------------------

REQUIRED_LABELS: dict[str, tuple[str, ...]] = {
    "app.kubernetes.io/managed-by": ("pulumi",),
    "app.kubernetes.io/part-of": ("hpcforge",),
}


@dataclass(frozen=True)
class LabelsConfig(RuleConfig):
    required_labels: Mapping[str, tuple[str, ...]] = knob(
        "requiredLabels",
        REQUIRED_LABELS,
        {"type": "object", "additionalProperties": STRING_LIST},
        "Labels every authored object must carry, each with its allowed values (empty list: any value).",
    )
    include_rendered: bool = knob(
        "includeRendered",
        False,
        {"type": "boolean"},
        "Also check objects rendered by a helm.v4.Chart (upstream charts label their own objects).",
    )


def check_kubernetes_labels(resource: ResourceView, config: LabelsConfig) -> list[str]:
    if not resource.is_object or resource.is_patch or (resource.rendered_by_component and not config.include_rendered):
        return []
    labels = resource.labels
    if is_unknown(resource.props.get("metadata")) or is_unknown(labels):
        return []
    problems: list[str] = []
    for label, allowed in sorted(config.required_labels.items()):
        value = labels.get(label)
        if is_unknown(value):
            continue
        if not isinstance(value, str) or not value:
            problems.append(f"{resource.display} has no label {label}.")
        elif allowed and value not in allowed:
            problems.append(f"{resource.display} has {label}={value!r}, expected one of {', '.join(allowed)}.")
    return problems


KUBERNETES_LABELS = ResourceRule(
    "kubernetes-labels",
    "Every Kubernetes object hpcforge authors is labelled with app.kubernetes.io/managed-by and part-of.",
    LabelsConfig,
    check_kubernetes_labels,
    "Build metadata with ctx.meta() (components/k8s/meta.py), which adds the recommended labels.",
)

# --- images-pinned --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImagesConfig(RuleConfig):
    forbidden_tags: tuple[str, ...] = knob(
        "forbiddenTags", ("latest",), STRING_LIST, "Tags that move (compared case-insensitively)."
    )
    require_digest: bool = knob("requireDigest", False, {"type": "boolean"}, "Require @sha256 digests, not just tags.")
    allowed_registries: tuple[str, ...] = knob(
        "allowedRegistries", (), STRING_LIST, "Registry hosts images may come from (shell globs; empty: any)."
    )
    check_helm_values: bool = knob(
        "checkHelmValues", True, {"type": "boolean"}, "Also check image settings in Helm values and Argo CD valuesObject."
    )


def image_problem(reference: str, config: ImagesConfig) -> str | None:
    image = parse_image(reference)
    if config.allowed_registries and not any(glob(p, image.registry) for p in config.allowed_registries):
        return f"comes from registry {image.registry!r}, which is not in allowedRegistries"
    if image.digest is not None:
        return None if image.digest_valid else f"has a malformed digest {image.digest!r}"
    if config.require_digest:
        return "is not pinned by digest (requireDigest)"
    if image.tag is None:
        return "has no tag, so it means :latest"
    if image.tag.lower() in {t.lower() for t in config.forbidden_tags}:
        return f"uses the moving tag {image.tag!r}"
    return None


def _container_problems(ref: ContainerRef, config: ImagesConfig) -> list[str]:
    image = ref.container.get("image")
    if is_unknown(image):
        return []
    if not isinstance(image, str) or not image.strip():
        return [f"{ref.path}: container {ref.name!r} sets no image (a default chosen elsewhere is not pinned here)."]
    problem = image_problem(image, config)
    return [f"{ref.path}: image {image!r} {problem}. Pin a release tag or a digest."] if problem else []


def _values_problems(source: HelmSource, config: ImagesConfig) -> list[str]:  # noqa: PLR0912 (one branch per form of image reference in chart values)
    problems: list[str] = []
    candidates = [(source.values_path, "", source.values), *walk(source.values, source.values_path)]
    for path, key, value in candidates:
        if not isinstance(value, Mapping):
            continue
        image = value.get("image")
        version = value.get("version")
        repository = value.get("repository")
        if isinstance(image, str) and isinstance(repository, str) and repository and "version" in value:
            # NVIDIA charts (gpu-operator, network-operator): `repository` + `image` + `version`.
            if is_unknown(version):
                continue
            if not isinstance(version, str | int | float) or not str(version):
                problems.append(f"{path} sets image {repository}/{image} with an empty version.")
                continue
            problem = image_problem(f"{repository}/{image}:{version}", config)
            if problem:
                problems.append(f"{path}: {repository}/{image}:{version!s} {problem}.")
            continue
        if isinstance(image, str) and image.strip():
            # `image: repo[:tag]`, possibly with a sibling `tag:`.
            tag = value.get("tag")
            reference = f"{image}:{tag}" if isinstance(tag, str) and tag and ":" not in image.rsplit("/", 1)[-1] else image
            problem = image_problem(reference, config)
            if problem:
                problems.append(f"{path}.image {reference!r} {problem}.")
        if key in ("image", "images") or "repository" in value:
            repository = value.get("repository")
            if not isinstance(repository, str) or not repository or is_unknown(repository):
                continue
            tag, digest = value.get("tag"), value.get("digest")
            if is_unknown(tag) or is_unknown(digest):
                continue
            registry = value.get("registry")
            base = f"{registry}/{repository}" if isinstance(registry, str) and registry else repository
            if isinstance(digest, str) and digest:
                reference = f"{base}@{digest}"
            elif isinstance(tag, str | int | float) and str(tag):
                reference = f"{base}:{tag}"
            else:
                problems.append(f"{path} sets repository {repository!r} without a tag or digest.")
                continue
            problem = image_problem(reference, config)
            if problem:
                problems.append(f"{path}: {reference!r} {problem}.")
    return problems


def check_images_pinned(resource: ResourceView, config: ImagesConfig) -> list[str]:
    problems: list[str] = []
    for ref in containers(resource):
        problems += _container_problems(ref, config)
    if config.check_helm_values:
        for source in helm_sources(resource):
            problems += _values_problems(source, config)
    return problems


IMAGES_PINNED = ResourceRule(
    "images-pinned",
    "Container images are pinned by tag or digest, never 'latest' or untagged.",
    ImagesConfig,
    check_images_pinned,
    "Use an ImagePin from components/versions.py (repository + release tag), or a digest.",
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
