"""Compatibility index: every name that `policies/rules/common.py` exported before it was split by job.

The shared rule helpers now live in one module per job: `wire` (secret and unknown markers, wire
form), `access` (small accessors), `knobs` (typed rule config), `view` (ResourceView, StackView,
Violation), `rule` (ResourceRule, StackRule), `workloads` (pod specs, containers), `sources` (Helm
and Argo CD sources), `images` (image references). The packs and this repository's rules import those
modules directly; this index only keeps `from .common import ...` working for rule modules written
on branches that started before the split. Import from the job modules in new code.
"""

from __future__ import annotations

from .access import as_int, get, glob, int_or_percent, items, mapping, resolve_int_or_percent, text
from .images import ImageRef, parse_image
from .knobs import STRING_LIST, Knob, NoConfig, ObjectSelector, RuleConfig, knob, selector_list_knob
from .rule import ResourceRule, Rule, StackRule
from .sources import (
    HELM_CHART_TYPES,
    GitSource,
    HelmSource,
    application_sources,
    chart_basename,
    git_sources,
    helm_sources,
    is_application,
    walk,
)
from .view import RENDERING_COMPONENTS, ResourceView, StackView, Violation
from .wire import (
    SECRET_SIG,
    SIG_KEY,
    UNKNOWN_SENTINELS,
    SecretFloat,
    SecretInt,
    SecretStr,
    Unknown,
    from_wire,
    is_secret,
    is_unknown,
    to_plain,
)
from .workloads import (
    ARGO_GROUP,
    SLINKY_CONTAINERS,
    SLINKY_GROUP,
    WORKFLOW_KINDS,
    ContainerRef,
    PodSpecRef,
    containers,
    embedded_objects,
    pod_specs,
)

__all__ = [
    "ARGO_GROUP",
    "HELM_CHART_TYPES",
    "RENDERING_COMPONENTS",
    "SECRET_SIG",
    "SIG_KEY",
    "SLINKY_CONTAINERS",
    "SLINKY_GROUP",
    "STRING_LIST",
    "UNKNOWN_SENTINELS",
    "WORKFLOW_KINDS",
    "ContainerRef",
    "GitSource",
    "HelmSource",
    "ImageRef",
    "Knob",
    "NoConfig",
    "ObjectSelector",
    "PodSpecRef",
    "ResourceRule",
    "ResourceView",
    "Rule",
    "RuleConfig",
    "SecretFloat",
    "SecretInt",
    "SecretStr",
    "StackRule",
    "StackView",
    "Unknown",
    "Violation",
    "application_sources",
    "as_int",
    "chart_basename",
    "containers",
    "embedded_objects",
    "from_wire",
    "get",
    "git_sources",
    "glob",
    "helm_sources",
    "int_or_percent",
    "is_application",
    "is_secret",
    "is_unknown",
    "items",
    "knob",
    "mapping",
    "parse_image",
    "pod_specs",
    "resolve_int_or_percent",
    "selector_list_knob",
    "text",
    "to_plain",
    "walk",
]
