"""Impact rules of the Slurm layer: NodeSets rolled or drained, the controller restarted or reconfigured, the
config files, the accounting reconcile's plan, hosts, users and accounts by name, and the active GPU checks."""

from __future__ import annotations

from typing import Any

from components.layers.slurm.face import GPU_HOURS_ANNOTATION

from ..live.drains import EVIDENCE_ORDER, Drain, offline_order
from .effects import REVERT_SAFE, Effect, Impact, effect_for, get_path, hostlist, needs_step, scaled
from .evidence import (
    EVIDENCE_CONFIGMAP_REPLACE,
    EVIDENCE_CONTROLLER_POD,
    EVIDENCE_GRENDEL_BOOT,
    EVIDENCE_LDAP,
    EVIDENCE_NODESET_DELETE,
    EVIDENCE_NODESET_NAMES,
    EVIDENCE_NODESET_ROLL,
    EVIDENCE_NODESET_SCALE_IN,
    EVIDENCE_SACCT,
    EVIDENCE_SLURMDBD,
)
from .operator_rules import EVIDENCE_NO_RESTAPI, drains_work
from .plan import MISSING, Change, EntityChange, Plan, diff_values, json_records
from .slurm_conf import ConfItem, conf_items, file_items, verdicts


def _gpus(nodeset: dict[str, Any]) -> int:
    limits = get_path(nodeset, "spec", "slurmd", "resources", "limits") or {}
    try:
        return int(limits.get("nvidia.com/gpu", 0))
    except (TypeError, ValueError):
        return 0


def _nodeset_nodes(nodeset: dict[str, Any], replicas: int | None = None) -> list[str]:
    name = str(get_path(nodeset, "metadata", "name"))
    count = int(get_path(nodeset, "spec", "replicas") or 0) if replicas is None else replicas
    return [f"{name}-{i}" for i in range(count)]


