"""Slinky slurm-operator 1.2.1's admission rules for its custom resources, as its validating webhook
and its CRDs' CEL rules decide them: what `pulumi up` would have refused (one refused custom resource
stops the update half-way).

Reproduced from SlinkyProject/slurm-operator at tag v1.2.1 (the chart pinned in
components/versions.py, `slurm-operator` 1.2.1), each rule citing its file and function:

- internal/webhook/{accounting,controller,loginset,nodeset,restapi,token}_webhook.go:
  `ValidateCreate` / `ValidateUpdate` and the shared `validate<Kind>` of each kind;
- api/v1beta1/{controller,accounting}_keys.go `ClusterName`, `AuthJwtRef`; token_keys.go `JwtRef`;
- the CEL rules of the CRDs (`+kubebuilder:validation:XValidation` markers in api/v1beta1/*_types.go,
  `x-kubernetes-validations` in ../shared/crds/slurm-operator-1.2.1), which the API server checks
  before it calls the webhook, and which the schema tier does not evaluate (offline/schema/crd.py).

What the webhook is told: the object as the API server has it, its CRD defaults applied (for an
UPDATE, also the stored old object). Go semantics kept where they decide: absent values are Go zero
values; `apiequality.Semantic.DeepEqual` (k8s.io/apimachinery v0.36.2 pkg/api/equality/semantic.go)
treats a nil and an empty slice or map alike and compares quantities by value; an IntOrString is an
int when the JSON is a number and a string when it is a string (`intstr.IntOrString.UnmarshalJSON`);
a `metav1.Duration` is a string that `time.ParseDuration` reads (gotime.py). Errors are joined as
`utilerrors.NewAggregate` joins them (one: its text; several: `[a, b]`, duplicates once), and the API
server reports `admission webhook "<name>" denied the request: <text>`.

Where it runs (helm/slurm-operator/templates/webhook/webhook.yaml at v1.2.1): with `webhook.enabled`
(default true), for CREATE and UPDATE of each kind, `failurePolicy: Fail` (`webhook.validating`), in
every namespace except kube-system, or only in `webhook.namespaces` when that is set. The one
mutating webhook of the chart is for `pods/binding` (internal/webhook/pod_binding_webhook.go: it copies
a node's topology annotation onto a worker pod); no webhook defaults or mutates the custom resources
hpcforge sends.

Not modelled: the webhook reads the Controller's `configFileRefs` ConfigMaps through its informer
cache (cmd/webhook/main.go `mgr.GetClient()`); here they are looked up among the objects given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..rules.access import get, items, mapping, text
from ..rules.apimachinery import aggregate_message, compare, is_dns1123_subdomain, quantity
from ..rules.gotime import GoError, parse_duration
from ..rules.podtemplates import display, group_of, kind_of, name_of, namespace_of
from ..rules.wire import is_unknown
from .pins import Pin

REPRODUCES = Pin(
    "slurm-operator",
    "1.2.1",
    ("Charts.SLURM_OPERATOR", "Charts.SLURM_OPERATOR_CRDS"),
    "SlinkyProject/slurm-operator v1.2.1",
)
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""


SLINKY_GROUP = "slinky.slurm.net"
CHART = "slurm-operator"
"""The chart that deploys the operator and its webhook (`webhook_scope` reads its values)."""
SLINKY_VERSION = "v1beta1"

WEBHOOK_NAMES: Mapping[str, str] = {
    "Accounting": "accounting-v1beta1.kb.io",
    "Controller": "controller-v1beta1.kb.io",
    "LoginSet": "loginset-v1beta1.kb.io",
    "NodeSet": "nodeset-v1beta1.kb.io",
    "RestApi": "restapi-v1beta1.kb.io",
    "Token": "token-v1beta1.kb.io",
}
"""The kinds the ValidatingWebhookConfiguration covers, with each webhook's name (webhook.yaml)."""

CREATE = "CREATE"
UPDATE = "UPDATE"

# helm/slurm-operator/values.yaml at v1.2.1 (../shared/charts/slurm-operator-1.2.1/values.yaml).
CHART_WEBHOOK_DEFAULTS: Mapping[str, Any] = {
    "enabled": True,
    "namespaces": "",
    "validating": {"failurePolicy": "Fail", "matchPolicy": "Equivalent"},
}


