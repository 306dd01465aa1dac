"""The restricted checks, k8s.io/pod-security-admission v0.33.9 policy/check_<id>.go, one function per check."""

from __future__ import annotations

from collections.abc import Mapping

from ...rules.access import get, items, mapping, text
from .baseline import valid_seccomp
from .versions import KUBERNETES_VERSION, Meta, Spec, Version
from .visitor import (
    ALLOWED,
    CheckResult,
    container_name,
    is_windows,
    join_quote,
    pluralize,
    pod_security_context,
    relaxed_for_user_namespaces,
    security_context,
    visit_containers,
    who_sets,
)

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
            f"{pluralize('volume', 'volumes', len(bad))} {join_quote(bad)} {pluralize('uses', 'use', len(bad))} "
            f"{pluralize('restricted volume type', 'restricted volume types', len(kinds))} {join_quote(sorted(kinds))}",
        )
    return ALLOWED


def check_allowPrivilegeEscalation(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_allowPrivilegeEscalation.go: every container sets allowPrivilegeEscalation=false
    (from 1.25, Windows pods are exempt)."""
    if version < (1, 8) or (version >= (1, 25) and is_windows(spec)):
        return ALLOWED
    bad = [container_name(c) for c in visit_containers(spec) if get(security_context(c), "allowPrivilegeEscalation") is not False]
    if bad:
        return CheckResult(
            False,
            "allowPrivilegeEscalation != false",
            f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} must set "
            "securityContext.allowPrivilegeEscalation=false",
        )
    return ALLOWED


def check_runAsNonRoot(  # noqa: N802
    meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION, *, relax_user_namespaces: bool = False
) -> CheckResult:
    """check_runAsNonRoot.go (1.0): runAsNonRoot=true on the pod, or on every container."""
    if relaxed_for_user_namespaces(spec, relax_user_namespaces):
        return ALLOWED
    pod_value = get(pod_security_context(spec), "runAsNonRoot")
    pod_bad = pod_value is False
    pod_true = pod_value is True
    explicit: list[str] = []
    implicit: list[str] = []
    for c in visit_containers(spec):
        value = get(security_context(c), "runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(container_name(c))
        elif not pod_true:
            implicit.append(container_name(c))
    setters = who_sets(pod_bad, explicit)
    if setters:
        return CheckResult(
            False, "runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
        )
    if implicit:
        return CheckResult(
            False,
            "runAsNonRoot != true",
            f"pod or {pluralize('container', 'containers', len(implicit))} {join_quote(implicit)} must set "
            "securityContext.runAsNonRoot=true",
        )
    return ALLOWED


def check_runAsUser(  # noqa: N802
    meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION, *, relax_user_namespaces: bool = False
) -> CheckResult:
    """check_runAsUser.go (1.23): runAsUser must not be 0."""
    if version < (1, 23) or relaxed_for_user_namespaces(spec, relax_user_namespaces):
        return ALLOWED
    pod_bad = get(pod_security_context(spec), "runAsUser") == 0
    containers = [container_name(c) for c in visit_containers(spec) if get(security_context(c), "runAsUser") == 0]
    setters = who_sets(pod_bad, containers)
    if setters:
        return CheckResult(False, "runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0")
    return ALLOWED


def check_seccompProfile_restricted(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:  # noqa: N802
    """check_seccompProfile_restricted.go: RuntimeDefault or Localhost on the pod or on every
    container (from 1.25, Windows pods are exempt)."""
    if version < (1, 19):
        return ALLOWED
    if version >= (1, 25) and is_windows(spec):
        return ALLOWED
    values: set[str] = set()
    pod_profile = get(pod_security_context(spec), "seccompProfile")
    pod_bad = False
    pod_set = False
    if isinstance(pod_profile, Mapping):
        if valid_seccomp(pod_profile.get("type")):
            pod_set = True
        else:
            pod_bad = True
            values.add(str(pod_profile.get("type") or ""))
    explicit: list[str] = []
    implicit: list[str] = []
    for c in visit_containers(spec):
        profile = get(security_context(c), "seccompProfile")
        if isinstance(profile, Mapping):
            if not valid_seccomp(profile.get("type")):
                explicit.append(container_name(c))
                values.add(str(profile.get("type") or ""))
        elif not pod_set:
            implicit.append(container_name(c))
    setters = who_sets(pod_bad, explicit)
    if setters:
        return CheckResult(
            False,
            "seccompProfile",
            f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to {join_quote(sorted(values))}",
        )
    if implicit:
        return CheckResult(
            False,
            "seccompProfile",
            f"pod or {pluralize('container', 'containers', len(implicit))} {join_quote(implicit)} must set "
            'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
        )
    return ALLOWED


def check_capabilities_restricted(meta: Meta, spec: Spec, version: Version = KUBERNETES_VERSION) -> CheckResult:
    """check_capabilities_restricted.go (1.22; from 1.25 Windows pods are exempt): drop ALL, add at
    most NET_BIND_SERVICE."""
    if version < (1, 22) or (version >= (1, 25) and is_windows(spec)):
        return ALLOWED
    missing_drop: list[str] = []
    adding: list[str] = []
    caps: set[str] = set()
    for c in visit_containers(spec):
        capabilities = get(security_context(c), "capabilities")
        if not isinstance(capabilities, Mapping):
            missing_drop.append(container_name(c))
            continue
        if "ALL" not in [str(d) for d in items(capabilities.get("drop"))]:
            missing_drop.append(container_name(c))
        wrong = [str(a) for a in items(capabilities.get("add")) if a != "NET_BIND_SERVICE"]
        if wrong:
            adding.append(container_name(c))
            caps.update(wrong)
    details: list[str] = []
    if missing_drop:
        details.append(
            f"{pluralize('container', 'containers', len(missing_drop))} {join_quote(missing_drop)} must set "
            'securityContext.capabilities.drop=["ALL"]'
        )
    if adding:
        details.append(
            f"{pluralize('container', 'containers', len(adding))} {join_quote(adding)} must not include "
            f"{join_quote(sorted(caps))} in securityContext.capabilities.add"
        )
    if details:
        return CheckResult(False, "unrestricted capabilities", "; ".join(details))
    return ALLOWED
