"""Security rules: admission as the cluster and Argo CD decide it (see report.py).

- pod-security-admission (stack): every pod template (workloads, and the operator CRs that become
  pods: Slinky NodeSet/LoginSet/Controller/Accounting/RestApi, MariaDB, AppWrapper components) passes
  Pod Security Admission at its namespace's `enforce` level and version, as Kubernetes 1.33 decides it;
  a namespace enforcing a newer version is reported once per version, naming what is not reproduced.
- argocd-appproject-admission (stack): every Argo CD Application is permitted by its AppProject
  (sources, destination) and so is every object its sync would apply (its children: the chart's
  rendered objects, when the engine sends them).
- apiserver-reachability (stack): every APIService, admission webhook and CRD conversion webhook
  whose backend pods are among the objects can be reached by the API server through the
  NetworkPolicies.
- slinky-webhook-admission (stack): every Slinky custom resource passes its CRD's CEL rules and, where
  the slurm-operator chart's values run it, the operator's validating webhook, as slurm-operator 1.2.1
  decides them when the resource is created (slinky/).
- kueue-admission (stack): every Kueue object (ClusterQueue, Cohort, ResourceFlavor) and every job
  Kueue's webhooks see (Jobs, CronJobs' Jobs, Pods, Deployments, StatefulSets, AppWrappers) passes
  Kueue 0.19.2's validating webhooks and CRD rules; for a job Kueue will manage, so does the
  Workload it builds from the job's pod templates (kueue/).
- operator-webhook-admission (stack): every cert-manager Certificate, Issuer and ClusterIssuer and every
  MetalLB IPAddressPool, L2Advertisement, BGPAdvertisement, BGPPeer and Community passes the operator's
  validating webhook, as cert-manager v1.21.1 and MetalLB v0.16.1 decide it (certmanager/,
  metallb/).
- mariadb-operator-admission (stack): every mariadb-operator object (MariaDB, Database, User, Grant,
  Backup) passes the operator's validating webhook on create, as mariadb-operator 26.6.0 decides it
  (mariadb/).

They judge every object the engine sends: hpcforge's own and charts' rendered objects alike. Each is one
`admission_rule`: the stack's objects (`stack_objects`, also what `./hpcforge admission` judges), a judge that
yields the refused objects (`Finding`), the exemptions of the rule's `exempt` knob, and a refusal reported at the
resource its object came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from ..rules.access import glob
from ..rules.knobs import ObjectSelector, RuleConfig, knob, selector_list_knob
from ..rules.netpol import API_SERVER, Host
from ..rules.podtemplates import display, kind_of, name_of, namespace_of
from ..rules.rule import StackRule
from ..rules.sources import chart_basename, helm_sources
from ..rules.view import ResourceView, StackView, Violation
from ..rules.wire import Unknown
from . import certmanager, kueue, mariadb, metallb, pss, report, slinky

C = TypeVar("C", bound=RuleConfig)


@dataclass(frozen=True)
class StackObjects:
    stack: StackView
    objects: list[Mapping[str, Any]]
    """Whole objects as plain dicts (patches are partial and left out, except Namespace patches, whose labels
    count)."""
    origin: dict[int, ResourceView]
    """The resource each object came from, by the object's id."""

    @cached_property
    def synced(self) -> dict[str, list[Mapping[str, Any]]]:
        """Per Argo CD Application (`namespace/name`), the objects its sync would apply: the resources whose parent
        is the Application or a component under it (computed once, when a rule asks)."""
        apps = {r.urn: r for r in self.stack.objects("argoproj.io", "Application") if r.urn}
        parents = {r.urn: r.parent for r in self.stack.resources if r.urn}
        synced: dict[str, list[Mapping[str, Any]]] = {}
        for resource in self.stack.objects():
            parent = resource.parent
            seen: set[str] = set()
            while parent and parent not in apps and parent not in seen:
                seen.add(parent)
                parent = parents.get(parent, "")
            if parent in apps:
                synced.setdefault(report.application_key(apps[parent].props), []).append(resource.props)
        return synced

    def violation(self, obj: Mapping[str, Any] | None, message: str) -> Violation:
        """`message` reported at the resource `obj` came from (no URN for any other object)."""
        resource = self.origin.get(id(obj)) if obj is not None else None
        return Violation(message, resource.urn if resource else None)


def stack_objects(stack: StackView) -> StackObjects:
    """The stack's Kubernetes objects as admission judges them (the rules here, and `./hpcforge admission`
    over a recorded stack)."""
    objects: list[Mapping[str, Any]] = []
    origin: dict[int, ResourceView] = {}
    for resource in stack.objects():
        if resource.is_patch and resource.kind != "Namespace":
            continue
        objects.append(resource.props)
        origin[id(resource.props)] = resource
    return StackObjects(stack, objects, origin)


