"""Run the real `__main__.py` under Pulumi's mock engine and record every registered resource.

The mock monitor sees what the real engine would see: each RegisterResource request with its
inputs (secrets still marked), its parent, and its options. Pulumi's own MockMonitor hands the
mocks only type, name and inputs, so this module subclasses it to keep the options too, and to
honour `additionalSecretOutputs` the way the engine does (a RandomPassword's result comes back as
a secret, so everything built from it stays secret).
"""

from __future__ import annotations

import base64
import gc
import hashlib
import json
import logging
import os
import runpy
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2

from components.paths import PROJECT_ROOT

from .environ import check_exec, program_environment
from .stackfile import StackFile

PROJECT = "hpcforge"
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
REDACTED = "[secret]"
DIGEST_PREFIX = "[secret sha256:"
"""A secret value in a recording (`to_json`): `[secret sha256:<first 12 hex digits>]`, so that `./hpcforge diff` sees a
changed secret (sssd.conf, alertmanager.yaml, grendel.toml, slurm.key) without showing it."""
UNKNOWN_TEXT = "<unknown>"
"""How a value that is unknown during a preview appears in plain inputs, renders and JSON."""


@dataclass
class RecordedResource:
    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    remote: bool
    provider: str
    inputs: dict[str, Any]
    """Plain input values (secrets unwrapped)."""
    raw_inputs: dict[str, Any]
    """Inputs with Pulumi's secret markers kept: what the engine sends to policy packs."""
    secret_paths: list[str]
    protect: bool | None = None
    ignore_changes: list[str] = field(default_factory=list)
    retain_on_delete: bool | None = None
    delete_before_replace: bool | None = None
    replace_on_changes: list[str] = field(default_factory=list)
    """`replaceOnChanges` paths: a change there makes Pulumi replace the object, not update it."""
    depends_on: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    additional_secret_outputs: list[str] = field(default_factory=list)
    aliases: list[dict[str, Any]] = field(default_factory=list)
    """`aliases` option as the SDK sends it (alias specs: name, type, stack, project, parentUrn,
    noParent; or a full `urn`), for URN-stability checks (offline/urns/snapshot.py)."""

    @property
    def is_kubernetes_object(self) -> bool:
        return (
            self.custom
            and self.type.startswith("kubernetes:")
            and isinstance(self.inputs.get("kind"), str)
            and isinstance(self.inputs.get("apiVersion"), str)
        )

    @property
    def is_chart(self) -> bool:
        return self.type == "kubernetes:helm.sh/v4:Chart"

    @property
    def is_manifest_file(self) -> bool:
        return self.type == "kubernetes:yaml/v2:ConfigFile"

    def redacted_inputs(self) -> dict[str, Any]:
        """Inputs with every secret value replaced by `[secret]`."""
        redacted: dict[str, Any] = _redact(self.raw_inputs)
        return redacted

    def to_json(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "remote": self.remote,
            "provider": self.provider,
            "inputs": _redact(self.raw_inputs, digests=True),
            "secretPaths": self.secret_paths,
            "options": {
                "protect": self.protect,
                "ignoreChanges": self.ignore_changes,
                "retainOnDelete": self.retain_on_delete,
                "deleteBeforeReplace": self.delete_before_replace,
                "replaceOnChanges": self.replace_on_changes,
                "dependsOn": self.depends_on,
                "additionalSecretOutputs": self.additional_secret_outputs,
            },
        }


@dataclass
class RecordedStack:
    project: str
    stack: str
    resources: list[RecordedResource]
    outputs: dict[str, Any]
    secret_outputs: list[str]
    preview: bool = False
    """Recorded as `pulumi preview` of a new stack (computed outputs unknown)."""

    def by_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_]

    def kubernetes_objects(self) -> list[RecordedResource]:
        return [r for r in self.resources if r.is_kubernetes_object]

    def find(self, type_: str, name: str) -> RecordedResource:
        for resource in self.resources:
            if resource.type == type_ and resource.name == name:
                return resource
        raise KeyError(f"no {type_} named {name!r} was registered")


# --- value conversion ---------------------------------------------------------------------------


