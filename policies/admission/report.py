"""Admission as the cluster and Argo CD decide it, over a whole set of plain object dicts:

- Pod Security: every pod template (pss/) against its namespace's enforce level/version;
- Argo CD: every Application against its AppProject, with the objects it would sync (argocd.py);
- reachability: every Service the API server calls, through the NetworkPolicies (netpol);
- Slinky: every slurm-operator custom resource, created as it is, against the operator's webhook and its
  CRDs' CEL rules (slinky/);
- Kueue: every Kueue object and every job Kueue's webhooks see, against Kueue 0.19.2's webhooks and
  CRD rules (kueue/);
- operator webhooks: every cert-manager Certificate/Issuer/ClusterIssuer and MetalLB IPAddressPool,
  L2Advertisement, BGPAdvertisement, BGPPeer and Community, as the operators' validating webhooks answer
  it (certmanager/, metallb/).
- mariadb-operator: every mariadb-operator object as its validating webhook judges it, on create or, given the
  objects deployed before, on update (mariadb/).

Pure functions; the security pack's rules (rules.py) and the offline report
(`./hpcforge admission`) both use them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..rules.access import get, items, mapping, text
from ..rules.netpol import API_SERVER, CallVerdict, Host, judge_api_server_calls
from ..rules.podtemplates import PodTemplate, display, group_of, kind_of, name_of, namespace_of, pod_templates
from . import argocd, certmanager, kueue, mariadb, metallb, pss, slinky
from .slinky import Verdict as SlinkyVerdict

ARGOCD_NAMESPACE = "argocd"
ARGO_GROUP = "argoproj.io"


def namespace_labels(objects: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """Labels per namespace, from Namespace objects (and patches of them, merged in order), and for a
    namespace no object creates, from the `managedNamespaceMetadata` of the Argo CD Application that
    creates it (`CreateNamespace=true`). None: labels not known (a preview value), so its pods cannot
    be judged."""
    labels: dict[str, dict[str, Any] | None] = {}
    managed: dict[str, dict[str, Any]] = {}
    for obj in objects:
        if group_of(obj) == "" and kind_of(obj) == "Namespace":
            found = get(obj, "metadata", "labels")
            known = labels.setdefault(name_of(obj), {})
            if found is not None and not isinstance(found, Mapping):
                labels[name_of(obj)] = None
            elif known is not None:
                known.update(mapping(found))
        elif group_of(obj) == ARGO_GROUP and kind_of(obj) == "Application":
            options = items(get(obj, "spec", "syncPolicy", "syncOptions"))
            destination = text(get(obj, "spec", "destination", "namespace"))
            if destination and "CreateNamespace=true" in options:
                metadata = mapping(get(obj, "spec", "syncPolicy", "managedNamespaceMetadata", "labels"))
                managed.setdefault(destination, {}).update(metadata)
    for namespace, found in managed.items():
        labels.setdefault(namespace, found)
    return labels


def _known_policy_labels(labels: Mapping[str, Any]) -> bool:
    """Whether every pod-security label holds a known value."""
    return all(isinstance(v, str) for k, v in labels.items() if str(k).startswith(pss.LABEL_PREFIX))


# --- Pod Security ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodVerdict:
    template: PodTemplate
    policy: pss.NamespacePolicy
    failures: tuple[pss.Failure, ...]
    warn_policy: pss.NamespacePolicy | None = None
    warnings: tuple[pss.Failure, ...] = ()
    """What the namespace's `warn` level (when stricter than enforce) would tell the client."""

    @property
    def admitted(self) -> bool:
        return not self.failures

    @property
    def message(self) -> str:
        if self.admitted:
            return f"admitted ({self.policy.level}:{self.policy.version_label})"
        return pss.forbidden_message(self.failures, self.policy.level, self.policy.version_label)


def _pod_meta(template: PodTemplate) -> dict[str, Any]:
    return {"labels": dict(template.labels), "annotations": dict(template.annotations)}


def _pod_spec(template: PodTemplate) -> dict[str, Any]:
    """The pod spec as the pod will have it: for operator CRs, the role containers merged in."""
    spec = dict(template.spec)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        spec[key] = [dict(c.body) for c in template.containers if c.kind == key]
    return spec


