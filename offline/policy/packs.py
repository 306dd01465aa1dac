"""The policy pack processes of a check, as the engine runs them: the minimal Engine service they log to, each
pack started (`python -u -m pulumi.policy`), its port read, connected (Handshake, ConfigureStack,
GetAnalyzerInfo), configured (the merged policy config), and stopped (its peak memory kept).
driver.py sends them the resources."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml
from google.protobuf import empty_pb2, json_format

from ..program.environ import check_exec
from ..program.stackfile import StackFile
from .config import LEVELS, PolicyConfig, PolicyInfo, PolicyRunError, reconcile_policy_config

START_TIMEOUT = float(os.environ.get("HPCFORGE_POLICY_START_TIMEOUT", "60"))


RPC_TIMEOUT = 120.0


MAX_MESSAGE = 1024 * 1024 * 400


ORGANIZATION = "organization"  # what the CLI reports for diy (file/s3) backends


class _EngineService:
    def __init__(self, root_urn: str, err: TextIO) -> None:
        self.root_urn = root_urn
        self.err = err
        self.lock = threading.Lock()

    def Log(self, request: Any, context: Any) -> Any:  # noqa: N802 (gRPC method name)
        from pulumi.runtime.proto import engine_pb2

        severity = engine_pb2.LogSeverity.Name(request.severity).lower()
        with self.lock:
            print(f"    {severity}: {request.message}", file=self.err)
        return empty_pb2.Empty()

    def GetRootResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        from pulumi.runtime.proto import engine_pb2

        return engine_pb2.GetRootResourceResponse(urn=self.root_urn)

    def SetRootResource(self, request: Any, context: Any) -> Any:  # noqa: N802
        from pulumi.runtime.proto import engine_pb2

        self.root_urn = request.urn
        return engine_pb2.SetRootResourceResponse()


def start_engine(root_urn: str, err: TextIO) -> tuple[Any, str]:
    import grpc
    from pulumi.runtime.proto import engine_pb2_grpc

    servicer = type("EngineServicer", (_EngineService, engine_pb2_grpc.EngineServicer), {})(root_urn, err)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    engine_pb2_grpc.add_EngineServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


@dataclass(frozen=True)
class PackSpec:
    path: Path
    config: Path | None = None


@dataclass
class RunningPack:
    spec: PackSpec
    version: str
    process: subprocess.Popen[bytes]
    stderr: list[str] = field(default_factory=list)
    stdout_rest: list[str] = field(default_factory=list)
    port: int | None = None
    channel: Any = None
    stub: Any = None
    name: str = ""
    policies: list[PolicyInfo] = field(default_factory=list)
    initial: dict[str, PolicyConfig] = field(default_factory=dict)
    supports_config: bool = True

    @property
    def label(self) -> str:
        return self.name or str(self.spec.path)


def _load_pack_project(path: Path) -> str:
    project = path / "PulumiPolicy.yaml"
    try:
        document = yaml.safe_load(project.read_text())
    except FileNotFoundError:
        raise PolicyRunError(f'failed to load Pulumi policy project located at "{path}": no PulumiPolicy.yaml') from None
    except yaml.YAMLError as error:
        raise PolicyRunError(f'failed to load Pulumi policy project located at "{path}": {error}') from None
    if not isinstance(document, dict) or not document.get("runtime"):
        raise PolicyRunError(f'failed to load Pulumi policy project located at "{path}": missing runtime')
    runtime = document["runtime"]
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name != "python":
        raise PolicyRunError(f'policy pack at "{path}": only python packs can be run offline (runtime: {name})')
    return str(document.get("version") or "")


def _drain(stream: Any, sink: list[str]) -> None:
    for raw in iter(stream.readline, b""):
        sink.append(raw.decode(errors="replace").rstrip("\n"))


def start_pack(spec: PackSpec, engine_address: str, env: Mapping[str, str]) -> RunningPack:
    version = _load_pack_project(spec.path)
    # The CLI execs its `pulumi-analyzer-policy-python` shim with [engine address, "."] and this
    # environment; the shim execs Python with the same. Refuse what execve would refuse (E2BIG).
    check_exec(["pulumi-analyzer-policy-python", engine_address, "."], env, f'policy pack "{spec.path}" failed to start: ')
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", engine_address, "."],
        cwd=spec.path,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    pack = RunningPack(spec, version, process)
    assert process.stderr is not None
    threading.Thread(target=_drain, args=(process.stderr, pack.stderr), daemon=True).start()
    return pack


def read_port(pack: RunningPack, timeout: float) -> None:
    stdout = pack.process.stdout
    assert stdout is not None
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(stdout.readline().decode(errors="replace")), daemon=True)
    reader.start()
    reader.join(timeout)
    line = first[0].strip() if first else ""
    if not line.isdigit():
        pack.process.kill()
        time.sleep(0.1)
        detail = "\n".join(pack.stderr[-20:]) or "(no output)"
        why = f"printed {line!r}" if first else f"printed no port within {timeout:.0f}s"
        raise PolicyRunError(f'policy pack "{pack.spec.path}" failed to start: it {why}\n{detail}')
    pack.port = int(line)
    threading.Thread(target=_drain, args=(pack.process.stdout, pack.stdout_rest), daemon=True).start()


def peak_rss_mib(pid: int | str = "self") -> float | None:
    """The process's peak resident memory (VmHWM; unlike ru_maxrss, not inherited across fork/exec)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def stop_pack(pack: RunningPack, memory: dict[str, float] | None = None) -> None:
    if memory is not None and pack.process.poll() is None:
        peak = peak_rss_mib(pack.process.pid)
        if peak is not None:
            memory[pack.label] = peak
    if pack.channel is not None:
        pack.channel.close()
    if pack.process.poll() is None:
        pack.process.terminate()
        try:
            pack.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pack.process.kill()
            pack.process.wait(timeout=5)


