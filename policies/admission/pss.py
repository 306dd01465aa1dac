"""Pod Security Standards (baseline and restricted) as the Kubernetes API server's Pod Security
Admission evaluates them, for Kubernetes 1.33.

No maintained Python implementation exists on PyPI (searched for pod security / PSA / PSS), so each
check is reproduced from upstream k8s.io/pod-security-admission at tag v0.33.9 (the staging repo of
Kubernetes 1.33), `policy/check_<id>.go`: one function per check, named as upstream names it
(`check_<id>`), taking the pod's metadata and spec as plain dicts and the Kubernetes minor version
(the `enforce-version` label, `latest` meaning the cluster's), returning upstream's
ForbiddenReason/ForbiddenDetail text. Containers are visited as upstream's `visitContainers`
(policy/visitor.go): init containers, containers, then ephemeral containers.

Levels (policy/checks.go, registry.go): `privileged` runs nothing; `baseline` runs the baseline
checks; `restricted` runs baseline and restricted checks, where a restricted check replaces the
baseline check it overrides (`OverrideCheckIDs`: restrictedVolumes overrides hostPathVolumes,
capabilities_restricted overrides capabilities_baseline, seccompProfile_restricted overrides
seccompProfile_baseline). The `UserNamespacesPodSecurityStandards` feature gate, which relaxes
procMount/runAsNonRoot/runAsUser for `hostUsers: false` pods, is alpha and off by default in 1.33
(policy/helpers.go `relaxPolicyForUserNamespacePod`): it is a parameter here, off by default.

Cluster versions. hpcforge accepts Kubernetes 1.26 to 1.39 (`hpcforge:kubernetes.version`, which also sets every
namespace's `enforce-version` label). Below 1.33 the checks run at the version evaluated, with upstream's version
gates (`MinimumVersion` in each policy/check_<id>.go at v0.33.9): seccompProfile fields from 1.19, capabilities_restricted
from 1.22, runAsUser from 1.23, the Windows exemptions (pod `spec.os.name: windows`) of allowPrivilegeEscalation,
seccompProfile_restricted and capabilities_restricted from 1.25, sysctl sets of 1.27, 1.29 and 1.32, seLinuxOptions'
container_engine_t from 1.31. The older API servers' own libraries (v0.26 to v0.32) differ from v0.33.9 at those
versions only in fields their API does not have (appArmorProfile before 1.30, `image` volumes before 1.31), in the
alpha user-namespace relaxation (off by default) and in the AppArmor check's message wording. Above 1.33 (`unreproduced`, `CHANGED_AFTER`) upstream changed checks that are
not reproduced here: pods judged at such a version are judged as 1.33 judges them, and the gap is reported
(admission/rules.py pod-security-admission, admission/report.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..rules.access import get, items, mapping, text
from .pins import Pin

REPRODUCES = Pin("kubernetes", "1.33", ("KUBERNETES_VERSION",), "kubernetes/pod-security-admission v0.33.9")
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""

Meta = Mapping[str, Any]
Spec = Mapping[str, Any]
Version = tuple[int, int]


def minor_version(text_version: str) -> Version:
    """`1.33` or `v1.33` as (1, 33)."""
    major, minor = text_version.removeprefix("v").split(".")[:2]
    return (int(major), int(minor))


KUBERNETES_VERSION: Version = minor_version(REPRODUCES.version)
LEVELS = ("privileged", "baseline", "restricted")
LABEL_PREFIX = "pod-security.kubernetes.io/"

# --- beyond the reproduced version ----------------------------------------------------------------------------------

CHANGED_AFTER: tuple[tuple[Version, str], ...] = (
    (
        (1, 34),
        "baseline check hostProbesAndHostLifecycle refuses a `host` in probes' and lifecycle handlers' httpGet and "
        "tcpSocket (v0.34.0 policy/check_hostProbesAndhostLifecycle.go)",
    ),
    (
        (1, 35),
        "pods with hostUsers: false are relaxed for runAsNonRoot, runAsUser and baseline procMount, and restricted "
        "gains procMount_restricted (v0.35.0 policy/check_runAsNonRoot.go, check_runAsUser.go, "
        "check_procMount_baseline.go, check_procMount_restricted.go)",
    ),
    (
        (1, 37),
        "sysctls net.ipv4.tcp_slow_start_after_idle and net.ipv4.tcp_notsent_lowat become safe (v0.37.0-alpha.2 "
        "policy/check_sysctls.go, not released when read)",
    ),
)
"""What k8s.io/pod-security-admission changed after the reproduced version, per Kubernetes version that evaluates it
(read at v0.34.0, v0.35.0, v0.36.2 and v0.37.0-alpha.2; v0.36 changed no check)."""
READ_UP_TO: Version = (1, 37)
"""The newest version whose changes CHANGED_AFTER lists (beyond it nothing is known here)."""


def unreproduced(version: Version) -> str | None:
    """Why Pod Security at Kubernetes `version` is not what this module reproduces (None: it is, `version` is the
    reproduced one or older, whose version-gated checks are reproduced at the versions upstream gates them)."""
    if version <= KUBERNETES_VERSION:
        return None
    changes = [f"{major}.{minor}: {what}" for (major, minor), what in CHANGED_AFTER if (major, minor) <= version]
    if version > READ_UP_TO:
        changes.append(f"after {READ_UP_TO[0]}.{READ_UP_TO[1]}: not read")
    reproduced = f"{KUBERNETES_VERSION[0]}.{KUBERNETES_VERSION[1]}"
    return (
        f"policies/admission/pss.py reproduces Pod Security as Kubernetes {reproduced} evaluates it "
        f"({REPRODUCES.source}), not {version[0]}.{version[1]}, which differs: "
        + ("; ".join(changes) if changes else "nothing known")
    )


@dataclass(frozen=True)
class CheckResult:
    allowed: bool
    reason: str = ""
    detail: str = ""


ALLOWED = CheckResult(True)


def _plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _join_quote(values: Sequence[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def _visit(spec: Spec) -> list[Mapping[str, Any]]:
    """policy/visitor.go visitContainers: initContainers, containers, ephemeralContainers."""
    return [mapping(c) for key in ("initContainers", "containers", "ephemeralContainers") for c in items(spec.get(key))]


def _name(container: Mapping[str, Any]) -> str:
    return text(container.get("name")) or ""


def _sc(container: Mapping[str, Any]) -> Mapping[str, Any] | None:
    value = container.get("securityContext")
    return value if isinstance(value, Mapping) else None


def _pod_sc(spec: Spec) -> Mapping[str, Any] | None:
    value = spec.get("securityContext")
    return value if isinstance(value, Mapping) else None


def _setters(pod_bad: bool, containers: Sequence[str]) -> list[str]:
    setters = ["pod"] if pod_bad else []
    if containers:
        setters.append(f"{_plural('container', 'containers', len(containers))} {_join_quote(containers)}")
    return setters


def _windows(spec: Spec) -> bool:
    return get(spec, "os", "name") == "windows"


def _relaxed(spec: Spec, relax_user_namespaces: bool) -> bool:
    return relax_user_namespaces and spec.get("hostUsers") is False


# --- baseline -------------------------------------------------------------------------------------


def check_hostNamespaces(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_hostNamespaces.go (1.0)."""
    found = [f"{field}=true" for field in ("hostNetwork", "hostPID", "hostIPC") if spec.get(field) is True]
    if found:
        return CheckResult(False, "host namespaces", ", ".join(found))
    return ALLOWED


