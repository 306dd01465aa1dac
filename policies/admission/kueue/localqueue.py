"""LocalQueue: no webhook (pkg/webhooks/webhooks.go `setupWebhookForLocalQueue`), only the CRD's
transition rule on `spec.clusterQueue`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.access import get
from .fields import CRD_RULE, IMMUTABLE, Refusal


def local_queue_update_refusals(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Refusal]:
    """LocalQueue's only update rule: the CRD transition rule `self == oldSelf` on `spec.clusterQueue`
    (localqueue_types.go; there is no LocalQueue webhook)."""
    before, after = get(old, "spec", "clusterQueue"), get(new, "spec", "clusterQueue")
    if before is not None and after is not None and before != after:
        return [Refusal("spec.clusterQueue", "Invalid", IMMUTABLE, CRD_RULE, after)]
    return []