def level_name(proto: Any, value: int) -> str:
    return str(proto.EnforcementLevel.Name(value)).lower()


def _policy_config_message(proto: Any, config: Mapping[str, PolicyConfig]) -> Any:
    request = proto.ConfigureAnalyzerRequest()
    for name, entry in config.items():
        message = request.policyConfig[name]
        message.enforcementLevel = proto.EnforcementLevel.Value(entry.level.upper())
        if entry.properties:
            message.properties.update(entry.properties)
    return request


def connect_pack(pack: RunningPack, engine_address: str, stack: StackFile, project: str) -> None:
    import grpc
    from pulumi.runtime import proto
    from pulumi.runtime.proto import analyzer_pb2_grpc

    pack.channel = grpc.insecure_channel(
        f"127.0.0.1:{pack.port}",
        options=[("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)],
    )
    grpc.channel_ready_future(pack.channel).result(timeout=START_TIMEOUT)
    pack.stub = analyzer_pb2_grpc.AnalyzerStub(pack.channel)
    directory = str(pack.spec.path.resolve())
    try:
        pack.stub.Handshake(
            proto.AnalyzerHandshakeRequest(engine_address=engine_address, root_directory=directory, program_directory=directory),
            timeout=RPC_TIMEOUT,
        )
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.UNIMPLEMENTED:
            raise PolicyRunError(f'policy pack "{pack.spec.path}" failed the handshake: {error.details()}') from None
    try:
        pack.stub.ConfigureStack(
            proto.AnalyzerStackConfigureRequest(
                stack=stack.name,
                project=project,
                organization=ORGANIZATION,
                dry_run=True,
                config=dict(stack.config),
                config_secret_keys=list(stack.secret_keys),
            ),
            timeout=RPC_TIMEOUT,
        )
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.UNIMPLEMENTED:
            raise PolicyRunError(f'policy pack "{pack.spec.path}": ConfigureStack failed: {error.details()}') from None
    info = pack.stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=RPC_TIMEOUT)
    pack.name = info.name
    pack.version = pack.version or info.version  # PulumiPolicy.yaml wins
    for policy in info.policies:
        schema: dict[str, Any] = {}
        if info.supportsConfig:
            schema = json_format.MessageToDict(policy.configSchema.properties) if policy.HasField("configSchema") else {}
            schema["enforcementLevel"] = {"type": "string", "enum": list(LEVELS)}
        pack.policies.append(
            PolicyInfo(policy.name, level_name(proto, policy.enforcementLevel), schema, tuple(policy.configSchema.required))
        )
    pack.policies.sort(key=lambda p: p.name)
    pack.initial = {
        name: PolicyConfig(level_name(proto, value.enforcementLevel), json_format.MessageToDict(value.properties) or None)
        for name, value in info.initialConfig.items()
    }
    pack.supports_config = info.supportsConfig


def configure_pack(pack: RunningPack, given: Mapping[str, PolicyConfig] | None) -> list[str]:
    from pulumi.runtime import proto

    if not pack.supports_config:
        if pack.spec.config is not None:
            raise PolicyRunError(f'policy pack "{pack.name}" at "{pack.spec.path}" does not support config')
        return []
    config, errors = reconcile_policy_config(pack.policies, pack.initial, given)
    if errors:
        return [f"validating policy config: {pack.name} {pack.version}  {error}" for error in errors]
    if not config:
        return []
    for entry in config.values():
        if entry.level not in LEVELS:
            raise PolicyRunError(
                f'configuring policy pack "{pack.name}" at "{pack.spec.path}": invalid enforcement level "{entry.level}"'
            )
    pack.stub.Configure(_policy_config_message(proto, config), timeout=RPC_TIMEOUT)
    return []
