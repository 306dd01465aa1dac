"""How the packs turn rule functions (policies/rules) into CrossGuard policies, and the secret shim.

A pack's `__main__.py` calls `serve(pack_name, rules)`. For each rule:

- a `ResourceRule` becomes a `ResourceValidationPolicy`, a `StackRule` a `StackValidationPolicy`;
- the rule's typed config (`RuleConfig` dataclass) becomes the policy's `PolicyConfigSchema`, with a
  `default` on every property, so the engine's merged config is always complete; the policy parses
  it back into the dataclass and calls the rule;
- every message a rule returns is reported as a violation (stack rules report with the URN of the
  offending resource).

The secret shim
---------------
The engine sends resource properties to analyzers with secrets marked (it marshals with
`KeepSecrets: true`, sdk/go/common/resource/plugin/analyzer_plugin.go), but pulumi_policy's
`Analyze` and `AnalyzeStack` unwrap them: they call `deserialize_properties(...)` without
`proxy_secrets`, which returns the plain value of every secret. A rule could then not tell a
literal from a Pulumi secret.

`install_secret_shim()` replaces the module-level name `pulumi_policy.policy.deserialize_properties`
(the name the servicer looks up at call time) with `_deserialize_with_markers`, which returns the
same plain tree except that every leaf that was inside a secret is a `SecretStr` / `SecretInt` /
`SecretFloat` (subclasses of str/int/float, so other rules see ordinary values), and unknown
sentinels become `Unknown` markers instead of making the whole policy "can't run during preview".
`Remediate` (which passes `proxy_secrets=True` and must round-trip secrets) keeps the original.
The shim sits inside the pack process, so it behaves identically under the real Pulumi engine and
under `./hpcforge check`, which sends exactly the engine's wire form. If pulumi_policy's
internals change so that the shim cannot be installed, the pack refuses to start (fail closed).

One conversion per request
--------------------------
pulumi_policy converts a request's properties for every policy of the pack (`Analyze`: each
resource once per resource policy; `AnalyzeStack`: every resource once per stack policy), and wraps
each policy's copy in an unknown-checking proxy, a deep copy whose reads raise on the engine's
unknown sentinels. `install_request_scope()` makes a pack convert each message once per request
(`_MemoJsonFormat`, `_deserialize_with_markers`, forgotten when the request is answered), hands the
shim's trees to the policies without the proxy (they hold `Unknown` markers, never sentinels, and
every rule gets its own copy from `view_from_args`), and gives `Remediate` the request without its
properties when no policy of the pack remediates (only a remediation reads them). The answers are
the same; the packs' CPU time at the 100,000-host site is about a quarter less.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .rules.access import unknown_reads
from .rules.rule import ResourceRule, Rule, StackRule
from .rules.view import ResourceView, StackView
from .rules.wire import from_wire, to_plain

_SHIM_MARK = "_hpcforge_secret_shim"


_request = threading.local()
"""Per gRPC server thread, for the request it is serving: the messages `_MemoJsonFormat` converted and
the trees `_deserialize_with_markers` built, by the identity of their input, which each entry keeps
alive (so an id is not reused while its entry exists). Every policy's turn converts the same
messages (Analyze: the request's properties and its provider's; AnalyzeStack: every resource's), so
a request converts each message once whatever the number of policies. `_one_request` drops them
when the request is answered."""


def _converted(kind: str) -> dict[int, tuple[Any, Any]]:
    found: dict[int, tuple[Any, Any]] | None = getattr(_request, kind, None)
    if found is None:
        found = {}
        setattr(_request, kind, found)
    return found


def _forget_conversions() -> None:
    """Drop this thread's conversions (the request they were made for is answered)."""
    _request.__dict__.clear()


class _MemoJsonFormat:
    """`pulumi_policy.policy`'s `json_format`, except that `MessageToDict` of a message it converted
    before in the same request returns the same dict again.

    pulumi_policy's `Analyze` converts the request's properties for every policy of the pack (one
    `MessageToDict` and one `deserialize_properties` per policy and resource), `AnalyzeStack` every
    resource's for every stack policy; the messages do not change in between, so the packs convert
    each once. Nothing mutates the dict: the shim's `from_wire` reads it.
    """

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def MessageToDict(self, message: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (protobuf's name)
        if args or kwargs:
            return self._module.MessageToDict(message, *args, **kwargs)
        converted = _converted("messages")
        known = converted.get(id(message))
        if known is not None:
            return known[1]
        result = self._module.MessageToDict(message)
        converted[id(message)] = (message, result)
        return result


class _SharedTree(dict[str, Any]):
    """Properties `_deserialize_with_markers` converted for a request, shared by every policy of the pack.

    No rule is given it: `view_from_args` hands each rule its own copy (`to_plain`). Its unknown
    values are `Unknown` markers, so pulumi_policy's unknown-checking proxy, a further copy whose reads
    raise on the engine's unknown sentinels, would find none: `_proxy_unless_shared` leaves it out.
    """

    __slots__ = ()


def _deserialize_with_markers(props: dict[str, Any], proxy_secrets: bool = False) -> dict[str, Any]:
    from pulumi_policy import deserialize

    if proxy_secrets:
        return deserialize.deserialize_properties(props, proxy_secrets)
    converted = _converted("trees")
    known = converted.get(id(props))
    if known is not None:
        return known[1]  # the same request's properties, for the pack's next policy (see _MemoJsonFormat)

    def special(value: dict[str, Any]) -> Any:
        # Assets and archives: pulumi_policy's own conversion.
        return deserialize._deserialize_property(value, False)

    result = _SharedTree(from_wire(props, special=special))
    converted[id(props)] = (props, result)
    return result


setattr(_deserialize_with_markers, _SHIM_MARK, True)


def install_secret_shim() -> None:
    """Make pulumi_policy hand rules secret-marked values (see the module docstring)."""
    import pulumi_policy.policy as policy_module
    from pulumi_policy import deserialize

    current = getattr(policy_module, "deserialize_properties", None)
    if getattr(current, _SHIM_MARK, False):
        return
    if current is not deserialize.deserialize_properties or not hasattr(deserialize, "_deserialize_property"):
        raise RuntimeError(
            "hpcforge policies: cannot install the secret shim: pulumi_policy.policy no longer uses "
            "pulumi_policy.deserialize.deserialize_properties (pulumi-policy changed its internals; "
            "check requirements.txt pins pulumi-policy>=1.20,<2)"
        )
    policy_module.deserialize_properties = _deserialize_with_markers
    if not isinstance(policy_module.json_format, _MemoJsonFormat):
        policy_module.json_format = _MemoJsonFormat(policy_module.json_format)


def _proxy_unless_shared(props: Any) -> Any:
    """`pulumi_policy.policy.unknown_checking_proxy`, except for a `_SharedTree` (see there), returned as it is."""
    from pulumi_policy.proxy import unknown_checking_proxy

    if type(props) is _SharedTree:
        return props
    return unknown_checking_proxy(props)


setattr(_proxy_unless_shared, _SHIM_MARK, True)


def _one_request(method: Callable[..., Any], original: Callable[..., Any]) -> Callable[..., Any]:
    """`method` (pulumi_policy's `original`, or a wrapper of it), its conversions (`_request`) lasting as long as the request it serves."""

    def serve_one(servicer: Any, request: Any, context: Any) -> Any:
        try:
            return method(servicer, request, context)
        finally:
            _forget_conversions()

    serve_one.__wrapped__ = original  # type: ignore[attr-defined]
    return serve_one


def _remediate_without_unused_properties(method: Callable[..., Any]) -> Callable[..., Any]:
    """pulumi_policy's `Remediate`, given the request without its properties when no policy of the pack
    remediates.

    pulumi_policy's `Remediate` converts the properties (`MessageToDict`, the deserializer, the proxy)
    before it looks at the policies, and only a policy's `remediate` reads them; without one, the
    answer depends on the policies' enforcement levels alone (each `remediate`-level policy is
    reported not applicable), the same with or without the properties.
    """

    def remediate(servicer: Any, request: Any, context: Any) -> Any:
        without = type(request)()
        without.CopyFrom(request)
        without.ClearField("properties")
        return method(servicer, without, context)

    return remediate


def install_request_scope(*, remediates: bool) -> None:
    """Make pulumi_policy's servicer convert each request once for all the pack's policies.

    `Analyze`, `AnalyzeStack` and `Remediate` keep their conversions for the request they serve
    (`_MemoJsonFormat`, `_deserialize_with_markers`), the shim's trees skip the unknown-checking
    proxy (`_SharedTree`), and, when no policy of the pack has a remediation (`remediates`), `Remediate`
    is given the request without the properties it would convert for nothing. Refuses (the pack does
    not start) if pulumi_policy's servicer no longer has these methods.
    """
    import pulumi_policy.policy as policy_module
    from pulumi_policy import proxy

    servicer = getattr(policy_module, "_PolicyAnalyzerServicer", None)
    current = getattr(policy_module, "unknown_checking_proxy", None)
    if (
        servicer is None
        or not all(callable(getattr(servicer, name, None)) for name in ("Analyze", "AnalyzeStack", "Remediate"))
        or (current is not proxy.unknown_checking_proxy and not getattr(current, _SHIM_MARK, False))
    ):
        raise RuntimeError(
            "hpcforge policies: cannot scope conversions to a request: pulumi_policy's analyzer servicer changed "
            "(check requirements.txt pins pulumi-policy>=1.20,<2)"
        )
    policy_module.unknown_checking_proxy = _proxy_unless_shared
    for name in ("Analyze", "AnalyzeStack", "Remediate"):
        original = getattr(servicer, name)
        original = getattr(original, "__wrapped__", original)  # installed before: wrap pulumi_policy's again
        method = _remediate_without_unused_properties(original) if name == "Remediate" and not remediates else original
        setattr(servicer, name, _one_request(method, original))


def remember_config_env() -> None:
    """Parse `PULUMI_CONFIG` once per value, not once per request.

    pulumi_policy sets up the runtime for every request it serves (`_configure_runtime_settings`):
    it calls `pulumi.runtime.get_config_env()`, which parses the whole stack config from the
    environment (110 KB at a site with 500 nodesets) each time. The environment of a pack does not
    change while it runs; the replacement parses a value it has not seen and returns a copy of the
    same mapping (of strings) otherwise.
    """
    import os

    import pulumi.runtime

    original = pulumi.runtime.get_config_env
    if getattr(original, _SHIM_MARK, False):
        return
    parsed: dict[str, Any] = {}

    def get_config_env() -> dict[str, Any]:
        raw = os.environ.get("PULUMI_CONFIG")
        if raw is None:
            return original()
        if raw not in parsed:
            parsed.clear()
            parsed[raw] = original()
        return dict(parsed[raw])

    setattr(get_config_env, _SHIM_MARK, True)
    pulumi.runtime.get_config_env = get_config_env


def view_from_args(args: Any) -> ResourceView:
    """A ResourceView from pulumi_policy's ResourceValidationArgs or PolicyResource."""
    opts = getattr(args, "opts", None)
    parent = getattr(args, "parent", None)
    parent_urn = getattr(parent, "urn", None) or (getattr(opts, "parent", None) or "")
    dependencies = tuple(getattr(d, "urn", "") for d in getattr(args, "dependencies", []) or [])
    return ResourceView(
        type=args.resource_type,
        name=args.name,
        urn=args.urn,
        props=to_plain(args.props),
        protect=bool(getattr(opts, "protect", False)),
        ignore_changes=tuple(getattr(opts, "ignore_changes", None) or ()),
        parent=parent_urn,
        dependencies=dependencies,
    )


def _config(args: Any) -> Mapping[str, Any]:
    return dict(args.get_config() or {})


UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown string sentinel


def _guarded(name: str, run: Callable[[], list[tuple[str, str | None]]], report: Callable[..., None]) -> None:
    from pulumi_policy.proxy import UnknownValueError

    try:
        with unknown_reads() as reads:
            results = run()
        if reads:
            # The rule decided on a value that is unknown in this preview (an accessor answered
            # "absent" for it): neither its violations nor its pass can be trusted. Report it the
            # way pulumi_policy reports a policy that reads an unknown value: an advisory
            # "can't run policy ... during preview", with no violation.
            raise UnknownValueError(UNKNOWN_STRING, [f"<a value that {name} reads as {reads[0]}>"])
    except UnknownValueError:
        raise  # pulumi_policy reports "can't run policy ... during preview" (only without the shim)
    except Exception as error:  # a rule bug must not pass silently, nor abort the whole preview
        if type(error).__name__ == "_NotApplicableError":
            raise
        report(f"internal error in policy {name}: {error!r}\n{traceback.format_exc(limit=3)}")
        return
    for message, urn in results:
        if urn:
            report(message, urn)
        else:
            report(message)


def to_policy(rule: Rule) -> Any:
    """The pulumi_policy policy object for a rule."""
    from pulumi_policy import PolicyConfigSchema, ResourceValidationPolicy, StackValidationPolicy

    schema = PolicyConfigSchema(properties=rule.config.schema())
    if isinstance(rule, ResourceRule):
        resource_rule = rule

        def validate_resource(args: Any, report: Callable[..., None]) -> None:
            def run() -> list[tuple[str, str | None]]:
                config = resource_rule.config.from_config(_config(args))
                return [(m, None) for m in resource_rule.check(view_from_args(args), config)]

            _guarded(resource_rule.name, run, report)

        return ResourceValidationPolicy(
            name=rule.name,
            description=rule.description,
            validate=validate_resource,
            config_schema=schema,
            remediation_steps=rule.remediation or None,
        )
    assert isinstance(rule, StackRule)
    stack_rule = rule

    def validate_stack(args: Any, report: Callable[..., None]) -> None:
        def run() -> list[tuple[str, str | None]]:
            config = stack_rule.config.from_config(_config(args))
            stack = StackView(tuple(view_from_args(r) for r in args.resources))
            return [(v.message, v.urn) for v in stack_rule.check(stack, config)]

        _guarded(stack_rule.name, run, report)

    return StackValidationPolicy(
        name=rule.name,
        description=rule.description,
        validate=validate_stack,
        config_schema=schema,
        remediation_steps=rule.remediation or None,
    )


def serve(name: str, rules: Iterable[Rule], *, description: str, enforcement_level: str = "mandatory") -> None:
    """Start the policy pack's gRPC server (blocks; prints the port, as the engine expects).

    The default enforcement level is mandatory (fail closed): policies/config/<stack>.json chooses
    per environment (dev: advisory, prod: mandatory).
    """
    from pulumi_policy import EnforcementLevel, PolicyPack

    install_secret_shim()
    remember_config_env()
    policies = [to_policy(rule) for rule in rules]
    install_request_scope(remediates=any(getattr(policy, "has_remediation", lambda: False)() for policy in policies))
    PolicyPack(
        name=name,
        policies=policies,
        enforcement_level=EnforcementLevel(enforcement_level),
        description=description,
    )