def pod_security_verdicts(
    objects: Sequence[Mapping[str, Any]], cluster_version: pss.Version = pss.KUBERNETES_VERSION
) -> list[PodVerdict]:
    """Every pod template of `objects`, judged at its namespace's `enforce` level and version (pods of
    a namespace whose labels are not known yet are left out)."""
    labels = namespace_labels(objects)
    verdicts: list[PodVerdict] = []
    for obj in objects:
        for template in pod_templates(obj):
            namespace = labels.get(template.namespace, {})
            if namespace is None or not _known_policy_labels(namespace):
                continue  # the namespace's level is not known during a preview: not judged
            policy = pss.NamespacePolicy.from_labels(namespace, cluster_version)
            meta, spec = _pod_meta(template), _pod_spec(template)
            failures = pss.evaluate_pod(meta, spec, policy.level, policy.version)
            warn = pss.NamespacePolicy.from_labels(namespace, cluster_version, "warn")
            warnings: list[pss.Failure] = []
            if pss.LEVELS.index(warn.level) > pss.LEVELS.index(policy.level):
                warnings = pss.evaluate_pod(meta, spec, warn.level, warn.version)
            verdicts.append(PodVerdict(template, policy, tuple(failures), warn, tuple(warnings)))
    return verdicts


@dataclass(frozen=True)
class PodSecurityGap:
    """Namespaces whose pods Kubernetes evaluates at a version newer than the reproduced one (pss.unreproduced)."""

    version: pss.Version
    namespaces: tuple[str, ...]
    reason: str

    @property
    def message(self) -> str:
        label = f"v{self.version[0]}.{self.version[1]}"
        reproduced = f"{pss.KUBERNETES_VERSION[0]}.{pss.KUBERNETES_VERSION[1]}"
        return (
            f"Pod Security of Kubernetes {self.version[0]}.{self.version[1]} is not reproduced: namespace"
            f"{'s' if len(self.namespaces) > 1 else ''} {', '.join(self.namespaces)} enforce{'' if len(self.namespaces) > 1 else 's'} "
            f"{label} (its enforce-version label, or `latest` on a cluster of that version), and their pods were judged as "
            f"{reproduced} judges them: {self.reason}. Bring policies/admission/pss/ (and its REPRODUCES, in versions.py) to "
            f"Kubernetes {self.version[0]}.{self.version[1]}, or keep hpcforge:kubernetes.version (which sets "
            f"hpcforge's enforce-version labels) at {reproduced} or below"
        )


def pod_security_gaps(verdicts: Sequence[PodVerdict]) -> list[PodSecurityGap]:
    """One gap per Kubernetes version above the reproduced one that a namespace of `verdicts` enforces (at baseline
    or restricted: privileged runs no check at any version)."""
    found: dict[pss.Version, set[str]] = {}
    for verdict in verdicts:
        if verdict.policy.level != "privileged" and pss.unreproduced(verdict.policy.named) is not None:
            found.setdefault(verdict.policy.named, set()).add(verdict.template.namespace)
    return [PodSecurityGap(v, tuple(sorted(found[v])), pss.unreproduced(v) or "") for v in sorted(found)]


# --- Argo CD --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApplicationVerdict:
    application: Mapping[str, Any]
    project: str
    refusals: tuple[argocd.Refusal, ...]
    synced: int
    """How many rendered objects of the Application were judged (0: only the Application itself)."""

    @property
    def permitted(self) -> bool:
        return not self.refusals


def application_key(application: Mapping[str, Any]) -> str:
    return f"{namespace_of(application) or ARGOCD_NAMESPACE}/{name_of(application)}"