# --- where the webhook runs -----------------------------------------------------------------------


@dataclass(frozen=True)
class WebhookScope:
    """What the chart's values make of the validating webhook."""

    enabled: bool = True
    namespaces: tuple[str, ...] = ()
    """`webhook.namespaces` split as the template splits it (`nospace | splitList ","`); empty: all."""
    failure_policy: str = "Fail"
    """Only for calls that fail (webhook down): a webhook that answers `denied` refuses either way."""

    def judges(self, namespace: str) -> bool:
        """Whether a custom resource in `namespace` goes through the webhook (its namespaceSelector)."""
        if not self.enabled or namespace == "kube-system":
            return False
        return not self.namespaces or namespace in self.namespaces


def webhook_scope(values: Mapping[str, Any]) -> WebhookScope:
    """The webhook as the slurm-operator chart 1.2.1 deploys it with `values` (the values passed to
    the chart; what they leave out is the chart's default)."""
    webhook = mapping(values.get("webhook"))
    enabled = webhook.get("enabled", CHART_WEBHOOK_DEFAULTS["enabled"])
    raw = webhook.get("namespaces", CHART_WEBHOOK_DEFAULTS["namespaces"])
    namespaces = tuple(re.sub(r"\s", "", raw).split(",")) if isinstance(raw, str) and raw else ()
    validating = mapping(webhook.get("validating"))
    policy = text(validating.get("failurePolicy")) or CHART_WEBHOOK_DEFAULTS["validating"]["failurePolicy"]
    return WebhookScope(enabled is not False, namespaces, policy)


# --- Go values -----------------------------------------------------------------------------------


def mask_trailing_dash(name: str) -> str:
    """pkg/api/validation/generic.go `maskTrailingDash`: a trailing dash of a name longer than one
    byte stands for the suffix to come (Go slices bytes: `name[:len(name)-2] + "a"`)."""
    raw = name.encode()
    if len(raw) > 1 and raw.endswith(b"-"):
        return (raw[:-2] + b"a").decode(errors="replace")
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """pkg/api/validation/generic.go `NameIsDNSSubdomain`."""
    return is_dns1123_subdomain(mask_trailing_dash(name) if prefix else name)


MINUTE_NS = 60 * 10**9


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, Mapping | list | tuple) and not value)


QUANTITY_MAPS = ("requests", "limits", "capacity")


def _scalar_equal(a: Any, b: Any, as_quantity: bool) -> bool:
    if as_quantity:
        left, right = quantity(a), quantity(b)
        if left is not None and right is not None:
            return compare(left, right) == 0
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def semantic_equal(a: Any, b: Any, quantity_map: bool = False) -> bool:
    """`apiequality.Semantic.DeepEqual` over JSON values: an absent, null or empty list or map are the
    same (Go's nil and empty slices and maps); the values of `requests`, `limits` and `capacity`
    compare as quantities, by value. Scalars compare as they are: a JSON zero value and an absent
    field differ here even where Go would decode both to the same zero (no comparison below depends
    on that)."""
    if _empty(a) and _empty(b):
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = {k for k, v in a.items() if not _empty(v)} | {k for k, v in b.items() if not _empty(v)}
        if quantity_map:
            return all(_scalar_equal(a.get(k), b.get(k), True) for k in keys)
        return all(semantic_equal(a.get(k), b.get(k), k in QUANTITY_MAPS) for k in keys)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping | list | tuple) or isinstance(b, Mapping | list | tuple):
        return False
    return _scalar_equal(a, b, False)


# --- the objects' Go views ------------------------------------------------------------------------


def ref_name(value: Any) -> str:
    """A `corev1.LocalObjectReference`'s Name (`""` when absent)."""
    return text(get(value, "name")) or ""


SecretKeySelector = tuple[str, str, bool | None]


def secret_key_selector(value: Any) -> SecretKeySelector:
    """A `corev1.SecretKeySelector` as Go compares it: (name, key, optional), optional a *bool."""
    body = mapping(value)
    optional = body.get("optional")
    return ref_name(body), text(body.get("key")) or "", optional if isinstance(optional, bool) else None


