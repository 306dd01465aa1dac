"""The baseline checks, k8s.io/pod-security-admission v0.33.9 policy/check_<id>.go, one function per check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get, items, mapping, text
from .versions import KUBERNETES_VERSION, Meta, Spec, Version
from .visitor import (
    ALLOWED,
    CheckResult,
    container_name,
    join_quote,
    pluralize,
    pod_security_context,
    relaxed_for_user_namespaces,
    security_context,
    visit_containers,
    who_sets,
)


def check_hostNamespaces(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_hostNamespaces.go (1.0)."""
    found = [f"{field}=true" for field in ("hostNetwork", "hostPID", "hostIPC") if spec.get(field) is True]
    if found:
        return CheckResult(False, "host namespaces", ", ".join(found))
    return ALLOWED


def check_privileged(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:
    """check_privileged.go (1.0)."""
    bad = [container_name(c) for c in visit_containers(spec) if get(security_context(c), "privileged") is True]
    if bad:
        return CheckResult(
            False,
            "privileged",
            f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} must not set securityContext.privileged=true",
        )
    return ALLOWED


CAPABILITIES_ALLOWED_1_0 = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)


def check_capabilities_baseline(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:
    """check_capabilities_baseline.go (1.0): only the container runtime's default set may be added."""
    bad: list[str] = []
    caps: set[str] = set()
    for c in visit_containers(spec):
        added = [str(a) for a in items(get(security_context(c), "capabilities", "add"))]
        wrong = [a for a in added if a not in CAPABILITIES_ALLOWED_1_0]
        if wrong:
            bad.append(container_name(c))
            caps.update(wrong)
    if bad:
        return CheckResult(
            False,
            "non-default capabilities",
            f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} must not include "
            f"{join_quote(sorted(caps))} in securityContext.capabilities.add",
        )
    return ALLOWED


def check_hostPathVolumes(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_hostPathVolumes.go (1.0)."""
    bad = [text(get(v, "name")) or "" for v in items(spec.get("volumes")) if get(v, "hostPath") is not None]
    if bad:
        return CheckResult(False, "hostPath volumes", f"{pluralize('volume', 'volumes', len(bad))} {join_quote(bad)}")
    return ALLOWED


def check_hostPorts(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_hostPorts.go (1.0): no container port may set a non-zero hostPort."""
    bad: list[str] = []
    ports: set[str] = set()
    for c in visit_containers(spec):
        used = [str(get(p, "hostPort")) for p in items(c.get("ports")) if get(p, "hostPort") not in (None, 0)]
        if used:
            bad.append(container_name(c))
            ports.update(used)
    if bad:
        return CheckResult(
            False,
            "hostPort",
            f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} {pluralize('uses', 'use', len(bad))} "
            f"{pluralize('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}",
        )
    return ALLOWED


APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


def check_appArmorProfile(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_appArmorProfile.go (1.0): profile type RuntimeDefault or Localhost; the deprecated
    annotations empty, `runtime/default` or `localhost/...`."""

    def bad_type(profile: Any) -> bool:
        return isinstance(profile, Mapping) and profile.get("type") not in ("RuntimeDefault", "Localhost")

    setters: list[str] = []
    values: set[str] = set()
    pod_profile = get(pod_security_context(spec), "appArmorProfile")
    if bad_type(pod_profile):
        setters.append("pod")
        values.add(str(mapping(pod_profile).get("type") or ""))
    containers: list[str] = []
    for c in visit_containers(spec):
        profile = get(security_context(c), "appArmorProfile")
        if bad_type(profile):
            containers.append(container_name(c))
            values.add(str(mapping(profile).get("type") or ""))
    if containers:
        setters.append(f"{pluralize('container', 'containers', len(containers))} {join_quote(containers)}")
    annotations = sorted(
        f'{k}="{v}"'
        for k, v in mapping(meta.get("annotations")).items()
        if k.startswith(APPARMOR_ANNOTATION_PREFIX)
        and not (v in ("", "runtime/default") or (isinstance(v, str) and v.startswith("localhost/")))
    )
    value_list = sorted(values) + annotations
    if annotations:
        setters.append(pluralize("annotation", "annotations", len(annotations)))
    if setters:
        return CheckResult(
            False,
            pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(value_list)),
            f"{' and '.join(setters)} must not set AppArmor profile type to {join_quote(value_list)}",
        )
    return ALLOWED


def check_seLinuxOptions(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_seLinuxOptions.go: type one of the container types (1.31 adds container_engine_t);
    user and role unset."""
    allowed = {"", "container_t", "container_init_t", "container_kvm_t"}
    if version >= (1, 31):
        allowed.add("container_engine_t")
    bad_types: set[str] = set()
    flags = {"user": False, "role": False}

    def valid(options: Any) -> bool:
        if not isinstance(options, Mapping):
            return True
        ok = True
        kind = str(options.get("type") or "")
        if kind not in allowed:
            ok = False
            bad_types.add(kind)
        for key in ("user", "role"):
            if options.get(key):
                ok = False
                flags[key] = True
        return ok

    pod_bad = not valid(get(pod_security_context(spec), "seLinuxOptions"))
    containers = [container_name(c) for c in visit_containers(spec) if not valid(get(security_context(c), "seLinuxOptions"))]
    setters = who_sets(pod_bad, containers)
    if setters:
        data: list[str] = []
        if bad_types:
            data.append(f"{pluralize('type', 'types', len(bad_types))} {join_quote(sorted(bad_types))}")
        if flags["user"]:
            data.append("user may not be set")
        if flags["role"]:
            data.append("role may not be set")
        return CheckResult(
            False,
            "seLinuxOptions",
            f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: {'; '.join(data)}",
        )
    return ALLOWED


def check_procMount(  # noqa: N802
    meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION, *, relax_user_namespaces: bool = False
) -> CheckResult:
    """check_procMount.go (1.0): procMount unset or Default."""
    if relaxed_for_user_namespaces(spec, relax_user_namespaces):
        return ALLOWED
    bad: list[str] = []
    kinds: set[str] = set()
    for c in visit_containers(spec):
        mount = get(security_context(c), "procMount")
        if mount is not None and mount != "Default":
            bad.append(container_name(c))
            kinds.add(str(mount))
    if bad:
        return CheckResult(
            False,
            "procMount",
            f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} must not set securityContext.procMount "
            f"to {join_quote(sorted(kinds))}",
        )
    return ALLOWED


SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"


def valid_seccomp(kind: Any) -> bool:
    return kind in ("Localhost", "RuntimeDefault")


def check_seccompProfile_baseline(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_seccompProfile_baseline.go: before 1.19 the annotations, from 1.19 the fields; a set
    profile must be RuntimeDefault or Localhost (unset is allowed)."""
    if version < (1, 19):
        annotations = mapping(meta.get("annotations"))
        keys = [
            SECCOMP_POD_ANNOTATION,
            *(SECCOMP_CONTAINER_ANNOTATION_PREFIX + container_name(c) for c in visit_containers(spec)),
        ]
        forbidden = sorted(
            f'{k}="{annotations[k]}"'
            for k in keys
            if k in annotations
            and not (annotations[k] in ("runtime/default", "docker/default") or str(annotations[k]).startswith("localhost/"))
        )
        if forbidden:
            return CheckResult(
                False,
                "seccompProfile",
                f"forbidden {pluralize('annotation', 'annotations', len(forbidden))} {', '.join(forbidden)}",
            )
        return ALLOWED
    values: set[str] = set()
    pod_profile = get(pod_security_context(spec), "seccompProfile")
    pod_bad = isinstance(pod_profile, Mapping) and not valid_seccomp(pod_profile.get("type"))
    if pod_bad:
        values.add(str(mapping(pod_profile).get("type") or ""))
    containers: list[str] = []
    for c in visit_containers(spec):
        profile = get(security_context(c), "seccompProfile")
        if isinstance(profile, Mapping) and not valid_seccomp(profile.get("type")):
            containers.append(container_name(c))
            values.add(str(profile.get("type") or ""))
    setters = who_sets(pod_bad, containers)
    if setters:
        return CheckResult(
            False,
            "seccompProfile",
            f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to {join_quote(sorted(values))}",
        )
    return ALLOWED


SYSCTLS_1_0 = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
    }
)
SYSCTLS_1_27 = SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
SYSCTLS_1_29 = SYSCTLS_1_27 | {
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
SYSCTLS_1_32 = SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}


def check_sysctls(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:
    """check_sysctls.go: only the safe sysctls of the version (1.0, 1.27, 1.29, 1.32 sets)."""
    allowed = (
        SYSCTLS_1_32
        if version >= (1, 32)
        else SYSCTLS_1_29
        if version >= (1, 29)
        else SYSCTLS_1_27
        if version >= (1, 27)
        else SYSCTLS_1_0
    )
    bad = [str(get(s, "name")) for s in items(get(pod_security_context(spec), "sysctls")) if get(s, "name") not in allowed]
    if bad:
        return CheckResult(False, "forbidden sysctls", ", ".join(bad))
    return ALLOWED


def check_windowsHostProcess(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_windowsHostProcess.go (1.0)."""
    pod_bad = get(pod_security_context(spec), "windowsOptions", "hostProcess") is True
    containers = [
        container_name(c) for c in visit_containers(spec) if get(security_context(c), "windowsOptions", "hostProcess") is True
    ]
    setters = who_sets(pod_bad, containers)
    if setters:
        return CheckResult(
            False, "hostProcess", f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true"
        )
    return ALLOWED
