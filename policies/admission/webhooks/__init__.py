"""The validating webhooks of cert-manager and MetalLB as one admission family: every cert-manager Certificate, Issuer
and ClusterIssuer and every MetalLB IPAddressPool, L2Advertisement, BGPAdvertisement, BGPPeer and Community, as the
operator's webhook answers it. The reproductions themselves are certmanager/ and metallb/ (each with its pin).

One module per job: verdicts.py (every such object of a set of objects) and family.py (the admission family and its
rule).
"""

from __future__ import annotations

from .family import FAMILY, OPERATOR_WEBHOOK_ADMISSION, OperatorWebhookAdmissionConfig, bgp_type_of, judge_operator_webhooks
from .verdicts import WebhookVerdict, webhook_verdicts

__all__ = [
    "FAMILY",
    "OPERATOR_WEBHOOK_ADMISSION",
    "OperatorWebhookAdmissionConfig",
    "WebhookVerdict",
    "bgp_type_of",
    "judge_operator_webhooks",
    "webhook_verdicts",
]