def has_unknown(value: Any) -> bool:
    """Whether a value not known during a preview is anywhere in `value` (the rule cannot judge it)."""
    if isinstance(value, Unknown):
        return True
    if isinstance(value, Mapping):
        return any(has_unknown(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(has_unknown(v) for v in value)
    return False


def _selected(selectors: tuple[ObjectSelector, ...], obj: Mapping[str, Any]) -> bool:
    return any(
        glob(s.namespace, namespace_of(obj)) and glob(s.kind, kind_of(obj)) and glob(s.name, name_of(obj)) for s in selectors
    )


@dataclass(frozen=True)
class Finding:
    """What a rule's judge refuses."""

    obj: Mapping[str, Any] | None
    """The object refused: the refusal is reported at the resource it came from, and the rule's `exempt` knob
    selects it (None: the stack as a whole)."""
    message: str
    pending: bool = False
    """A value the verdict depends on is not known yet (a preview): decided once it is known, not reported."""


Judge = Callable[[StackView, StackObjects, C], Iterator[Finding]]


def admission_rule(name: str, description: str, config: type[C], judge: Judge[C], remediation: str) -> StackRule[C]:
    """A stack rule that reports every `Finding` of `judge` over the stack's objects, but those pending and those
    the config's `exempt` selectors (where the rule has that knob) select."""

    def check(stack: StackView, settings: C) -> list[Violation]:
        found = stack_objects(stack)
        exempt: tuple[ObjectSelector, ...] = getattr(settings, "exempt", ())
        return [
            found.violation(f.obj, f.message)
            for f in judge(stack, found, settings)
            if not f.pending and not (f.obj is not None and _selected(exempt, f.obj))
        ]

    check.__name__ = check.__qualname__ = "check_" + name.replace("-", "_")
    return StackRule(name, description, config, check, remediation)


# --- pod-security-admission -----------------------------------------------------------------------


def _version(text_version: str) -> pss.Version:
    match = re.fullmatch(r"v?1\.([0-9]+)", text_version.strip())
    return (1, int(match.group(1))) if match else pss.KUBERNETES_VERSION


@dataclass(frozen=True)
class PodSecurityAdmissionConfig(RuleConfig):
    kubernetes_version: str = knob(
        "kubernetesVersion",
        pss.REPRODUCES.version,
        {"type": "string", "pattern": "^v?1\\.[0-9]+$"},
        "The cluster's Kubernetes version: `latest` and newer enforce-version labels evaluate as this version.",
    )
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Workloads {namespace, kind, name} (globs) not judged (as the API server's exemptions would)."
    )


def judge_pod_security(stack: StackView, found: StackObjects, config: PodSecurityAdmissionConfig) -> Iterator[Finding]:
    verdicts = report.pod_security_verdicts(found.objects, _version(config.kubernetes_version))
    for gap in report.pod_security_gaps(verdicts):
        yield Finding(None, f"{gap.message} (and this rule's kubernetesVersion, the cluster's version, with it).")
    for verdict in verdicts:
        if verdict.admitted:
            continue
        template = verdict.template
        yield Finding(
            template.owner,
            f"{template.where}: the API server refuses its pods in namespace {template.namespace}: {verdict.message}.",
            has_unknown(template.spec) or any(has_unknown(c.body) for c in template.containers),
        )


POD_SECURITY_ADMISSION = admission_rule(
    "pod-security-admission",
    "Every pod template passes Pod Security Admission at its namespace's enforce level "
    f"(Kubernetes {pss.REPRODUCES.version} checks).",
    PodSecurityAdmissionConfig,
    judge_pod_security,
    "Set the pod's and containers' securityContext (for charts: their securityContext values in "
    "components/chart_security.py), or lower the namespace's enforce level with a reason.",
)

# --- argocd-appproject-admission ------------------------------------------------------------------


@dataclass(frozen=True)
class AppProjectAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob("exempt", "Applications {namespace, kind, name} (globs) not judged.")


def judge_appprojects(stack: StackView, found: StackObjects, config: AppProjectAdmissionConfig) -> Iterator[Finding]:
    unknown_projects = {name_of(o) for o in found.objects if kind_of(o) == "AppProject" and has_unknown(o.get("spec"))}
    for verdict in report.appproject_verdicts(found.objects, found.synced):
        if verdict.permitted:
            continue
        reasons = "; ".join(str(r) for r in verdict.refusals)
        yield Finding(
            verdict.application,
            f"Argo CD refuses Application {report.application_key(verdict.application)} (project "
            f"{verdict.project}): {reasons}. One refused object fails the whole sync.",
            # during a preview: decided once the project's and the Application's values are known
            verdict.project in unknown_projects or has_unknown(verdict.application.get("spec")),
        )


ARGOCD_APPPROJECT_ADMISSION = admission_rule(
    "argocd-appproject-admission",
    "Every Argo CD Application, and every object it syncs, is permitted by its AppProject (as Argo CD 3.4 computes it).",
    AppProjectAdmissionConfig,
    judge_appprojects,
    "Keep the chart's objects in its destination namespace through its values (create what it would put elsewhere "
    "as hpcforge objects), or list the namespace in the AppProject's destinations.",
)

# --- apiserver-reachability -----------------------------------------------------------------------


@dataclass(frozen=True)
class ReachabilityConfig(RuleConfig):
    api_server_address: str = knob(
        "apiServerAddress",
        "",
        {"type": "string"},
        "Source address of the API server's calls ('' = unknown: only an ipBlock covering every address admits it).",
    )
    require_known_backends: bool = knob(
        "requireKnownBackends",
        False,
        {"type": "boolean"},
        "Also report calls whose Service or pods are not among the objects (e.g. charts not rendered).",
    )


def judge_reachability(stack: StackView, found: StackObjects, config: ReachabilityConfig) -> Iterator[Finding]:
    source = Host(API_SERVER.name, config.api_server_address or None)
    # A NetworkPolicy not known yet (preview) could select anything: its namespace is not judged.
    unknown = {namespace_of(o) for o in found.objects if kind_of(o) == "NetworkPolicy" and has_unknown(o.get("spec"))}
    for verdict in report.reachability_verdicts(found.objects, source):
        if verdict.reachable is True or (verdict.reachable is None and not config.require_known_backends):
            continue
        call = verdict.call
        what = "cannot be judged" if verdict.reachable is None else "is unreachable"
        yield Finding(
            call.caller,
            f"{call.caller.get('kind')} {name_of(call.caller)} {call.where} -> Service {call.namespace}/{call.service}:"
            f"{call.port} {what} from the API server ({call.consequence}): {'; '.join(verdict.reasons)}.",
            call.namespace in unknown,
        )


APISERVER_REACHABILITY = admission_rule(
    "apiserver-reachability",
    "The API server can reach every APIService and webhook backend through the NetworkPolicies.",
    ReachabilityConfig,
    judge_reachability,
    "Allow ingress from the API server on the Service's target port: ingress_from_anywhere(name, Port(p)) in the "
    "namespace's allows (components/k8s/resources.py).",
)

# --- slinky-webhook-admission ----------------------------------------------------------------------


@dataclass(frozen=True)
class SlinkyAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Slinky custom resources {namespace, kind, name} (globs) not judged."
    )


def stack_chart_values(stack: StackView, chart: str) -> Mapping[str, Any] | None:
    """The values the stack gives chart `chart` (a helm.v4.Chart's or an Argo CD Application's); None without it."""
    for resource in stack.resources:
        for source in helm_sources(resource):
            if chart_basename(source.chart) == chart:
                return source.values
    return None


def stack_webhook_scope(stack: StackView) -> slinky.WebhookScope:
    """slurm-operator's webhook as the stack's `slurm-operator` chart values deploy it (a helm.v4.Chart whose
    inputs the engine does not send, or no such chart: the chart's defaults, i.e. it runs everywhere)."""
    values = stack_chart_values(stack, slinky.CHART)
    return slinky.WebhookScope() if values is None else slinky.webhook_scope(values)


def judge_slinky(stack: StackView, found: StackObjects, config: SlinkyAdmissionConfig) -> Iterator[Finding]:
    for verdict in report.slinky_verdicts(found.objects, stack_webhook_scope(stack)):
        if verdict.admitted:
            continue
        yield Finding(
            verdict.obj,
            f"{display(verdict.obj)}: the API server refuses to create it: {verdict.message}. `pulumi up` stops there.",
            has_unknown(verdict.obj.get("spec")) or has_unknown(verdict.obj.get("metadata")),
        )


SLINKY_WEBHOOK_ADMISSION = admission_rule(
    "slinky-webhook-admission",
    "Every Slinky custom resource passes its CRD's CEL rules and "
    f"slurm-operator {slinky.REPRODUCES.version}'s validating webhook.",
    SlinkyAdmissionConfig,
    judge_slinky,
    "Fix the custom resource where components/layers/slurm/objects.py builds it, and refuse the config value that led to it "
    "in components/layers/slurm/config.py (a validator naming the key).",
)

# --- kueue-admission ------------------------------------------------------------------------------


@dataclass(frozen=True)
class KueueAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Objects {namespace, kind, name} (globs) not judged (e.g. jobs of a namespace Kueue does not watch)."
    )


