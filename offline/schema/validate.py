"""Tier 3: validate what a program declares against the schemas the cluster and the charts enforce.

Three checks, all offline and all reading upstream data at run time (nothing is copied into the repo):

* Built-in kinds (`apps/v1 Deployment`, `v1 Secret`, ...) against the Kubernetes OpenAPI schema of the
  target version, as shipped by the `kubernetes-validate` package, in its *strict* flavour: an unknown
  field is an error, the way `kubectl apply --validate=strict` reports it.
* Custom resources against the `openAPIV3Schema` of their upstream CustomResourceDefinition under
  `shared/crds/<project>-<version>/<Kind>.yaml` (or, for a kind shared/ has no CRD for, one the program
  declares itself). The structural schema is translated to JSON Schema 2020-12 with the Kubernetes
  extensions honoured (`x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`,
  `x-kubernetes-embedded-resource`, `nullable`, list types) and unknown fields rejected wherever the
  schema does not preserve them. CEL rules (`x-kubernetes-validations`) are evaluated from the CRD
  (offline/schema/cel.py; `SchemaReport.cel_rules`), transition rules where a previous object is given. Beyond what the API server checks, so that a typo cannot
  hide where the CRD is schemaless: fields that hold a Kubernetes type (the Slinky CRDs' pod templates
  and containers, `KNOWN_TYPE_FIELDS`) are checked against that built-in type, and embedded objects
  (`x-kubernetes-embedded-resource`, e.g. an AppWrapper's Job) as the object they are.
* Helm values: every key path hpcforge sets for a chart (a `HelmChart` pseudo-document of the offline
  renderer, or an Argo CD Application that installs a chart) must exist in the chart's default
  `values.yaml` under `shared/charts/<values_dir>/`, or be declared by its `values.schema.json`; the
  values are also validated against that schema (types, enums, `additionalProperties: false`; never
  `required`, since ours are a partial override). Maps that a chart copies verbatim although their
  defaults are not empty are listed in `FREE_FORM_VALUES`, each with its reason.

Entry point: `validate_documents(documents, kubernetes_version, shared_dir) -> list[str]` (empty: valid).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.versions import Manifests

from ..program.documents import CHART_API_VERSION, CHART_KIND, MANIFEST_KIND
from .crd import CrdVersion, load_crd_index, validate_custom_resource
from .kube import Document, GroupVersionKind, builtin_kinds, validate_builtin
from .values import helm_releases, validate_helm_release

# --- everything ------------------------------------------------------------------------------------


def validate_pseudo_document(document: Mapping[str, Any]) -> list[str]:
    """A document of the offline renderer (`offline.hpcforge.dev/v1`): a known kind that names a pin.

    A HelmChart's values are checked by `helm_releases`/`validate_helm_release`. The objects of a
    ManifestFile (a release manifest applied by yaml.v2.ConfigFile) are not known offline; only its
    source is checked against `Manifests.all()`.
    """
    kind, spec = document.get("kind"), document.get("spec") or {}
    if kind == CHART_KIND:
        return []
    if kind == MANIFEST_KIND:
        pinned = {pin.url for pin in Manifests.all()}
        if spec.get("file") not in pinned:
            return [f"{MANIFEST_KIND} file {spec.get('file')!r} is not pinned in components/versions.py (Manifests.all())"]
        return []
    return [f"{CHART_API_VERSION} {kind} is not a document kind of the offline renderer"]


RUNTIME_CRDS: dict[tuple[str, str], str] = {
    ("nv-ipam.nvidia.com", "IPPool"): (
        "applied by the NVIDIA Network Operator at run time when the NicClusterPolicy enables nvIpam"
        " (network-operator v26.4.1 manifests/state-nv-ipam-cni/005-nv-ipam.nvidia.com_ippools.yaml); not in"
        " shared/crds (crds/INDEX.md: not collected); the IPPool spec is checked against that file's schema by"
        " tests/components/layers/rdma/test_rdma_ipam.py"
    ),
}
"""(group, kind) of custom resources whose CRD an operator applies at run time and shared/crds does not hold: not
validated here, but listed in `SchemaReport.runtime_crds` with where they are checked instead."""


@dataclass
class SchemaReport:
    errors: list[str] = field(default_factory=list)
    builtin: int = 0
    """Built-in objects validated against the Kubernetes schema."""
    custom: int = 0
    """Custom resources: validated against a CRD, except the kinds of `RUNTIME_CRDS` (see `runtime_crds`)."""
    charts: int = 0
    """Helm releases whose values were checked."""
    pseudo: int = 0
    """Documents of the offline renderer itself (HelmChart, ManifestFile): no Kubernetes schema applies."""
    crd_sources: dict[str, str] = field(default_factory=dict)
    """`group/version Kind` -> where its CRD came from, for every custom resource validated."""
    cel_rules: int = 0
    """CEL rules in the CRD versions used, each evaluated on every value it applies to (offline/schema/cel.py)."""
    cel_rules_skipped: int = 0
    """CEL rules in the CRD versions used that do not compile (each also reported as an error)."""
    runtime_crds: dict[str, str] = field(default_factory=dict)
    """`group/version Kind` -> why it was not validated here (`RUNTIME_CRDS`), for every such kind declared."""


def check_documents(documents: Iterable[Document], kubernetes_version: str, shared_dir: Path) -> SchemaReport:
    """Validate every document; each error is `<document path>: <message>`."""
    documents = list(documents)
    report = SchemaReport()
    builtins = builtin_kinds(kubernetes_version)
    index = load_crd_index(shared_dir).with_program_crds(documents)
    used: dict[GroupVersionKind, CrdVersion] = {}
    for path, document in documents:
        gvk = GroupVersionKind.of(document)
        if gvk.api_version == CHART_API_VERSION:
            report.pseudo += 1
            messages: list[str] = validate_pseudo_document(document)
        elif gvk in builtins:
            report.builtin += 1
            messages = validate_builtin(document, kubernetes_version)
        else:
            report.custom += 1
            crd = index.get(gvk)
            if crd is not None:
                used[gvk] = crd
                report.crd_sources[str(gvk)] = crd.source
            if crd is None and (gvk.group, gvk.kind) in RUNTIME_CRDS and not index.versions_of(gvk.group, gvk.kind):
                report.runtime_crds[str(gvk)] = RUNTIME_CRDS[(gvk.group, gvk.kind)]
                messages = []
            else:
                messages = validate_custom_resource(document, index, kubernetes_version)
            name = (document.get("metadata") or {}).get("name")
            messages = [f"{gvk} {name}: {m}" for m in messages]
        for release in helm_releases(path, document):
            report.charts += 1
            messages += validate_helm_release(release, shared_dir)
        report.errors += [f"{path}: {m}" for m in messages]
    report.cel_rules = sum(crd.cel_rules for crd in used.values())
    report.cel_rules_skipped = sum(1 for crd in used.values() for rule in crd.compiled_rules.rules if rule.compile_error)
    return report


def validate_documents(documents: Iterable[Document], kubernetes_version: str, shared_dir: Path) -> list[str]:
    """Every schema error of `documents` (`render_documents` output) for Kubernetes `kubernetes_version`.

    `shared_dir` is the folder holding `crds/` and `charts/`. An empty list means every document is valid.
    """
    return check_documents(documents, kubernetes_version, shared_dir).errors