def check_privileged(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:
    """check_privileged.go (1.0)."""
    bad = [_name(c) for c in _visit(spec) if get(_sc(c), "privileged") is True]
    if bad:
        return CheckResult(
            False,
            "privileged",
            f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} must not set securityContext.privileged=true",
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
    for c in _visit(spec):
        added = [str(a) for a in items(get(_sc(c), "capabilities", "add"))]
        wrong = [a for a in added if a not in CAPABILITIES_ALLOWED_1_0]
        if wrong:
            bad.append(_name(c))
            caps.update(wrong)
    if bad:
        return CheckResult(
            False,
            "non-default capabilities",
            f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} must not include "
            f"{_join_quote(sorted(caps))} in securityContext.capabilities.add",
        )
    return ALLOWED


def check_hostPathVolumes(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_hostPathVolumes.go (1.0)."""
    bad = [text(get(v, "name")) or "" for v in items(spec.get("volumes")) if get(v, "hostPath") is not None]
    if bad:
        return CheckResult(False, "hostPath volumes", f"{_plural('volume', 'volumes', len(bad))} {_join_quote(bad)}")
    return ALLOWED


def check_hostPorts(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_hostPorts.go (1.0): no container port may set a non-zero hostPort."""
    bad: list[str] = []
    ports: set[str] = set()
    for c in _visit(spec):
        used = [str(get(p, "hostPort")) for p in items(c.get("ports")) if get(p, "hostPort") not in (None, 0)]
        if used:
            bad.append(_name(c))
            ports.update(used)
    if bad:
        return CheckResult(
            False,
            "hostPort",
            f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} {_plural('uses', 'use', len(bad))} "
            f"{_plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}",
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
    pod_profile = get(_pod_sc(spec), "appArmorProfile")
    if bad_type(pod_profile):
        setters.append("pod")
        values.add(str(mapping(pod_profile).get("type") or ""))
    containers: list[str] = []
    for c in _visit(spec):
        profile = get(_sc(c), "appArmorProfile")
        if bad_type(profile):
            containers.append(_name(c))
            values.add(str(mapping(profile).get("type") or ""))
    if containers:
        setters.append(f"{_plural('container', 'containers', len(containers))} {_join_quote(containers)}")
    annotations = sorted(
        f'{k}="{v}"'
        for k, v in mapping(meta.get("annotations")).items()
        if k.startswith(APPARMOR_ANNOTATION_PREFIX)
        and not (v in ("", "runtime/default") or (isinstance(v, str) and v.startswith("localhost/")))
    )
    value_list = sorted(values) + annotations
    if annotations:
        setters.append(_plural("annotation", "annotations", len(annotations)))
    if setters:
        return CheckResult(
            False,
            _plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(value_list)),
            f"{' and '.join(setters)} must not set AppArmor profile type to {_join_quote(value_list)}",
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

    pod_bad = not valid(get(_pod_sc(spec), "seLinuxOptions"))
    containers = [_name(c) for c in _visit(spec) if not valid(get(_sc(c), "seLinuxOptions"))]
    setters = _setters(pod_bad, containers)
    if setters:
        data: list[str] = []
        if bad_types:
            data.append(f"{_plural('type', 'types', len(bad_types))} {_join_quote(sorted(bad_types))}")
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
    if _relaxed(spec, relax_user_namespaces):
        return ALLOWED
    bad: list[str] = []
    kinds: set[str] = set()
    for c in _visit(spec):
        mount = get(_sc(c), "procMount")
        if mount is not None and mount != "Default":
            bad.append(_name(c))
            kinds.add(str(mount))
    if bad:
        return CheckResult(
            False,
            "procMount",
            f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} must not set securityContext.procMount "
            f"to {_join_quote(sorted(kinds))}",
        )
    return ALLOWED


SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"


def _valid_seccomp(kind: Any) -> bool:
    return kind in ("Localhost", "RuntimeDefault")


def check_seccompProfile_baseline(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_seccompProfile_baseline.go: before 1.19 the annotations, from 1.19 the fields; a set
    profile must be RuntimeDefault or Localhost (unset is allowed)."""
    if version < (1, 19):
        annotations = mapping(meta.get("annotations"))
        keys = [SECCOMP_POD_ANNOTATION, *(SECCOMP_CONTAINER_ANNOTATION_PREFIX + _name(c) for c in _visit(spec))]
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
                f"forbidden {_plural('annotation', 'annotations', len(forbidden))} {', '.join(forbidden)}",
            )
        return ALLOWED
    values: set[str] = set()
    pod_profile = get(_pod_sc(spec), "seccompProfile")
    pod_bad = isinstance(pod_profile, Mapping) and not _valid_seccomp(pod_profile.get("type"))
    if pod_bad:
        values.add(str(mapping(pod_profile).get("type") or ""))
    containers: list[str] = []
    for c in _visit(spec):
        profile = get(_sc(c), "seccompProfile")
        if isinstance(profile, Mapping) and not _valid_seccomp(profile.get("type")):
            containers.append(_name(c))
            values.add(str(profile.get("type") or ""))
    setters = _setters(pod_bad, containers)
    if setters:
        return CheckResult(
            False,
            "seccompProfile",
            f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to {_join_quote(sorted(values))}",
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
    bad = [str(get(s, "name")) for s in items(get(_pod_sc(spec), "sysctls")) if get(s, "name") not in allowed]
    if bad:
        return CheckResult(False, "forbidden sysctls", ", ".join(bad))
    return ALLOWED


def check_windowsHostProcess(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_windowsHostProcess.go (1.0)."""
    pod_bad = get(_pod_sc(spec), "windowsOptions", "hostProcess") is True
    containers = [_name(c) for c in _visit(spec) if get(_sc(c), "windowsOptions", "hostProcess") is True]
    setters = _setters(pod_bad, containers)
    if setters:
        return CheckResult(
            False, "hostProcess", f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true"
        )
    return ALLOWED


# --- restricted -----------------------------------------------------------------------------------

RESTRICTED_VOLUME_TYPES = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
)
ALLOWED_VOLUME_TYPES = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
)


