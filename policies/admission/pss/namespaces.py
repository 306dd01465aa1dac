"""What a namespace enforces, from its pod-security labels."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .versions import KUBERNETES_VERSION, LABEL_PREFIX, LEVELS, Version

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
