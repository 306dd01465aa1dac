"""The restore runbook in docs/operations.md as data, and what its tests run it against.

- `steps()`/`blocks()`: the numbered steps of the restore sections, each with its `<!-- runbook: ID -->`
  markers, and the shell block after each runnable marker (the exact text the tests run);
- `Cluster`: a directory standing for the cluster, with tests/fakes/kubectl_cluster.py on PATH as `kubectl`,
  and `run(*ids)` running those blocks in one `bash -euo pipefail` (variables carry from block to block,
  as in an operator's shell);
- `S3Server`: moto's S3-compatible server on 127.0.0.1 (a real HTTP S3 API), started and stopped by the test.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.daemons.common import free_port, port_open
from tests.helpers import REPO

DOC = REPO / "docs" / "operations.md"
SHIM = REPO / "tests" / "fakes" / "kubectl_cluster.py"
FIRST = "### The restore runbook, tested"
LAST = "## Monitoring and alerts"
MARKER = re.compile(r"<!-- runbook: ([a-z0-9-]+)( cluster-only)? -->")
STEP = re.compile(r"^(\d+)\. \*\*(.+?)\*\*")


@dataclass(frozen=True)
class Step:
    section: str
    number: int
    title: str
    markers: tuple[tuple[str, bool], ...]
    """(id, cluster-only) of each marker in the step."""


def _restore_lines() -> list[str]:
    text = DOC.read_text()
    return text[text.index(FIRST) : text.index(LAST)].splitlines()


def steps() -> list[Step]:
    found: list[Step] = []
    section = ""
    current: dict[str, Any] | None = None
    for line in [*_restore_lines(), "## end"]:
        heading = line.startswith("## ")
        step = STEP.match(line)
        if (heading or step) and current is not None:
            found.append(Step(section, current["number"], current["title"], tuple(current["markers"])))
            current = None
        if heading:
            section = line[3:]
        elif step:
            current = {"number": int(step.group(1)), "title": step.group(2), "markers": []}
        elif current is not None:
            current["markers"] += [(m.group(1), bool(m.group(2))) for m in MARKER.finditer(line)]
    return found


def blocks() -> dict[str, str]:
    """The shell block after each runnable marker, dedented."""
    lines = _restore_lines()
    found: dict[str, str] = {}
    for i, line in enumerate(lines):
        marker = MARKER.search(line)
        if not marker or marker.group(2):
            continue
        fence = lines[i + 1]
        if fence.strip() != "```sh":
            raise AssertionError(f"runbook marker {marker.group(1)}: the next line is not a ```sh fence")
        indent = fence[: len(fence) - len(fence.lstrip())]
        end = next(j for j in range(i + 2, len(lines)) if lines[j] == indent + "```")
        found[marker.group(1)] = textwrap.dedent("\n".join(lines[i + 2 : end])) + "\n"
    return found


def heredoc(block: str) -> str:
    """The manifest between `<<'EOF'` and `EOF` in a block."""
    start = block.index("<<'EOF'\n") + len("<<'EOF'\n")
    return block[start : block.index("\nEOF\n", start)]


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


class ScaleHook:
    """An HTTP endpoint the kubectl stand-in calls on `scale`; `handlers[workload](replicas)` runs first."""

    def __init__(self, handlers: dict[str, Callable[[int], None]]) -> None:
        self.handlers = handlers
        self.seen: list[tuple[str, int]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                hook.seen.append((body["workload"], body["replicas"]))
                status, message = 200, b"ok"
                try:
                    if body["workload"] in hook.handlers:
                        hook.handlers[body["workload"]](body["replicas"])
                except Exception as error:  # reported to the stand-in, which fails the kubectl call
                    status, message = 500, str(error).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(message)))
                self.end_headers()
                self.wfile.write(message)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/scale"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Cluster:
    """A directory standing for the cluster (see tests/fakes/kubectl_cluster.py)."""

    def __init__(self, root: Path, workdir: Path) -> None:
        self.root = root
        self.workdir = workdir
        self.bin = root / "bin"
        for folder in (self.bin, workdir):
            folder.mkdir(parents=True, exist_ok=True)
        kubectl = self.bin / "kubectl"
        kubectl.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SHIM}" "$@"\n')
        kubectl.chmod(0o755)
        (workdir / "scripts").symlink_to(REPO / "scripts")  # the runbook runs from a checkout
        self.data: dict[str, Any] = {"workloads": {}, "pods": {}, "rewrite": {}}
        self.save()

    def save(self) -> None:
        (self.root / "cluster.json").write_text(json.dumps(self.data, indent=1))

    def load(self) -> dict[str, Any]:
        self.data = json.loads((self.root / "cluster.json").read_text())
        return self.data

    def put(self, folder: str, obj: dict[str, Any]) -> None:
        path = self.root / folder / obj["metadata"]["namespace"] / f"{obj['metadata']['name']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj))

    def secret(self, namespace: str, name: str, data: dict[str, str | bytes]) -> None:
        obj = {"kind": "Secret", "metadata": {"name": name, "namespace": namespace}, "data": {k: b64(v) for k, v in data.items()}}
        self.put("secrets", obj)

    def config_map(self, namespace: str, name: str, data: dict[str, str]) -> None:
        self.put("configmaps", {"kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data})

    def volume(self, namespace: str, claim: str) -> Path:
        path = self.root / "volumes" / namespace / claim
        path.mkdir(parents=True, exist_ok=True)
        return path

    def applied(self) -> list[dict[str, Any]]:
        path = self.root / "applied.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def run(
        self, *ids: str, env: dict[str, str] | None = None, hook: ScaleHook | None = None, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        """The blocks `ids`, in order, in one bash (must succeed)."""
        text = blocks()
        script = "".join(text[i] for i in ids)
        environment = {
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": str(self.workdir),
            "KUBE_CLUSTER": str(self.root),
            **({"KUBE_HOOK_URL": hook.url} if hook else {}),
            **(env or {}),
        }
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=self.workdir,
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"runbook blocks {ids} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        return done


class S3Server:
    """moto's S3 server on 127.0.0.1 (`python -m moto.server`), with one bucket; stopped on exit."""

    ACCESS, SECRET, BUCKET = "AKIARUNBOOKTEST00001", "runbook-secret-key-000000000000000000000", "site-backups"

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The runbook's S3 variables, as its preamble sets them."""
        return {
            "S3_ENDPOINT": self.endpoint,
            "S3_BUCKET": self.BUCKET,
            "S3_TLS": "false",
            "S3_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": self.ACCESS,
            "AWS_SECRET_ACCESS_KEY": self.SECRET,
            "PREFIX": "hpcforge",
        }

    def __enter__(self) -> S3Server:
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)], stdout=out, stderr=out
            )
        deadline = time.monotonic() + 60
        while not port_open(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise AssertionError(f"moto server did not start:\n{self.log.read_text()[-2000:]}")
            time.sleep(0.2)
        from botocore.session import get_session

        client = get_session().create_client(
            "s3",
            endpoint_url=f"http://{self.endpoint}",
            region_name="us-east-1",
            aws_access_key_id=self.ACCESS,
            aws_secret_access_key=self.SECRET,
        )
        client.create_bucket(Bucket=self.BUCKET)
        self.client = client
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        self.process = None

    def keys(self, prefix: str) -> list[str]:
        listed = self.client.list_objects_v2(Bucket=self.BUCKET, Prefix=prefix)
        return sorted(item["Key"] for item in listed.get("Contents", []))

    def object(self, key: str) -> bytes:
        body: bytes = self.client.get_object(Bucket=self.BUCKET, Key=key)["Body"].read()
        return body


def resolved_env(env: list[dict[str, Any]], secrets: dict[str, dict[str, str]]) -> dict[str, str]:
    """A container's `env` with each secretKeyRef read from `secrets` ({name: {key: value}})."""
    out = {}
    for item in env:
        if "value" in item:
            out[item["name"]] = item["value"]
        else:
            ref = item["valueFrom"]["secretKeyRef"]
            out[item["name"]] = secrets[ref["name"]][ref["key"]]
    return out


__all__ = ["Cluster", "S3Server", "ScaleHook", "Step", "b64", "blocks", "heredoc", "resolved_env", "steps"]