def auth_jwt_ref(obj: Mapping[str, Any]) -> SecretKeySelector:
    """api/v1beta1 controller_keys.go / accounting_keys.go `AuthJwtRef`, token_keys.go `JwtRef`:
    `jwtKeyRef` when set, else the deprecated `jwtHs256KeyRef`, else the zero selector."""
    spec = mapping(obj.get("spec"))
    for key in ("jwtKeyRef", "jwtHs256KeyRef"):
        if spec.get(key) is not None:
            return secret_key_selector(spec.get(key))
    return "", "", None


def cluster_name(controller: Mapping[str, Any]) -> str:
    """api/v1beta1/controller_keys.go `ClusterName`: `spec.clusterName`, else `<namespace>_<name>`."""
    return text(get(controller, "spec", "clusterName")) or f"{namespace_of(controller)}_{name_of(controller)}"


def persistence_enabled(controller: Mapping[str, Any]) -> bool | None:
    """`spec.persistence.enabled`, a *bool (None: nil; the CRD defaults it to true when `persistence` is given)."""
    value = get(controller, "spec", "persistence", "enabled")
    return value if isinstance(value, bool) else None


# --- the rules ------------------------------------------------------------------------------------

RESERVED_CONFIG_FILES = ("slurm.conf", "slurmdbd.conf")
KNOWN_CONFIG_FILES = (
    "acct_gather.conf",
    "burst_buffer.conf",
    "cgroup.conf",
    "cli_filter.lua",
    "gres.conf",
    "helpers.conf",
    "job_container.conf",
    "job_submit.lua",
    "mpi.conf",
    "namespace.yaml",
    "oci.conf",
    "plugstack.conf",
    "topology.conf",
    "topology.yaml",
)
"""controller_webhook.go `validateController`: `denyConfigFiles` and `knownConfigFiles`."""

NOT_KNOWN = object()
"""A ConfigMap whose data is not known yet (a preview): its keys cannot be judged."""

ConfigMaps = Callable[[str, str], Any]
"""(namespace, name) -> the ConfigMap's `data` mapping, None when it does not exist, or NOT_KNOWN."""

Checked = tuple[list[str], list[str]]
"""(warnings, errors)."""


def _external_ips_warning(obj: Mapping[str, Any], what: str) -> list[str]:
    # Every webhook: "Prevent MitM via CVE-2020-8554" (a warning, never a refusal).
    return [f"ExternalIPs may not be set for {what}"] if get(obj, "spec", "service", "spec", "externalIPs") is not None else []


def validate_accounting(obj: Mapping[str, Any]) -> Checked:
    """accounting_webhook.go `validateAccounting`: only a warning."""
    return _external_ips_warning(obj, "accounting service"), []


def validate_restapi(obj: Mapping[str, Any]) -> Checked:
    """restapi_webhook.go `validateRestapi`: only a warning."""
    return _external_ips_warning(obj, "restapi services"), []


def validate_loginset(obj: Mapping[str, Any]) -> Checked:
    """loginset_webhook.go `validateLoginSet`."""
    errors: list[str] = []
    if not ref_name(get(obj, "spec", "controllerRef")):
        errors.append("controllerRef.name must not be empty")
    if not ref_name(get(obj, "spec", "sssdConfRef")):
        errors.append("sssdConfRef.name must not be empty")
    return _external_ips_warning(obj, "loginset service"), errors


def validate_nodeset(obj: Mapping[str, Any]) -> Checked:
    """nodeset_webhook.go `validateNodeSet`."""
    spec = mapping(obj.get("spec"))
    errors: list[str] = []
    if not ref_name(spec.get("controllerRef")):
        errors.append("controllerRef.name must not be empty")
    max_unavailable = get(spec, "updateStrategy", "rollingUpdate", "maxUnavailable")
    # intstr: a JSON number is an Int (checked < 1), a JSON string a String (only "0%" refused).
    if isinstance(max_unavailable, int) and not isinstance(max_unavailable, bool) and max_unavailable < 1:
        errors.append(f"maxUnavailable must be > 0, got {max_unavailable}")
    elif max_unavailable == "0%":
        errors.append("maxUnavailable must not be 0%")
    duration = get(spec, "updateStrategy", "scheduledUpdate", "duration")
    if isinstance(duration, str):
        try:
            nanoseconds = parse_duration(duration)
        except GoError as error:
            # metav1.Duration.UnmarshalJSON fails: the webhook cannot decode the object (400).
            errors.append(str(error))
        else:
            if nanoseconds != 0 and nanoseconds < MINUTE_NS:
                errors.append("UpdateStrategy.ScheduledUpdate.Duration must be at least 1 minute")
    if get(spec, "ssh", "enabled") is True and not ref_name(get(spec, "ssh", "sssdConfRef")):
        errors.append("ssh.sssdConfRef.name must not be empty when ssh is enabled")
    hostname = text(get(spec, "template", "spec", "hostname")) or ""
    if hostname:
        errors += [f"template.spec.hostname: {message}" for message in name_is_dns_subdomain(hostname, True)]
    return [], errors


