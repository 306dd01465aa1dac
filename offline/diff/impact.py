"""What the operators and daemons of the site will do with a plan: one effect per line, each with the
upstream code or document that makes it so (the `EVIDENCE_*` constant next to its rule), a severity, a
blast radius and a rollback path.

Severities, mildest first: none (nothing running notices), reload (a daemon rereads its configuration or a
reconcile Job runs; nothing restarts), rolling-drain (Slurm nodes drained and restarted a few at a time),
singleton-restart (a single instance restarts: a short pause of that service), outage (a service or part
of the cluster stops until someone acts, or the deploy itself is refused half-way), data-loss (state that
cannot be recreated is deleted or orphaned).

`Impact.drained_nodes` is the set of Slurm node names that drain or restart NOW; the live view
(offline/live_impact.py `jobs_at_risk`) names the running jobs on them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .plan import MISSING, Change, Plan, diff_values, values_at

SEVERITIES = ("none", "reload", "rolling-drain", "singleton-restart", "outage", "data-loss")
REVERT_SAFE = "revert safe"
CANNOT_UNDO = "cannot undo"


def needs_step(step: str) -> str:
    return f"needs a step: {step}"


def rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@dataclass
class Effect:
    severity: str
    what: str
    evidence: str
    resources: list[str]
    rollback: str
    namespace: str = ""
    application: str = ""
    nodes: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    gpus: int = 0


@dataclass
class Impact:
    effects: list[Effect]
    drained_nodes: set[str] = field(default_factory=set)
    """Slurm nodes that drain or restart now (for the live view's running jobs)."""
    reprovisioned_nodes: set[str] = field(default_factory=set)
    """Bare-metal hosts that boot a new image or join script at their next boot (not now)."""

    @property
    def worst(self) -> str:
        return max((e.severity for e in self.effects), key=rank, default="none")

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for e in self.effects if e.severity == s) for s in SEVERITIES}


# --- slurm.conf: which parameters need a restart (slurm.conf(5) of Slurm 26.05.3) ------------------------------

SLURM_CONF_MAN = "slurm-26.05.3.tar.bz2:doc/man/man5/slurm.conf.5"
SLURM_CONF_DEFAULT_EVIDENCE = (
    f"{SLURM_CONF_MAN}, DESCRIPTION: 'Changes to the configuration file take effect upon restart of Slurm daemons, "
    'daemon receipt of the SIGHUP signal, or execution of the command "scontrol reconfigure" unless otherwise noted\'; '
    "slurm-operator v1.2.1 internal/builder/controllerbuilder/scripts/reconfigure.sh (the reconfigure sidecar runs "
    "`scontrol reconfigure` when the files under /etc/slurm change)"
)
EVIDENCE_CONTROLLER_RECREATE = (
    "slurm-operator v1.2.1 api/v1beta1/controller_types.go InplaceReconfigure (default false: 'the pod will be recreated and "
    "reconfigure issued only on startup') and internal/builder/controllerbuilder/controller_app.go controllerPodTemplate "
    "(the pod template carries slurm-config-hash, getHashes; the reconfigure sidecar only with InplaceReconfigure)"
)


@dataclass(frozen=True)
class RestartRule:
    severity: str
    effect: str
    quote: str
    """Words of the parameter's entry in slurm.conf(5) (tests/test_diff.py finds them there, in the pinned tarball)."""


SLURM_CONF_RESTART: dict[str, RestartRule] = {
    "AuthType": RestartRule(
        "outage",
        "every Slurm daemon and command must be stopped, then restarted with the new AuthType; outstanding job steps are interrupted",
        "All Slurm daemons and commands must be terminated prior to changing",
    ),
    "SwitchType": RestartRule(
        "data-loss",
        "all daemons restart; with running jobs, slurmctld may lose the records of all jobs",
        "records of all jobs in any state may be lost",
    ),
    "SlurmctldPort": RestartRule(
        "singleton-restart",
        "slurmctld must restart to listen on the new port (a TCP listening setting), and every slurmd must learn it",
        "The port number that the Slurm controller",
    ),
    "SlurmdPort": RestartRule(
        "rolling-drain",
        "every slurmd must restart to listen on the new port (a TCP listening setting)",
        "The port number that the Slurm compute node daemon",
    ),
    "StateSaveLocation": RestartRule(
        "data-loss",
        "slurmctld reads its state (every running and pending job) from StateSaveLocation at start: a new location starts empty",
        "Since all running and pending job information is stored here",
    ),
}
"""Parameters that `scontrol reconfigure` does not apply; every other parameter is applied by it (the
man page's DESCRIPTION: 'unless otherwise noted'; 'Changes to TCP listening settings will require a daemon
restart' covers the two ports)."""

LISTENING_QUOTE = "Changes to TCP listening settings will require a daemon restart."


def applied_by(key: str) -> str:
    """How a change of slurm.conf parameter `key` takes effect on a running slurmctld: `restart` for the parameters
    of `SLURM_CONF_RESTART`, else `reconfigure` (tests/test_real_slurm_reconfigure.py holds real 26.05.3 to it)."""
    return "restart" if key in SLURM_CONF_RESTART else "reconfigure"


