"""The plan of a change, as the Pulumi engine and the Kubernetes provider would make it.

Resources are matched by URN (by object identity when the base is a render folder). A matched resource
whose inputs differ is an update, or a replacement when:

- the Kubernetes provider forces one: a change under one of its force-new fields (`PROVIDER_FORCE_NEW`,
  reproduced from pulumi-kubernetes provider/pkg/provider/diff.go `forceNew` and `forceNewProperties`);
  identity (`.metadata.name`, `.metadata.namespace`) for every object, patches included
  (provider.go `Diff`: "Changing the identity of the resource always causes a replacement"); the provider
  then deletes first when the new object keeps its name (provider.go `Diff`, `deleteBeforeReplace`);
- hpcforge asks for one: a change under a `replaceOnChanges` path, and `deleteBeforeReplace` set;
- pulumi-random's resources: every input of RandomPassword/RandomBytes/... forces a new value
  (pulumi-random is bridged from terraform-provider-random, whose attributes are all `RequiresReplace`:
  https://registry.terraform.io/providers/hashicorp/random/latest/docs, "keepers ... will force a new").

Refusals: deleting or replacing a `protect`ed resource (the engine stops: "unable to replace/delete
protected resource", pulumi/pulumi pkg/resource/deploy/step_generator.go), and a changed field that an
operator's admission webhook refuses on UPDATE (every admission family that judges updates, `Family.updates`:
policies/admission/family.py).

The provider version: pulumi-kubernetes==4.34.2 (requirements.txt). The force-new table below was read in
provider/pkg/provider/diff.go of the pulumi/pulumi-kubernetes snapshot at 94977969d (July 2026, after
v4.32.0); diff.go has not changed since eaf47e883 (Feb 2026), before v4.34.2 was cut.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from policies.admission.families import families

from ..program.engine import DIGEST_PREFIX, REDACTED
from .base import State, object_identity

OPS = ("create", "update", "replace", "delete")
MISSING: Any = object()

# --- pulumi-kubernetes force-new fields (provider/pkg/provider/diff.go) ---------------------------------------

_LABEL_SELECTOR = (
    ".matchExpressions",
    ".matchExpressions.key",
    ".matchExpressions.operator",
    ".matchExpressions.values",
    ".matchLabels",
)


def _selector(prefix: str) -> tuple[str, ...]:
    return tuple(prefix + suffix for suffix in _LABEL_SELECTOR)


_CONTAINER = (
    ".args", ".command", ".env", ".env.value", ".image", ".imagePullPolicy", ".lifecycle", ".livenessProbe", ".ports",
    ".readinessProbe", ".resources", ".securityContext", ".stdin", ".stdinOnce", ".terminationMessagePath",
    ".terminationMessagePolicy", ".tty", ".volumeDevices", ".volumeMounts", ".workingDir",
)  # fmt: skip
_STATEFULSET = (
    ".spec.podManagementPolicy",
    ".spec.revisionHistoryLimit",
    ".spec.selector",
    ".spec.serviceName",
    ".spec.volumeClaimTemplates",
    *_selector(".spec.selector"),
)
_DEPLOYMENT = (".spec.selector", *_selector(".spec.selector"))
_JOB = (".spec.completions", ".spec.parallelism", ".spec.selector", ".spec.template", *_selector(".spec.selector"))
_ROLE_BINDING = (".roleRef",)
_PV_SOURCES = (
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume", "flocker",
    "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk", "portworxVolume",
    "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume",
)  # fmt: skip
_POD = (
    ".spec.affinity", ".spec.automountServiceAccountToken", ".spec.dnsConfig", ".spec.dnsPolicy", ".spec.enableServiceLinks",
    ".spec.hostAliases", ".spec.hostIPC", ".spec.hostNetwork", ".spec.hostPID", ".spec.hostname", ".spec.imagePullSecrets",
    ".spec.nodeName", ".spec.nodeSelector", ".spec.overhead", ".spec.preemptionPolicy", ".spec.priority",
    ".spec.priorityClassName", ".spec.readinessGates", ".spec.restartPolicy", ".spec.runtimeClassName",
    ".spec.schedulerName", ".spec.securityContext", ".spec.serviceAccount", ".spec.serviceAccountName",
    ".spec.shareProcessNamespace", ".spec.subdomain", ".spec.terminationGracePeriodSeconds", ".spec.volumes",
    *(f".spec.containers[*]{c}" for c in _CONTAINER), *(f".spec.initContainers[*]{c}" for c in _CONTAINER),
)  # fmt: skip

PROVIDER_FORCE_NEW: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "StatefulSet"): _STATEFULSET,
    ("apps", "DaemonSet"): _DEPLOYMENT,
    ("apps", "Deployment"): _DEPLOYMENT,
    ("", "PersistentVolume"): tuple(f".spec.{source}" for source in _PV_SOURCES),
    ("", "PersistentVolumeClaim"): (
        ".spec.accessModes",
        ".spec.selector",
        ".spec.storageClassName",
        ".spec.volumeName",
        *_selector(".spec.selector"),
    ),
    ("", "Pod"): _POD,
    ("", "ResourceQuota"): (".spec.scopes",),
    ("", "Service"): (".spec.clusterIP",),
    ("policy", "PodDisruptionBudget"): (".spec",),  # listed for policy/v1beta1 only: see force_new_fields
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _ROLE_BINDING,
    ("rbac.authorization.k8s.io", "RoleBinding"): _ROLE_BINDING,
    ("storage.k8s.io", "StorageClass"): (".parameters", ".provisioner"),
    ("batch", "Job"): _JOB,
}
"""diff.go `forceNew`, by (group, kind); versions as there: apps v1/v1beta2, core v1, batch v1, rbac v1, storage v1."""

SECRET_FORCE_NEW = (".type", ".stringData", ".data")
"""diff.go `forceNewProperties`: a Secret without the provider's `enableSecretMutable` (hpcforge's provider sets none)."""
CONFIGMAP_FORCE_NEW = (".binaryData", ".data")
"""diff.go `forceNewProperties`: a ConfigMap without the provider's `enableConfigMapMutable`."""
IDENTITY = (".metadata.name", ".metadata.namespace")


