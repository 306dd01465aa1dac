"""The policy driver: run CrossGuard policy packs against a recorded stack, exactly as the engine does.

The program runs under the mock engine (offline/program/engine.py); then each pack is started the way the
Pulumi engine starts a Python policy pack (pulumi/pulumi sdk/go/common/resource/plugin/
analyzer_plugin.go, NewPolicyAnalyzer): `python -u -m pulumi.policy <engine-address> .` with the
pack directory as working directory and PULUMI_CONFIG / PULUMI_PROJECT / PULUMI_STACK /
PULUMI_DRY_RUN / PULUMI_ORGANIZATION in the environment; the pack prints its port on the first
stdout line (offline/policy/packs.py starts, connects, configures and stops them: steps 1 to 3). The
Analyzer protocol is spoken in the engine's order:

1. Handshake (Python packs answer UNIMPLEMENTED, which the engine accepts), ConfigureStack.
2. GetAnalyzerInfo; the policy config is reconciled like pkg/resource/analyzer/config.go
   ReconcilePolicyPackConfig: schema defaults and the policies' default levels, then the pack's
   initial config, then the --policy-pack-config file (`"all"` first, then per policy); each pack
   policy's properties are validated against its config schema (with `enforcementLevel` injected);
   errors are reported like the CLI ("validating policy config: <pack> <version>  <policy>: <error>").
   Entries for policies the pack does not have are NOT rejected: they are passed on to Configure,
   where the engine requires every entry to carry a valid enforcement level (an entry with only
   properties fails with `invalid enforcement level ""`).
3. Configure with the merged config.
4. (this module) For each resource in registration order: Remediate on every pack (applying remediated
   properties), then Analyze on every pack. Properties are the recorded inputs in wire form with
   secrets marked, as the engine marshals them (KeepSecrets, KeepUnknowns, SkipInternalKeys); the
   options are the recorded options; `provider` is the explicit provider resource (URN, type,
   name, inputs).
5. AnalyzeStack with every resource (parent, dependencies, propertyDependencies). The engine sends
   each resource's outputs here; in a preview those are the provider's preview of the inputs, so
   the driver sends the inputs with `additionalSecretOutputs` marked secret.

Charts: a remote component such as `kubernetes:helm.sh/v4:Chart` is expanded by the provider under
the real engine (the component itself is registered without inputs, and each rendered object is
analyzed as its own resource, the Chart its parent). With `--render-charts` the driver does exactly
that (offline/charts/render.py renders, offline/charts/objects.py `engine_view` reshapes the stack). Without
it the mock engine cannot render charts, so the driver passes the chart's declared inputs (chart,
version, values) instead; rules handle both.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from google.protobuf import json_format, struct_pb2

from ..program.engine import SECRET_SIG, SIG_KEY, RecordedResource, RecordedStack
from .packs import RPC_TIMEOUT, RunningPack, level_name

# --- wire form --------------------------------------------------------------------------------------


def _skip_internal(value: Any) -> Any:
    """MarshalProperties(SkipInternalKeys): drop `__`-prefixed keys (never inside a signature object)."""
    if isinstance(value, dict):
        if SIG_KEY in value:
            return {k: (_skip_internal(v) if k == "value" else v) for k, v in value.items()}
        return {k: _skip_internal(v) for k, v in value.items() if not k.startswith("__")}
    if isinstance(value, list):
        return [_skip_internal(v) for v in value]
    return value


def _struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(dict(value))
    return struct


def _secret(value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG:
        return value
    return {SIG_KEY: SECRET_SIG, "value": value}


def _split_provider_reference(reference: str) -> tuple[str, str]:
    urn, _, ident = reference.rpartition("::")
    return (urn, ident) if urn else (reference, "")


def urn_name(urn: str) -> str:
    return urn.split("::", 3)[-1] if urn.count("::") >= 3 else urn


@dataclass
class _Resource:
    """A resource as the driver sends it (inputs may be replaced by remediations)."""

    recorded: RecordedResource | None
    urn: str
    type: str
    name: str
    inputs: dict[str, Any]
    parent: str = ""
    custom: bool = False
    remote: bool = False
    stack_outputs: dict[str, Any] | None = None
    """The root Stack's outputs (wire form)."""

    def options(self, proto: Any, *, with_parent: bool = True) -> Any:
        r = self.recorded
        return proto.AnalyzerResourceOptions(
            protect=bool(r.protect) if r else False,
            ignoreChanges=list(r.ignore_changes) if r else [],
            deleteBeforeReplace=bool(r.delete_before_replace) if r else False,
            deleteBeforeReplaceDefined=r is not None and r.delete_before_replace is not None,
            additionalSecretOutputs=list(r.additional_secret_outputs) if r else [],
            aliases=[],
            customTimeouts=proto.AnalyzerResourceOptions.CustomTimeouts(create=0, update=0, delete=0),
            parent=self.parent if with_parent else "",
        )

    def outputs(self) -> dict[str, Any]:
        """What the engine has as outputs in a preview (see the module docstring)."""
        if self.recorded is None or self.custom:
            outputs = dict(self.inputs)
            for key in self.recorded.additional_secret_outputs if self.recorded else []:
                if key in outputs:
                    outputs[key] = _secret(outputs[key])
            return outputs
        return dict(self.inputs) if self.remote else {}


