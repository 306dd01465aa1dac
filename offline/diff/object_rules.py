"""Impact rules of objects that do nothing by themselves: configuration read by something else (a ConfigMap or
Secret and its consumers), schedules, monitoring objects, evidence checks, component resources, NetworkPolicies,
Argo CD projects, and objects deleted with their namespace. Each says what happens, or leaves the change to
offline/diff/impact.py's `unassessed` when it cannot tell (a consumer that is not in the plan)."""

from __future__ import annotations

from typing import Any

from components.layers.batch.objects import QUEUE_LABEL

from .effects import REVERT_SAFE, Effect, Impact, effect_for, get_path, needs_step
from .evidence import EVIDENCE_KUEUE, EVIDENCE_NAMESPACE
from .plan import Change, Plan

EVIDENCE_CONSUMERS = (
    "https://kubernetes.io/docs/concepts/configuration/configmap/#using-configmaps (a ConfigMap or Secret does nothing "
    "itself: the pods or operators that read it act on it, when they restart or re-read it)"
)
EVIDENCE_SCHEDULE = (
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ (a changed CronJob applies to the Jobs it "
    "creates next; running Jobs are not changed); mariadb-operator v26.6.0 docs/logical_backup.md (a Backup's schedule.cron "
    "is reconciled into a CronJob)"
)
EVIDENCE_MONITORING = (
    "prometheus-operator https://prometheus-operator.dev/docs/developer/getting-started/ (PodMonitor, ServiceMonitor and "
    "PrometheusRule configure Prometheus: what it scrapes and alerts on; no workload reads them)"
)
EVIDENCE_EVIDENCE_CHECK = (
    "components/layers/evidence/layer.py (a check is a local command that reads the cluster after `pulumi up`; it re-runs "
    "when its script or parameters change and fails the update when the site does not converge)"
)
EVIDENCE_COMPONENT = "Pulumi ComponentResource (https://www.pulumi.com/docs/iac/concepts/resources/components/): a grouping with no cloud object; its children carry the effects"
EVIDENCE_NETPOL = (
    "https://kubernetes.io/docs/concepts/services-networking/network-policies/ (policies are additive allow-lists: "
    "under a default deny, traffic a removed rule allowed is refused; a rule added only allows more)"
)
EVIDENCE_APPPROJECT = (
    "Argo CD v3.4.4 docs/user-guide/projects.md (an Application whose destination or source its AppProject no longer "
    "permits cannot sync)"
)


EVIDENCE_NAMESPACE_NEW = (
    "Kubernetes Namespaces (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/): a namespace "
    "scopes the objects created in it; a new one holds none before this change, and each object created in it has its "
    "own verdict"
)


def new_namespace_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    """A namespace created: nothing ran there before, so nothing running changes (its objects answer for themselves)."""
    if change.kind != "Namespace" or change.type.endswith("Patch") or change.op != "create":
        return []
    return [
        effect_for(change, plan, "none", f"namespace {change.object_name} created: empty until its objects come (each has its own verdict)",
                   EVIDENCE_NAMESPACE_NEW, REVERT_SAFE)
    ]  # fmt: skip


def _namespace_deleted(plan: Plan, namespace: str) -> Change | None:
    return next(
        (
            c
            for c in plan.changes
            if c.kind == "Namespace"
            and not c.type.endswith("Patch")
            and c.op in ("delete", "replace")
            and c.object_name == namespace
        ),
        None,
    )


def deleted_with_namespace_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    """An object deleted with its namespace: the namespace's verdict is its verdict."""
    if change.op != "delete" or not change.namespace or change.kind == "Namespace":
        return []
    gone = _namespace_deleted(plan, change.namespace)
    if gone is None:
        return []
    return [
        effect_for(change, plan, "none", f"{change.kind} {change.object_name} goes with namespace {change.namespace} (that namespace's verdict)",
                   EVIDENCE_NAMESPACE, REVERT_SAFE)
    ]  # fmt: skip


REF_WORDS = ("configmap", "secret", "ref", "volumes", "envfrom", "sources", "projected")


def _references(value: Any, name: str, path: str = "") -> bool:
    """Whether `value` names `name` at a path that reads as a reference (a volume, envFrom, a `...Ref`)."""
    if isinstance(value, dict):
        return any(_references(item, name, f"{path}.{key}") for key, item in value.items())
    if isinstance(value, list):
        return any(_references(item, name, path) for item in value)
    return value == name and any(word in path.lower() for word in REF_WORDS)


def consumers(plan: Plan, change: Change) -> list[dict[str, Any]]:
    """The head's resources (or the base's, for a deleted object) in the object's namespace that reference it."""
    resources = plan.head_resources if change.op != "delete" else plan.base_resources
    out = []
    for r in resources:
        inputs = r.get("inputs") or {}
        if r.get("urn") == change.key or get_path(inputs, "metadata", "namespace") != change.namespace:
            continue
        if (inputs.get("kind"), get_path(inputs, "metadata", "name")) == (change.kind, change.object_name):
            continue
        if _references({k: v for k, v in inputs.items() if k != "metadata"}, change.object_name):
            out.append(r)
    return out


def config_consumer_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    """A ConfigMap or Secret: its effect is its consumers'. When every consumer is itself in the plan (its template
    carries the content's checksum, or it is a Job that runs again), the consumers' verdicts say what happens; a
    consumer outside the plan is left unassessed (whether it re-reads the file is its own business)."""
    if change.kind not in ("ConfigMap", "Secret") or change.type.endswith("Patch") or not change.type.startswith("kubernetes:"):
        return []
    if any(change.label in e.resources for e in impact.effects):
        return []  # a rule of its own (the Slurm configuration, the sssd.conf Secret, Grendel's images) said what happens
    found = consumers(plan, change)
    if not found:
        return []
    changed = {c.key for c in plan.changes}
    names = [f"{(r.get('inputs') or {}).get('kind')} {get_path(r.get('inputs'), 'metadata', 'name')}" for r in found]
    if change.op == "create":
        return [
            effect_for(
                change,
                plan,
                "none",
                f"{change.kind} {change.object_name} created for {', '.join(names)}",
                EVIDENCE_CONSUMERS,
                REVERT_SAFE,
            )
        ]
    if all(r.get("urn") in changed for r in found):
        return [
            effect_for(change, plan, "none", f"{change.kind} {change.object_name} {change.op}d: read by {', '.join(names)}, which change with it (their verdicts)",
                       EVIDENCE_CONSUMERS, REVERT_SAFE)
        ]  # fmt: skip
    return []


def schedule_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    """A CronJob's schedule or job template, a mariadb-operator Backup's schedule: the next run changes."""
    paths = {"CronJob": ("spec.schedule", "spec.jobTemplate"), "Backup": ("spec.schedule",)}
    covers = paths.get(change.kind)
    if covers is None or change.op != "update" or not change.changed(*covers):
        return []
    return [
        effect_for(change, plan, "none", f"{change.kind} {change.object_name}: its schedule or job template changes; the next run uses it, a running one is not touched",
                   EVIDENCE_SCHEDULE, REVERT_SAFE, covers=covers)
    ]  # fmt: skip


MONITORING_KINDS = ("PodMonitor", "ServiceMonitor", "PrometheusRule", "Probe")


def monitoring_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind not in MONITORING_KINDS or not change.type.startswith("kubernetes:monitoring.coreos.com/"):
        return []
    what = {
        "create": "Prometheus starts scraping or alerting on it",
        "delete": "Prometheus stops scraping or alerting on it",
    }.get(change.op, "Prometheus reloads what it scrapes or alerts on")
    return [
        effect_for(
            change, plan, "none", f"{change.kind} {change.object_name} {change.op}d: {what}", EVIDENCE_MONITORING, REVERT_SAFE
        )
    ]


def evidence_check_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if not change.type.startswith("command:local:") or not change.name.startswith("evidence-"):
        return []
    return [
        effect_for(change, plan, "none", f"evidence check {change.name.removeprefix('evidence-')} runs again after the deploy (reads the cluster, changes nothing)",
                   EVIDENCE_EVIDENCE_CHECK, REVERT_SAFE)
    ]  # fmt: skip


def component_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    resource = change.new or change.old or {}
    if resource.get("custom") is not False:
        return []
    return [
        effect_for(
            change,
            plan,
            "none",
            f"component {change.name} {change.op}d (a grouping; its children carry the effects)",
            EVIDENCE_COMPONENT,
            REVERT_SAFE,
        )
    ]


def _peers(policy: dict[str, Any]) -> set[str]:
    spec = policy.get("spec") or {}
    out = set()
    for direction, key in (("ingress", "from"), ("egress", "to")):
        for index, rule in enumerate(spec.get(direction) or []):
            for peer in rule.get(key) or [{}]:
                out.add(f"{direction}: {_peer(peer)} ports {rule.get('ports')} #{index}")
    return out


def _peer(peer: dict[str, Any]) -> str:
    return repr(sorted(peer.items()))


def _namespaces_of(peer: str, plan: Plan) -> list[str]:
    return [c.object_name for c in plan.changes if c.kind == "Namespace" and c.op == "delete" and repr(c.object_name) in peer]


def network_policy_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    """Removing an allow rule (or an allow policy) refuses the traffic it allowed; adding one only allows more. Traffic
    to or from a namespace the plan deletes is not missed."""
    if change.kind != "NetworkPolicy" or change.op == "create":
        return []
    old = _peers(change.old_inputs)
    new = _peers(change.new_inputs) if change.op != "delete" else set()
    lost = sorted(p for p in old - new if not _namespaces_of(p, plan))
    if change.op == "update" and not change.changed("spec.ingress", "spec.egress", "spec.podSelector", "spec.policyTypes"):
        return []
    covers = None if change.op == "delete" else ("spec.ingress", "spec.egress")
    if change.op == "update" and change.changed("spec.podSelector", "spec.policyTypes"):
        return []  # which pods a policy applies to changes: left unassessed
    if not lost:
        return [effect_for(change, plan, "none", f"NetworkPolicy {change.namespace}/{change.object_name}: allows more (or only traffic of deleted namespaces goes)",
                           EVIDENCE_NETPOL, REVERT_SAFE, covers=covers)]  # fmt: skip
    if not old or change.object_name.startswith("default-deny"):
        return []
    return [
        effect_for(change, plan, "outage", f"NetworkPolicy {change.namespace}/{change.object_name}: traffic it allowed is refused ({len(lost)} rule(s) gone); what used it stops",
                   EVIDENCE_NETPOL, needs_step("restore the rule"), covers=covers)
    ]  # fmt: skip


def app_project_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "AppProject" or change.op != "update" or not change.changed("spec.destinations", "spec.sourceRepos"):
        return []
    old_dest = {str(d.get("namespace")) for d in get_path(change.old_inputs, "spec", "destinations") or []}
    new_dest = {str(d.get("namespace")) for d in get_path(change.new_inputs, "spec", "destinations") or []}
    old_repos = set(get_path(change.old_inputs, "spec", "sourceRepos") or [])
    new_repos = set(get_path(change.new_inputs, "spec", "sourceRepos") or [])
    project = change.object_name
    stranded = []
    for r in plan.head_resources:
        inputs = r.get("inputs") or {}
        if inputs.get("kind") != "Application" or get_path(inputs, "spec", "project") != project:
            continue
        dest = str(get_path(inputs, "spec", "destination", "namespace"))
        repos = {
            s.get("repoURL") for s in [get_path(inputs, "spec", "source") or {}, *(get_path(inputs, "spec", "sources") or [])]
        }
        if ("*" not in new_dest and dest in old_dest - new_dest) or (repos & (old_repos - new_repos) and "*" not in new_repos):
            stranded.append(str(get_path(inputs, "metadata", "name")))
    covers = ("spec.destinations", "spec.sourceRepos")
    if stranded:
        return [effect_for(change, plan, "outage", f"AppProject {project}: Application(s) {', '.join(stranded)} can no longer sync (destination or source no longer permitted)",
                           EVIDENCE_APPPROJECT, needs_step("permit them again"), covers=covers)]  # fmt: skip
    return [effect_for(change, plan, "none", f"AppProject {project}: destinations or sources change; every Application still in it is permitted",
                       EVIDENCE_APPPROJECT, REVERT_SAFE, covers=covers)]  # fmt: skip


def queue_label_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    path = f"metadata.labels.{QUEUE_LABEL}"
    if change.kind != "Namespace" or change.op != "update" or not change.changed(path):
        return []
    return [
        effect_for(change, plan, "reload", f"namespace {change.object_name}: its ClusterQueue label {get_path(change.old_inputs, 'metadata', 'labels', QUEUE_LABEL)} -> "
                   f"{get_path(change.new_inputs, 'metadata', 'labels', QUEUE_LABEL)}; the ClusterQueue selecting it admits its pending workloads",
                   EVIDENCE_KUEUE + "; components/layers/batch/objects.py cluster_queue_spec (namespaceSelector on this label)", REVERT_SAFE, covers=(path,))
    ]  # fmt: skip


QUIET_METADATA_KINDS = (
    "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Role", "RoleBinding", "ClusterRoleBinding",
    "ServiceAccount", "PersistentVolumeClaim", "PodDisruptionBudget", "NetworkPolicy", "Controller", "NodeSet", "LoginSet",
    "RestApi", "Accounting", "Certificate", "Issuer", "ClusterIssuer", "MariaDB", "User", "Grant", "Database", "Backup",
    "ClusterQueue", "LocalQueue", "ResourceFlavor", "IPAddressPool", "L2Advertisement", "BGPAdvertisement",
    "SriovNetworkNodePolicy", "SriovNetwork", "SriovIBNetwork", "StorageClass", "PriorityClass", "ResourceQuota", "LimitRange",
    "Application",
)  # fmt: skip
"""Kinds whose own labels and annotations nothing selects on (selectors read pod, namespace, Service, ConfigMap and
ClusterRole labels; a workload's pods take their labels from its template, which workload_rules judge)."""
MEANINGFUL_METADATA = (
    "metallb.io/",
    "argocd.argoproj.io/",
    "pulumi.com/",
    "cert-manager.io/",
    "kubectl.kubernetes.io/",
    "helm.sh/",
)
"""Annotation and label prefixes that a controller or Pulumi acts on: not quiet."""
EVIDENCE_METADATA = (
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/ (labels and annotations are read by the "
    "selectors and tools that name them; a workload's pods take theirs from the pod template, not the object)"
)


def metadata_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    """An object's own labels and annotations, on a kind nothing selects on, with no key a controller acts on."""
    if change.op != "update" or change.kind not in QUIET_METADATA_KINDS or change.type.endswith("Patch"):
        return []
    quiet = [
        f.path
        for f in change.fields
        if f.path.startswith(("metadata.labels.", "metadata.annotations."))
        and not f.path.split(".", 2)[2].startswith(MEANINGFUL_METADATA)
    ]
    if not quiet:
        return []
    return [
        effect_for(change, plan, "none", f"{change.kind} {change.object_name}: its own labels or annotations change ({len(quiet)}); nothing selects on them",
                   EVIDENCE_METADATA, REVERT_SAFE, covers=tuple(quiet))
    ]  # fmt: skip


PULUMI_AWAIT = ("pulumi.com/waitFor", "pulumi.com/skipAwait", "pulumi.com/timeoutSeconds")
EVIDENCE_PULUMI_AWAIT = (
    "pulumi-kubernetes https://www.pulumi.com/registry/packages/kubernetes/installation-configuration/#await-behavior "
    "(these annotations change how long and for what `pulumi up` waits on the object; the cluster does not read them)"
)


def pulumi_await_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    paths = tuple(f"metadata.annotations.{key}" for key in PULUMI_AWAIT)
    if change.op != "update" or not change.changed(*paths):
        return []
    return [
        effect_for(change, plan, "none", f"{change.kind} {change.object_name}: how `pulumi up` waits for it changes (nothing in the cluster reads it)",
                   EVIDENCE_PULUMI_AWAIT, REVERT_SAFE, covers=paths)
    ]  # fmt: skip


OBJECT_RULES = (
    new_namespace_rules, deleted_with_namespace_rules, config_consumer_rules, schedule_rules, monitoring_rules, evidence_check_rules,
    component_rules, network_policy_rules, app_project_rules, queue_label_rules, metadata_rules,
    pulumi_await_rules,
)  # fmt: skip

__all__ = ["OBJECT_RULES", "consumers"]
