"""Updates never break running jobs or lock users out: bounded NodeSet rolling updates
(nodeset-rolling-update-bounded), PodDisruptionBudgets for busy NodeSet pods (nodeset-disruption-protection),
a login update keeps a login pod (loginset-update-keeps-login-available).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..access import as_int, get, int_or_percent, resolve_int_or_percent, text
from ..knobs import RuleConfig, knob
from ..rule import ResourceRule
from ..view import ResourceView
from ..wire import is_unknown
from .slinky import is_slinky


@dataclass(frozen=True)
class RollingUpdateConfig(RuleConfig):
    max_unavailable: str = knob(
        "maxUnavailable",
        "25%",
        {"type": "string", "pattern": "^[0-9]{1,3}%$"},
        "Upper bound on a NodeSet's rolling-update maxUnavailable, as a share of its replicas (at least 1 node).",
    )
    max_unavailable_count: int | None = knob(
        "maxUnavailableCount",
        None,
        {"type": ["integer", "null"], "minimum": 1},
        "Upper bound as a node count (null: no count bound).",
    )


def check_nodeset_rolling_update(resource: ResourceView, config: RollingUpdateConfig) -> list[str]:  # noqa: PLR0911 (one return per rule of the update strategy)
    if not is_slinky(resource, "NodeSet"):
        return []
    strategy = resource.spec.get("updateStrategy")
    if is_unknown(strategy):
        return []
    kind = text(get(strategy, "type")) or "RollingUpdate"
    if kind != "RollingUpdate":
        return []  # OnDelete and ScheduledUpdate do not roll by themselves
    raw = get(strategy, "rollingUpdate", "maxUnavailable")
    replicas_raw = resource.spec.get("replicas")
    if is_unknown(raw) or is_unknown(replicas_raw):
        return []
    value = int_or_percent(raw) if raw is not None else "25%"
    name = resource.object_name
    if value is None:
        return [f"NodeSet {name}: updateStrategy.rollingUpdate.maxUnavailable {raw!r} is not a count or a percentage."]
    if value in {0, "0%"}:
        return [f"NodeSet {name}: maxUnavailable is 0, so a rolling update can never start."]
    replicas = as_int(replicas_raw)
    replicas = 1 if replicas is None else replicas
    daemonset = resource.spec.get("scalingMode") == "DaemonSet"
    bound_percent = int(config.max_unavailable.rstrip("%"))
    problems: list[str] = []
    if daemonset:
        # No fixed replica count: compare like with like.
        if isinstance(value, str) and int(value.rstrip("%")) > bound_percent:
            problems.append(f"NodeSet {name}: maxUnavailable {value} exceeds the bound {config.max_unavailable}.")
        if isinstance(value, int) and config.max_unavailable_count is not None and value > config.max_unavailable_count:
            problems.append(f"NodeSet {name}: maxUnavailable {value} exceeds the bound of {config.max_unavailable_count} nodes.")
        return problems
    if replicas <= 0:
        return []
    unavailable = resolve_int_or_percent(value, replicas, round_up=True)
    bound = max(1, resolve_int_or_percent(config.max_unavailable, replicas, round_up=True))
    if config.max_unavailable_count is not None:
        bound = min(bound, config.max_unavailable_count)
    if unavailable > bound:
        problems.append(
            f"NodeSet {name}: a rolling update may take {unavailable} of {replicas} nodes out at once (maxUnavailable "
            f"{value}), more than the bound of {bound} (maxUnavailable {config.max_unavailable}"
            + (f", at most {config.max_unavailable_count}" if config.max_unavailable_count is not None else "")
            + "): too much of the partition drains at the same time."
        )
    return problems


NODESET_ROLLING_UPDATE = ResourceRule(
    "nodeset-rolling-update-bounded",
    "A NodeSet's rolling update takes at most the configured share of its nodes out at once.",
    RollingUpdateConfig,
    check_nodeset_rolling_update,
    "Lower the nodeset's maxUnavailable in the stack file (a count such as 1, or a percentage within the bound).",
)


@dataclass(frozen=True)
class DisruptionConfig(RuleConfig):
    require_explicit: bool = knob(
        "requireExplicit",
        False,
        {"type": "boolean"},
        "Require workloadDisruptionProtection: true to be set explicitly (the CRD default is true).",
    )


def check_nodeset_disruption(resource: ResourceView, config: DisruptionConfig) -> list[str]:
    if not is_slinky(resource, "NodeSet"):
        return []
    value = resource.spec.get("workloadDisruptionProtection")
    if is_unknown(value) or value is True or (value is None and not config.require_explicit):
        return []
    state = "not set" if value is None else f"{value!r}"
    return [
        f"NodeSet {resource.object_name}: workloadDisruptionProtection is {state}: node drains and upgrades could "
        "evict pods that are running Slurm jobs. Set it to true."
    ]


NODESET_DISRUPTION = ResourceRule(
    "nodeset-disruption-protection",
    "NodeSets protect pods that run Slurm jobs with a PodDisruptionBudget (workloadDisruptionProtection).",
    DisruptionConfig,
    check_nodeset_disruption,
    "Set workloadDisruptionProtection: true on the NodeSet.",
)


@dataclass(frozen=True)
class LoginUpdateConfig(RuleConfig):
    min_available: int = knob(
        "minAvailable", 1, {"type": "integer", "minimum": 1}, "Login pods that must stay up during an update."
    )


def check_loginset_update(resource: ResourceView, config: LoginUpdateConfig) -> list[str]:  # noqa: PLR0911 (one return per rule of the update strategy)
    if not is_slinky(resource, "LoginSet"):
        return []
    spec = resource.spec
    strategy, replicas_raw = spec.get("strategy"), spec.get("replicas")
    if is_unknown(strategy) or is_unknown(replicas_raw):
        return []
    replicas = as_int(replicas_raw)
    replicas = 1 if replicas is None else replicas
    if replicas <= 0:
        return []
    name = resource.object_name
    kind = text(get(strategy, "type")) or "RollingUpdate"
    if kind == "Recreate":
        return [f"LoginSet {name}: strategy Recreate stops all {replicas} login pods before starting new ones."]
    raw_unavailable = get(strategy, "rollingUpdate", "maxUnavailable")
    raw_surge = get(strategy, "rollingUpdate", "maxSurge")
    if is_unknown(raw_unavailable) or is_unknown(raw_surge):
        return []
    unavailable_value = int_or_percent(raw_unavailable) if raw_unavailable is not None else "25%"
    surge_value = int_or_percent(raw_surge) if raw_surge is not None else "25%"
    if unavailable_value is None or surge_value is None:
        return [f"LoginSet {name}: strategy.rollingUpdate has a value that is not a count or a percentage."]
    # Kubernetes' ResolveFenceposts: surge rounds up, unavailable rounds down, never both 0.
    surge = resolve_int_or_percent(surge_value, replicas, round_up=True)
    unavailable = resolve_int_or_percent(unavailable_value, replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    available = replicas - unavailable
    if available < min(config.min_available, replicas) or available <= 0:
        return [
            f"LoginSet {name}: a rolling update may take {unavailable} of {replicas} login pods down at once "
            f"(maxUnavailable {unavailable_value}, maxSurge {surge_value}), leaving {max(available, 0)} up; users "
            f"would be locked out. Keep at least {config.min_available} up (maxUnavailable 0 with maxSurge 1)."
        ]
    return []


LOGINSET_UPDATE = ResourceRule(
    "loginset-update-keeps-login-available",
    "A LoginSet update never takes all login pods down at once.",
    LoginUpdateConfig,
    check_loginset_update,
    "Use strategy RollingUpdate with maxUnavailable 0 and maxSurge 1 (or more replicas than maxUnavailable).",
)