# --- the engine side: a minimal Engine service for the packs' logging ---------------------------------


# --- packs -------------------------------------------------------------------------------------------


@dataclass
class Diagnostic:
    pack: str
    version: str
    policy: str
    level: str
    description: str
    message: str
    urn: str


def _diagnostics(pack: RunningPack, response: Any, proto: Any, default_urn: str) -> list[Diagnostic]:
    return [
        Diagnostic(
            pack=d.policyPackName or pack.name,
            version=pack.version or d.policyPackVersion,
            policy=d.policyName,
            level=level_name(proto, d.enforcementLevel),
            description=d.description,
            message=d.message,
            urn=d.urn or default_urn,
        )
        for d in response.diagnostics
    ]


def _stack_outputs(stack: RecordedStack) -> dict[str, Any]:
    """The root Stack's outputs in wire form (secret outputs marked)."""
    outputs: dict[str, Any] = {}
    for key, value in stack.outputs.items():
        outputs[key] = _secret(value) if key in stack.secret_outputs else value
    return outputs


def _root(project: str, stack: str) -> _Resource:
    root_urn = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
    return _Resource(None, root_urn, "pulumi:pulumi:Stack", f"{project}-{stack}", {})


def _resource(r: RecordedResource) -> _Resource:
    return _Resource(r, r.urn, r.type, r.name, json.loads(json.dumps(r.raw_inputs)), r.parent, r.custom, r.remote)


class ResourceFeed:
    """A stack's recorded resources in registration order, readable while the program still registers them.

    `offline check` hands each resource to the packs as the mock engine records it (`add`, from the
    SDK's threads), as the engine asks the analyzers about each resource when it is registered; `get`
    waits for a resource that is not there yet, until the feed is `close`d (the program is done).
    """

    def __init__(self, resources: Sequence[RecordedResource] = (), *, closed: bool = False) -> None:
        self._items = list(resources)
        self._closed = closed
        self._changed = threading.Condition()

    def add(self, resource: RecordedResource) -> None:
        with self._changed:
            if self._closed:
                raise RuntimeError("the resource feed is closed")
            self._items.append(resource)
            self._changed.notify_all()

    @property
    def closed(self) -> bool:
        with self._changed:
            return self._closed

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def get(self, index: int) -> RecordedResource | None:
        """The resource at `index`; None when the feed is closed with fewer."""
        with self._changed:
            while index >= len(self._items) and not self._closed:
                self._changed.wait()
            return self._items[index] if index < len(self._items) else None


def _provider(proto: Any, resource: _Resource, by_urn: Mapping[str, _Resource]) -> Any:
    r = resource.recorded
    if r is None or not r.custom or not r.provider:
        return None
    urn, _ = _split_provider_reference(r.provider)
    provider = by_urn.get(urn)
    inputs = provider.inputs if provider else {}
    return proto.AnalyzerProviderResource(
        urn=urn,
        type=provider.type if provider else urn.split("::")[2].rsplit("$", 1)[-1],
        name=urn_name(urn),
        properties=_struct(_skip_internal(inputs)),
    )


@dataclass
class Analyzed:
    """What `analyze_resources` sent and found: the resources as sent (the root Stack first) and their
    diagnostics, in resource then pack order."""

    resources: list[_Resource]
    by_urn: dict[str, _Resource]
    diagnostics: list[Diagnostic]