def _missing(config_maps: ConfigMaps | None) -> ConfigMaps:
    return config_maps if config_maps is not None else (lambda namespace, name: None)


def validate_controller(obj: Mapping[str, Any], config_maps: ConfigMaps | None = None) -> Checked:
    """controller_webhook.go `validateController`: every ConfigMap of `configFileRefs` must exist (the
    webhook's `r.Get` fails otherwise), none may hold slurm.conf or slurmdbd.conf (the operator writes
    them); a file Slurm does not know is a warning."""
    warnings: list[str] = []
    errors: list[str] = []
    lookup = _missing(config_maps)
    for ref in items(get(obj, "spec", "configFileRefs")):
        name = ref_name(ref)
        data = lookup(namespace_of(obj), name)
        if data is NOT_KNOWN:
            continue
        if data is None:
            errors.append(f'configmaps "{name}" not found')
            continue
        for file in mapping(data):
            if file in RESERVED_CONFIG_FILES:
                errors.append(f"the configFile is reserved for slurm-operator use: {file}")
            elif file not in KNOWN_CONFIG_FILES:
                warnings.append(
                    "the configFile is unknown to Slurm, make sure to include it in another config file otherwise it is "
                    f"ignored: {file}"
                )
    return warnings + _external_ips_warning(obj, "controller service"), errors


def validate_token(obj: Mapping[str, Any]) -> Checked:
    """token_webhook.go `ValidateCreate`: admits every Token."""
    return [], []


CREATE_CHECKS: Mapping[str, Callable[[Mapping[str, Any]], Checked]] = {
    "Accounting": validate_accounting,
    "LoginSet": validate_loginset,
    "NodeSet": validate_nodeset,
    "RestApi": validate_restapi,
    "Token": validate_token,
}


def validate_create_errors(obj: Mapping[str, Any], config_maps: ConfigMaps | None = None) -> Checked:
    """`ValidateCreate` of the object's kind."""
    kind = kind_of(obj)
    if kind == "Controller":
        warnings, errors = validate_controller(obj, config_maps)
        # controller_webhook.go ValidateCreate (https://slurm.schedmd.com/slurm.conf.html#OPT_ClusterName).
        name = cluster_name(obj)
        if len(name.encode()) > 40:
            errors.append(f"ClusterName exceeds 40 characters ({len(name.encode())}): {name}")
        return warnings, errors
    check = CREATE_CHECKS.get(kind)
    return check(obj) if check is not None else ([], [])


JWT_IMMUTABLE = "the value of JwtKeyRef or JwtHs256KeyRef cannot be modified after deployment"


