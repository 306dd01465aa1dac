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

Cluster versions. hpcforge accepts Kubernetes 1.30 to 1.39 (`hpcforge:kubernetes.version`, which also sets every
namespace's `enforce-version` label). Below 1.33 the checks run at the version evaluated, with upstream's version
gates (`MinimumVersion` in each policy/check_<id>.go at v0.33.9): seccompProfile fields from 1.19, capabilities_restricted
from 1.22, runAsUser from 1.23, the Windows exemptions (pod `spec.os.name: windows`) of allowPrivilegeEscalation,
seccompProfile_restricted and capabilities_restricted from 1.25, sysctl sets of 1.27, 1.29 and 1.32, seLinuxOptions'
container_engine_t from 1.31. The older API servers' own libraries (v0.26 to v0.32) differ from v0.33.9 at those
versions only in fields their API does not have (appArmorProfile before 1.30, `image` volumes before 1.31), in the
alpha user-namespace relaxation (off by default) and in the AppArmor check's message wording. Above 1.33 (`unreproduced`, `CHANGED_AFTER`) upstream changed checks that are
not reproduced here: pods judged at such a version are judged as 1.33 judges them, and the gap is reported
(admission/rules.py pod-security-admission, admission/report.py).

One module per job: versions.py (the reproduced version, `REPRODUCES`, and what changed after it), visitor.py (what the
checks share), baseline.py and restricted.py (the checks), levels.py (the checks of a level, a pod evaluated) and
namespaces.py (what a namespace's labels enforce).
"""

from __future__ import annotations

from .baseline import (
    APPARMOR_ANNOTATION_PREFIX,
    CAPABILITIES_ALLOWED_1_0,
    SECCOMP_CONTAINER_ANNOTATION_PREFIX,
    SECCOMP_POD_ANNOTATION,
    SYSCTLS_1_0,
    SYSCTLS_1_27,
    SYSCTLS_1_29,
    SYSCTLS_1_32,
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
    valid_seccomp,
)
from .family import FAMILY, POD_SECURITY_ADMISSION, PodSecurityAdmissionConfig, judge_pod_security
from .levels import BASELINE, OVERRIDES, RESTRICTED, Check, Failure, checks_for, evaluate_pod, forbidden_message
from .namespaces import NamespacePolicy
from .restricted import (
    ALLOWED_VOLUME_TYPES,
    RESTRICTED_VOLUME_TYPES,
    check_allowPrivilegeEscalation,
    check_capabilities_restricted,
    check_restrictedVolumes,
    check_runAsNonRoot,
    check_runAsUser,
    check_seccompProfile_restricted,
)
from .verdicts import PodSecurityGap, PodVerdict, pod_security_gaps, pod_security_verdicts
from .versions import (
    CHANGED_AFTER,
    KUBERNETES_VERSION,
    LABEL_PREFIX,
    LEVELS,
    READ_UP_TO,
    REPRODUCES,
    Meta,
    Spec,
    Version,
    minor_version,
    unreproduced,
)
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

__all__ = [
    "ALLOWED",
    "ALLOWED_VOLUME_TYPES",
    "APPARMOR_ANNOTATION_PREFIX",
    "BASELINE",
    "CAPABILITIES_ALLOWED_1_0",
    "CHANGED_AFTER",
    "FAMILY",
    "KUBERNETES_VERSION",
    "LABEL_PREFIX",
    "LEVELS",
    "OVERRIDES",
    "POD_SECURITY_ADMISSION",
    "READ_UP_TO",
    "REPRODUCES",
    "RESTRICTED",
    "RESTRICTED_VOLUME_TYPES",
    "SECCOMP_CONTAINER_ANNOTATION_PREFIX",
    "SECCOMP_POD_ANNOTATION",
    "SYSCTLS_1_0",
    "SYSCTLS_1_27",
    "SYSCTLS_1_29",
    "SYSCTLS_1_32",
    "Check",
    "CheckResult",
    "Failure",
    "Meta",
    "NamespacePolicy",
    "PodSecurityAdmissionConfig",
    "PodSecurityGap",
    "PodVerdict",
    "Spec",
    "Version",
    "check_allowPrivilegeEscalation",
    "check_appArmorProfile",
    "check_capabilities_baseline",
    "check_capabilities_restricted",
    "check_hostNamespaces",
    "check_hostPathVolumes",
    "check_hostPorts",
    "check_privileged",
    "check_procMount",
    "check_restrictedVolumes",
    "check_runAsNonRoot",
    "check_runAsUser",
    "check_seLinuxOptions",
    "check_seccompProfile_baseline",
    "check_seccompProfile_restricted",
    "check_sysctls",
    "check_windowsHostProcess",
    "checks_for",
    "container_name",
    "evaluate_pod",
    "forbidden_message",
    "is_windows",
    "join_quote",
    "judge_pod_security",
    "minor_version",
    "pluralize",
    "pod_security_context",
    "pod_security_gaps",
    "pod_security_verdicts",
    "relaxed_for_user_namespaces",
    "security_context",
    "unreproduced",
    "valid_seccomp",
    "visit_containers",
    "who_sets",
]