def _normalise_numbers(value: Any) -> Any:
    """Protobuf numbers are doubles; Kubernetes wants integers where the value is integral."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise_numbers(v) for v in value]
    return value


def _plain(value: Any, path: str, secret_paths: list[str]) -> Any:
    if isinstance(value, dict):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            secret_paths.append(path)
            return _plain(value.get("value"), path, [])
        if sig == RESOURCE_SIG:
            return value.get("urn", "")
        return {k: _plain(v, f"{path}.{k}" if path else k, secret_paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, f"{path}[{i}]", secret_paths) for i, v in enumerate(value)]
    if value == UNKNOWN:
        return UNKNOWN_TEXT
    return value


def secret_digest(value: Any) -> str:
    """`[secret sha256:<12 hex>]` of a secret value: changes when it changes, never shows it."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return f"{DIGEST_PREFIX}{hashlib.sha256(text.encode()).hexdigest()[:12]}]"


def _redact(value: Any, inside_secret: bool = False, digests: bool = False) -> Any:
    """Replace secret values by `[secret]` (with `digests`, by `secret_digest`), keeping the keys of secret mappings
    visible."""
    if isinstance(value, dict):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            return _redact(value.get("value"), True, digests)
        if sig == RESOURCE_SIG:
            return value.get("urn", "")
        return {k: _redact(v, inside_secret, digests) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, inside_secret, digests) for v in value]
    if value == UNKNOWN or not inside_secret:
        return UNKNOWN_TEXT if value == UNKNOWN else value
    return secret_digest(value) if digests else REDACTED


def struct_to_python(struct: struct_pb2.Struct) -> dict[str, Any]:
    result: dict[str, Any] = _normalise_numbers(json_format.MessageToDict(struct))
    return result


# --- mocks --------------------------------------------------------------------------------------