def judge_kueue(stack: StackView, found: StackObjects, config: KueueAdmissionConfig) -> Iterator[Finding]:
    for verdict in kueue.kueue_verdicts(found.objects):
        if verdict.admitted:
            continue
        answer = kueue.answer(verdict.refusals)
        how = "the API server refuses it (its CRD's rules)" if answer == "Invalid" else "Kueue's webhook denies it"
        yield Finding(verdict.obj, f"{how}: {verdict.message}.", has_unknown(verdict.obj))


KUEUE_ADMISSION = admission_rule(
    "kueue-admission",
    f"Every Kueue object, and every job Kueue's webhooks see, passes Kueue {kueue.REPRODUCES.version}'s webhooks and CRD rules.",
    KueueAdmissionConfig,
    judge_kueue,
    "Change the config that set the refused field (components/layers/batch/config.py validates what it can before "
    "anything is registered), or the object's labels and annotations for a job.",
)

# --- operator-webhook-admission ---------------------------------------------------------------------


@dataclass(frozen=True)
class OperatorWebhookAdmissionConfig(RuleConfig):
    metallb_namespace: str = knob(
        "metallbNamespace",
        metallb.NAMESPACE,
        {"type": "string", "minLength": 1},
        "Namespace of the MetalLB controller: its webhooks refuse MetalLB objects anywhere else.",
    )
    metallb_bgp_type: str = knob(
        "metallbBgpType",
        "",
        {"type": "string", "enum": ["", *metallb.BGP_TYPES]},
        "MetalLB's BGP backend (`native`, `frr`, `frr-k8s`; '' = from the metallb chart's values in the stack, "
        "else the chart's default `frr-k8s`).",
    )
    exempt: tuple[ObjectSelector, ...] = selector_list_knob("exempt", "Objects {namespace, kind, name} (globs) not judged.")


