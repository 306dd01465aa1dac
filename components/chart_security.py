"""Security values for the charts whose defaults a `restricted` namespace would reject.

Found by rendering the pinned charts with hpcforge's values (offline/charts/render.py) and reading the pod
templates against the Pod Security Standards (Kubernetes 1.33, `restricted`: runAsNonRoot,
allowPrivilegeEscalation=false, capabilities drop ALL, seccompProfile RuntimeDefault or Localhost):

* mariadb-operator 26.6.0 renders no securityContext at all for its operator, webhook and
  cert-controller Deployments (`podSecurityContext: {}` and `securityContext: {}` at the top level,
  under `webhook:` and under `certController:`);
* slurm-operator 1.2.1 renders none for its operator and webhook (`operator.` and
  `webhook.podSecurityContext` / `.securityContext`, empty);
* argo-workflows 1.0.18's workflow-controller and argo-server containers drop ALL and run as non-root,
  but no seccompProfile is set (`controller.` / `server.podSecurityContext: {}`).

The images run as a non-root user already: mariadb-operator's and slurm-operator's images are
`gcr.io/distroless/static(:nonroot)` with `USER 65532:65532` in their Dockerfiles at these tags, so
`runAsNonRoot` holds; `runAsUser` is set to the same numeric user so that the kubelet can verify it.

`ChartDeployer.deploy` merges `security_values(pin)` UNDER the layer's values (a layer may still
override a key), in both delivery modes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .versions import ChartPin, Charts

NONROOT_UID = 65532
"""The `nonroot` user of the distroless base images."""

RUNTIME_DEFAULT = {"type": "RuntimeDefault"}

RESTRICTED_CONTAINER_SECURITY = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}
"""A container securityContext that passes Pod Security `restricted` (Kubernetes 1.33): every container hpcforge
writes that runs as non-root uses it (with `readOnlyRootFilesystem` where it can)."""


def restricted_pod_security_context(uid: int | None = NONROOT_UID) -> dict[str, Any]:
    """A pod securityContext that passes `restricted` on its own (with restricted containers)."""
    context: dict[str, Any] = {"runAsNonRoot": True, "seccompProfile": dict(RUNTIME_DEFAULT)}
    if uid is not None:
        context.update({"runAsUser": uid, "runAsGroup": uid, "fsGroup": uid})
    return context


def restricted_container_security_context(read_only_root: bool = True) -> dict[str, Any]:
    """RESTRICTED_CONTAINER_SECURITY with the root filesystem read-only (or not)."""
    return {**copy.deepcopy(RESTRICTED_CONTAINER_SECURITY), "readOnlyRootFilesystem": read_only_root}


def _restricted_pair() -> dict[str, Any]:
    return {"podSecurityContext": restricted_pod_security_context(), "securityContext": restricted_container_security_context()}


SECURITY_VALUES: dict[str, dict[str, Any]] = {
    Charts.MARIADB_OPERATOR.chart: {
        **_restricted_pair(),
        "webhook": _restricted_pair(),
        "certController": _restricted_pair(),
    },
    Charts.SLURM_OPERATOR.chart: {
        "operator": _restricted_pair(),
        "webhook": _restricted_pair(),
    },
    Charts.ARGO_WORKFLOWS.chart: {
        # The chart's container defaults already drop ALL and run as non-root: add the seccomp profile.
        "controller": {"podSecurityContext": {"runAsNonRoot": True, "seccompProfile": dict(RUNTIME_DEFAULT)}},
        "server": {"podSecurityContext": {"runAsNonRoot": True, "seccompProfile": dict(RUNTIME_DEFAULT)}},
    },
}


def security_values(pin: ChartPin) -> dict[str, Any]:
    """The security values hpcforge sets for `pin`'s chart (empty when its defaults are admitted)."""
    return copy.deepcopy(SECURITY_VALUES.get(pin.chart, {}))


def with_security(pin: ChartPin, values: Mapping[str, Any]) -> dict[str, Any]:
    """`security_values(pin)` with `values` merged over it (the layer's own settings win)."""
    from .chart_hooks import merge_values

    return merge_values(security_values(pin), values)