def mock_secret(name: str, length: int = 32) -> str:
    """A deterministic stand-in for a generated secret; recognisable so tests can look for leaks."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    return ("MOCKSECRET" + digest)[: max(length, 16)]


def _mocks_module() -> Any:
    from pulumi.runtime import mocks

    return mocks


# Outputs that each provider computes when it creates the resource: unknown in a preview of a new
# stack (pulumi/pulumi-random: `result`, `bcryptHash`, `base64`, `hex`... are `Computed` in each
# resource's schema; pulumi-command: `stdout`/`stderr`; pulumi-kubernetes: `status`, filled in by the
# API server). The provider echoes every input as an output, so inputs stay known.
PREVIEW_UNKNOWN_OUTPUTS: dict[str, tuple[str, ...]] = {
    "random:index/randomPassword:RandomPassword": ("result", "bcryptHash"),
    "random:index/randomString:RandomString": ("result",),
    "random:index/randomBytes:RandomBytes": ("base64", "hex"),
    "random:index/randomId:RandomId": ("hex", "b64Std", "b64Url", "dec"),
    "random:index/randomUuid:RandomUuid": ("result",),
    "command:local:Command": ("stdout", "stderr"),
    "command:remote:Command": ("stdout", "stderr"),
    "command:remote:CopyToRemote": (),
}


def preview_outputs(type_: str, inputs: dict[str, Any], custom: bool) -> dict[str, Any]:
    """The outputs the engine hands the program for a resource that a preview would create.

    Inputs are echoed; what the provider computes is `UNKNOWN` (the Python SDK's unknown sentinel,
    which `pulumi.runtime.rpc` turns into an unknown `Output` when the monitor runs a preview).
    """
    state = dict(inputs)
    for key in PREVIEW_UNKNOWN_OUTPUTS.get(type_, ()):
        state[key] = UNKNOWN
    if custom and type_.startswith("kubernetes:") and "kind" in inputs and not type_.startswith("kubernetes:helm.sh/"):
        state["status"] = UNKNOWN
    return state


def _make_mocks(preview: bool = False) -> Any:
    mocks = _mocks_module()

    class OfflineMocks(mocks.Mocks):  # type: ignore[name-defined]
        """Outputs that look like the real providers' for the types hpcforge uses.

        With `preview`, as `pulumi preview` of a new stack: the id of every custom resource and the
        outputs its provider computes are unknown (see `preview_outputs`).
        """

        def new_resource(self, args: Any) -> tuple[str, dict[str, Any]]:
            if preview:
                return ("" if args.custom else f"{args.name}-id"), preview_outputs(args.typ, dict(args.inputs), args.custom)
            state = dict(args.inputs)
            if args.typ == "random:index/randomPassword:RandomPassword":
                length = int(state.get("length", 32))
                secret = mock_secret(args.name, length)
                state["result"] = secret
                state["bcryptHash"] = "$2a$10$" + hashlib.sha256(secret.encode()).hexdigest()[:53]
            elif args.typ == "random:index/randomBytes:RandomBytes":
                length = int(state.get("length", 32))
                raw = (hashlib.sha256(mock_secret(args.name).encode()).digest() * (length // 32 + 1))[:length]
                state["base64"] = base64.b64encode(raw).decode()
                state["hex"] = raw.hex()
            elif args.typ == "random:index/randomId:RandomId":
                state["hex"] = hashlib.sha256(args.name.encode()).hexdigest()[: int(state.get("byteLength", 8)) * 2]
            elif args.typ.startswith("command:"):
                state.setdefault("stdout", "")
                state.setdefault("stderr", "")
            return f"{args.name}-id", state

        def call(self, args: Any) -> tuple[dict[str, Any], None]:
            return {}, None

    return OfflineMocks()


def _make_monitor(mocks: Any, recorder: _Recorder) -> Any:
    mocks_module = _mocks_module()

    class RecordingMonitor(mocks_module.MockMonitor):  # type: ignore[name-defined]
        def make_urn(self, parent: str, type_: str, name: str) -> str:
            return engine_urn(_current_stack(), PROJECT, parent, type_, name)

        def RegisterResource(self, request: Any) -> Any:
            response = super().RegisterResource(request)
            if request.type != "pulumi:pulumi:Stack":
                recorder.record(request, response.urn)
                for key in request.additionalSecretOutputs:
                    _mark_secret(response.object, key)
            return response

        def RegisterResourceOutputs(self, request: Any) -> Any:
            if "::pulumi:pulumi:Stack::" in request.urn:
                recorder.stack_outputs = struct_to_python(request.outputs)
            return super().RegisterResourceOutputs(request)

    return RecordingMonitor(mocks)


def _current_stack() -> str:
    from pulumi.runtime import settings

    return str(settings.get_stack())


ROOT_STACK_TYPE = "pulumi:pulumi:Stack"


def qualified_type(urn: str) -> str:
    """The type part of a URN: the parent chain's types and the resource's, joined by `$`."""
    parts = urn.split("::")
    return parts[2] if len(parts) >= 4 else ""


def engine_urn(stack: str, project: str, parent: str, type_: str, name: str) -> str:
    """A resource's URN as the engine computes it (pulumi/pulumi sdk/go/common/resource/urn.go
    `NewURN`, called with the parent's `QualifiedType()`; the Python SDK's `create_urn` does the same:
    `parent_urn[: parent_urn.rfind("::")] + "$" + type`): the parent's whole qualified type, not only
    its last segment as `pulumi.runtime.mocks.MockMonitor.make_urn` has it, and nothing for the root
    Stack."""
    parent_type = qualified_type(parent) if parent else ""
    if parent_type and parent_type != ROOT_STACK_TYPE:
        type_ = f"{parent_type}${type_}"
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


def _mark_secret(struct: struct_pb2.Struct, key: str) -> None:
    if key not in struct.fields:
        return
    inner = struct_pb2.Value()
    inner.CopyFrom(struct.fields[key])
    wrapper = struct_pb2.Struct()
    wrapper.fields[SIG_KEY].string_value = SECRET_SIG
    wrapper.fields["value"].CopyFrom(inner)
    struct.fields[key].struct_value.CopyFrom(wrapper)


class _Recorder:
    def __init__(self, listener: Callable[[RecordedResource], None] | None = None) -> None:
        self.resources: list[RecordedResource] = []
        self.stack_outputs: dict[str, Any] = {}
        self.listener = listener
        # The SDK calls the monitor from several threads: the listener sees the resources in the
        # order of `resources`.
        self.lock = threading.Lock()

    def record(self, request: Any, urn: str) -> None:
        raw = struct_to_python(request.object)
        secret_paths: list[str] = []
        plain = _plain(raw, "", secret_paths)
        self.add(
            RecordedResource(
                urn=urn,
                type=request.type,
                name=request.name,
                parent=request.parent,
                custom=request.custom,
                remote=request.remote,
                provider=request.provider,
                inputs=plain,
                raw_inputs=raw,
                secret_paths=secret_paths,
                protect=request.protect if request.HasField("protect") else None,
                ignore_changes=list(request.ignoreChanges),
                retain_on_delete=request.retainOnDelete if request.HasField("retainOnDelete") else None,
                delete_before_replace=request.deleteBeforeReplace if request.deleteBeforeReplaceDefined else None,
                replace_on_changes=list(request.replaceOnChanges),
                depends_on=list(request.dependencies),
                property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
                additional_secret_outputs=list(request.additionalSecretOutputs),
                aliases=[json_format.MessageToDict(alias) for alias in request.aliases],
            )
        )

    def add(self, resource: RecordedResource) -> None:
        with self.lock:
            self.resources.append(resource)
            if self.listener is not None:
                self.listener(resource)


# --- running the program ------------------------------------------------------------------------


class ProgramConfigError(Exception):
    """The program refused its configuration; `registered` counts resources it registered first (0)."""

    def __init__(self, messages: list[str], registered: int) -> None:
        self.messages = messages
        self.registered = registered
        super().__init__("\n".join(messages))


def run_program(
    stack: StackFile,
    program_dir: Path = PROJECT_ROOT,
    *,
    preview: bool = False,
    on_resource: Callable[[RecordedResource], None] | None = None,
) -> RecordedStack:
    """Execute the `__main__.py` of `program_dir` for `stack` under mocks and return what it registered.

    `preview=True` runs it as `pulumi preview` of a new stack does: the SDK in dry-run mode, and
    the outputs that providers compute unknown (`preview_outputs`), so `apply` callbacks on them do
    not run and whatever is built from them is unknown in the recorded inputs.

    `on_resource` is called with each resource as it is recorded, in the order of the returned
    `resources` (from the SDK's threads, while the program still runs: it must only hand it on, as
    `offline check` does to the policy packs, which the engine also asks about each resource as it
    is registered).
    """
    import pulumi
    from pulumi.runtime import settings
    from pulumi.runtime.stack import Stack, run_pulumi_func
    from pulumi.runtime.sync_await import _sync_await

    from components.errors import InvalidConfigError

    # The config reaches the program as the CLI passes it: pulumi-language-python puts it in the
    # environment of the process it starts (PULUMI_CONFIG, PULUMI_CONFIG_SECRET_KEYS); a config
    # that execve would refuse there is refused here, with the language host's wording.
    env = program_environment({}, stack.config, stack.secret_keys)
    argv = [sys.executable, "-u", "pulumi-language-python-exec", "--monitor", "127.0.0.1:0", "--engine", "127.0.0.1:0"]
    argv += ["--project", PROJECT, "--stack", stack.name, "--pwd", str(program_dir), "--dry_run", "true", "."]
    check_exec(argv, {**os.environ, **env}, "Problem executing program (could not run language executor): ")
    config = json.loads(env["PULUMI_CONFIG"])
    secret_keys = json.loads(env["PULUMI_CONFIG_SECRET_KEYS"])

    # Several stacks may run in one process (tests, benchmarks): start from a clean runtime.
    settings.set_root_resource(None)  # type: ignore[arg-type]
    pulumi.runtime.set_all_config(config, secret_keys)
    recorder = _Recorder(on_resource)
    mocks = _make_mocks(preview)
    monitor = _make_monitor(mocks, recorder)
    logger = logging.getLogger("offline.mock-engine")
    logger.setLevel(logging.WARNING)
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack.name, preview=preview, monitor=monitor, logger=logger)
    settings.set_root_resource(None)  # type: ignore[arg-type]
    root = Stack()

    program = program_dir / "__main__.py"
    if str(program_dir) not in sys.path:
        sys.path.insert(0, str(program_dir))
    previous_cwd = Path.cwd()

    def execute() -> None:
        os.chdir(program_dir)
        try:
            runpy.run_path(str(program), run_name="__main__")
        finally:
            root._finish()

    # The program switches the collector off for its process (__main__.py); here it shares the
    # process with its caller (tests, benchmarks), which keeps its own settings.
    collecting = gc.isenabled()
    try:
        _sync_await(run_pulumi_func(execute))
    except InvalidConfigError as error:
        raise ProgramConfigError(error.messages, registered=len(recorder.resources)) from None
    finally:
        if collecting:
            gc.enable()
        os.chdir(previous_cwd)
        settings.set_root_resource(None)  # type: ignore[arg-type]

    secret_outputs: list[str] = []
    outputs = _plain(recorder.stack_outputs, "", secret_outputs)
    return RecordedStack(
        project=PROJECT,
        stack=stack.name,
        resources=recorder.resources,
        outputs=outputs,
        secret_outputs=secret_outputs,
        preview=preview,
    )