def _default_project() -> dict[str, Any]:
    """Argo CD creates the `default` project permitting everything (util/db/ and docs: projects)."""
    return {
        "metadata": {"name": "default"},
        "spec": {
            "sourceRepos": ["*"],
            "destinations": [{"server": "*", "namespace": "*"}],
            "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        },
    }


def appproject_verdicts(
    objects: Sequence[Mapping[str, Any]],
    synced: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    namespaced: Callable[[str, str], bool] | None = None,
) -> list[ApplicationVerdict]:
    """Every Argo CD Application of `objects` against its AppProject; `synced` maps an Application
    (`namespace/name`) to the objects its sync would apply (the chart rendered), when known.
    `namespaced`: which kinds are namespaced (default: Kubernetes' own and the CRDs among the objects)."""
    if namespaced is None:
        namespaced = argocd.scopes_from([*objects, *(o for found in (synced or {}).values() for o in found)])
    projects = {
        (namespace_of(o) or ARGOCD_NAMESPACE, name_of(o)): o
        for o in objects
        if group_of(o) == ARGO_GROUP and kind_of(o) == "AppProject"
    }
    verdicts: list[ApplicationVerdict] = []
    for app in objects:
        if group_of(app) != ARGO_GROUP or kind_of(app) != "Application":
            continue
        project_name = text(get(app, "spec", "project")) or "default"
        project = projects.get((namespace_of(app) or ARGOCD_NAMESPACE, project_name))
        if project is None and project_name == "default":
            project = _default_project()
        rendered = list((synced or {}).get(application_key(app), ()))
        if project is None:
            refusal = argocd.Refusal("application", f"AppProject {project_name!r} is not among the objects")
            verdicts.append(ApplicationVerdict(app, project_name, (refusal,), len(rendered)))
            continue
        refusals = argocd.check_application_sync(project, app, rendered, namespaced)
        verdicts.append(ApplicationVerdict(app, project_name, tuple(refusals), len(rendered)))
    return verdicts


def application_lines(app: ApplicationVerdict) -> list[str]:
    """One Application's verdict as the admission report prints it, each refusal on a line of its own."""
    mark = "ok  " if app.permitted else "DENY"
    synced = f", {app.synced} rendered objects" if app.synced else ", rendered objects not known"
    return [
        f"  {mark} Application {application_key(app.application)} in project {app.project}{synced}",
        *(f"         {refusal}" for refusal in app.refusals),
    ]


# --- reachability ---------------------------------------------------------------------------------


def reachability_verdicts(objects: Sequence[Mapping[str, Any]], source: Host = API_SERVER) -> list[CallVerdict]:
    """Every APIService, webhook and CRD conversion webhook: can the API server reach its pods?"""
    return judge_api_server_calls(objects, source)


# --- Slinky ----------------------------------------------------------------------------------------


def slinky_verdicts(objects: Sequence[Mapping[str, Any]], scope: slinky.WebhookScope | None = None) -> list[SlinkyVerdict]:
    """Every Slinky custom resource of `objects`, created as it is: its CRD's CEL rules, then (where the
    chart's webhook runs, `scope`) slurm-operator's validating webhook."""
    return slinky.create_verdicts(objects, scope)


# --- mariadb-operator's webhook ----------------------------------------------------------------------------


def object_key(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name): what the API server updates in place."""
    return (group_of(obj), kind_of(obj), namespace_of(obj), name_of(obj))


# --- operators' validating webhooks ----------------------------------------------------------------


@dataclass(frozen=True)
class WebhookVerdict:
    obj: Mapping[str, Any]
    webhook: str
    refusal: str | None
    """The message the API server relays when the webhook refuses the object (None: admitted)."""

    @property
    def admitted(self) -> bool:
        return self.refusal is None


def webhook_verdicts(
    objects: Sequence[Mapping[str, Any]],
    *,
    metallb_bgp_type: str | None = None,
    metallb_namespace: str = metallb.NAMESPACE,
    nodes: Sequence[Mapping[str, str]] = (),
) -> list[WebhookVerdict]:
    """Every cert-manager and MetalLB object of `objects`, as the operator's validating webhook answers its
    creation. MetalLB's webhooks judge an object together with the objects of its kind (and the pools) that
    exist: here, every one among `objects`, i.e. the state once all of them are applied; when that set is
    refused, at least the last of them to be applied is, and each of them is reported.

    MetalLB's BGP backend (which peer rules apply): the MetalLB controller's METALLB_BGP_TYPE when its
    Deployment is among the objects (charts rendered), else `metallb_bgp_type` (hpcforge's chart values,
    `metallb.bgp_type_from_values`), else the chart's default (`frr-k8s`). `nodes`: the labels of
    the cluster's nodes, when known (none: every pair of peers may share a node, as the webhook assumes)."""
    labels = namespace_labels(objects)
    bgp_type = metallb.controller_bgp_type(objects) or metallb_bgp_type or metallb.bgp_type_from_values({})
    existing = [o for o in objects if metallb.judged(o)]
    verdicts: list[WebhookVerdict] = []
    for obj in objects:
        if certmanager.judged(obj):
            if kind_of(obj) in certmanager.NAMESPACED and certmanager.validation_disabled(labels.get(namespace_of(obj))):
                continue  # the chart's namespaceSelector: the webhook is not called
            verdicts.append(WebhookVerdict(obj, certmanager.WEBHOOK, certmanager.refusal(obj)))
        elif metallb.judged(obj):
            refusal = metallb.refusal(obj, existing, namespace=metallb_namespace, bgp_type=bgp_type, nodes=nodes)
            verdicts.append(WebhookVerdict(obj, metallb.WEBHOOKS[kind_of(obj)], refusal))
    return verdicts


@dataclass(frozen=True)
class MariadbVerdict:
    obj: Mapping[str, Any]
    refusals: tuple[mariadb.Refusal, ...]
    update: bool
    """Judged as an update of the same object among the previous ones (else as a create)."""
    unjudged: tuple[str, ...] = ()
    """What of the object the reproduction does not judge (`mariadb.unmodelled`)."""

    @property
    def admitted(self) -> bool:
        return not self.refusals


def mariadb_verdicts(
    objects: Sequence[Mapping[str, Any]],
    previous: Sequence[Mapping[str, Any]] = (),
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[MariadbVerdict]:
    """Every mariadb-operator object of `objects` as its validating webhook judges it: an update where `previous`
    (the objects deployed before) has the same object, else a create. `schemas`: the CRDs' openAPIV3Schemas by kind,
    for the API server's defaults in the stored object."""
    before = {object_key(o): o for o in previous if group_of(o) == mariadb.GROUP}
    verdicts: list[MariadbVerdict] = []
    for obj in objects:
        if group_of(obj) != mariadb.GROUP:
            continue
        old = before.get(object_key(obj))
        if old is None:
            refusals = mariadb.validate_create(obj)
        else:
            refusals = mariadb.update_refusals(old, obj, (schemas or {}).get(kind_of(obj)))
        verdicts.append(MariadbVerdict(obj, tuple(refusals), old is not None, tuple(mariadb.unmodelled(obj))))
    return verdicts


# --- report ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    pods: list[PodVerdict]
    applications: list[ApplicationVerdict]
    calls: list[CallVerdict]
    slinky: list[SlinkyVerdict]
    webhooks: list[WebhookVerdict]
    kueue_verdicts: list[kueue.Verdict] = field(default_factory=list)
    mariadb: list[MariadbVerdict] = field(default_factory=list)
    """mariadb-operator's verdicts (`mariadb_verdicts`)."""
    pod_security_gaps: list[PodSecurityGap] = field(default_factory=list)
    """Pod Security versions the namespaces enforce that are not reproduced (`pod_security_gaps`)."""

    @property
    def rejected_pods(self) -> list[PodVerdict]:
        return [v for v in self.pods if not v.admitted]

    @property
    def refused_applications(self) -> list[ApplicationVerdict]:
        return [v for v in self.applications if not v.permitted]

    @property
    def unreachable(self) -> list[CallVerdict]:
        return [v for v in self.calls if v.reachable is False]

    @property
    def refused_by_kueue(self) -> list[kueue.Verdict]:
        return [v for v in self.kueue_verdicts if not v.admitted]

    @property
    def unjudged(self) -> list[CallVerdict]:
        return [v for v in self.calls if v.reachable is None]

    @property
    def refused_slinky(self) -> list[SlinkyVerdict]:
        return [v for v in self.slinky if not v.admitted]

    @property
    def refused_by_webhooks(self) -> list[WebhookVerdict]:
        return [v for v in self.webhooks if not v.admitted]

    @property
    def refused_mariadb(self) -> list[MariadbVerdict]:
        return [v for v in self.mariadb if not v.admitted]

    @property
    def refused(self) -> bool:
        """Anything refused or unreachable, in any family (what `offline admission` exits 1 on)."""
        return bool(
            self.rejected_pods
            or self.pod_security_gaps
            or self.refused_applications
            or self.unreachable
            or self.refused_slinky
            or self.refused_by_kueue
            or self.refused_by_webhooks
            or self.refused_mariadb
        )

    def lines(self) -> list[str]:
        out = ["Pod Security (per pod template, at its namespace's enforce level):"]
        for pod in self.pods:
            mark = "ok  " if pod.admitted else "DENY"
            out.append(f"  {mark} {pod.template.where} [{pod.template.namespace}]: {pod.message}")
            if pod.admitted and pod.warnings and pod.warn_policy is not None:
                level = f"{pod.warn_policy.level}:{pod.warn_policy.version_label}"
                out.append(f"         warn ({level}): " + ", ".join(str(w) for w in pod.warnings))
        out += [f"  GAP  {gap.message}" for gap in self.pod_security_gaps]
        out.append("Argo CD AppProjects (per Application, and each object it would sync):")
        for app in self.applications:
            out += application_lines(app)
        out.append("API server calls (APIServices, webhooks, CRD conversion) through NetworkPolicies:")
        for call in self.calls:
            mark = {True: "ok  ", False: "DENY", None: "??  "}[call.reachable]
            target = f"Service {call.call.namespace}/{call.call.service}:{call.call.port}"
            out.append(f"  {mark} {display(call.call.caller)} {call.call.where} -> {target}")
            out += [f"         {reason}" for reason in call.reasons]
        out.append(
            f"Slinky slurm-operator {slinky.REPRODUCES.version} (per custom resource as created: CRD CEL rules, then the webhook):"
        )
        out += [slinky.verdict_line(verdict) for verdict in self.slinky]
        out.append(f"Kueue {kueue.REPRODUCES.version} (webhooks and CRD rules; per Kueue object, and per job its webhooks see):")
        for verdict in self.kueue_verdicts:
            out.append(f"  {'ok  ' if verdict.admitted else 'DENY'} {verdict.message}")
        out.append(f"Operator webhooks (cert-manager {certmanager.REPRODUCES.version}, MetalLB {metallb.REPRODUCES.version}):")
        for hook in self.webhooks:
            mark = "ok  " if hook.admitted else "DENY"
            out.append(f"  {mark} {display(hook.obj)} ({hook.webhook})")
            if hook.refusal:
                out.append(f"         {hook.refusal}")
        out.append(
            f"mariadb-operator webhooks (per k8s.mariadb.com object, as mariadb-operator {mariadb.REPRODUCES.version} judges it):"
        )
        for judged in self.mariadb:
            mark = "ok  " if judged.admitted else "DENY"
            action = "update" if judged.update else "create"
            out.append(f"  {mark} {display(judged.obj)} ({action})")
            out += [f"         {refusal}" for refusal in judged.refusals]
            out += [f"         not judged: {what}" for what in judged.unjudged]
        out.append(
            f"Summary: {len(self.rejected_pods)} of {len(self.pods)} pod templates rejected, "
            f"{len(self.refused_applications)} of {len(self.applications)} Applications refused, "
            f"{len(self.unreachable)} of {len(self.calls)} API server calls unreachable "
            f"({len(self.unjudged)} not judged: backends not among the objects), "
            f"{len(self.refused_slinky)} of {len(self.slinky)} Slinky custom resources refused, "
            f"{len(self.refused_by_kueue)} of {len(self.kueue_verdicts)} Kueue objects and jobs refused, "
            f"{len(self.refused_by_webhooks)} of {len(self.webhooks)} cert-manager and MetalLB objects refused by their webhooks, "
            f"{len(self.refused_mariadb)} of {len(self.mariadb)} mariadb-operator objects refused."
            + (f" {len(self.pod_security_gaps)} Pod Security versions not reproduced." if self.pod_security_gaps else "")
        )
        return out


def admission_report(
    objects: Sequence[Mapping[str, Any]],
    synced: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    cluster_version: pss.Version = pss.KUBERNETES_VERSION,
    slinky_scope: slinky.WebhookScope | None = None,
    metallb_bgp_type: str | None = None,
    previous: Sequence[Mapping[str, Any]] = (),
) -> Report:
    """`slinky_scope`: where slurm-operator's webhook runs (the stack's chart values; default the chart's);
    `metallb_bgp_type`: MetalLB's BGP backend (`webhook_verdicts`); `previous`: the objects deployed before (their mariadb-operator objects make those of `objects` updates)."""
    pods = pod_security_verdicts(objects, cluster_version)
    return Report(
        pods,
        appproject_verdicts(objects, synced),
        reachability_verdicts(objects),
        slinky_verdicts(objects, slinky_scope),
        webhook_verdicts(objects, metallb_bgp_type=metallb_bgp_type),
        kueue.kueue_verdicts(objects),
        mariadb_verdicts(objects, previous),
        pod_security_gaps(pods),
    )