def force_new_fields(  # noqa: PLR0911 (one return per case of diff.go forceNewProperties)
    type_: str, inputs: dict[str, Any], provider_inputs: dict[str, Any] | None = None
) -> tuple[str, ...]:
    """The fields whose change makes the Kubernetes provider replace the object (diff.go `forceNewProperties`)."""
    if not type_.startswith("kubernetes:") or type_.startswith("kubernetes:helm.sh/") or type_.startswith("kubernetes:yaml/"):
        return ()
    if type_.endswith("Patch"):
        return IDENTITY  # provider.go Diff: patch resources update in place but for their identity
    api = str(inputs.get("apiVersion", ""))
    group, _, version = api.rpartition("/")
    kind = str(inputs.get("kind", ""))
    provider = provider_inputs or {}
    immutable = inputs.get("immutable") is True
    if group == "" and kind == "Secret" and (not provider.get("enableSecretMutable") or immutable):
        return IDENTITY + SECRET_FORCE_NEW
    if (group, kind) == ("policy", "PodDisruptionBudget") and version != "v1beta1":
        return IDENTITY
    fields = PROVIDER_FORCE_NEW.get((group, kind))
    if fields is not None:
        return IDENTITY + fields
    if group == "" and kind == "ConfigMap" and (not provider.get("enableConfigMapMutable") or immutable):
        return IDENTITY + CONFIGMAP_FORCE_NEW
    return IDENTITY


RANDOM_TYPES = ("random:index/",)


# --- values --------------------------------------------------------------------------------------------------


def _segments(path: str) -> list[str]:
    """`.spec.containers[*].image` -> ['spec', 'containers', '[*]', 'image']."""
    out: list[str] = []
    for part in path.strip(".").split("."):
        rest = part
        while "[" in rest:
            head, _, tail = rest.partition("[")
            if head:
                out.append(head)
            index, _, rest = tail.partition("]")
            out.append(f"[{index}]")
        if rest:
            out.append(rest)
    return out


def values_at(value: Any, segments: list[str]) -> list[Any]:
    """Every value at `segments` (`[*]` walks each list item); MISSING where the path ends early."""
    if not segments:
        return [value]
    head, rest = segments[0], segments[1:]
    if head == "[*]":
        return [v for item in value for v in values_at(item, rest)] if isinstance(value, list) else [MISSING]
    if isinstance(value, dict) and head in value:
        return values_at(value[head], rest)
    return [MISSING]


def field_changed(old: Any, new: Any, path: str) -> bool:
    segments = _segments(path)
    return values_at(old, segments) != values_at(new, segments)


def _key(item: Any) -> str | None:
    return item.get("name") if isinstance(item, dict) and isinstance(item.get("name"), str) else None