def validate_update_errors(old: Mapping[str, Any], new: Mapping[str, Any], config_maps: ConfigMaps | None = None) -> Checked:
    """`ValidateUpdate` of the object's kind: the new object's `validate<Kind>`, then the fields that
    may not change after deployment."""
    kind = kind_of(new)
    old_spec, new_spec = mapping(old.get("spec")), mapping(new.get("spec"))
    if kind == "Controller":
        # controller_webhook.go ValidateUpdate (no ClusterName length check on UPDATE).
        warnings, errors = validate_controller(new, config_maps)
        if cluster_name(new) != cluster_name(old):
            errors.append("cannot change ClusterName after deployment")
        if ref_name(new_spec.get("slurmKeyRef")) != ref_name(old_spec.get("slurmKeyRef")):
            errors.append("cannot change SlurmKeyRef after deployment")
        if auth_jwt_ref(new) != auth_jwt_ref(old):
            errors.append(JWT_IMMUTABLE)
        if persistence_enabled(new) != persistence_enabled(old):
            errors.append("cannot change persistence.enabled after deployment")
        return warnings, errors
    warnings, errors = CREATE_CHECKS[kind](new) if kind in CREATE_CHECKS else ([], [])
    if kind == "Accounting" and auth_jwt_ref(new) != auth_jwt_ref(old):
        errors.append(JWT_IMMUTABLE)  # accounting_webhook.go ValidateUpdate
    if kind == "Token":
        # token_webhook.go ValidateUpdate: only the JWT key; no validateToken.
        errors = [JWT_IMMUTABLE] if auth_jwt_ref(new) != auth_jwt_ref(old) else []
    if kind in ("NodeSet", "LoginSet") and ref_name(new_spec.get("controllerRef")) != ref_name(old_spec.get("controllerRef")):
        errors.append("cannot change controllerRef after deployment")  # nodeset/loginset_webhook.go ValidateUpdate
    if kind == "NodeSet" and not semantic_equal(new_spec.get("volumeClaimTemplates"), old_spec.get("volumeClaimTemplates")):
        errors.append("cannot change volumeClaimTemplates after deployment")
    return warnings, errors


# --- the CRDs' CEL rules (the API server, before the webhook) -------------------------------------


def _has(value: Mapping[str, Any], key: str) -> bool:
    return key in value and value[key] is not None


def crd_rule_errors(obj: Mapping[str, Any]) -> list[str]:
    """The `x-kubernetes-validations` of the Slinky CRDs 1.2.1 on the fields hpcforge sets:
    ControllerSpec and AccountingSpec (controller_types.go, accounting_types.go: the keys unless
    external, externalConfig when external), NodeSetUpdateStrategy (nodeset_types.go:
    ScheduledUpdate needs startTime and duration) and TokenSpec (token_types.go: a JWT key).
    `external` defaults to false (CRD default) and `scheduledUpdate.duration` to 30m."""
    kind = kind_of(obj)
    spec = mapping(obj.get("spec"))
    errors: list[str] = []

    def fail(path: str, message: str) -> None:
        errors.append(f'{path}: Invalid value: "object": {message}')

    if kind in ("Controller", "Accounting"):
        external = spec.get("external") is True
        if not external and not _has(spec, "slurmKeyRef"):
            fail("spec", "slurmKeyRef must be set when external is false")
        if not external and not (_has(spec, "jwtKeyRef") or _has(spec, "jwtHs256KeyRef")):
            fail("spec", "jwtKeyRef or jwtHs256KeyRef must be set when external is false")
        if external and not _has(spec, "externalConfig"):
            fail("spec", "externalConfig must be set when external is true")
    if kind == "NodeSet":
        strategy = mapping(spec.get("updateStrategy"))
        scheduled = mapping(strategy.get("scheduledUpdate"))
        # has(self.scheduledUpdate.duration): the CRD defaults it (30m) once scheduledUpdate is given.
        if strategy.get("type") == "ScheduledUpdate" and not _has(scheduled, "startTime"):
            fail(
                "spec.updateStrategy",
                "scheduledUpdate.startTime and scheduledUpdate.duration are required when type is ScheduledUpdate",
            )
    if kind == "Token" and not (_has(spec, "jwtKeyRef") or _has(spec, "jwtHs256KeyRef")):
        fail("spec", "jwtKeyRef or jwtHs256KeyRef must be set")
    return errors


# --- verdicts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The API server's answer to one CREATE or UPDATE of a Slinky custom resource."""

    obj: Mapping[str, Any]
    operation: str
    errors: tuple[str, ...] = ()
    """What the webhook refuses it for."""
    rule_errors: tuple[str, ...] = ()
    """What the CRD's CEL rules refuse it for (checked first: the webhook is then not called)."""
    warnings: tuple[str, ...] = field(default=())
    judged: bool = True
    """Whether the webhook was called (False: the chart's values keep it from this namespace, or the CEL
    rules refused first)."""

    @property
    def admitted(self) -> bool:
        return not self.errors and not self.rule_errors

    @property
    def message(self) -> str:
        if self.rule_errors:
            return f'{kind_of(self.obj)}.{SLINKY_GROUP} "{name_of(self.obj)}" is invalid: ' + "; ".join(self.rule_errors)
        if self.errors:
            webhook = WEBHOOK_NAMES.get(kind_of(self.obj), "?")
            return f'admission webhook "{webhook}" denied the request: {aggregate_message(self.errors)}'
        scope = "" if self.judged else " (CRD rules only: the webhook does not run here)"
        return "admitted" + scope + (f" with warnings: {'; '.join(self.warnings)}" if self.warnings else "")


