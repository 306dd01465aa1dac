"""The SealedSecrets layer's objects as pure functions: the controller chart's values, under the name `kubeseal`
expects (`sealed-secrets-controller` in `kube-system`). layer.py registers the chart."""

from __future__ import annotations

from typing import Any

from ...k8s.resources import container_resources

NAMESPACE = "kube-system"
CONTROLLER_NAME = "sealed-secrets-controller"


def controller_values() -> dict[str, Any]:
    """The sealed-secrets chart's values: the controller named as kubeseal looks for it by default."""
    return {
        "fullnameOverride": CONTROLLER_NAME,
        "resources": container_resources("50m", "64Mi", "256Mi"),
        "commonLabels": {"app.kubernetes.io/part-of": "hpcforge"},
    }