def check_restrictedVolumes(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_restrictedVolumes.go (1.0): only configMap, csi, downwardAPI, emptyDir, ephemeral,
    image, persistentVolumeClaim, projected and secret volumes."""
    bad: list[str] = []
    kinds: set[str] = set()
    for volume in items(spec.get("volumes")):
        body = mapping(volume)
        if any(body.get(k) is not None for k in ALLOWED_VOLUME_TYPES):
            continue
        bad.append(text(body.get("name")) or "")
        kinds.add(next((k for k in RESTRICTED_VOLUME_TYPES if body.get(k) is not None), "unknown"))
    if bad:
        return CheckResult(
            False,
            "restricted volume types",
            f"{_plural('volume', 'volumes', len(bad))} {_join_quote(bad)} {_plural('uses', 'use', len(bad))} "
            f"{_plural('restricted volume type', 'restricted volume types', len(kinds))} {_join_quote(sorted(kinds))}",
        )
    return ALLOWED


def check_allowPrivilegeEscalation(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_allowPrivilegeEscalation.go: every container sets allowPrivilegeEscalation=false
    (from 1.25, Windows pods are exempt)."""
    if version < (1, 8) or (version >= (1, 25) and _windows(spec)):
        return ALLOWED
    bad = [_name(c) for c in _visit(spec) if get(_sc(c), "allowPrivilegeEscalation") is not False]
    if bad:
        return CheckResult(
            False,
            "allowPrivilegeEscalation != false",
            f"{_plural('container', 'containers', len(bad))} {_join_quote(bad)} must set "
            "securityContext.allowPrivilegeEscalation=false",
        )
    return ALLOWED


def check_runAsNonRoot(  # noqa: N802
    meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION, *, relax_user_namespaces: bool = False
) -> CheckResult:
    """check_runAsNonRoot.go (1.0): runAsNonRoot=true on the pod, or on every container."""
    if _relaxed(spec, relax_user_namespaces):
        return ALLOWED
    pod_value = get(_pod_sc(spec), "runAsNonRoot")
    pod_bad = pod_value is False
    pod_true = pod_value is True
    explicit: list[str] = []
    implicit: list[str] = []
    for c in _visit(spec):
        value = get(_sc(c), "runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(_name(c))
        elif not pod_true:
            implicit.append(_name(c))
    setters = _setters(pod_bad, explicit)
    if setters:
        return CheckResult(
            False, "runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
        )
    if implicit:
        return CheckResult(
            False,
            "runAsNonRoot != true",
            f"pod or {_plural('container', 'containers', len(implicit))} {_join_quote(implicit)} must set "
            "securityContext.runAsNonRoot=true",
        )
    return ALLOWED


def check_runAsUser(  # noqa: N802
    meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION, *, relax_user_namespaces: bool = False
) -> CheckResult:
    """check_runAsUser.go (1.23): runAsUser must not be 0."""
    if version < (1, 23) or _relaxed(spec, relax_user_namespaces):
        return ALLOWED
    pod_bad = get(_pod_sc(spec), "runAsUser") == 0
    containers = [_name(c) for c in _visit(spec) if get(_sc(c), "runAsUser") == 0]
    setters = _setters(pod_bad, containers)
    if setters:
        return CheckResult(False, "runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0")
    return ALLOWED


def check_seccompProfile_restricted(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_seccompProfile_restricted.go: RuntimeDefault or Localhost on the pod or on every
    container (from 1.25, Windows pods are exempt)."""
    if version < (1, 19):
        return ALLOWED
    if version >= (1, 25) and _windows(spec):
        return ALLOWED
    values: set[str] = set()
    pod_profile = get(_pod_sc(spec), "seccompProfile")
    pod_bad = False
    pod_set = False
    if isinstance(pod_profile, Mapping):
        if _valid_seccomp(pod_profile.get("type")):
            pod_set = True
        else:
            pod_bad = True
            values.add(str(pod_profile.get("type") or ""))
    explicit: list[str] = []
    implicit: list[str] = []
    for c in _visit(spec):
        profile = get(_sc(c), "seccompProfile")
        if isinstance(profile, Mapping):
            if not _valid_seccomp(profile.get("type")):
                explicit.append(_name(c))
                values.add(str(profile.get("type") or ""))
        elif not pod_set:
            implicit.append(_name(c))
    setters = _setters(pod_bad, explicit)
    if setters:
        return CheckResult(
            False,
            "seccompProfile",
            f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to {_join_quote(sorted(values))}",
        )
    if implicit:
        return CheckResult(
            False,
            "seccompProfile",
            f"pod or {_plural('container', 'containers', len(implicit))} {_join_quote(implicit)} must set "
            'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
        )
    return ALLOWED


def check_capabilities_restricted(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:
    """check_capabilities_restricted.go (1.22; from 1.25 Windows pods are exempt): drop ALL, add at
    most NET_BIND_SERVICE."""
    if version < (1, 22) or (version >= (1, 25) and _windows(spec)):
        return ALLOWED
    missing_drop: list[str] = []
    adding: list[str] = []
    caps: set[str] = set()
    for c in _visit(spec):
        capabilities = get(_sc(c), "capabilities")
        if not isinstance(capabilities, Mapping):
            missing_drop.append(_name(c))
            continue
        if "ALL" not in [str(d) for d in items(capabilities.get("drop"))]:
            missing_drop.append(_name(c))
        wrong = [str(a) for a in items(capabilities.get("add")) if a != "NET_BIND_SERVICE"]
        if wrong:
            adding.append(_name(c))
            caps.update(wrong)
    details: list[str] = []
    if missing_drop:
        details.append(
            f"{_plural('container', 'containers', len(missing_drop))} {_join_quote(missing_drop)} must set "
            'securityContext.capabilities.drop=["ALL"]'
        )
    if adding:
        details.append(
            f"{_plural('container', 'containers', len(adding))} {_join_quote(adding)} must not include "
            f"{_join_quote(sorted(caps))} in securityContext.capabilities.add"
        )
    if details:
        return CheckResult(False, "unrestricted capabilities", "; ".join(details))
    return ALLOWED


# --- levels and evaluation ------------------------------------------------------------------------

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


# --- namespace labels -----------------------------------------------------------------------------

_VERSION_LABEL = re.compile(r"^v1\.([0-9]+)$")


@dataclass(frozen=True)
class NamespacePolicy:
    """What a namespace enforces: level and version (from its pod-security labels)."""

    level: str
    version: Version
    """The version it is evaluated at: the label's, no newer than the cluster's."""
    version_label: str
    named: Version = KUBERNETES_VERSION
    """The version the label names (the cluster's for `latest` or no label): above KUBERNETES_VERSION, what this
    module reproduces is not what the namespace will get (`unreproduced`)."""

    @classmethod
    def from_labels(
        cls, labels: Mapping[str, Any], cluster_version: Version = KUBERNETES_VERSION, mode: str = "enforce"
    ) -> NamespacePolicy:
        """Without a `mode` label the cluster default applies (privileged, the API server's default
        AdmissionConfiguration); without `<mode>-version`, `latest` (the cluster's version). Modes:
        enforce (refuses the pod), warn (warns the client), audit (annotates the audit event)."""
        level = labels.get(LABEL_PREFIX + mode)
        level = level if level in LEVELS else "privileged"
        raw = labels.get(f"{LABEL_PREFIX}{mode}-version")
        match = _VERSION_LABEL.match(raw) if isinstance(raw, str) else None
        named = (1, int(match.group(1))) if match else cluster_version
        version = min(named, cluster_version)  # a newer version than the cluster's evaluates as latest
        label = f"v{version[0]}.{version[1]}" if match else "latest"
        return cls(str(level), version, label, named)