def is_slinky(obj: Mapping[str, Any]) -> bool:
    return group_of(obj) == SLINKY_GROUP and kind_of(obj) in WEBHOOK_NAMES


def validate_create(obj: Mapping[str, Any], config_maps: ConfigMaps | None = None, scope: WebhookScope | None = None) -> Verdict:
    """A CREATE of `obj`: the CRD's CEL rules, then (where the webhook runs) `ValidateCreate`."""
    rule_errors = tuple(crd_rule_errors(obj))
    if rule_errors or not (scope or WebhookScope()).judges(namespace_of(obj)):
        return Verdict(obj, CREATE, rule_errors=rule_errors, judged=False)
    warnings, errors = validate_create_errors(obj, config_maps)
    return Verdict(obj, CREATE, tuple(errors), (), tuple(warnings))


def validate_update(
    old: Mapping[str, Any], new: Mapping[str, Any], config_maps: ConfigMaps | None = None, scope: WebhookScope | None = None
) -> Verdict:
    """An UPDATE from `old` (as stored) to `new`: the CRD's CEL rules, then `ValidateUpdate`."""
    rule_errors = tuple(crd_rule_errors(new))
    if rule_errors or not (scope or WebhookScope()).judges(namespace_of(new)):
        return Verdict(new, UPDATE, rule_errors=rule_errors, judged=False)
    warnings, errors = validate_update_errors(old, new, config_maps)
    return Verdict(new, UPDATE, tuple(errors), (), tuple(warnings))


def config_maps_of(objects: Iterable[Mapping[str, Any]]) -> ConfigMaps:
    """The ConfigMaps among `objects` as the webhook would find them: their `data` (the webhook reads
    only `configMap.Data`'s keys, not `binaryData`); NOT_KNOWN where the data is not known yet."""
    found: dict[tuple[str, str], Any] = {}
    for obj in objects:
        if group_of(obj) == "" and kind_of(obj) == "ConfigMap":
            data = obj.get("data")
            if is_unknown(data):
                found[(namespace_of(obj), name_of(obj))] = NOT_KNOWN
            else:
                found[(namespace_of(obj), name_of(obj))] = {**mapping(data)}
    return lambda namespace, name: found.get((namespace, name))


def create_verdicts(objects: Sequence[Mapping[str, Any]], scope: WebhookScope | None = None) -> list[Verdict]:
    """Every Slinky custom resource of `objects`, created as it is (with the ConfigMaps among them)."""
    config_maps = config_maps_of(objects)
    return [validate_create(obj, config_maps, scope) for obj in objects if is_slinky(obj)]


def object_key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    return kind_of(obj), namespace_of(obj), name_of(obj)


def update_verdicts(
    old_objects: Sequence[Mapping[str, Any]], new_objects: Sequence[Mapping[str, Any]], scope: WebhookScope | None = None
) -> list[Verdict]:
    """Every Slinky custom resource of `new_objects` that `old_objects` already had (same kind,
    namespace and name): the UPDATE that takes it from the old to the new object. Objects only in
    `new_objects` are CREATEs (`create_verdicts`)."""
    old = {object_key(o): o for o in old_objects if is_slinky(o)}
    config_maps = config_maps_of(new_objects)
    return [
        validate_update(old[object_key(obj)], obj, config_maps, scope)
        for obj in new_objects
        if is_slinky(obj) and object_key(obj) in old
    ]


def verdict_line(verdict: Verdict) -> str:
    mark = "ok  " if verdict.admitted else "DENY"
    return f"  {mark} {verdict.operation} {display(verdict.obj)}: {verdict.message}"