def _uncomparable(old: Any, new: Any) -> bool:
    """A secret recorded as `[secret]` (a recording made before secrets had digests, offline/program/engine.py) against
    one with its digest: not known to differ."""
    pair = (old, new)
    return REDACTED in pair and any(isinstance(v, str) and v.startswith(DIGEST_PREFIX) for v in pair)


def diff_values(old: Any, new: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, old, new) for every leaf that differs; lists of named items are matched by name."""
    if old == new or _uncomparable(old, new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in sorted(set(old) | set(new), key=str):
            out += diff_values(old.get(key, MISSING), new.get(key, MISSING), f"{path}.{key}" if path else str(key))
        return out
    if isinstance(old, list) and isinstance(new, list):
        old_keys, new_keys = [_key(i) for i in old], [_key(i) for i in new]
        if (
            old
            and new
            and None not in old_keys
            and None not in new_keys
            and len(set(old_keys)) == len(old_keys)
            and len(set(new_keys)) == len(new_keys)
        ):
            olds = dict(zip(old_keys, old, strict=True))
            news = dict(zip(new_keys, new, strict=True))
            out = []
            for key in [*old_keys, *(k for k in new_keys if k not in olds)]:
                out += diff_values(olds.get(key, MISSING), news.get(key, MISSING), f'{path}["{key}"]')
            return out
        if len(old) == len(new):
            out = []
            for index, (a, b) in enumerate(zip(old, new, strict=True)):
                out += diff_values(a, b, f"{path}[{index}]")
            return out
    return [(path, old, new)]


def _as_text(value: Any) -> str | None:
    """Multi-line text, or a JSON document pretty-printed, for a unified diff."""
    if not isinstance(value, str):
        return None
    stripped = value.strip()
    if stripped[:1] in ("{", "[") and len(stripped) > 80:
        try:
            return json.dumps(json.loads(stripped), indent=1, sort_keys=True) + "\n"
        except ValueError:
            pass
    return value if "\n" in value else None


def text_diff(old: Any, new: Any, label: str) -> list[str]:
    """A unified diff of rendered text (slurm.conf, gres.conf, topology, sssd.conf, dashboards, JSON data)."""
    a, b = _as_text(old) if old is not MISSING else "", _as_text(new) if new is not MISSING else ""
    if a is None or b is None or (not a and not b):
        return []
    return list(difflib.unified_diff(a.splitlines(), b.splitlines(), f"a/{label}", f"b/{label}", n=1, lineterm=""))


# --- the plan ------------------------------------------------------------------------------------------------


@dataclass
class FieldChange:
    path: str
    old: Any
    new: Any
    text: list[str] = field(default_factory=list)
    """A unified diff when the value is rendered text."""


@dataclass
class Change:
    key: str
    type: str
    name: str
    layer: str
    op: str
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    fields: list[FieldChange] = field(default_factory=list)
    replace_reasons: list[str] = field(default_factory=list)
    delete_before_replace: bool = False
    refusals: list[str] = field(default_factory=list)

    @property
    def inputs(self) -> dict[str, Any]:
        return dict(((self.new or self.old) or {}).get("inputs") or {})

    @property
    def old_inputs(self) -> dict[str, Any]:
        return dict((self.old or {}).get("inputs") or {})

    @property
    def new_inputs(self) -> dict[str, Any]:
        return dict((self.new or {}).get("inputs") or {})

    @property
    def kind(self) -> str:
        return str(self.inputs.get("kind") or self.type.rpartition(":")[2])

    @property
    def namespace(self) -> str:
        return str((self.inputs.get("metadata") or {}).get("namespace") or "")

    @property
    def object_name(self) -> str:
        return str((self.inputs.get("metadata") or {}).get("name") or self.name)

    @property
    def renamed(self) -> tuple[str, str] | None:
        """(old, new) object name of a content-hashed object replaced by its successor."""
        a = (self.old_inputs.get("metadata") or {}).get("name")
        b = (self.new_inputs.get("metadata") or {}).get("name")
        return (str(a), str(b)) if self.old and self.new and a != b else None

    def changed(self, *prefixes: str) -> bool:
        """Whether any changed field starts with one of `prefixes` (dotted, no leading dot)."""
        return any(f.path == p or f.path.startswith((p + ".", p + "[")) for f in self.fields for p in prefixes)

    @property
    def label(self) -> str:
        return f"{self.type} {self.name}"


@dataclass
class EntityChange:
    kind: str
    added: list[str]
    removed: list[str]
    changed: list[str]


@dataclass
class Plan:
    stack: str
    base: str
    head: str
    changes: list[Change]
    counts: dict[str, Counter[str]]
    entities: list[EntityChange]
    base_resources: list[dict[str, Any]] = field(default_factory=list)
    head_resources: list[dict[str, Any]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.changes and not any(e.added or e.removed or e.changed for e in self.entities)

    def by_op(self, op: str) -> list[Change]:
        return [c for c in self.changes if c.op == op]

    def totals(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for counts in self.counts.values():
            total.update(counts)
        return total


def layer_of(resource: dict[str, Any]) -> str:
    """The hpcforge layer (component) a resource belongs to, from its URN's parent chain."""
    urn = str(resource.get("urn", ""))
    parts = urn.split("::")
    if len(parts) >= 4 and urn.startswith("urn:"):
        layers = [t.split(":")[1] for t in parts[2].split("$") if t.startswith("hpcforge:") and t != "hpcforge:platform:Platform"]
        return layers[0] if layers else "platform"
    namespace = ((resource.get("inputs") or {}).get("metadata") or {}).get("namespace")
    return f"namespace {namespace}" if namespace else "cluster"


