"""Impact rules that reproduce what an operator does with a change, each read in the operator's source at the release
components/versions.py pins (its `Pin` in offline/diff/rule_pins.py; a test fails naming the rule when that pin moves):
slurm-operator without its RestApi (no drain), a LoginSet scaled in, the controller's state volume (never resized),
mariadb-operator restarting the single database pod, an SR-IOV policy draining and rebooting nodes; and hpcforge's
own directory bootstrap (a new suffix, a new uidNumber). Known upstream defects at the pins come as risks with their
workaround (`known_defect_rules`)."""

from __future__ import annotations

import re
from typing import Any

from .effects import CANNOT_UNDO, LOGIN_SESSIONS_STEP, REVERT_SAFE, Effect, Impact, effect_for, get_path, needs_step
from .evidence import EVIDENCE_LDAP
from .plan import Change, Plan

SLINKY = "slurm-operator"
SLINKY_TAG = "v1.2.1"
MARIADB_TAG = "v26.6.0"
SRIOV_TAG = "v1.6.0"

EVIDENCE_NO_RESTAPI = (
    f"slurm-operator internal/controller/slurmclient/slurmclient_sync.go@{SLINKY_TAG}:41-47 (no RestApi bound to the "
    "Controller: the operator removes its Slurm client) and internal/controller/nodeset/slurmcontrol/slurmcontrol.go@"
    f"{SLINKY_TAG}:208-216,334-342 (without a client MakeNodeDrain does nothing and IsNodeDrained answers true), "
    f"internal/controller/nodeset/nodeset_sync.go@{SLINKY_TAG}:1297-1318 (processCondemned deletes a pod once its node "
    "reads as drained)"
)
EVIDENCE_LOGIN_SCALE = (
    f"slurm-operator internal/builder/loginbuilder/login_app.go@{SLINKY_TAG}:89-92 (a LoginSet is a Deployment with its "
    "replicas) and internal/utils/objectutils/patch.go@"
    f"{SLINKY_TAG}:145-157 (replicas copied on update); "
    "https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/#scaling-a-replicaset (a scale-down deletes "
    "pods; whatever runs in them, login sessions included, ends)"
)
EVIDENCE_STATE_VOLUME = (
    f"slurm-operator internal/builder/controllerbuilder/controller_app.go@{SLINKY_TAG}:76-84 (the state volume is a "
    "volumeClaimTemplate of the slurmctld StatefulSet) and internal/utils/objectutils/patch.go@"
    f"{SLINKY_TAG}:159-173 (an update copies minReadySeconds, ordinals, the PVC retention policy, replicas, template "
    "and updateStrategy only: volumeClaimTemplates never change, and Kubernetes would refuse it anyway)"
)
EVIDENCE_MARIADB_RESTART = (
    f"mariadb-operator internal/controller/mariadb_controller.go@{MARIADB_TAG}:392-402 (spec.myCnf becomes a ConfigMap), "
    f"internal/controller/mariadb_controller_update.go@{MARIADB_TAG}:107-116 (its hash is a pod annotation: a new "
    f"config is a new pod template, like resources or image) and :84-103,223-235 (the stale primary pod is deleted; "
    "with one replica there is none to switch over to)"
)
EVIDENCE_SRIOV = (
    f"sriov-network-operator pkg/daemon/daemon.go@{SRIOV_TAG}:233-277 (a policy change the plugins flag drains the "
    f"node: its pods are evicted) and :394-397 (and reboots it when a plugin asks: firmware or kernel settings); "
    "the NVIDIA build network-operator 26.4.1 deploys (nvcr.io/nvidia/mellanox/sriov-network-operator:"
    "network-operator-v26.4.1) follows it"
)
EVIDENCE_LDAP_SUFFIX = (
    "scripts/directory/ldap_sync.py ensure_backend (a new suffix gets a new, empty backend) and prune (prunes under the "
    "new suffix only); SKIP_COMPARE userPassword (the LDIF never carries users' own passwords): the old tree stays, "
    "with every password users set, and nothing reads it"
)
EVIDENCE_UID = (
    "POSIX file ownership is by number: files keep the old uidNumber (home, scratch, NFS exports), so the user no "
    "longer owns them and a later user given that number does (scripts/directory/ldap_sync.py replaces the attribute)"
)
EVIDENCE_SLINKY_249 = (
    "SlinkyProject/slurm-operator issue #249 (open at v1.2.1): after a NodeSet rolling update a node can stay drained "
    "with reason 'Pod is terminating'"
)


