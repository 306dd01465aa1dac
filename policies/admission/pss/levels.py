"""The checks each level runs (policy/registry.go, checks.go) and a pod evaluated against a level."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .baseline import (
    check_appArmorProfile,
    check_capabilities_baseline,
    check_hostNamespaces,
    check_hostPathVolumes,
    check_hostPorts,
    check_privileged,
    check_procMount,
    check_seccompProfile_baseline,
    check_seLinuxOptions,
    check_sysctls,
    check_windowsHostProcess,
)
from .restricted import (
    check_allowPrivilegeEscalation,
    check_capabilities_restricted,
    check_restrictedVolumes,
    check_runAsNonRoot,
    check_runAsUser,
    check_seccompProfile_restricted,
)
from .versions import KUBERNETES_VERSION, Meta, Spec, Version
from .visitor import CheckResult

Check = Callable[..., CheckResult]

BASELINE: tuple[tuple[str, Check], ...] = (
    ("hostNamespaces", check_hostNamespaces),
    ("privileged", check_privileged),
    ("capabilities_baseline", check_capabilities_baseline),
    ("hostPathVolumes", check_hostPathVolumes),
    ("hostPorts", check_hostPorts),
    ("appArmorProfile", check_appArmorProfile),
    ("seLinuxOptions", check_seLinuxOptions),
    ("procMount", check_procMount),
    ("seccompProfile_baseline", check_seccompProfile_baseline),
    ("sysctls", check_sysctls),
    ("windowsHostProcess", check_windowsHostProcess),
)
RESTRICTED: tuple[tuple[str, Check], ...] = (
    ("restrictedVolumes", check_restrictedVolumes),
    ("allowPrivilegeEscalation", check_allowPrivilegeEscalation),
    ("runAsNonRoot", check_runAsNonRoot),
    ("runAsUser", check_runAsUser),
    ("seccompProfile_restricted", check_seccompProfile_restricted),
    ("capabilities_restricted", check_capabilities_restricted),
)
OVERRIDES = {
    "restrictedVolumes": "hostPathVolumes",
    "capabilities_restricted": "capabilities_baseline",
    "seccompProfile_restricted": "seccompProfile_baseline",
}
_RELAXABLE = frozenset({"procMount", "runAsNonRoot", "runAsUser"})


def checks_for(level: str) -> list[tuple[str, Check]]:
    """The checks a level runs (policy/registry.go): restricted checks replace what they override."""
    if level == "baseline":
        return list(BASELINE)
    if level == "restricted":
        overridden = set(OVERRIDES.values())
        return [c for c in BASELINE if c[0] not in overridden] + list(RESTRICTED)
    return []


@dataclass(frozen=True)
class Failure:
    check: str
    reason: str
    detail: str

    def __str__(self) -> str:
        return f"{self.reason} ({self.detail})" if self.detail else self.reason


def evaluate_pod(
    meta: Meta,
    spec: Spec,
    level: str,
    version: Version = KUBERNETES_VERSION,
    *,
    relax_user_namespaces: bool = False,
) -> list[Failure]:
    """Every check of `level` that refuses the pod (empty: admitted)."""
    failures: list[Failure] = []
    for check_id, check in checks_for(level):
        if check_id in _RELAXABLE:
            result = check(meta, spec, version, relax_user_namespaces=relax_user_namespaces)
        else:
            result = check(meta, spec, version)
        if not result.allowed:
            failures.append(Failure(check_id, result.reason or "unknown forbidden reason", result.detail))
    return failures


def forbidden_message(failures: Sequence[Failure], level: str, version: str) -> str:
    """The API server's message (admission.go): `violates PodSecurity "restricted:v1.33": ...`."""
    return f'violates PodSecurity "{level}:{version}": ' + ", ".join(str(f) for f in failures)
