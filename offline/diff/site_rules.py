"""Impact rules of the rest of the site: addresses, certificates and keys, stateful data, namespaces, Argo CD
Applications, charts, Kueue, Jobs and workloads, and refusals."""

from __future__ import annotations

from typing import Any

from .effects import CANNOT_UNDO, LOGIN_SESSIONS_STEP, REVERT_SAFE, Effect, Impact, effect_for, get_path, needs_step
from .evidence import (
    EVIDENCE_ARGOCD_DELETE,
    EVIDENCE_ARGOCD_PRUNE,
    EVIDENCE_CA,
    EVIDENCE_CERT,
    EVIDENCE_JOB,
    EVIDENCE_KUEUE,
    EVIDENCE_METALLB,
    EVIDENCE_NAMESPACE,
    EVIDENCE_PVC,
    EVIDENCE_PVC_SHRINK,
    EVIDENCE_RANDOM,
    EVIDENCE_REFUSAL,
    EVIDENCE_SLURM_KEY,
    EVIDENCE_WORKLOAD,
)
from .plan import Change, Plan


def _lb_addresses(resources: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """Resource label (`type name`, as `Change.label`) -> (the LoadBalancer address it asks MetalLB for, the field)."""
    out: dict[str, tuple[str, str]] = {}

    def walk(value: Any, label: str, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "metallb.io/loadBalancerIPs" and isinstance(item, str):
                    out[label] = (item, f"{path}.{key}".lstrip("."))
                else:
                    walk(item, label, f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, label, f"{path}[{index}]")

    for r in resources:
        walk(r.get("inputs"), f"{r.get('type', '')} {r.get('name')}", "")
    return out


def address_rules(plan: Plan, impact: Impact) -> list[Effect]:
    old, new = _lb_addresses(plan.base_resources), _lb_addresses(plan.head_resources)
    effects = []
    for label in sorted(set(old) & set(new)):
        if old[label][0] != new[label][0]:
            kind, _, name = label.rpartition(" ")
            short = f"{kind.rpartition(':')[2]} {name}"
            controller = short.startswith("Controller")
            effects.append(
                Effect("outage", f"{short}: LoadBalancer address {old[label][0]} -> {new[label][0]}; clients configured with the old address lose it"
                       + (" (bare-metal slurmd and login nodes lose slurmctld until they are reconfigured)" if controller else ""),
                       EVIDENCE_METALLB, [label], needs_step("clients must be pointed at the address again"), name.split("/")[0], f"pulumi (stack {plan.stack})",
                       covers=(old[label][1], new[label][1]))
            )  # fmt: skip
    return effects


def pool_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "IPAddressPool" or change.op != "update":
        return []
    return [
        effect_for(
            change,
            plan,
            "reload",
            f"MetalLB pool {change.object_name}: addresses {get_path(change.old_inputs, 'spec', 'addresses')} -> {get_path(change.new_inputs, 'spec', 'addresses')}",
            EVIDENCE_METALLB,
            REVERT_SAFE,
            covers=("spec.addresses",),
        )
    ]


def certificate_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "Certificate" or change.op not in ("update", "replace"):
        return []
    if get_path(change.new_inputs, "spec", "isCA"):
        return [
            effect_for(change, plan, "outage", f"CA {change.object_name} re-issued: certificates it signed keep the old issuer until renewed; clients that trust only the new CA (SSSD over LDAPS) refuse them, so logins fail until then",
                    EVIDENCE_CA, needs_step("renew every certificate of the CA issuer (cmctl renew --all)"))
        ]  # fmt: skip
    return [
        effect_for(change, plan, "reload", f"certificate {change.name} re-issued into its Secret", EVIDENCE_CERT, REVERT_SAFE)
    ]


def random_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if not change.type.startswith("random:index/") or change.op != "replace":
        return []
    if change.name == "slurm-key":
        return [
            effect_for(
                change,
                plan,
                "outage",
                "Slurm auth key (slurm.key) rotated: daemons with the old key cannot talk to those with the new one; every slurmctld, slurmdbd and slurmd must restart together",
                EVIDENCE_SLURM_KEY + "; " + EVIDENCE_RANDOM,
                CANNOT_UNDO,
            )
        ]
    return [
        effect_for(
            change,
            plan,
            "singleton-restart",
            f"generated secret {change.name} rotated: its consumers restart with the new value",
            EVIDENCE_RANDOM,
            CANNOT_UNDO,
        )
    ]


STATEFUL = ("PersistentVolumeClaim", "MariaDB", "PersistentVolume")


def stateful_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    effects: list[Effect] = []
    if change.kind in STATEFUL and change.op in ("delete", "replace"):
        retained = ((change.old or {}).get("options") or {}).get("retainOnDelete")
        if not retained:
            effects.append(
                effect_for(
                    change,
                    plan,
                    "data-loss",
                    f"{change.kind} {change.name} {change.op}d: its data is deleted with it",
                    EVIDENCE_PVC,
                    CANNOT_UNDO,
                )
            )
    if change.kind == "StatefulSet" and change.changed("spec.volumeClaimTemplates"):
        effects.append(
            effect_for(
                change,
                plan,
                "data-loss",
                f"StatefulSet {change.name}: new volumeClaimTemplates; the replacement StatefulSet gets new, empty volumes",
                EVIDENCE_PVC,
                CANNOT_UNDO,
                covers=None if change.op == "replace" else ("spec.volumeClaimTemplates",),
            )
        )
    if change.kind == "PersistentVolumeClaim" and change.op == "update":
        a = get_path(change.old_inputs, "spec", "resources", "requests", "storage")
        b = get_path(change.new_inputs, "spec", "resources", "requests", "storage")
        if a != b and _quantity(b) < _quantity(a):
            effects.append(
                effect_for(
                    change,
                    plan,
                    "outage",
                    f"PVC {change.name}: {a} -> {b}; the API server refuses to shrink a claim (the deploy stops here)",
                    EVIDENCE_PVC_SHRINK,
                    REVERT_SAFE,
                    covers=("spec.resources.requests.storage",),
                )
            )
        elif a != b:
            effects.append(
                effect_for(
                    change,
                    plan,
                    "none",
                    f"PVC {change.name}: {a} -> {b} (volume expansion, online)",
                    EVIDENCE_PVC_SHRINK,
                    needs_step("a claim cannot shrink back"),
                    covers=("spec.resources.requests.storage",),
                )
            )
    if change.kind == "MariaDB" and change.op == "update" and change.changed("spec.storage") and not change.refusals:
        effects.append(
            effect_for(
                change,
                plan,
                "none",
                f"MariaDB {change.name}: storage {get_path(change.old_inputs, 'spec', 'storage', 'size')} -> {get_path(change.new_inputs, 'spec', 'storage', 'size')} (mariadb-operator resizes the volume)",
                "mariadb-operator v26.6.0 docs/storage.md (volume resize)",
                needs_step("storage cannot shrink back"),
                covers=("spec.storage",),
            )
        )
    return effects


def namespace_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "Namespace" or change.type.endswith("Patch") or change.op not in ("delete", "replace"):
        return []
    name = change.object_name
    stateful = sorted(
        f"{(r.get('inputs') or {}).get('kind')} {r.get('name')}"
        for r in plan.base_resources
        if (r.get("inputs") or {}).get("kind") in (*STATEFUL, "StatefulSet")
        and get_path(r.get("inputs"), "metadata", "namespace") == name
    )
    if stateful:
        what = f"namespace {name} {change.op}d: everything in it goes, with its data ({', '.join(stateful)})"
        return [effect_for(change, plan, "data-loss", what, EVIDENCE_NAMESPACE, CANNOT_UNDO)]
    what = f"namespace {name} {change.op}d: everything in it goes, objects Argo CD synced there included"
    return [effect_for(change, plan, "outage", what, EVIDENCE_NAMESPACE, needs_step("recreate and resync what ran there"))]


def _quantity(value: Any) -> float:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
    text = str(value or "0")
    for unit, factor in units.items():
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    try:
        return float(text)
    except ValueError:
        return 0.0


def application_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "Application":
        return []
    name = change.object_name
    inputs = change.inputs
    prune = bool(get_path(inputs, "spec", "syncPolicy", "automated", "prune"))
    destination = str(get_path(inputs, "spec", "destination", "namespace") or "")
    app = f"Argo CD Application {name}"
    if change.op == "delete":
        finalizer = any("resources-finalizer" in str(f) for f in get_path(change.old_inputs, "metadata", "finalizers") or [])
        if finalizer:
            return [
                Effect(
                    "outage",
                    f"Argo CD Application {name} deleted with its resources finalizer: everything it synced into {destination} is deleted",
                    EVIDENCE_ARGOCD_DELETE,
                    [change.label],
                    needs_step("re-add and resync; volumes it owned are gone"),
                    namespace=destination,
                    application=app,
                )
            ]
        return [
            Effect(
                "outage",
                f"Argo CD Application {name} deleted: its resources in {destination} are left running unmanaged (no self-heal, no updates)",
                EVIDENCE_ARGOCD_DELETE,
                [change.label],
                needs_step("re-add it; Argo CD adopts what is left"),
                namespace=destination,
                application=app,
            )
        ]
    if change.op == "create":
        return [
            Effect(
                "none",
                f"Argo CD Application {name} added: syncs into {destination}",
                EVIDENCE_ARGOCD_PRUNE,
                [change.label],
                REVERT_SAFE,
                namespace=destination,
                application=app,
            )
        ]
    source_fields = [f for f in change.fields if f.path.startswith("spec.source")]
    if not source_fields:
        return []
    revision = [f for f in source_fields if f.path.endswith(("targetRevision", ".chart"))]
    what = (
        f"Argo CD Application {name}: {', '.join(f'{f.path.rpartition(chr(46))[2]} {f.old} -> {f.new}' for f in revision)}; Argo CD syncs it"
        if revision
        else f"Argo CD Application {name}: values changed ({len(source_fields)} field(s)); Argo CD syncs it"
    )
    if prune:
        what += ", pruning what the new revision no longer renders"
    return [
        Effect(
            "singleton-restart",
            what + "; its pods restart where their spec changed",
            EVIDENCE_ARGOCD_PRUNE,
            [change.label],
            REVERT_SAFE,
            namespace=destination,
            application=app,
            covers=("spec.source", "spec.sources"),
        )
    ]


def chart_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.type != "kubernetes:helm.sh/v4:Chart" or change.op != "update":
        return []
    return [
        effect_for(
            change,
            plan,
            "singleton-restart",
            f"Helm chart {change.name}: {', '.join(sorted({f.path.split('.')[0] for f in change.fields}))} changed; its objects are re-rendered and the changed pods restart",
            EVIDENCE_WORKLOAD,
            REVERT_SAFE,
        )
    ]


def kueue_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if not change.type.startswith("kubernetes:kueue.x-k8s.io/") or change.op == "create":
        return []
    what = f"Kueue {change.kind} {change.object_name} {change.op}d"
    if change.kind == "LocalQueue" and change.changed("spec.clusterQueue"):
        what = f"Kueue: namespace {change.namespace} moves from ClusterQueue {get_path(change.old_inputs, 'spec', 'clusterQueue')} to {get_path(change.new_inputs, 'spec', 'clusterQueue')}"
    return [
        effect_for(
            change,
            plan,
            "reload",
            what + "; admitted workloads keep running, pending ones are re-queued",
            EVIDENCE_KUEUE,
            REVERT_SAFE,
        )
    ]


def job_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "Job" or change.op != "replace":
        return []
    renamed = change.renamed
    successor = f" (successor of {renamed[0]}: {renamed[1]})" if renamed else ""
    return [effect_for(change, plan, "reload", f"Job {change.name} runs again{successor}", EVIDENCE_JOB, REVERT_SAFE)]


WORKLOAD_TEMPLATE = ("spec.template", "spec.sssdConfRef", "spec.login", "spec.initconf")
"""The fields whose change rolls a workload's pods (a LoginSet's login container, SSSD and init configuration too)."""


def workload_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind not in ("Deployment", "StatefulSet", "DaemonSet", "LoginSet") or change.op != "update":
        return []
    if not change.changed(*WORKLOAD_TEMPLATE):
        return []
    replicas = get_path(change.new_inputs, "spec", "replicas")
    single = change.kind == "StatefulSet" or replicas == 1
    what = f"{change.kind} {change.name}: pods {'restart' if single else 'roll one at a time'} with the new template"
    rollback = REVERT_SAFE
    if change.kind == "LoginSet":
        # As a LoginSet scale-in (operator_rules.loginset_rules): each replaced login pod takes its sessions with it.
        what += ": the sessions on each replaced login pod (shells, tmux, interactive srun/salloc) end; the users log in again"
        rollback = LOGIN_SESSIONS_STEP
    return [
        effect_for(
            change,
            plan,
            "singleton-restart" if single else "reload",
            what,
            EVIDENCE_WORKLOAD,
            rollback,
            covers=WORKLOAD_TEMPLATE,
        )
    ]


def refusal_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    return [
        effect_for(
            change,
            plan,
            "outage",
            f"refused: {refusal}; `pulumi up` stops here, leaving the update half-applied",
            EVIDENCE_REFUSAL,
            REVERT_SAFE,
        )
        for refusal in change.refusals
    ]