# --- slurm-operator: the RestApi, the LoginSet, the controller's state volume -----------------------------------------


def _restapis(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        dict(r.get("inputs") or {})
        for r in resources
        if (r.get("inputs") or {}).get("kind") == "RestApi" and str(r.get("type", "")).startswith("kubernetes:slinky.slurm.net/")
    ]


def drains_work(plan: Plan) -> bool:
    """Whether slurm-operator can drain Slurm nodes after the change: a RestApi is bound to the Controller in the head
    (no RestApi: no Slurm client, and every 'drain first' is a no-op)."""
    return bool(_restapis(plan.head_resources)) or not any(
        (r.get("inputs") or {}).get("kind") == "Controller" for r in plan.head_resources
    )


def restapi_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "RestApi" or change.op != "delete" or _restapis(plan.head_resources):
        return []
    return [
        effect_for(change, plan, "outage",
                   "RestApi deleted: slurmrestd stops, and slurm-operator loses its Slurm client: it can no longer drain Slurm nodes, so later NodeSet rolls "
                   "and scale-ins delete busy pods without draining them (their jobs are killed) until a RestApi is back",
                   EVIDENCE_NO_RESTAPI, needs_step("re-enable the RestApi before any NodeSet change"))
    ]  # fmt: skip


EVIDENCE_SSSD_HASH = (
    f"slurm-operator internal/builder/loginbuilder/login_app.go@{SLINKY_TAG}:117-127,322-354 (the login pod template "
    "carries the checksum of the sssdConfRef Secret's sssd.conf: a new sssd.conf rolls the login pods)"
)


def sssd_secret_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    """The Secret a LoginSet's sssdConfRef names: its login pods roll (slurm-operator hashes it into their template)."""
    if change.kind != "Secret" or change.op == "create":
        return []
    users = [
        str(get_path(r.get("inputs"), "metadata", "name"))
        for r in plan.head_resources
        if (r.get("inputs") or {}).get("kind") == "LoginSet"
        and get_path(r.get("inputs"), "metadata", "namespace") == change.namespace
        and get_path(r.get("inputs"), "spec", "sssdConfRef", "name") == change.object_name
    ]
    if not users:
        return []
    return [
        effect_for(change, plan, "reload",
                   f"sssd.conf Secret {change.object_name} {change.op}d: the login pods of LoginSet(s) {', '.join(users)} roll one at a time with it "
                   "(the sessions on each replaced pod end)", EVIDENCE_SSSD_HASH, LOGIN_SESSIONS_STEP)
    ]  # fmt: skip


def loginset_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "LoginSet" or change.op != "update":
        return []
    effects = []
    if change.changed("spec.strategy"):
        effects.append(
            effect_for(change, plan, "none", f"LoginSet {change.object_name}: its update strategy changes (it governs the next roll; no pod restarts)",
                       EVIDENCE_LOGIN_SCALE, REVERT_SAFE, covers=("spec.strategy",))
        )  # fmt: skip
    if not change.changed("spec.replicas"):
        return effects
    before = int(get_path(change.old_inputs, "spec", "replicas") or 0)
    after = int(get_path(change.new_inputs, "spec", "replicas") or 0)
    if after >= before:
        return [
            *effects,
            effect_for(change, plan, "none", f"LoginSet {change.object_name}: {before} -> {after} login pods",
                       EVIDENCE_LOGIN_SCALE, REVERT_SAFE, covers=("spec.replicas",)),
        ]  # fmt: skip
    return [
        *effects,
        # The same class as a roll of the login pods (site_rules.workload_rules): logins go on on the pods that stay,
        # the sessions on the deleted ones end. Nothing stops until someone acts, so not an outage (docs/operations.md).
        effect_for(change, plan, "reload",
                   f"LoginSet {change.object_name}: scale-in {before} -> {after}: {before - after} login pod(s) deleted, with the sessions on them "
                   "(shells, tmux, interactive srun/salloc); the users on them must log in again",
                   EVIDENCE_LOGIN_SCALE, LOGIN_SESSIONS_STEP, covers=("spec.replicas",))
    ]  # fmt: skip


