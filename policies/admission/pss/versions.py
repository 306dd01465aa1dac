"""The Kubernetes version Pod Security is reproduced at (`REPRODUCES`), and what upstream changed after it
(`CHANGED_AFTER`, `unreproduced`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..family import Pin

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
        f"policies/admission/pss/ reproduces Pod Security as Kubernetes {reproduced} evaluates it "
        f"({REPRODUCES.source}), not {version[0]}.{version[1]}, which differs: "
        + ("; ".join(changes) if changes else "nothing known")
    )