def slurm_conf_items(text: str) -> dict[str, str]:
    """`Key=Value` settings of a slurm.conf fragment (NodeSet=/PartitionName= lines by their name)."""
    items: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or "=" not in line:
            continue
        key, _, rest = line.partition("=")
        if key in ("NodeSet", "PartitionName", "NodeName"):
            items[f"{key}={rest.split()[0] if rest.split() else ''}"] = line
        else:
            items[key] = rest.strip()
    return items


# --- evidence ------------------------------------------------------------------------------------------------

EVIDENCE_NODESET_ROLL = (
    "slurm-operator v1.2.1 internal/controller/nodeset/nodeset_history.go getPatch (a revision covers spec.template, "
    "slurmd, extraConf, logfile, ssh, ordinalPadding, oversubscribeNode) and nodeset_sync.go splitUpdatePods "
    "(maxUnavailable of replicas, rounded up, at least 1); docs/concepts/nodeset-controller.md 'A pod is never "
    "deleted until its Slurm node is fully drained'"
)
EVIDENCE_NODESET_SCALE_IN = "slurm-operator v1.2.1 docs/concepts/nodeset-controller.md, Scale-in Lifecycle: drains each selected pod's Slurm node before deleting it"
EVIDENCE_NODESET_NAMES = "slurm-operator v1.2.1 internal/controller/nodeset/utils/utils.go GetOrdinalPodName ('<nodeset>-<ordinal>') and GetSlurmNodeName (the pod's hostname)"
EVIDENCE_NODESET_DELETE = (
    "slurm-operator v1.2.1 internal/controller/nodeset/nodeset_sync.go Sync ('NodeSet is being deleted, skipping sync': no drain); "
    "Kubernetes garbage collection (https://kubernetes.io/docs/concepts/architecture/garbage-collection/, cascading deletion): "
    "the NodeSet's pods go with it, without the operator's drain"
)
EVIDENCE_GRENDEL_BOOT = "Grendel serves hosts.json/images.json at PXE boot (https://grendel.readthedocs.io, Provisioning): a running host keeps its image until it reboots"
EVIDENCE_CONTROLLER_POD = "slurm-operator v1.2.1 internal/builder/controllerbuilder/controller_app.go (one slurmctld StatefulSet pod built from the Controller spec): a changed pod spec restarts it"
EVIDENCE_CLUSTER_NAME = (
    "slurm-26.05.3 src/slurmctld/controller.c _verify_clustername: 'CLUSTER NAME MISMATCH ... Remove %s to override' "
    "(fatal: slurmctld does not start on state saved under another ClusterName)"
)
EVIDENCE_SLURMDBD = "https://slurm.schedmd.com/accounting.html (slurmctld keeps job records for slurmdbd while it is down); slurm-operator v1.2.1 builds one slurmdbd pod from the Accounting spec"
EVIDENCE_SACCT = "scripts/slurm/sacct_sync.py make_plan (hpcforge's reconcile: `prune` deletes users, associations, accounts and QOS absent from config)"
EVIDENCE_LDAP = "scripts/directory/ldap_sync.py prune (entries under the OUs hpcforge owns that the LDIF lacks are deleted)"
EVIDENCE_METALLB = "MetalLB https://metallb.io/usage/ ('metallb.io/loadBalancerIPs' requests that address); bare-metal slurmd reach slurmctld at its address (docs/layers/provisioning.md join script, configless --conf-server)"
EVIDENCE_CA = "cert-manager https://cert-manager.io/docs/configuration/ca/ (certificates already issued are not re-issued when the CA changes; they keep the old issuer until renewed)"
EVIDENCE_CERT = (
    "cert-manager https://cert-manager.io/docs/usage/certificate/ (a changed Certificate spec is re-issued into its Secret)"
)
EVIDENCE_RANDOM = "pulumi-random: a replaced RandomPassword/RandomBytes has a new value (terraform-provider-random docs: changes force a new value); the old one is not kept"
EVIDENCE_SLURM_KEY = (
    "https://slurm.schedmd.com/authentication.html (auth/slurm: every daemon must share slurm.key); slurm.conf(5) AuthType"
)
EVIDENCE_PVC = "https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming (a deleted claim's volume is deleted with reclaimPolicy Delete, the default of dynamic provisioning)"
EVIDENCE_PVC_SHRINK = (
    "https://kubernetes.io/docs/concepts/storage/persistent-volumes/#expanding-persistent-volumes-claims (a claim can only grow)"
)
EVIDENCE_REFUSAL = "the admission reproductions in policies/rules/admission_*.py and the Pulumi engine (protect): `pulumi up` stops at this resource"
EVIDENCE_ARGOCD_PRUNE = "Argo CD v3.4.4 docs/user-guide/auto_sync.md (automated sync with prune: true deletes what the new revision no longer renders)"
EVIDENCE_ARGOCD_DELETE = "Argo CD v3.4.4 docs/user-guide/app_deletion.md (without the resources finalizer, deleting an Application leaves its resources; with it, they are deleted)"
EVIDENCE_KUEUE = "Kueue https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/ (quota changes apply to workloads not yet admitted; admitted ones keep running)"
EVIDENCE_JOB = (
    "pulumi-kubernetes diff.go (a Job's `.metadata.name` and `.spec.template` force a replacement): the successor Job runs again"
)
EVIDENCE_WORKLOAD = "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment (a changed pod template rolls the pods)"
EVIDENCE_CONFIGMAP_REPLACE = "pulumi-kubernetes diff.go forceNewProperties (ConfigMap .data without enableConfigMapMutable) and provider.go Diff (deleteBeforeReplace for a named object)"


