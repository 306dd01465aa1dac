"""policies/rules/wire.py `to_plain` over pulumi_policy's unknown-checking proxies."""

from __future__ import annotations

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

    from policies.framework import _deserialize_with_markers, _MemoJsonFormat

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
    # What a policy may change is its own proxy's copy, never the shared tree.
    proxied = unknown_checking_proxy(tree)
    proxied["kind"] = "ConfigMap"
    assert tree["kind"] == "Secret"


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