STATE_VOLUME = "spec.persistence"


def state_volume_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "Controller" or change.op != "update" or not change.changed(STATE_VOLUME):
        return []
    fields = ", ".join(
        f"{f.path.removeprefix(STATE_VOLUME + '.')} {f.old} -> {f.new}" for f in change.fields if f.path.startswith(STATE_VOLUME)
    )
    return [
        effect_for(change, plan, "none",
                   f"Controller {change.object_name}: state volume ({fields}) NOT applied: slurm-operator never updates the StatefulSet's volumeClaimTemplates; "
                   "the volume stays as it is and nothing restarts",
                   EVIDENCE_STATE_VOLUME, needs_step("resize the claim itself (kubectl patch pvc statesave-<controller>-0) if that is what is meant"),
                   covers=(STATE_VOLUME,))
    ]  # fmt: skip


# --- mariadb-operator ------------------------------------------------------------------------------------------------

MARIADB_POD_FIELDS = (
    "spec.myCnf", "spec.resources", "spec.image", "spec.env", "spec.envFrom", "spec.securityContext", "spec.podSecurityContext",
    "spec.affinity", "spec.nodeSelector", "spec.tolerations", "spec.livenessProbe", "spec.readinessProbe", "spec.args",
    "spec.volumes", "spec.volumeMounts", "spec.podMetadata", "spec.priorityClassName", "spec.timeZone", "spec.port",
)  # fmt: skip
"""MariaDB fields that end up in the database pod's template (or its config-hash annotation)."""


def mariadb_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "MariaDB" or change.op != "update" or not change.changed(*MARIADB_POD_FIELDS):
        return []
    replicas = int(get_path(change.new_inputs, "spec", "replicas") or 1)
    fields = sorted({f.path.split(".")[1] for f in change.fields if f.path.startswith(MARIADB_POD_FIELDS)})
    if replicas > 1:
        what = f"MariaDB {change.object_name}: {', '.join(fields)} changed; mariadb-operator replaces the replicas' pods, then switches the primary over and replaces it"
        severity = "singleton-restart"
    else:
        what = (
            f"MariaDB {change.object_name}: {', '.join(fields)} changed; mariadb-operator deletes the single database pod to apply it: "
            "the accounting database is down until the new pod is ready (slurmdbd loses it; slurmctld keeps the job records meanwhile)"
        )
        severity = "singleton-restart"
    return [effect_for(change, plan, severity, what, EVIDENCE_MARIADB_RESTART, REVERT_SAFE, covers=MARIADB_POD_FIELDS)]


# --- sriov-network-operator ------------------------------------------------------------------------------------------


def sriov_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "SriovNetworkNodePolicy":
        return []
    selector = get_path(change.inputs, "spec", "nodeSelector") or {}
    where = ", ".join(f"{k}={v}" for k, v in sorted(selector.items())) or "every node"
    return [
        effect_for(change, plan, "outage",
                   f"SR-IOV policy {change.object_name} {change.op}d: the SR-IOV config daemon drains the Kubernetes nodes it selects ({where}), evicting their pods "
                   "(slurmd pods too, without a Slurm drain: their jobs are killed), and may reboot them",
                   EVIDENCE_SRIOV, needs_step("drain the Slurm nodes on those hosts first (scontrol update state=drain), then apply"))
    ]  # fmt: skip


# --- hpcforge's directory: the suffix, a user's uidNumber ------------------------------------------------------------