# --- helpers -------------------------------------------------------------------------------------------------


def _get(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _scaled(value: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true), at least 1."""
    if isinstance(value, str) and value.endswith("%"):
        percent = int(value[:-1])
        return max(1, -(-percent * total // 100))
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return max(1, -(-25 * total // 100))


def hostlist(names: list[str]) -> str:
    """Slurm-style compact host list: gpu-h100-[0-3], cn[001-004]."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        match = re.fullmatch(r"(.*?)(\d+)", name)
        if match:
            digits = match.group(2)
            width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0  # zero-padded: cn001
            groups.setdefault((match.group(1), width), []).append(int(digits))
        else:
            plain.append(name)
    out = list(plain)
    for (prefix, width), numbers in groups.items():
        numbers.sort()
        ranges, start = [], numbers[0]
        for a, b in zip(numbers, [*numbers[1:], None], strict=True):
            if b is None or b != a + 1:
                ranges.append(f"{start:0{width}d}" if start == a else f"{start:0{width}d}-{a:0{width}d}")
                if b is not None:
                    start = b
        out.append(f"{prefix}{ranges[0]}" if len(numbers) == 1 else f"{prefix}[{','.join(ranges)}]")
    return ",".join(out)


def _gpus(nodeset: dict[str, Any]) -> int:
    limits = _get(nodeset, "spec", "slurmd", "resources", "limits") or {}
    try:
        return int(limits.get("nvidia.com/gpu", 0))
    except (TypeError, ValueError):
        return 0


def _nodeset_nodes(nodeset: dict[str, Any], replicas: int | None = None) -> list[str]:
    name = str(_get(nodeset, "metadata", "name"))
    count = int(_get(nodeset, "spec", "replicas") or 0) if replicas is None else replicas
    return [f"{name}-{i}" for i in range(count)]


def _hosts(resources: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in resources:
        inputs = r.get("inputs") or {}
        if inputs.get("kind") == "ConfigMap" and str(_get(inputs, "metadata", "name") or "").startswith("grendel-inventory-"):
            text = (inputs.get("data") or {}).get("hosts.json")
            if isinstance(text, str):
                out.update({str(h["name"]): h for h in json.loads(text)})
    return out


def _host_nodeset(host: dict[str, Any]) -> str | None:
    return next((t.split(":", 1)[1] for t in host.get("tags") or [] if str(t).startswith("nodeset:")), None)


def _application_of(change: Change, plan: Plan) -> str:
    if change.kind == "Application":
        return f"Argo CD Application {change.object_name}"
    return f"pulumi (stack {plan.stack})"


def _effect(change: Change, plan: Plan, severity: str, what: str, evidence: str, rollback: str, **extra: Any) -> Effect:
    return Effect(
        severity,
        what,
        evidence,
        [change.label],
        rollback,
        namespace=change.namespace or "-",
        application=_application_of(change, plan),
        **extra,
    )


# --- rules ---------------------------------------------------------------------------------------------------

REVISION_FIELDS = (
    "spec.template",
    "spec.slurmd",
    "spec.extraConf",
    "spec.logfile",
    "spec.ssh",
    "spec.ordinalPadding",
    "spec.oversubscribeNode",
)


def nodeset_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "NodeSet":
        return []
    name = change.object_name
    if change.op == "create":
        nodes = _nodeset_nodes(change.new_inputs)
        return [
            _effect(
                change,
                plan,
                "none",
                f"NodeSet {name}: {len(nodes)} new Slurm node(s) {hostlist(nodes) or '(bare-metal only)'} register",
                EVIDENCE_NODESET_NAMES,
                REVERT_SAFE,
                nodes=nodes,
            )
        ]
    if change.op in ("delete", "replace"):
        nodes = _nodeset_nodes(change.old_inputs)
        impact.drained_nodes.update(nodes)
        return [
            _effect(
                change, plan, "outage",
                f"NodeSet {name} {'deleted' if change.op == 'delete' else 'replaced'}: its pods {hostlist(nodes) or '(none)'} are deleted without a drain; jobs on them are killed",
                EVIDENCE_NODESET_DELETE, needs_step("recreate the NodeSet; killed jobs must be resubmitted"), nodes=nodes, gpus=_gpus(change.old_inputs) * len(nodes),
            )
        ]  # fmt: skip
    effects: list[Effect] = []
    new, old = change.new_inputs, change.old_inputs
    replicas = int(_get(new, "spec", "replicas") or 0)
    before = int(_get(old, "spec", "replicas") or 0)
    if change.changed(*REVISION_FIELDS) and replicas:
        strategy = _get(new, "spec", "updateStrategy") or {}
        nodes = _nodeset_nodes(new, min(replicas, before))
        if strategy.get("type") == "OnDelete":
            effects.append(
                _effect(
                    change,
                    plan,
                    "none",
                    f"NodeSet {name}: new pod revision; OnDelete keeps the running pods until each is deleted",
                    EVIDENCE_NODESET_ROLL,
                    REVERT_SAFE,
                    nodes=nodes,
                )
            )
        else:
            at_once = min(_scaled(_get(strategy, "rollingUpdate", "maxUnavailable"), replicas), len(nodes))
            gpus = _gpus(new)
            fields = sorted({f.path.split(".")[1].split("[")[0] for f in change.fields if f.path.startswith(REVISION_FIELDS)})
            impact.drained_nodes.update(nodes)
            effects.append(
                _effect(
                    change, plan, "rolling-drain",
                    f"NodeSet {name}: the operator rolls {len(nodes)} pod(s) {hostlist(nodes)} ({', '.join(fields)} changed), draining each Slurm node "
                    f"first; at most {at_once} node(s){f' and {at_once * gpus} GPU(s)' if gpus else ''} out at once",
                    EVIDENCE_NODESET_ROLL, REVERT_SAFE, nodes=nodes, gpus=at_once * gpus,
                )
            )  # fmt: skip
    if replicas < before:
        gone = [f"{name}-{i}" for i in range(replicas, before)]
        impact.drained_nodes.update(gone)
        effects.append(
            _effect(change, plan, "rolling-drain", f"NodeSet {name}: scale-in {before} -> {replicas}; {len(gone)} node(s) drained then deleted (default order: highest ordinals, {hostlist(gone)})",
                    EVIDENCE_NODESET_SCALE_IN, REVERT_SAFE, nodes=gone, gpus=_gpus(old) * len(gone))
        )  # fmt: skip
    elif replicas > before:
        added = [f"{name}-{i}" for i in range(before, replicas)]
        effects.append(
            _effect(
                change,
                plan,
                "none",
                f"NodeSet {name}: scale-out {before} -> {replicas}; new node(s) {hostlist(added)}",
                EVIDENCE_NODESET_NAMES,
                REVERT_SAFE,
                nodes=added,
            )
        )
    return effects


def controller_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "Controller" or change.op == "create":
        return []
    effects: list[Effect] = []
    old, new = change.old_inputs, change.new_inputs
    if change.op == "delete":
        return [
            _effect(
                change,
                plan,
                "outage",
                "Slurm Controller deleted: slurmctld stops; no job is scheduled",
                EVIDENCE_CONTROLLER_POD,
                needs_step("recreate the controller"),
            )
        ]
    if _get(old, "spec", "clusterName") != _get(new, "spec", "clusterName"):
        effects.append(
            _effect(change, plan, "data-loss",
                    f"ClusterName {_get(old, 'spec', 'clusterName')} -> {_get(new, 'spec', 'clusterName')}: slurmctld refuses to start on its saved state; starting it means deleting the state (every queued and running job) and a new cluster in the accounting database",
                    EVIDENCE_CLUSTER_NAME, CANNOT_UNDO)
        )  # fmt: skip
    a = slurm_conf_items(str(_get(old, "spec", "extraConf") or ""))
    b = slurm_conf_items(str(_get(new, "spec", "extraConf") or ""))
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    reload = [k for k in changed if k not in SLURM_CONF_RESTART]
    for key in changed:
        rule = SLURM_CONF_RESTART.get(key)
        if rule is not None:
            effects.append(
                _effect(
                    change,
                    plan,
                    rule.severity,
                    f"slurm.conf {key}: {a.get(key, '(unset)')} -> {b.get(key, '(unset)')}: {rule.effect}",
                    f"{SLURM_CONF_MAN}, {key}: '{rule.quote}'",
                    CANNOT_UNDO if rule.severity == "data-loss" else REVERT_SAFE,
                )
            )
    if reload:
        effects.append(_config_effect(change, plan, f"slurm.conf: {', '.join(reload)} changed"))
    pod_fields = [
        f.path for f in change.fields if not f.path.startswith(("spec.extraConf", "spec.clusterName", "spec.service", "metadata"))
    ]
    if pod_fields:
        effects.append(
            _effect(change, plan, "singleton-restart", f"slurmctld restarts ({', '.join(sorted({p.split('.')[1] for p in pod_fields if '.' in p}))} changed): scheduling pauses; running jobs continue",
                    EVIDENCE_CONTROLLER_POD, REVERT_SAFE)
        )  # fmt: skip
    return effects


def _controller(plan: Plan) -> dict[str, Any]:
    for r in plan.head_resources:
        inputs = r.get("inputs") or {}
        if inputs.get("kind") == "Controller" and str(inputs.get("apiVersion", "")).startswith("slinky.slurm.net/"):
            return dict(inputs)
    return {}


def _controller_config_maps(plan: Plan) -> set[str]:
    """The ConfigMaps the Controller folds into the Slurm configuration (configFileRefs, prolog and epilog scripts)."""
    spec = _controller(plan).get("spec") or {}
    keys = ("configFileRefs", "prologScriptRefs", "epilogScriptRefs", "prologSlurmctldScriptRefs", "epilogSlurmctldScriptRefs")
    return {str(ref.get("name")) for key in keys for ref in spec.get(key) or [] if isinstance(ref, dict)}


def _config_effect(change: Change, plan: Plan, what: str) -> Effect:
    """A Slurm configuration change that `scontrol reconfigure` applies: in place only with inplaceReconfigure."""
    if _get(_controller(plan), "spec", "inplaceReconfigure"):
        return _effect(
            change,
            plan,
            "reload",
            f"{what}; the controller's reconfigure sidecar runs `scontrol reconfigure` (no daemon restart)",
            SLURM_CONF_DEFAULT_EVIDENCE,
            REVERT_SAFE,
        )
    return _effect(
        change, plan, "singleton-restart",
        f"{what}; the operator recreates the slurmctld pod (Controller inplaceReconfigure is false), which reconfigures the cluster at start: scheduling pauses, running jobs continue",
        EVIDENCE_CONTROLLER_RECREATE + "; " + SLURM_CONF_DEFAULT_EVIDENCE, REVERT_SAFE,
    )  # fmt: skip


def config_map_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "ConfigMap" or change.op not in ("update", "replace"):
        return []
    name, ns = change.object_name, change.namespace
    if ns == "slurm" and name in _controller_config_maps(plan):
        files = sorted({f.path.split(".", 1)[1] for f in change.fields if f.path.startswith("data.")})
        return [_config_effect(change, plan, f"Slurm config files {', '.join(files)} replaced ({name})")]
    boot = change.changed("data.images.json") or any(f.path.startswith("data.join-") for f in change.fields)
    if ns == "provisioning" and name.startswith("grendel-") and boot:
        hosts = _hosts(plan.head_resources)
        images_old = {i["name"]: i for i in _images(plan.base_resources)}
        images_new = {i["name"]: i for i in _images(plan.head_resources)}
        changed_images = {n for n in set(images_old) | set(images_new) if images_old.get(n) != images_new.get(n)}
        scripts = {f.path.split(".", 1)[1] for f in change.fields if f.path.startswith("data.join-")}
        nodesets = {s.removeprefix("join-").removesuffix(".sh") for s in scripts}
        affected = sorted(
            h for h, host in hosts.items() if host.get("boot_image") in changed_images or _host_nodeset(host) in nodesets
        )
        impact.reprovisioned_nodes.update(affected)
        if not affected:
            return []
        return [
            _effect(
                change,
                plan,
                "reload",
                f"{len(affected)} bare-metal host(s) {hostlist(affected)} boot the new image/join script at their next boot; nothing restarts now",
                EVIDENCE_GRENDEL_BOOT,
                REVERT_SAFE,
                nodes=affected,
            )
        ]
    if ns == "monitoring" and name == "hpcforge-dashboards":
        return [
            _effect(
                change,
                plan,
                "reload",
                "Grafana dashboards replaced; Grafana's sidecar reloads them",
                EVIDENCE_CONFIGMAP_REPLACE,
                REVERT_SAFE,
            )
        ]
    return []


def _images(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for r in resources:
        inputs = r.get("inputs") or {}
        text = (inputs.get("data") or {}).get("images.json") if inputs.get("kind") == "ConfigMap" else None
        if isinstance(text, str):
            return list(json.loads(text))
    return []


def accounting_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind == "Accounting" and change.op == "update":
        return [
            _effect(
                change,
                plan,
                "singleton-restart",
                "slurmdbd restarts; slurmctld keeps job records until it is back",
                EVIDENCE_SLURMDBD,
                REVERT_SAFE,
            )
        ]
    return []


def entity_rules(plan: Plan, impact: Impact) -> list[Effect]:
    effects: list[Effect] = []
    by = {e.kind: e for e in plan.entities}
    qos, users, accounts = by["QOS"], by["Slurm user"], by["Slurm account"]
    where = f"pulumi (stack {plan.stack})"
    if qos.changed or qos.added:
        effects.append(
            Effect(
                "reload",
                f"accounting reconcile: QOS {', '.join([*(f'+{q}' for q in qos.added), *(f'~{q} ({_qos_changes(plan, q)})' for q in qos.changed)])}; applies to new and pending jobs",
                EVIDENCE_SACCT,
                ["slurm/slurm-accounts-sync"],
                REVERT_SAFE,
                "slurm",
                where,
            )
        )
    if users.added or accounts.added:
        effects.append(
            Effect(
                "none",
                f"accounting reconcile adds {', '.join([*(f'user {u}' for u in users.added), *(f'account {a}' for a in accounts.added)])}",
                EVIDENCE_SACCT,
                ["slurm/slurm-accounts-sync"],
                REVERT_SAFE,
                "slurm",
                where,
                users=users.added,
            )
        )
    removed = [
        *(f"user {u}" for u in users.removed),
        *(f"account {a}" for a in accounts.removed),
        *(f"QOS {q}" for q in qos.removed),
    ]
    dropped = _associations_removed(plan)
    removed += [f"association {a}" for a in dropped if a.split("@")[0] not in users.removed]
    if removed:
        effects.append(
            Effect("reload", f"accounting reconcile removes {', '.join(removed)} (sacctmgr delete; refused while they have running jobs)", EVIDENCE_SACCT, ["slurm/slurm-accounts-sync"],
                   needs_step("re-adding recreates them, with their usage history reset"), "slurm", where, users=sorted({*users.removed, *(a.split('@')[0] for a in dropped)}))
        )  # fmt: skip
    people, groups = by["directory user"], by["directory group"]
    gone = [*(f"user {u}" for u in people.removed), *(f"group {g}" for g in groups.removed)]
    if gone:
        effects.append(
            Effect(
                "reload",
                f"directory: entries removed: {', '.join(gone)} (their logins stop at SSSD's next lookup)",
                EVIDENCE_LDAP,
                ["directory/dirsrv-bootstrap"],
                needs_step("re-add them; passwords set since are lost"),
                "directory",
                where,
                users=people.removed,
            )
        )
    if people.added or groups.added or people.changed or groups.changed:
        names = [
            *(f"+user {u}" for u in people.added),
            *(f"+group {g}" for g in groups.added),
            *(f"~user {u}" for u in people.changed),
            *(f"~group {g}" for g in groups.changed),
        ]
        effects.append(
            Effect(
                "none",
                f"directory: {', '.join(names)}",
                EVIDENCE_LDAP,
                ["directory/dirsrv-bootstrap"],
                REVERT_SAFE,
                "directory",
                where,
                users=people.added,
            )
        )
    hosts = by["host"]
    if hosts.removed:
        impact.drained_nodes.update(hosts.removed)
        effects.append(
            Effect("rolling-drain", f"bare-metal host(s) {hostlist(hosts.removed)} removed from provisioning: drain them and take them out of Slurm (they do not boot again)", EVIDENCE_GRENDEL_BOOT,
                   ["provisioning/grendel-inventory"], needs_step("re-add the host; it rejoins at its next boot"), "provisioning", where, nodes=hosts.removed)
        )  # fmt: skip
    if hosts.added:
        effects.append(
            Effect(
                "none",
                f"bare-metal host(s) {hostlist(hosts.added)} added: provisioned and joined at their first boot",
                EVIDENCE_GRENDEL_BOOT,
                ["provisioning/grendel-inventory"],
                REVERT_SAFE,
                "provisioning",
                where,
                nodes=hosts.added,
            )
        )
    if hosts.changed:
        impact.reprovisioned_nodes.update(hosts.changed)
        effects.append(
            Effect(
                "reload",
                f"bare-metal host(s) {hostlist(hosts.changed)} changed (image, addresses or tags): applied at their next boot",
                EVIDENCE_GRENDEL_BOOT,
                ["provisioning/grendel-inventory"],
                REVERT_SAFE,
                "provisioning",
                where,
                nodes=hosts.changed,
            )
        )
    return effects


def _qos(resources: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in resources:
        inputs = r.get("inputs") or {}
        text = (inputs.get("data") or {}).get("accounts.json") if inputs.get("kind") == "ConfigMap" else None
        if isinstance(text, str):
            out.update({str(q["name"]): q for q in json.loads(text).get("qos") or []})
    return out


def _qos_changes(plan: Plan, name: str) -> str:
    """`max_jobs_per_user 200 -> 100, ...`: the limits of QOS `name` that change."""
    old, new = _qos(plan.base_resources).get(name, {}), _qos(plan.head_resources).get(name, {})
    return ", ".join(
        f"{path} {'(unset)' if a is MISSING else a} -> {'(unset)' if b is MISSING else b}" for path, a, b in diff_values(old, new)
    )


def _associations(resources: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for r in resources:
        inputs = r.get("inputs") or {}
        text = (inputs.get("data") or {}).get("accounts.json") if inputs.get("kind") == "ConfigMap" else None
        if isinstance(text, str):
            for user in json.loads(text).get("users") or []:
                out.update(f"{user['name']}@{a}" for a in user.get("accounts") or [])
    return out


def _associations_removed(plan: Plan) -> list[str]:
    return sorted(_associations(plan.base_resources) - _associations(plan.head_resources))


def _lb_addresses(resources: list[dict[str, Any]]) -> dict[str, str]:
    """Object label -> the LoadBalancer address it asks MetalLB for."""
    out: dict[str, str] = {}

    def walk(value: Any, label: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "metallb.io/loadBalancerIPs" and isinstance(item, str):
                    out[label] = item
                else:
                    walk(item, label)
        elif isinstance(value, list):
            for item in value:
                walk(item, label)

    for r in resources:
        walk(r.get("inputs"), f"{r.get('type', '').rpartition(':')[2]} {r.get('name')}")
    return out


def address_rules(plan: Plan, impact: Impact) -> list[Effect]:
    old, new = _lb_addresses(plan.base_resources), _lb_addresses(plan.head_resources)
    effects = []
    for label in sorted(set(old) & set(new)):
        if old[label] != new[label]:
            controller = label.startswith("Controller")
            effects.append(
                Effect("outage", f"{label}: LoadBalancer address {old[label]} -> {new[label]}; clients configured with the old address lose it"
                       + (" (bare-metal slurmd and login nodes lose slurmctld until they are reconfigured)" if controller else ""),
                       EVIDENCE_METALLB, [label], needs_step("clients must be pointed at the address again"), label.split(" ")[1].split("/")[0], f"pulumi (stack {plan.stack})")
            )  # fmt: skip
    return effects


def pool_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "IPAddressPool" or change.op != "update":
        return []
    return [
        _effect(
            change,
            plan,
            "reload",
            f"MetalLB pool {change.object_name}: addresses {_get(change.old_inputs, 'spec', 'addresses')} -> {_get(change.new_inputs, 'spec', 'addresses')}",
            EVIDENCE_METALLB,
            REVERT_SAFE,
        )
    ]


def certificate_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "Certificate" or change.op not in ("update", "replace"):
        return []
    if _get(change.new_inputs, "spec", "isCA"):
        return [
            _effect(change, plan, "outage", f"CA {change.object_name} re-issued: certificates it signed keep the old issuer until renewed; clients that trust only the new CA (SSSD over LDAPS) refuse them, so logins fail until then",
                    EVIDENCE_CA, needs_step("renew every certificate of the CA issuer (cmctl renew --all)"))
        ]  # fmt: skip
    return [_effect(change, plan, "reload", f"certificate {change.name} re-issued into its Secret", EVIDENCE_CERT, REVERT_SAFE)]


def random_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if not change.type.startswith("random:index/") or change.op != "replace":
        return []
    if change.name == "slurm-key":
        return [
            _effect(
                change,
                plan,
                "outage",
                "Slurm auth key (slurm.key) rotated: daemons with the old key cannot talk to those with the new one; every slurmctld, slurmdbd and slurmd must restart together",
                EVIDENCE_SLURM_KEY + "; " + EVIDENCE_RANDOM,
                CANNOT_UNDO,
            )
        ]
    return [
        _effect(
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
                _effect(
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
            _effect(
                change,
                plan,
                "data-loss",
                f"StatefulSet {change.name}: new volumeClaimTemplates; the replacement StatefulSet gets new, empty volumes",
                EVIDENCE_PVC,
                CANNOT_UNDO,
            )
        )
    if change.kind == "PersistentVolumeClaim" and change.op == "update":
        a = _get(change.old_inputs, "spec", "resources", "requests", "storage")
        b = _get(change.new_inputs, "spec", "resources", "requests", "storage")
        if a != b and _quantity(b) < _quantity(a):
            effects.append(
                _effect(
                    change,
                    plan,
                    "outage",
                    f"PVC {change.name}: {a} -> {b}; the API server refuses to shrink a claim (the deploy stops here)",
                    EVIDENCE_PVC_SHRINK,
                    REVERT_SAFE,
                )
            )
        elif a != b:
            effects.append(
                _effect(
                    change,
                    plan,
                    "none",
                    f"PVC {change.name}: {a} -> {b} (volume expansion, online)",
                    EVIDENCE_PVC_SHRINK,
                    needs_step("a claim cannot shrink back"),
                )
            )
    if change.kind == "MariaDB" and change.op == "update" and change.changed("spec.storage") and not change.refusals:
        effects.append(
            _effect(
                change,
                plan,
                "none",
                f"MariaDB {change.name}: storage {_get(change.old_inputs, 'spec', 'storage', 'size')} -> {_get(change.new_inputs, 'spec', 'storage', 'size')} (mariadb-operator resizes the volume)",
                "mariadb-operator v26.6.0 docs/storage.md (volume resize)",
                needs_step("storage cannot shrink back"),
            )
        )
    return effects


EVIDENCE_NAMESPACE = "https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/ (deleting a namespace deletes everything in it)"


def namespace_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "Namespace" or change.type.endswith("Patch") or change.op not in ("delete", "replace"):
        return []
    name = change.object_name
    stateful = sorted(
        f"{(r.get('inputs') or {}).get('kind')} {r.get('name')}"
        for r in plan.base_resources
        if (r.get("inputs") or {}).get("kind") in (*STATEFUL, "StatefulSet")
        and _get(r.get("inputs"), "metadata", "namespace") == name
    )
    if stateful:
        what = f"namespace {name} {change.op}d: everything in it goes, with its data ({', '.join(stateful)})"
        return [_effect(change, plan, "data-loss", what, EVIDENCE_NAMESPACE, CANNOT_UNDO)]
    what = f"namespace {name} {change.op}d: everything in it goes, objects Argo CD synced there included"
    return [_effect(change, plan, "outage", what, EVIDENCE_NAMESPACE, needs_step("recreate and resync what ran there"))]


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
    prune = bool(_get(inputs, "spec", "syncPolicy", "automated", "prune"))
    destination = str(_get(inputs, "spec", "destination", "namespace") or "")
    app = f"Argo CD Application {name}"
    if change.op == "delete":
        finalizer = any("resources-finalizer" in str(f) for f in _get(change.old_inputs, "metadata", "finalizers") or [])
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
        )
    ]


def chart_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.type != "kubernetes:helm.sh/v4:Chart" or change.op != "update":
        return []
    return [
        _effect(
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
        what = f"Kueue: namespace {change.namespace} moves from ClusterQueue {_get(change.old_inputs, 'spec', 'clusterQueue')} to {_get(change.new_inputs, 'spec', 'clusterQueue')}"
    return [
        _effect(
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
    return [_effect(change, plan, "reload", f"Job {change.name} runs again{successor}", EVIDENCE_JOB, REVERT_SAFE)]


def workload_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind not in ("Deployment", "StatefulSet", "DaemonSet", "LoginSet") or change.op != "update":
        return []
    if not change.changed("spec.template", "spec.sssdConfRef", "spec.login", "spec.initconf"):
        return []
    replicas = _get(change.new_inputs, "spec", "replicas")
    single = change.kind == "StatefulSet" or replicas == 1
    return [
        _effect(
            change,
            plan,
            "singleton-restart" if single else "reload",
            f"{change.kind} {change.name}: pods {'restart' if single else 'roll one at a time'} with the new template",
            EVIDENCE_WORKLOAD,
            REVERT_SAFE,
        )
    ]


def refusal_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    return [
        _effect(
            change,
            plan,
            "outage",
            f"refused: {refusal}; `pulumi up` stops here, leaving the update half-applied",
            EVIDENCE_REFUSAL,
            REVERT_SAFE,
        )
        for refusal in change.refusals
    ]


GPU_HOURS_ANNOTATION = "hpcforge.io/gpu-hours-per-week"  # components/layers/gpu/active_checks.py (on each check's CronJob)
EVIDENCE_ACTIVE_CHECK = (
    "components/layers/gpu/checks_config.py weekly_gpu_hours (runs a week of the CronJob's schedule x GPUs one run holds"
    " x its time limit); docs/layers/gpu.md, Active checks: each run reserves its nodes (scontrol create reservation)"
)


def _gpu_hours(inputs: dict[str, Any]) -> float | None:
    value = _get(inputs, "metadata", "annotations", GPU_HOURS_ANNOTATION)
    return float(value) if value is not None else None


def active_check_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    """A scheduled active GPU check added, removed or changed: what it takes from jobs, in GPU-hours a week."""
    if change.kind != "CronJob":
        return []
    old, new = _gpu_hours(change.old_inputs), _gpu_hours(change.new_inputs)
    if (old is None and new is None) or (change.op == "update" and old == new and not change.changed("spec.schedule")):
        return []
    if new is None:
        what = f"active GPU check {change.object_name} removed: gives back up to {old:.1f} GPU-hours a week"
    elif old is None:
        what = f"active GPU check {change.object_name} scheduled: holds up to {new:.1f} GPU-hours a week away from jobs"
    else:
        what = f"active GPU check {change.object_name}: up to {new:.1f} GPU-hours a week (was {old:.1f})"
    return [_effect(change, plan, "none", what, EVIDENCE_ACTIVE_CHECK, REVERT_SAFE)]


CHANGE_RULES = (
    refusal_rules, nodeset_rules, controller_rules, config_map_rules, accounting_rules, pool_rules, certificate_rules,
    random_rules, stateful_rules, namespace_rules, application_rules, chart_rules, kueue_rules, job_rules, workload_rules,
    active_check_rules,
)  # fmt: skip


def assess(plan: Plan) -> Impact:
    """The site impact of `plan`: every rule over every change, then the rules over the whole plan."""
    impact = Impact([])
    for change in plan.changes:
        for rule in CHANGE_RULES:
            impact.effects.extend(rule(change, plan, impact))
    impact.effects.extend(entity_rules(plan, impact))
    impact.effects.extend(address_rules(plan, impact))
    impact.effects.sort(key=lambda e: -rank(e.severity))
    return impact


__all__ = [
    "MISSING",
    "SEVERITIES",
    "SLURM_CONF_RESTART",
    "Effect",
    "Impact",
    "assess",
    "hostlist",
    "rank",
    "slurm_conf_items",
    "values_at",
]