def analyze_resources(packs: Sequence[RunningPack], project: str, stack: str, feed: ResourceFeed, err: TextIO) -> Analyzed:
    """Remediate, then Analyze, each resource of `feed` (after the root Stack) on every pack.

    A resource is converted and sent once it is in the feed, so this can run while the program
    still registers resources; each request is built as when every resource is already recorded.
    Providers are recorded before the resources that name them (the SDK needs a provider's URN and id
    to register a resource that uses it), so `_provider` finds the same provider either way.
    """
    from pulumi.runtime import proto

    resources = [_root(project, stack)]
    by_urn = {resources[0].urn: resources[0]}

    def resource_at(position: int) -> _Resource | None:
        while position >= len(resources):
            recorded = feed.get(len(resources) - 1)
            if recorded is None:
                return None
            converted = _resource(recorded)
            resources.append(converted)
            by_urn[converted.urn] = converted
        return resources[position]

    if feed.closed:  # all recorded already (a recording, not a running program): converted first, as before
        resource_at(sys.maxsize)

    # Like the engine, each resource goes to every pack: Remediate (in pack order, each pack seeing the
    # previous packs' remediations), then Analyze. The packs are separate processes, so the requests
    # to them are sent together (gRPC futures) and the answers read in resource and pack order; a
    # remediation that changes the properties re-asks the later packs with the new ones, as the
    # engine would have. (A resource's Remediate never depends on another resource's.)
    # Analyze answers are collected at the end; diagnostics keep resource, then pack order.
    pending: list[tuple[list[Diagnostic], RunningPack, Any, str]] = []
    per_resource: list[list[Diagnostic]] = []

    def request(resource: _Resource, inputs: dict[str, Any]) -> Any:
        return proto.AnalyzeRequest(
            urn=resource.urn,
            type=resource.type,
            name=resource.name,
            properties=_struct(inputs),
            options=resource.options(proto),
            provider=_provider(proto, resource, by_urn),
        )

    # Remediate requests run WINDOW resources ahead of the one whose answers are being read, so the
    # pack processes always have work queued.
    window = 32
    remediating: list[list[Any]] = []

    def submit(position: int) -> None:
        resource = resource_at(position)
        if resource is not None:
            first = request(resource, resource.inputs)
            remediating.append([pack.stub.Remediate.future(first, timeout=RPC_TIMEOUT) for pack in packs])

    for position in range(window):
        submit(position)
    position = 0
    while (resource := resource_at(position)) is not None:
        submit(position + window)
        found: list[Diagnostic] = []
        per_resource.append(found)
        futures_ = remediating[position]
        for index, pack in enumerate(packs):
            response = futures_[index].result()
            for remediation in response.remediations:
                if remediation.diagnostic:
                    found.append(
                        Diagnostic(
                            remediation.policyPackName or pack.name,
                            pack.version,
                            remediation.policyName,
                            "advisory",
                            remediation.description,
                            remediation.diagnostic,
                            resource.urn,
                        )
                    )
                elif remediation.HasField("properties"):
                    resource.inputs = json_format.MessageToDict(remediation.properties)
                    print(f"    remediated {resource.type} {resource.name} ({remediation.policyName})", file=err)
                    # Later packs must see the remediated properties: ask them again.
                    again = request(resource, resource.inputs)
                    for later in range(index + 1, len(packs)):
                        futures_[later] = packs[later].stub.Remediate.future(again, timeout=RPC_TIMEOUT)
        remediating[position] = []
        analyze_request = request(resource, _skip_internal(resource.inputs))
        for pack in packs:
            pending.append((found, pack, pack.stub.Analyze.future(analyze_request, timeout=RPC_TIMEOUT), resource.urn))
        position += 1
    for slot, pack, future, urn in pending:
        slot.extend(_diagnostics(pack, future.result(), proto, urn))
    diagnostics: list[Diagnostic] = []
    for found in per_resource:
        diagnostics += found
    return Analyzed(resources, by_urn, diagnostics)


def analyze_stack(packs: Sequence[RunningPack], analyzed: Analyzed, stack: RecordedStack) -> list[Diagnostic]:
    """AnalyzeStack on every pack with every resource `analyze_resources` sent (`stack` gives the root
    Stack's outputs); the packs' diagnostics in pack order."""
    from pulumi.runtime import proto

    analyzed.resources[0].stack_outputs = _stack_outputs(stack)
    by_urn = analyzed.by_urn
    stack_resources = []
    for resource in analyzed.resources:
        properties = resource.stack_outputs if resource.stack_outputs is not None else resource.outputs()
        r = resource.recorded
        stack_resources.append(
            proto.AnalyzerResource(
                urn=resource.urn,
                type=resource.type,
                name=resource.name,
                properties=_struct(_skip_internal(properties)),
                options=resource.options(proto, with_parent=False),
                provider=_provider(proto, resource, by_urn),
                parent=resource.parent,
                dependencies=list(r.depends_on) if r else [],
                propertyDependencies={
                    k: proto.AnalyzerPropertyDependencies(urns=list(v))
                    for k, v in (r.property_dependencies.items() if r else [])
                    if v
                },
            )
        )
    # The packs are separate processes: each checks the stack at the same time; answers in pack order.
    stack_request = proto.AnalyzeStackRequest(resources=stack_resources)
    answers = [pack.stub.AnalyzeStack.future(stack_request, timeout=RPC_TIMEOUT) for pack in packs]
    diagnostics: list[Diagnostic] = []
    for pack, answer in zip(packs, answers, strict=True):
        diagnostics += _diagnostics(pack, answer.result(), proto, "")
    return diagnostics


def analyze_recording(packs: Sequence[RunningPack], stack: RecordedStack, err: TextIO) -> list[Diagnostic]:
    """Every resource of a recorded stack (`analyze_resources`), then the stack (`analyze_stack`)."""
    analyzed = analyze_resources(packs, stack.project, stack.stack, ResourceFeed(stack.resources, closed=True), err)
    return analyzed.diagnostics + analyze_stack(packs, analyzed, stack)
