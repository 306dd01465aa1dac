"""The API server's calls as an admission family (family.py), and the rule apiserver-reachability."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.knobs import RuleConfig, knob
from ...rules.netpol import API_SERVER, Host
from ...rules.podtemplates import kind_of, name_of, namespace_of
from ...rules.view import StackView
from ..family import Cluster, Family, Judgement
from ..rule import Finding, StackObjects, admission_rule, has_unknown
from .verdicts import judge_api_server_calls


@dataclass(frozen=True)
class ReachabilityConfig(RuleConfig):
    api_server_address: str = knob(
        "apiServerAddress",
        "",
        {"type": "string"},
        "Source address of the API server's calls ('' = unknown: only an ipBlock covering every address admits it).",
    )
    require_known_backends: bool = knob(
        "requireKnownBackends",
        False,
        {"type": "boolean"},
        "Also report calls whose Service or pods are not among the objects (e.g. charts not rendered).",
    )


def judge_reachability(stack: StackView, found: StackObjects, config: ReachabilityConfig) -> Iterator[Finding]:
    source = Host(API_SERVER.name, config.api_server_address or None)
    # A NetworkPolicy not known yet (preview) could select anything: its namespace is not judged.
    unknown = {namespace_of(o) for o in found.objects if kind_of(o) == "NetworkPolicy" and has_unknown(o.get("spec"))}
    for verdict in judge_api_server_calls(found.objects, source):
        if verdict.admitted is True or (verdict.admitted is None and not config.require_known_backends):
            continue
        call = verdict.call
        what = "cannot be judged" if verdict.admitted is None else "is unreachable"
        yield Finding(
            call.caller,
            f"{call.caller.get('kind')} {name_of(call.caller)} {call.where} -> Service {call.namespace}/{call.service}:"
            f"{call.port} {what} from the API server ({call.consequence}): {'; '.join(verdict.reasons)}.",
            call.namespace in unknown,
        )


APISERVER_REACHABILITY = admission_rule(
    "apiserver-reachability",
    "The API server can reach every APIService and webhook backend through the NetworkPolicies.",
    ReachabilityConfig,
    judge_reachability,
    "Allow ingress from the API server on the Service's target port: ingress_from_anywhere(name, Port(p)) in the "
    "namespace's allows (components/k8s/resources.py).",
)


def judge(objects: Sequence[Mapping[str, Any]], cluster: Cluster) -> Judgement:
    return Judgement(judge_api_server_calls(objects))


FAMILY = Family(
    name="reachability",
    order=30,
    title="NetworkPolicies",
    heading="API server calls (APIServices, webhooks, CRD conversion) through NetworkPolicies:",
    summary="{refused} of {total} API server calls unreachable ({unjudged} not judged: backends not among the objects)",
    judge=judge,
    rule=APISERVER_REACHABILITY,
)
