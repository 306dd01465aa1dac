"""policies/rules/wire.py `to_plain` over pulumi_policy's unknown-checking proxies."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from policies.rules.wire import SecretStr, Unknown, from_wire, to_plain

SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "hunter2"}


def test_a_proxied_tree_copies_to_the_same_plain_values_with_markers() -> None:
    wire = {
        "kind": "ConfigMap",
        "data": {"a": "1", "b": SECRET},
        "list": [1.0, {"x": [True, None]}],
        "u": "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
    }
    marked = from_wire(wire)
    plain = to_plain(unknown_checking_proxy(marked))
    assert plain == {"kind": "ConfigMap", "data": {"a": "1", "b": "hunter2"}, "list": [1, {"x": [True, None]}], "u": Unknown()}
    assert isinstance(plain["data"]["b"], SecretStr) and type(plain["list"]) is list and type(plain["data"]) is dict


def test_an_unknown_sentinel_left_in_a_proxy_still_raises_as_the_proxy_does() -> None:
    proxied = unknown_checking_proxy({"spec": {"ports": [80, "3eeb2bf0-c639-47a8-9e75-3b44932eb421"]}})
    with pytest.raises(UnknownValueError) as raised:
        to_plain(proxied)
    assert raised.value.props == ["spec", "ports", "1"]


def test_a_pack_converts_a_request_once_for_all_its_policies_and_each_new_request_again() -> None:
    from google.protobuf import json_format, struct_pb2

    from policies.framework import _deserialize_with_markers, _MemoJsonFormat, view_from_args

    memo = _MemoJsonFormat(json_format)
    request, provider, other = struct_pb2.Struct(), struct_pb2.Struct(), struct_pb2.Struct()
    request.update({"kind": "Secret", "data": SECRET})
    provider.update({"kubeconfig": "x"})
    other.update({"kind": "Secret", "data": SECRET})
    first = memo.MessageToDict(request)
    assert memo.MessageToDict(provider) == {"kubeconfig": "x"}  # each policy's turn converts the provider too
    assert memo.MessageToDict(request) is first
    assert memo.MessageToDict(other) == first and memo.MessageToDict(other) is not first
    tree = _deserialize_with_markers(first)
    assert _deserialize_with_markers(first) is tree and isinstance(tree["data"], SecretStr)
    assert _deserialize_with_markers(dict(first)) is not tree
    # What a rule may change is its own copy, never the shared tree.
    view = view_from_args(SimpleNamespace(resource_type="kubernetes:core/v1:Secret", name="s", urn="u", props=tree))
    view.props["data"] = "changed"  # type: ignore[index]
    assert view.props == {"kind": "Secret", "data": "changed"} and tree["data"] == "hunter2"


def test_a_pack_parses_the_stack_config_once_per_value(monkeypatch: pytest.MonkeyPatch) -> None:
    import pulumi.runtime

    from policies.framework import remember_config_env

    monkeypatch.setattr(pulumi.runtime, "get_config_env", pulumi.runtime.get_config_env)  # restored afterwards
    monkeypatch.setenv("PULUMI_CONFIG", '{"hpcforge:domain":"a.example"}')
    remember_config_env()
    first = pulumi.runtime.get_config_env()
    again = pulumi.runtime.get_config_env()
    assert first == again == {"hpcforge:domain": "a.example"} and first is not again
    monkeypatch.setenv("PULUMI_CONFIG", '{"hpcforge:domain":"b.example"}')
    assert pulumi.runtime.get_config_env() == {"hpcforge:domain": "b.example"}
    monkeypatch.delenv("PULUMI_CONFIG")
    assert pulumi.runtime.get_config_env() == {}


UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def _security_answers(level: str) -> list[dict[str, object]]:
    """What the security pack's servicer answers (Remediate and Analyze per resource, then AnalyzeStack)
    for resources that break its rules: a plaintext Secret, a privileged unpinned Deployment without
    limits, a Namespace whose labels are unknown (a rule cannot run in the preview)."""
    from google.protobuf import json_format, struct_pb2
    from pulumi.runtime import proto
    from pulumi_policy import EnforcementLevel
    from pulumi_policy.policy import _PolicyAnalyzerServicer

    from policies.families import FAMILIES
    from policies.framework import to_policy

    container = {"name": "app", "image": "nginx:latest", "securityContext": {"privileged": True}}
    resources = [
        (
            "kubernetes:core/v1:Secret",
            "db",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "db", "namespace": "app"},
                "stringData": {"password": "literal"},
            },
        ),
        (
            "kubernetes:core/v1:Secret",
            "key",
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "key", "namespace": "app"}, "stringData": SECRET},
        ),
        (
            "kubernetes:apps/v1:Deployment",
            "app",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "app", "namespace": "app"},
                "spec": {"template": {"spec": {"containers": [container]}}},
            },
        ),
        (
            "kubernetes:core/v1:Namespace",
            "app",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app", "labels": UNKNOWN_STRING}},
        ),
    ]
    provider = proto.AnalyzerProviderResource(
        urn="urn:pulumi:s::p::pulumi:providers:kubernetes::k8s", type="pulumi:providers:kubernetes", name="k8s"
    )
    provider.properties.update({"kubeconfig": SECRET})
    requests, stack = [], proto.AnalyzeStackRequest()
    for type_, name, props in resources:
        properties = struct_pb2.Struct()
        properties.update(props)
        urn = f"urn:pulumi:s::p::{type_}::{name}"
        requests.append(proto.AnalyzeRequest(urn=urn, type=type_, name=name, properties=properties, provider=provider))
        stack.resources.append(proto.AnalyzerResource(urn=urn, type=type_, name=name, properties=properties, provider=provider))
    policies = [to_policy(rule) for rule in FAMILIES["security"]]
    servicer = _PolicyAnalyzerServicer("hpcforge-security", "0.1.0", policies, EnforcementLevel(level))
    answers = []
    for request in requests:
        answers += [servicer.Remediate(request, None), servicer.Analyze(request, None)]
    answers.append(servicer.AnalyzeStack(stack, None))
    return [json_format.MessageToDict(answer) for answer in answers]


@pytest.mark.parametrize("level", ["mandatory", "remediate"])
def test_a_pack_answers_the_same_when_it_converts_each_request_once(monkeypatch: pytest.MonkeyPatch, level: str) -> None:
    """install_request_scope: conversions shared by the policies of a request, no unknown-checking proxy
    over the shim's trees, Remediate without the properties no policy reads; the answers stay the same."""
    import pulumi_policy.policy as policy_module

    from policies import framework

    for name in ("deserialize_properties", "json_format", "unknown_checking_proxy"):
        monkeypatch.setattr(policy_module, name, getattr(policy_module, name))  # restored afterwards
    for name in ("Analyze", "AnalyzeStack", "Remediate"):
        monkeypatch.setattr(policy_module._PolicyAnalyzerServicer, name, getattr(policy_module._PolicyAnalyzerServicer, name))
    framework.install_secret_shim()
    framework._forget_conversions()
    before = _security_answers(level)
    framework._forget_conversions()
    framework.install_request_scope(remediates=False)
    framework.install_request_scope(remediates=False)  # idempotent
    after = _security_answers(level)
    assert after == before
    messages = [d.get("message", "") for answer in before for d in answer.get("diagnostics", [])]  # type: ignore[union-attr]
    assert any("plaintext" in m or "literal" in m for m in messages), messages
    assert any("privileged" in m for m in messages), messages
    assert any("during preview" in m for m in messages), messages
    remediate_answers = before[0::2][: len(before) // 2]
    # At the `remediate` level each policy without a remediation is reported not applicable.
    assert all(bool(answer.get("notApplicable")) == (level == "remediate") for answer in remediate_answers), remediate_answers
    assert not vars(framework._request), "a request's conversions outlive it"
    # Trees the shim did not build (Remediate's, with proxy_secrets) are proxied as before.
    assert type(policy_module.unknown_checking_proxy({"a": {"b": 1}})).__name__ == "_DictProxy"
