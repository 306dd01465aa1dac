"""Security rules: admission as the cluster and Argo CD decide it (see policies/rules/admission.py).

- pod-security-admission (stack): every pod template (workloads, and the operator CRs that become
  pods: Slinky NodeSet/LoginSet/Controller/Accounting/RestApi, MariaDB, AppWrapper components) passes
  Pod Security Admission at its namespace's `enforce` level and version, as Kubernetes 1.33 decides it.
- argocd-appproject-admission (stack): every Argo CD Application is permitted by its AppProject
  (sources, destination) and so is every object its sync would apply (its children: the chart's
  rendered objects, when the engine sends them).
- apiserver-reachability (stack): every APIService, admission webhook and CRD conversion webhook
  whose backend pods are among the objects can be reached by the API server through the
  NetworkPolicies.
- slinky-webhook-admission (stack): every Slinky custom resource passes its CRD's CEL rules and, where
  the slurm-operator chart's values run it, the operator's validating webhook, as slurm-operator 1.2.1
  decides them when the resource is created (admission_slinky).
- kueue-admission (stack): every Kueue object (ClusterQueue, Cohort, ResourceFlavor) and every job
  Kueue's webhooks see (Jobs, CronJobs' Jobs, Pods, Deployments, StatefulSets, AppWrappers) passes
  Kueue 0.19.2's validating webhooks and CRD rules; for a job Kueue will manage, so does the
  Workload it builds from the job's pod templates (admission_kueue).
- operator-webhook-admission (stack): every cert-manager Certificate, Issuer and ClusterIssuer and every
  MetalLB IPAddressPool, L2Advertisement, BGPAdvertisement, BGPPeer and Community passes the operator's
  validating webhook, as cert-manager v1.21.1 and MetalLB v0.16.1 decide it (admission_certmanager,
  admission_metallb).
- mariadb-operator-admission (stack): every mariadb-operator object (MariaDB, Database, User, Grant,
  Backup) passes the operator's validating webhook on create, as mariadb-operator 26.6.0 decides it
  (admission_mariadb.py).

They judge every object the engine sends: hpcforge's own and charts' rendered objects alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import admission
from . import admission_kueue as kueue
from . import admission_metallb as metallb
from . import admission_pss as pss
from . import admission_slinky as slinky
from .access import glob
from .knobs import ObjectSelector, RuleConfig, knob, selector_list_knob
from .netpol import API_SERVER, Host
from .podtemplates import display, kind_of, name_of, namespace_of
from .rule import StackRule
from .sources import chart_basename, helm_sources
from .view import ResourceView, StackView, Violation
from .wire import Unknown


def stack_objects(stack: StackView) -> tuple[list[Mapping[str, Any]], dict[int, ResourceView]]:
    """Whole objects as plain dicts (patches are partial and left out, except Namespace patches,
    whose labels count), with the resource each came from."""
    objects: list[Mapping[str, Any]] = []
    origin: dict[int, ResourceView] = {}
    for resource in stack.objects():
        if resource.is_patch and resource.kind != "Namespace":
            continue
        objects.append(resource.props)
        origin[id(resource.props)] = resource
    return objects, origin


def violation_at(origin: Mapping[int, ResourceView], obj: Mapping[str, Any], message: str) -> Violation:
    """`message` reported at the resource `obj` came from (`stack_objects`' origin; no URN for any other object)."""
    resource = origin.get(id(obj))
    return Violation(message, resource.urn if resource else None)


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


# --- pod-security-admission -----------------------------------------------------------------------


def _version(text_version: str) -> pss.Version:
    match = re.fullmatch(r"v?1\.([0-9]+)", text_version.strip())
    return (1, int(match.group(1))) if match else pss.KUBERNETES_VERSION


@dataclass(frozen=True)
class PodSecurityAdmissionConfig(RuleConfig):
    kubernetes_version: str = knob(
        "kubernetesVersion",
        "1.33",
        {"type": "string", "pattern": "^v?1\\.[0-9]+$"},
        "The cluster's Kubernetes version: `latest` and newer enforce-version labels evaluate as this version.",
    )
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Workloads {namespace, kind, name} (globs) not judged (as the API server's exemptions would)."
    )


def check_pod_security_admission(stack: StackView, config: PodSecurityAdmissionConfig) -> list[Violation]:
    objects, origin = stack_objects(stack)
    version = _version(config.kubernetes_version)
    violations: list[Violation] = []
    for verdict in admission.pod_security_verdicts(objects, version):
        owner = verdict.template.owner
        if verdict.admitted or _selected(config.exempt, owner):
            continue
        if has_unknown(verdict.template.spec) or any(has_unknown(c.body) for c in verdict.template.containers):
            continue  # during a preview: decided once the values are known
        violations.append(
            violation_at(
                origin,
                owner,
                f"{verdict.template.where}: the API server refuses its pods in namespace {verdict.template.namespace}: "
                f"{verdict.message}.",
            )
        )
    return violations


POD_SECURITY_ADMISSION = StackRule(
    "pod-security-admission",
    "Every pod template passes Pod Security Admission at its namespace's enforce level (Kubernetes 1.33 checks).",
    PodSecurityAdmissionConfig,
    check_pod_security_admission,
    "Set the pod's and containers' securityContext (for charts: their securityContext values in "
    "components/chart_security.py), or lower the namespace's enforce level with a reason.",
)

# --- argocd-appproject-admission ------------------------------------------------------------------


@dataclass(frozen=True)
class AppProjectAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob("exempt", "Applications {namespace, kind, name} (globs) not judged.")


def synced_objects(stack: StackView) -> dict[str, list[Mapping[str, Any]]]:
    """The objects each Application would sync: the resources whose parent is the Application
    (or a component under it), keyed `namespace/name`."""
    apps = {r.urn: r for r in stack.objects("argoproj.io", "Application") if r.urn}
    parents = {r.urn: r.parent for r in stack.resources if r.urn}
    found: dict[str, list[Mapping[str, Any]]] = {}
    for resource in stack.objects():
        parent = resource.parent
        seen: set[str] = set()
        while parent and parent not in apps and parent not in seen:
            seen.add(parent)
            parent = parents.get(parent, "")
        if parent in apps:
            found.setdefault(admission.application_key(apps[parent].props), []).append(resource.props)
    return found


def check_argocd_appproject_admission(stack: StackView, config: AppProjectAdmissionConfig) -> list[Violation]:
    objects, origin = stack_objects(stack)
    unknown_projects = {name_of(o) for o in objects if kind_of(o) == "AppProject" and has_unknown(o.get("spec"))}
    violations: list[Violation] = []
    for verdict in admission.appproject_verdicts(objects, synced_objects(stack)):
        if verdict.permitted or _selected(config.exempt, verdict.application):
            continue
        if verdict.project in unknown_projects:
            continue  # during a preview: decided once the project's values are known
        if has_unknown(verdict.application.get("spec")):
            continue  # during a preview: decided once the values are known
        reasons = "; ".join(str(r) for r in verdict.refusals)
        violations.append(
            violation_at(
                origin,
                verdict.application,
                f"Argo CD refuses Application {admission.application_key(verdict.application)} (project "
                f"{verdict.project}): {reasons}. One refused object fails the whole sync.",
            )
        )
    return violations


ARGOCD_APPPROJECT_ADMISSION = StackRule(
    "argocd-appproject-admission",
    "Every Argo CD Application, and every object it syncs, is permitted by its AppProject (as Argo CD 3.4 computes it).",
    AppProjectAdmissionConfig,
    check_argocd_appproject_admission,
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


def check_apiserver_reachability(stack: StackView, config: ReachabilityConfig) -> list[Violation]:
    objects, origin = stack_objects(stack)
    source = Host(API_SERVER.name, config.api_server_address or None)
    # A NetworkPolicy not known yet (preview) could select anything: its namespace is not judged.
    unknown = {namespace_of(o) for o in objects if kind_of(o) == "NetworkPolicy" and has_unknown(o.get("spec"))}
    violations: list[Violation] = []
    for verdict in admission.reachability_verdicts(objects, source):
        if verdict.reachable is True or (verdict.reachable is None and not config.require_known_backends):
            continue
        if verdict.call.namespace in unknown:
            continue
        call = verdict.call
        what = "cannot be judged" if verdict.reachable is None else "is unreachable"
        violations.append(
            violation_at(
                origin,
                call.caller,
                f"{call.caller.get('kind')} {name_of(call.caller)} {call.where} -> Service {call.namespace}/{call.service}:"
                f"{call.port} {what} from the API server ({call.consequence}): {'; '.join(verdict.reasons)}.",
            )
        )
    return violations


APISERVER_REACHABILITY = StackRule(
    "apiserver-reachability",
    "The API server can reach every APIService and webhook backend through the NetworkPolicies.",
    ReachabilityConfig,
    check_apiserver_reachability,
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


def check_slinky_webhook_admission(stack: StackView, config: SlinkyAdmissionConfig) -> list[Violation]:
    objects, origin = stack_objects(stack)
    violations: list[Violation] = []
    for verdict in admission.slinky_verdicts(objects, stack_webhook_scope(stack)):
        if verdict.admitted or _selected(config.exempt, verdict.obj):
            continue
        if has_unknown(verdict.obj.get("spec")) or has_unknown(verdict.obj.get("metadata")):
            continue  # during a preview: decided once the values are known
        violations.append(
            violation_at(
                origin,
                verdict.obj,
                f"{display(verdict.obj)}: the API server refuses to create it: {verdict.message}. `pulumi up` stops there.",
            )
        )
    return violations


SLINKY_WEBHOOK_ADMISSION = StackRule(
    "slinky-webhook-admission",
    "Every Slinky custom resource passes its CRD's CEL rules and slurm-operator 1.2.1's validating webhook.",
    SlinkyAdmissionConfig,
    check_slinky_webhook_admission,
    "Fix the custom resource where components/layers/slurm/layer.py builds it, and refuse the config value that led to it "
    "in components/layers/slurm/config.py (a validator naming the key).",
)

# --- kueue-admission ------------------------------------------------------------------------------


@dataclass(frozen=True)
class KueueAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "Objects {namespace, kind, name} (globs) not judged (e.g. jobs of a namespace Kueue does not watch)."
    )


def check_kueue_admission(stack: StackView, config: KueueAdmissionConfig) -> list[Violation]:
    objects, origin = stack_objects(stack)
    violations: list[Violation] = []
    for verdict in kueue.kueue_verdicts(objects):
        if verdict.admitted or _selected(config.exempt, verdict.obj) or has_unknown(verdict.obj):
            continue  # has_unknown: during a preview, decided once the values are known
        answer = kueue.answer(verdict.refusals)
        how = "the API server refuses it (its CRD's rules)" if answer == "Invalid" else "Kueue's webhook denies it"
        violations.append(violation_at(origin, verdict.obj, f"{how}: {verdict.message}."))
    return violations


KUEUE_ADMISSION = StackRule(
    "kueue-admission",
    "Every Kueue object, and every job Kueue's webhooks see, passes Kueue 0.19.2's webhooks and CRD rules.",
    KueueAdmissionConfig,
    check_kueue_admission,
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


def check_operator_webhook_admission(stack: StackView, config: OperatorWebhookAdmissionConfig) -> list[Violation]:
    objects, origin = stack_objects(stack)
    values = stack_chart_values(stack, "metallb")
    bgp_type = config.metallb_bgp_type or (
        None if values is None or has_unknown(values) else metallb.bgp_type_from_values(values)
    )
    # MetalLB judges a set of objects: one not known yet during a preview leaves its kind's verdicts open.
    unknown_metallb = any(metallb.judged(o) and has_unknown(o.get("spec")) for o in objects)
    violations: list[Violation] = []
    for verdict in admission.webhook_verdicts(objects, metallb_bgp_type=bgp_type, metallb_namespace=config.metallb_namespace):
        if verdict.admitted or _selected(config.exempt, verdict.obj) or has_unknown(verdict.obj.get("spec")):
            continue
        if unknown_metallb and metallb.judged(verdict.obj):
            continue
        violations.append(
            violation_at(
                origin,
                verdict.obj,
                f"{display(verdict.obj)}: the API server refuses it: {verdict.refusal}.",
            )
        )
    return violations


OPERATOR_WEBHOOK_ADMISSION = StackRule(
    "operator-webhook-admission",
    "Every cert-manager and MetalLB object passes the operator's validating webhook (cert-manager v1.21.1, MetalLB v0.16.1).",
    OperatorWebhookAdmissionConfig,
    check_operator_webhook_admission,
    "Change the value the message names; for hpcforge's own objects, the config key behind it (tls.*, network.pools, "
    "network.advertisement.peers) has a check that names it.",
)

# --- mariadb-operator-admission --------------------------------------------------------------------


@dataclass(frozen=True)
class MariadbAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "mariadb-operator objects {namespace, kind, name} (globs) not judged."
    )


def check_mariadb_operator_admission(stack: StackView, config: MariadbAdmissionConfig) -> list[Violation]:
    objects, origin = stack_objects(stack)
    violations: list[Violation] = []
    for verdict in admission.mariadb_verdicts(objects):
        if verdict.admitted or _selected(config.exempt, verdict.obj) or has_unknown(verdict.obj.get("spec")):
            continue  # an unknown value (preview) is decided once it is known
        reasons = "; ".join(f"{r.path}: {r.detail} ({r.source})" for r in verdict.refusals)
        violations.append(
            violation_at(
                origin,
                verdict.obj,
                f"mariadb-operator's webhook refuses {kind_of(verdict.obj)} {namespace_of(verdict.obj)}/"
                f"{name_of(verdict.obj)}: {reasons}.",
            )
        )
    return violations


MARIADB_OPERATOR_ADMISSION = StackRule(
    "mariadb-operator-admission",
    "Every mariadb-operator object passes the operator's validating webhook (mariadb-operator 26.6.0's rules).",
    MariadbAdmissionConfig,
    check_mariadb_operator_admission,
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