def _hosts(resources: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in resources:
        inputs = r.get("inputs") or {}
        if inputs.get("kind") == "ConfigMap" and str(get_path(inputs, "metadata", "name") or "").startswith("grendel-inventory-"):
            text = (inputs.get("data") or {}).get("hosts.json")
            if isinstance(text, str):
                out.update({str(h.get("name")): h for h in json_records(text)})
    return out


def _host_nodeset(host: dict[str, Any]) -> str | None:
    return next((t.split(":", 1)[1] for t in host.get("tags") or [] if str(t).startswith("nodeset:")), None)


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
            effect_for(
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
            effect_for(
                change, plan, "outage",
                f"NodeSet {name} {'deleted' if change.op == 'delete' else 'replaced'}: its pods {hostlist(nodes) or '(none)'} are deleted without a drain; jobs on them are killed",
                EVIDENCE_NODESET_DELETE, needs_step("recreate the NodeSet; killed jobs must be resubmitted"), nodes=nodes, gpus=_gpus(change.old_inputs) * len(nodes),
            )
        ]  # fmt: skip
    effects: list[Effect] = []
    new, old = change.new_inputs, change.old_inputs
    replicas = int(get_path(new, "spec", "replicas") or 0)
    before = int(get_path(old, "spec", "replicas") or 0)
    if change.changed(*REVISION_FIELDS) and not min(replicas, before):
        effects.append(
            effect_for(change, plan, "none", f"NodeSet {name}: new pod revision, but no pod runs to roll (replicas {before} -> {replicas})",
                       EVIDENCE_NODESET_ROLL, REVERT_SAFE, covers=REVISION_FIELDS)
        )  # fmt: skip
    if change.changed("spec.updateStrategy"):
        effects.append(
            effect_for(change, plan, "none", f"NodeSet {name}: update strategy changes (not part of a pod revision: no pod rolls); it governs the next roll",
                       EVIDENCE_NODESET_ROLL, REVERT_SAFE, covers=("spec.updateStrategy",))
        )  # fmt: skip
    if change.changed(*REVISION_FIELDS) and min(replicas, before):
        strategy = get_path(new, "spec", "updateStrategy") or {}
        nodes = _nodeset_nodes(new, min(replicas, before))
        if strategy.get("type") == "OnDelete":
            effects.append(
                effect_for(
                    change,
                    plan,
                    "none",
                    f"NodeSet {name}: new pod revision; OnDelete keeps the running pods until each is deleted",
                    EVIDENCE_NODESET_ROLL,
                    REVERT_SAFE,
                    nodes=nodes,
                    covers=REVISION_FIELDS,
                )
            )
        elif not drains_work(plan):
            impact.drained_nodes.update(nodes)
            effects.append(
                effect_for(change, plan, "outage",
                           f"NodeSet {name}: the operator rolls {len(nodes)} pod(s) {hostlist(nodes)} WITHOUT draining them (no RestApi: slurm-operator has no Slurm "
                           "client, so each node reads as drained): jobs on them are killed", EVIDENCE_NO_RESTAPI,
                           needs_step("killed jobs must be resubmitted; re-enable the RestApi first"), nodes=nodes, gpus=_gpus(new) * len(nodes), covers=REVISION_FIELDS)
            )  # fmt: skip
        else:
            at_once = min(scaled(get_path(strategy, "rollingUpdate", "maxUnavailable"), replicas), len(nodes))
            gpus = _gpus(new)
            fields = sorted({f.path.split(".")[1].split("[")[0] for f in change.fields if f.path.startswith(REVISION_FIELDS)})
            impact.drained_nodes.update(nodes)
            impact.drains.append(Drain(name, "roll", tuple(nodes), len(nodes), at_once, gpus))
            effects.append(
                effect_for(
                    change, plan, "rolling-drain",
                    f"NodeSet {name}: the operator rolls {len(nodes)} pod(s) {hostlist(nodes)} ({', '.join(fields)} changed), draining each Slurm node "
                    f"first; at most {at_once} node(s){f' and {at_once * gpus} GPU(s)' if gpus else ''} out at once",
                    EVIDENCE_NODESET_ROLL, REVERT_SAFE, nodes=nodes, gpus=at_once * gpus, covers=REVISION_FIELDS,
                )
            )  # fmt: skip
    if replicas < before and not drains_work(plan):
        candidates = _nodeset_nodes(old, before)
        impact.drained_nodes.update(candidates)
        effects.append(
            effect_for(change, plan, "outage",
                       f"NodeSet {name}: scale-in {before} -> {replicas}; {before - replicas} of its pods {hostlist(candidates)} deleted WITHOUT a drain (no RestApi: "
                       "slurm-operator has no Slurm client): jobs on them are killed", EVIDENCE_NO_RESTAPI,
                       needs_step("killed jobs must be resubmitted; re-enable the RestApi first"), nodes=candidates, gpus=_gpus(old) * (before - replicas), covers=("spec.replicas",))
        )  # fmt: skip
    elif replicas < before:
        # Which pods go is the operator's choice at the time (offline/live/drains.py): idle first, then the earliest
        # job end, then the highest ordinal; every pod of the NodeSet is a candidate until the live view orders them.
        candidates = _nodeset_nodes(old, before)
        drain = Drain(name, "scale-in", tuple(candidates), before - replicas, before - replicas, _gpus(old))
        impact.drains.append(drain)
        impact.drained_nodes.update(candidates)
        effects.append(
            effect_for(change, plan, "rolling-drain", f"NodeSet {name}: scale-in {before} -> {replicas}; {drain.take} of its {len(candidates)} node(s) {hostlist(candidates)} drained then deleted, "
                    f"the operator picking idle nodes first, then the earliest job end (pod-deadline), then the highest ordinal ({hostlist(offline_order(drain))} if none runs a job)",
                    EVIDENCE_NODESET_SCALE_IN + "; " + EVIDENCE_ORDER, REVERT_SAFE, nodes=candidates, gpus=_gpus(old) * drain.take,
                    covers=("spec.replicas",))
        )  # fmt: skip
    elif replicas > before:
        added = [f"{name}-{i}" for i in range(before, replicas)]
        effects.append(
            effect_for(
                change,
                plan,
                "none",
                f"NodeSet {name}: scale-out {before} -> {replicas}; new node(s) {hostlist(added)}",
                EVIDENCE_NODESET_NAMES,
                REVERT_SAFE,
                nodes=added,
                covers=("spec.replicas",),
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
            effect_for(
                change,
                plan,
                "outage",
                "Slurm Controller deleted: slurmctld stops; no job is scheduled",
                EVIDENCE_CONTROLLER_POD,
                needs_step("recreate the controller"),
            )
        ]
    mode = _mode(plan, in_hash=True)
    if get_path(old, "spec", "clusterName") != get_path(new, "spec", "clusterName"):
        # the pod spec changes with it (the state volume's mount path, controller_app.go@v1.2.1:307): a restart
        effects += _conf_effects(
            change,
            plan,
            [
                ConfItem(
                    "ClusterName", f"ClusterName {get_path(old, 'spec', 'clusterName')} -> {get_path(new, 'spec', 'clusterName')}"
                )
            ],
            "restart",
            ("spec.clusterName",),
        )
    items = conf_items(str(get_path(old, "spec", "extraConf") or ""), str(get_path(new, "spec", "extraConf") or ""))
    effects += _conf_effects(change, plan, items, mode, ("spec.extraConf",))
    pods = _pod_fields(change)
    if pods:
        effects.append(
            effect_for(change, plan, "singleton-restart", f"slurmctld restarts ({', '.join(sorted({p.split('.')[1] for p in pods if '.' in p}))} changed): scheduling pauses; running jobs continue",
                    EVIDENCE_CONTROLLER_POD, REVERT_SAFE, covers=tuple(pods))
        )  # fmt: skip
    return effects


def _pod_fields(change: Change) -> list[str]:
    """The Controller fields whose change recreates the slurmctld pod whatever inplaceReconfigure says (everything but
    the Slurm configuration, its name and its Service)."""
    skip = ("spec.extraConf", "spec.clusterName", "spec.service", "spec.persistence", "metadata")
    return [f.path for f in change.fields if not f.path.startswith(skip)]


def _controller(plan: Plan) -> dict[str, Any]:
    for r in plan.head_resources:
        inputs = r.get("inputs") or {}
        if inputs.get("kind") == "Controller" and str(inputs.get("apiVersion", "")).startswith("slinky.slurm.net/"):
            return dict(inputs)
    return {}


def _operator_conf_changes(plan: Plan) -> bool:
    """The plan changes the slurm.conf the operator writes: the Controller's spec, or a NodeSet's `NodeSet=` line."""
    return any(
        (c.kind == "Controller" and c.op == "update" and any(f.path.startswith("spec.") for f in c.fields))
        or (c.kind == "NodeSet" and c.op in ("create", "delete", "replace"))
        for c in plan.changes
    )


def _mode(plan: Plan, *, in_hash: bool) -> str:
    """How slurm-operator 1.2.1 applies a Slurm configuration change of `plan` (slurm_conf.py MODE_EVIDENCE): the pod is
    recreated when its spec changes; else the sidecar reconfigures with inplaceReconfigure; else a slurm.conf change
    recreates the pod and a change that only a referenced ConfigMap carries (`in_hash` False) waits."""
    controller = next((c for c in plan.changes if c.kind == "Controller" and c.op == "update"), None)
    if controller is not None and _pod_fields(controller):
        return "restart"
    if get_path(_controller(plan), "spec", "inplaceReconfigure"):
        return "reconfigure"
    return "restart" if in_hash or _operator_conf_changes(plan) else "deferred"


def _conf_effects(change: Change, plan: Plan, items: list[ConfItem], mode: str, covers: tuple[str, ...]) -> list[Effect]:
    return [effect_for(change, plan, v.severity, v.what, v.evidence, v.rollback, covers=covers) for v in verdicts(items, mode)]


def _controller_config_maps(plan: Plan) -> dict[str, str]:
    """The ConfigMaps the Controller folds into the Slurm configuration -> what they hold (`files`, `prolog`, `epilog`)."""
    spec = _controller(plan).get("spec") or {}
    keys = {
        "configFileRefs": "files",
        "prologScriptRefs": "prolog",
        "epilogScriptRefs": "epilog",
        "prologSlurmctldScriptRefs": "prolog-slurmctld",
        "epilogSlurmctldScriptRefs": "epilog-slurmctld",
    }
    return {str(ref.get("name")): kind for key, kind in keys.items() for ref in spec.get(key) or [] if isinstance(ref, dict)}


def _config_map_items(change: Change, kind: str) -> list[ConfItem]:
    old, new = change.old_inputs.get("data") or {}, change.new_inputs.get("data") or {}
    names = sorted(n for n in set(old) | set(new) if old.get(n) != new.get(n))
    if kind == "files":
        return [item for n in names for item in file_items(n, old.get(n), new.get(n))]
    return [
        ConfItem(f"script:{kind}", f"{kind} script {n} {'added' if n not in old else 'removed' if n not in new else 'changed'}")
        for n in names
    ]


def config_map_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind != "ConfigMap" or change.op not in ("update", "replace"):
        return []
    name, ns = change.object_name, change.namespace
    kind = _controller_config_maps(plan).get(name)
    if ns == "slurm" and kind is not None:
        return _conf_effects(change, plan, _config_map_items(change, kind), _mode(plan, in_hash=False), ("data",))
    boot = change.changed("data.images.json") or any(f.path.startswith("data.join-") for f in change.fields)
    if ns == "provisioning" and name.startswith("grendel-") and boot:
        hosts = _hosts(plan.head_resources)
        images_old = {str(i.get("name")): i for i in _images(plan.base_resources)}
        images_new = {str(i.get("name")): i for i in _images(plan.head_resources)}
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
            effect_for(
                change,
                plan,
                "reload",
                f"{len(affected)} bare-metal host(s) {hostlist(affected)} boot the new image/join script at their next boot; nothing restarts now",
                EVIDENCE_GRENDEL_BOOT,
                REVERT_SAFE,
                nodes=affected,
                covers=tuple(f.path for f in change.fields if f.path == "data.images.json" or f.path.startswith("data.join-")),
            )
        ]
    if ns == "monitoring" and name == "hpcforge-dashboards":
        return [
            effect_for(
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
            return json_records(text)
    return []


def accounting_rules(change: Change, plan: Plan, impact: Impact) -> list[Effect]:
    if change.kind == "Accounting" and change.op == "update":
        return [
            effect_for(
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
    """The effects of the plan's changed entities (not objects): Slurm accounting, directory entries, bare-metal hosts."""
    by = {e.kind: e for e in plan.entities}
    where = f"pulumi (stack {plan.stack})"
    return [
        *_accounting_entity_rules(plan, by, where),
        *_directory_entity_rules(by, where),
        *_host_entity_rules(by, impact, where, plan),
    ]


def _accounting_entity_rules(plan: Plan, by: dict[str, EntityChange], where: str) -> list[Effect]:
    """QOS, Slurm users and accounts reconciled into slurmdbd by the accounts Job."""
    effects: list[Effect] = []
    qos, users, accounts = by["QOS"], by["Slurm user"], by["Slurm account"]
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
    return effects


def _directory_entity_rules(by: dict[str, EntityChange], where: str) -> list[Effect]:
    """Users and groups of the directory (LDAP), which SSSD serves to the login and compute pods."""
    effects: list[Effect] = []
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
    return effects


def holders(plan: Plan, namespace: str, prefix: str, fallback: str) -> list[str]:
    """The changed ConfigMaps that hold a kind of entity (`grendel-inventory-*` in provisioning ...), by change label; an
    entity effect answers for them. `fallback` (a name for people) when none changes."""
    found = [
        c.label for c in plan.changes if c.kind == "ConfigMap" and c.namespace == namespace and c.object_name.startswith(prefix)
    ]
    return found or [fallback]


def _host_entity_rules(by: dict[str, EntityChange], impact: Impact, where: str, plan: Plan) -> list[Effect]:
    """Bare-metal hosts of the provisioning inventory (they join Slurm as dynamic nodes at boot)."""
    effects: list[Effect] = []
    hosts = by["host"]
    inventory = holders(plan, "provisioning", "grendel-inventory-", "provisioning/grendel-inventory")
    if hosts.removed:
        impact.drained_nodes.update(hosts.removed)
        effects.append(
            Effect("rolling-drain", f"bare-metal host(s) {hostlist(hosts.removed)} removed from provisioning: drain them and take them out of Slurm (they do not boot again)", EVIDENCE_GRENDEL_BOOT,
                   inventory, needs_step("re-add the host; it rejoins at its next boot"), "provisioning", where, nodes=hosts.removed)
        )  # fmt: skip
    if hosts.added:
        effects.append(
            Effect(
                "none",
                f"bare-metal host(s) {hostlist(hosts.added)} added: provisioned and joined at their first boot",
                EVIDENCE_GRENDEL_BOOT,
                inventory,
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
                inventory,
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
            out.update({str(q.get("name")): q for q in json_records(text, "qos")})
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
            for user in json_records(text, "users"):
                out.update(f"{user.get('name')}@{a}" for a in user.get("accounts") or [])
    return out


def _associations_removed(plan: Plan) -> list[str]:
    return sorted(_associations(plan.base_resources) - _associations(plan.head_resources))


EVIDENCE_ACTIVE_CHECK = (
    "components/layers/slurm/active_checks.py weekly_gpu_hours (runs a week of the CronJob's schedule x GPUs one run holds"
    " x its time limit); docs/layers/gpu.md, Active checks: each run reserves its nodes (scontrol create reservation)"
)


def _gpu_hours(inputs: dict[str, Any]) -> float | None:
    value = get_path(inputs, "metadata", "annotations", GPU_HOURS_ANNOTATION)
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
    return [effect_for(change, plan, "none", what, EVIDENCE_ACTIVE_CHECK, REVERT_SAFE)]
