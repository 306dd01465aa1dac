"""The API server's calls to the Services behind APIServices, admission webhooks and CRD conversion webhooks, through
the NetworkPolicies, as the NetworkPolicy API defines them (policies/rules/netpol.py, no release of its own to pin):
a call the NetworkPolicies drop makes the aggregated API unavailable, or every request a `failurePolicy: Fail` webhook
matches refused.

One module per job: verdicts.py (every call of a set of objects) and family.py (the admission family and its rule).
"""

from __future__ import annotations

from .family import APISERVER_REACHABILITY, FAMILY, ReachabilityConfig, judge_reachability
from .verdicts import CallVerdict, judge_api_server_calls

__all__ = [
    "APISERVER_REACHABILITY",
    "FAMILY",
    "CallVerdict",
    "ReachabilityConfig",
    "judge_api_server_calls",
    "judge_reachability",
]
