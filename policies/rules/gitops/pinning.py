"""What is deployed is pinned: Helm charts to an exact version (helm-charts-pinned), Argo CD Git sources to a
tag or commit (git-revisions-pinned), container images to a tag or digest (images-pinned).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..access import glob
from ..images import parse_image
from ..knobs import STRING_LIST, RuleConfig, knob
from ..rule import ResourceRule
from ..sources import HelmSource, git_sources, helm_sources, walk
from ..view import ResourceView
from ..wire import is_unknown
from ..workloads import ContainerRef, containers

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
