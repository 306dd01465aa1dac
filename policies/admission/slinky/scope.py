"""The operator's webhook: its group, the kinds and webhook names it covers (webhook.yaml), and where it runs
(the chart's `webhook` values at v1.2.1).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...rules.access import mapping, text
from ..family import Pin

SLINKY_GROUP = "slinky.slurm.net"
CHART = "slurm-operator"
"""The chart that deploys the operator and its webhook (`webhook_scope` reads its values)."""
SLINKY_VERSION = "v1beta1"

WEBHOOK_NAMES: Mapping[str, str] = {
    "Accounting": "accounting-v1beta1.kb.io",
    "Controller": "controller-v1beta1.kb.io",
    "LoginSet": "loginset-v1beta1.kb.io",
    "NodeSet": "nodeset-v1beta1.kb.io",
    "RestApi": "restapi-v1beta1.kb.io",
    "Token": "token-v1beta1.kb.io",
}
"""The kinds the ValidatingWebhookConfiguration covers, with each webhook's name (webhook.yaml)."""

CREATE = "CREATE"
UPDATE = "UPDATE"

# helm/slurm-operator/values.yaml at v1.2.1 (../shared/charts/slurm-operator-1.2.1/values.yaml).
CHART_WEBHOOK_DEFAULTS: Mapping[str, Any] = {
    "enabled": True,
    "namespaces": "",
    "validating": {"failurePolicy": "Fail", "matchPolicy": "Equivalent"},
}


@dataclass(frozen=True)
class WebhookScope:
    """What the chart's values make of the validating webhook."""

    enabled: bool = True
    namespaces: tuple[str, ...] = ()
    """`webhook.namespaces` split as the template splits it (`nospace | splitList ","`); empty: all."""
    failure_policy: str = "Fail"
    """Only for calls that fail (webhook down): a webhook that answers `denied` refuses either way."""

    def judges(self, namespace: str) -> bool:
        """Whether a custom resource in `namespace` goes through the webhook (its namespaceSelector)."""
        if not self.enabled or namespace == "kube-system":
            return False
        return not self.namespaces or namespace in self.namespaces


def webhook_scope(values: Mapping[str, Any]) -> WebhookScope:
    """The webhook as the slurm-operator chart 1.2.1 deploys it with `values` (the values passed to
    the chart; what they leave out is the chart's default)."""
    webhook = mapping(values.get("webhook"))
    enabled = webhook.get("enabled", CHART_WEBHOOK_DEFAULTS["enabled"])
    raw = webhook.get("namespaces", CHART_WEBHOOK_DEFAULTS["namespaces"])
    namespaces = tuple(re.sub(r"\s", "", raw).split(",")) if isinstance(raw, str) and raw else ()
    validating = mapping(webhook.get("validating"))
    policy = text(validating.get("failurePolicy")) or CHART_WEBHOOK_DEFAULTS["validating"]["failurePolicy"]
    return WebhookScope(enabled is not False, namespaces, policy)


REPRODUCES = Pin(
    "slurm-operator",
    "1.2.1",
    ("Charts.SLURM_OPERATOR", "Charts.SLURM_OPERATOR_CRDS"),
    "SlinkyProject/slurm-operator v1.2.1",
)
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""