def _suffix(resources: list[dict[str, Any]]) -> str | None:
    for r in resources:
        inputs = r.get("inputs") or {}
        if inputs.get("kind") == "ConfigMap" and str(get_path(inputs, "metadata", "name") or "").startswith("dirsrv-ldif-"):
            text = (inputs.get("data") or {}).get("bootstrap.ldif")
            if isinstance(text, str) and text.startswith("dn: "):
                return text.splitlines()[0][4:].strip()
    return None


def _uids(resources: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for r in resources:
        inputs = r.get("inputs") or {}
        if inputs.get("kind") == "ConfigMap" and str(get_path(inputs, "metadata", "name") or "").startswith("dirsrv-ldif-"):
            text = (inputs.get("data") or {}).get("bootstrap.ldif") or ""
            for entry in str(text).split("\n\n"):
                uid = re.search(r"^dn: uid=([^,]+),ou=People,", entry, re.M)
                number = re.search(r"^uidNumber: (\d+)$", entry, re.M)
                if uid and number:
                    out[uid.group(1)] = number.group(1)
    return out


def directory_rules(plan: Plan, impact: Impact) -> list[Effect]:
    """Over the whole plan: a new directory suffix, a user's new uidNumber."""
    holders = [c.label for c in plan.changes if c.kind == "ConfigMap" and c.object_name.startswith("dirsrv-ldif-")]
    where = f"pulumi (stack {plan.stack})"
    effects: list[Effect] = []
    old, new = _suffix(plan.base_resources), _suffix(plan.head_resources)
    if old and new and old != new:
        effects.append(
            Effect("data-loss", f"directory suffix {old} -> {new}: every entry is written anew under {new}; the passwords users set, and anything else written to the old "
                   "tree, stay behind in it, unread: every user must set a password again", EVIDENCE_LDAP_SUFFIX + "; " + EVIDENCE_LDAP,
                   holders or ["directory/dirsrv-bootstrap"], CANNOT_UNDO, "directory", where, covers=())
        )  # fmt: skip
    a, b = _uids(plan.base_resources), _uids(plan.head_resources)
    moved = sorted(u for u in set(a) & set(b) if a[u] != b[u])
    if moved:
        effects.append(
            Effect("data-loss", f"directory: uidNumber of {', '.join(f'{u} {a[u]} -> {b[u]}' for u in moved)}: their files keep the old number and are orphaned "
                   "(they no longer own them)", EVIDENCE_UID, holders or ["directory/dirsrv-bootstrap"],
                   needs_step("chown the users' files to the new number, or revert"), "directory", where, users=moved, covers=())
        )  # fmt: skip
    return effects


# --- known upstream defects at the pins ------------------------------------------------------------------------------


def known_defect_rules(plan: Plan, impact: Impact) -> list[Effect]:
    """Risks that a defect open upstream at the pinned release adds to an effect, with the workaround."""
    effects: list[Effect] = []
    rolls = [d for d in impact.drains if d.kind == "roll"]
    if rolls:
        nodes = sorted({n for d in rolls for n in d.nodes})
        labels = [c.label for c in plan.changes if c.kind == "NodeSet" and c.object_name in {d.nodeset for d in rolls}]
        effects.append(
            Effect("rolling-drain",
                   f"known defect (slurm-operator #249 at {SLINKY_TAG}): after the roll of {', '.join(d.nodeset for d in rolls)} a node can stay drained with reason "
                   "'Pod is terminating'; workaround: `scontrol update nodename=<node> state=undrain` once its new pod is up",
                   EVIDENCE_SLINKY_249, labels, needs_step("undrain the nodes left drained"), "slurm", f"pulumi (stack {plan.stack})", nodes=nodes, covers=())
        )  # fmt: skip
    return effects


CHANGE_RULES = (restapi_rules, loginset_rules, sssd_secret_rules, state_volume_rules, mariadb_rules, sriov_rules)
PLAN_RULES = (directory_rules, known_defect_rules)