def judge_operator_webhooks(stack: StackView, found: StackObjects, config: OperatorWebhookAdmissionConfig) -> Iterator[Finding]:
    values = stack_chart_values(stack, "metallb")
    bgp_type = config.metallb_bgp_type or (
        None if values is None or has_unknown(values) else metallb.bgp_type_from_values(values)
    )
    # MetalLB judges a set of objects: one not known yet during a preview leaves its kind's verdicts open.
    unknown_metallb = any(metallb.judged(o) and has_unknown(o.get("spec")) for o in found.objects)
    verdicts = report.webhook_verdicts(found.objects, metallb_bgp_type=bgp_type, metallb_namespace=config.metallb_namespace)
    for verdict in verdicts:
        if verdict.admitted:
            continue
        yield Finding(
            verdict.obj,
            f"{display(verdict.obj)}: the API server refuses it: {verdict.refusal}.",
            has_unknown(verdict.obj.get("spec")) or (unknown_metallb and metallb.judged(verdict.obj)),
        )


OPERATOR_WEBHOOK_ADMISSION = admission_rule(
    "operator-webhook-admission",
    "Every cert-manager and MetalLB object passes the operator's validating webhook "
    f"(cert-manager {certmanager.REPRODUCES.version}, MetalLB {metallb.REPRODUCES.version}).",
    OperatorWebhookAdmissionConfig,
    judge_operator_webhooks,
    "Change the value the message names; for hpcforge's own objects, the config key behind it (tls.*, network.pools, "
    "network.advertisement.peers) has a check that names it.",
)

# --- mariadb-operator-admission --------------------------------------------------------------------


@dataclass(frozen=True)
class MariadbAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "mariadb-operator objects {namespace, kind, name} (globs) not judged."
    )


def judge_mariadb(stack: StackView, found: StackObjects, config: MariadbAdmissionConfig) -> Iterator[Finding]:
    for verdict in report.mariadb_verdicts(found.objects):
        if verdict.admitted:
            continue
        reasons = "; ".join(f"{r.path}: {r.detail} ({r.source})" for r in verdict.refusals)
        yield Finding(
            verdict.obj,
            f"mariadb-operator's webhook refuses {kind_of(verdict.obj)} {namespace_of(verdict.obj)}/"
            f"{name_of(verdict.obj)}: {reasons}.",
            has_unknown(verdict.obj.get("spec")),
        )


MARIADB_OPERATOR_ADMISSION = admission_rule(
    "mariadb-operator-admission",
    "Every mariadb-operator object passes the operator's validating webhook "
    f"(mariadb-operator {mariadb.REPRODUCES.version}'s rules).",
    MariadbAdmissionConfig,
    judge_mariadb,
    "Change the config key that sets the refused field (docs/layers/database.md and backups.md name them); the "
    "config already refuses the values known to be refused.",
)

RULES = (
    POD_SECURITY_ADMISSION,
    ARGOCD_APPPROJECT_ADMISSION,
    APISERVER_REACHABILITY,
    SLINKY_WEBHOOK_ADMISSION,
    KUEUE_ADMISSION,
    OPERATOR_WEBHOOK_ADMISSION,
    MARIADB_OPERATOR_ADMISSION,
)
