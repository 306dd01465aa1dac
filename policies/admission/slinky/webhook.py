"""The webhook's rules, one function per kind (internal/webhook/v1beta1/<kind>_webhook.go `ValidateCreate`,
`ValidateUpdate`), with the Controller's config files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...rules.access import get, items, mapping, text
from ...rules.gotime import GoError, parse_duration
from ...rules.podtemplates import kind_of, namespace_of
from .values import MINUTE_NS, auth_jwt_ref, cluster_name, name_is_dns_subdomain, persistence_enabled, ref_name, semantic_equal

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