def _ignored(path: str, ignore: list[str]) -> bool:
    return any(path == i or path.startswith((i + ".", i + "[")) for i in ignore)


def _kube_objects(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in resources:
        inputs = r.get("inputs") or {}
        if (
            r.get("type", "").startswith("kubernetes:")
            and isinstance(inputs.get("kind"), str)
            and not r["type"].endswith("Patch")
        ):
            out.append(inputs)
    return out


def _provider_inputs(resources: list[dict[str, Any]]) -> dict[str, Any]:
    for r in resources:
        if r.get("type") == "pulumi:providers:kubernetes":
            return dict(r.get("inputs") or {})
    return {}


def _matchable(state: State, by_object: bool) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in state.resources:
        if by_object:
            inputs = r.get("inputs") or {}
            if not (
                r.get("type") in ("kubernetes:helm.sh/v4:Chart", "kubernetes:yaml/v2:ConfigFile")
                or isinstance(inputs.get("kind"), str)
            ):
                continue
            out[object_identity(r)] = r
        else:
            out[str(r["urn"])] = r
    return out


def _classify(change: Change, provider: dict[str, Any]) -> None:
    old, new = change.old_inputs, change.new_inputs
    options = (change.new or {}).get("options") or {}
    if change.type.startswith(RANDOM_TYPES):
        change.replace_reasons.append("pulumi-random: every input forces a new value")
    for path in force_new_fields(change.type, new, provider):
        if field_changed(old, new, path):
            change.replace_reasons.append(f"provider: {path} cannot change in place (pulumi-kubernetes diff.go)")
    for path in options.get("replaceOnChanges") or []:
        if field_changed(old, new, path):
            change.replace_reasons.append(f"replaceOnChanges: {path}")
    if change.replace_reasons:
        change.op = "replace"
        same_name = (old.get("metadata") or {}).get("name") == (new.get("metadata") or {}).get("name")
        if options.get("deleteBeforeReplace"):
            change.delete_before_replace = True
        elif change.type.startswith("kubernetes:") and same_name and (new.get("metadata") or {}).get("name"):
            change.delete_before_replace = True  # provider.go Diff: a replacement that keeps its name deletes first


def make_plan(base: State, head: State) -> Plan:
    """The plan that takes the site from `base` to `head`."""
    by_object = base.by_object or head.by_object
    olds, news = _matchable(base, by_object), _matchable(head, by_object)
    provider = _provider_inputs(head.resources)
    changes: list[Change] = []
    counts: dict[str, Counter[str]] = {}
    for key in [*olds, *(k for k in news if k not in olds)]:
        old, new = olds.get(key), news.get(key)
        resource = new or old
        assert resource is not None
        layer = layer_of(resource)
        counts.setdefault(layer, Counter())
        if old is None or new is None:
            op = "create" if old is None else "delete"
            change = Change(key, str(resource["type"]), str(resource["name"]), layer, op, old, new)
            counts[layer][op] += 1
            changes.append(change)
            continue
        ignore = list(((new.get("options") or {}).get("ignoreChanges")) or [])
        fields = [
            FieldChange(path, a, b, text_diff(a, b, f"{new['name']}:{path}"))
            for path, a, b in diff_values(old.get("inputs") or {}, new.get("inputs") or {})
            if not _ignored(path, ignore)
        ]
        if not fields:
            counts[layer]["unchanged"] += 1
            continue
        change = Change(key, str(new["type"]), str(new["name"]), layer, "update", old, new, fields)
        _classify(change, provider)
        counts[layer][change.op] += 1
        changes.append(change)
    _refusals(changes, base, head)
    return Plan(head.stack, base.origin, head.origin, changes, counts, entity_changes(base, head), base.resources, head.resources)


def _refusals(changes: list[Change], base: State, head: State) -> None:
    for change in changes:
        protected = ((change.old or {}).get("options") or {}).get("protect") or ((change.new or {}).get("options") or {}).get(
            "protect"
        )
        if protected and change.op in ("delete", "replace"):
            change.refusals.append(f"Pulumi: the resource is protected; the engine refuses to {change.op} it (protect: true)")
    old_objects, new_objects = _kube_objects(base.resources), _kube_objects(head.resources)
    updated = {(c.kind, c.namespace, c.object_name): c for c in changes if c.op in ("update", "replace")}
    for family in families():
        for verdict in family.updates(old_objects, new_objects) if family.updates else ():
            found = updated.get(_object_key(verdict.obj))
            if found is not None and verdict.admitted is False:
                found.refusals += [f"{family.upstream}: {reason}" for reason in verdict.reasons]


def _object_key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    metadata = obj.get("metadata") or {}
    return str(obj.get("kind")), str(metadata.get("namespace") or ""), str(metadata.get("name"))


# --- named entities: hosts, users, groups, Slurm accounts, QOS ----------------------------------------------------


def _data(resources: list[dict[str, Any]], namespace: str, prefix: str, key: str) -> list[str]:
    out = []
    for r in resources:
        inputs = r.get("inputs") or {}
        metadata = inputs.get("metadata") or {}
        if (
            inputs.get("kind") == "ConfigMap"
            and metadata.get("namespace") == namespace
            and str(metadata.get("name", "")).startswith(prefix)
        ):
            value = (inputs.get("data") or {}).get(key)
            if isinstance(value, str):
                out.append(value)
    return out


def _json_document(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def json_records(text: str, key: str | None = None) -> list[dict[str, Any]]:
    """The JSON records of `text` (under `key`), or none where it is not what hpcforge writes: a recording edited or
    written by another version says nothing about entities, and the resource's own verdict still stands."""
    return _records(_json_document(text), key)


def _records(value: Any, key: str | None = None) -> list[dict[str, Any]]:
    if key is not None:
        value = value.get(key) if isinstance(value, dict) else None
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def entities(resources: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Per kind (host, user, group, account, QOS, Slurm user, Kubernetes node), each name and a digest of its record."""
    found: dict[str, dict[str, str]] = {
        k: {} for k in ("host", "directory user", "directory group", "Slurm account", "Slurm user", "QOS", "Kubernetes node")
    }
    for text in _data(resources, "provisioning", "grendel-inventory-", "hosts.json"):
        for host in json_records(text):
            found["host"][str(host.get("name"))] = json.dumps(host, sort_keys=True)
    for text in _data(resources, "directory", "dirsrv-ldif-", "bootstrap.ldif"):
        for entry in text.split("\n\n"):
            first = entry.strip().splitlines()[0] if entry.strip() else ""
            if first.startswith("dn: uid=") and ",ou=People," in first:
                found["directory user"][first[8:].split(",")[0]] = entry.strip()
            elif first.startswith("dn: cn=") and ",ou=Groups," in first:
                found["directory group"][first[7:].split(",")[0]] = entry.strip()
    for text in _data(resources, "slurm", "slurm-accounts-desired-", "accounts.json"):
        desired = _json_document(text)  # parsed once for its three sections
        for kind, key in (("Slurm account", "accounts"), ("Slurm user", "users"), ("QOS", "qos")):
            for item in _records(desired, key):
                found[kind][str(item.get("name"))] = json.dumps(item, sort_keys=True)
    for r in resources:
        if str(r.get("type", "")).endswith(":NodePatch"):
            name = ((r.get("inputs") or {}).get("metadata") or {}).get("name")
            found["Kubernetes node"][str(name)] = json.dumps(r.get("inputs"), sort_keys=True)
    return found


def entity_changes(base: State, head: State) -> list[EntityChange]:
    old, new = entities(base.resources), entities(head.resources)
    out = []
    for kind in old:
        a, b = old[kind], new[kind]
        out.append(
            EntityChange(
                kind, sorted(set(b) - set(a)), sorted(set(a) - set(b)), sorted(k for k in set(a) & set(b) if a[k] != b[k])
            )
        )
    return out
