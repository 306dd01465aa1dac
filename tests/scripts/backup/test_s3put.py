"""The backup scripts' S3 upload (scripts/backup/s3put.py, standard library only) against botocore's
SigV4 signer, the reference implementation S3 clients use; and an end-to-end key export to an S3
stand-in (no S3 server runs here: a local HTTP server records the PUT, whose signature is recomputed
with botocore)."""

from __future__ import annotations

import datetime
import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from tests.helpers import REPO, require_binaries
from tests.scripts.backup.test_key_export import CA, SEALED, make_recipient

_spec = importlib.util.spec_from_file_location("s3put", REPO / "scripts" / "backup" / "s3put.py")
assert _spec is not None and _spec.loader is not None
s3put = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s3put)

ACCESS, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def botocore_authorization(method: str, url: str, headers: dict[str, str], body: bytes, region: str) -> str:
    request = AWSRequest(method=method, url=url, data=body, headers={k: v for k, v in headers.items() if k != "authorization"})
    request.context["timestamp"] = headers["x-amz-date"]
    signer = S3SigV4Auth(Credentials(ACCESS, SECRET), "s3", region)
    canonical = signer.canonical_request(request)
    signature = signer.signature(signer.string_to_sign(request, canonical), request)
    scope = f"{headers['x-amz-date'][:8]}/{region}/s3/aws4_request"
    return f"AWS4-HMAC-SHA256 Credential={ACCESS}/{scope}, SignedHeaders={signer.signed_headers(signer.headers_to_sign(request))}, Signature={signature}"


@pytest.mark.parametrize(
    ("endpoint", "key"),
    [("minio.example.org:9000", "hpcforge/keys-20261123T020000Z.cms"), ("s3.eu-west-1.amazonaws.com", "a b/c+d.ldif")],
)
def test_signature_matches_botocore(endpoint: str, key: str) -> None:
    url = s3put.object_url(endpoint, "site-backups", key)
    body = b"backup bytes\n" * 100
    headers = s3put.signed_headers("PUT", url, body, ACCESS, SECRET, "eu-west-1", "20261123T020000Z")
    assert headers["authorization"] == botocore_authorization("PUT", url, headers, body, "eu-west-1")


@pytest.fixture
def stand_in() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Answers the Kubernetes API's two GETs (as in test_key_export) and records S3 PUTs."""
    puts: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body: Any = None
            if self.path.startswith("/api/v1/namespaces/kube-system/secrets?"):
                body = {"kind": "SecretList", "items": [SEALED]}
            elif self.path == "/api/v1/namespaces/cert-manager/secrets/hpcforge-ca":
                body = CA
            if body is None:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_PUT(self) -> None:
            length = int(self.headers["Content-Length"])
            puts.append(
                {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": self.rfile.read(length)}
            )
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", puts
    finally:
        server.shutdown()
        server.server_close()


def test_key_export_uploads_the_encrypted_file_with_a_valid_signature(
    tmp_path: Path, stand_in: tuple[str, list[dict[str, Any]]]
) -> None:
    openssl = require_binaries("openssl")["openssl"]
    endpoint, puts = stand_in
    _, cert = make_recipient(tmp_path, openssl, "recipient")
    token = tmp_path / "token"
    token.write_text("t")
    env = {
        "PATH": "/usr/bin:/bin",
        "S3_ENDPOINT": endpoint,
        "S3_BUCKET": "site-backups",
        "S3_PREFIX": "hpcforge/keys",
        "S3_REGION": "us-east-1",
        "S3_TLS": "false",
        "AWS_ACCESS_KEY_ID": ACCESS,
        "AWS_SECRET_ACCESS_KEY": SECRET,
    }
    argv = [sys.executable, str(REPO / "scripts" / "backup" / "export_keys.py"), "--api", f"http://{endpoint}"]
    argv += ["--token-file", str(token), "--api-ca-file", "", "--recipient", str(cert), "--dir", str(tmp_path)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    name = Path(summary["file"]).name
    assert summary["uploaded"] == f"http://{endpoint}/site-backups/hpcforge/keys/{name}"
    [put] = puts
    assert put["path"] == f"/site-backups/hpcforge/keys/{name}"
    assert put["body"] == Path(summary["file"]).read_bytes()
    headers = {k: put["headers"][k] for k in ("host", "x-amz-date", "x-amz-content-sha256", "authorization")}
    assert headers["authorization"] == botocore_authorization("PUT", summary["uploaded"], headers, put["body"], "us-east-1")
    stamp = datetime.datetime.strptime(headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    assert abs((datetime.datetime.utcnow() - stamp).total_seconds()) < 300


def test_s3_target_sends_every_export_to_the_bucket() -> None:
    from components.layers.backups.config import BackupsConfig
    from components.layers.backups.objects import directory_backup_spec, key_export_spec

    s3 = {
        "bucket": "site-backups",
        "endpoint": "minio.example.org:9000",
        "accessKeyId": "a",
        "secretAccessKey": "b",
        "prefix": "hpc",
    }
    cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
    cfg = BackupsConfig.model_validate({"s3": s3, "keyRecipient": cert})
    for spec, what in (
        (directory_backup_spec(cfg, suffix="dc=x", uri="ldaps://d:3636", labels={}), "directory"),
        (key_export_spec(cfg, labels={}), "keys"),
    ):
        pod = spec["jobTemplate"]["spec"]["template"]["spec"]
        env = {e["name"]: e.get("value", e.get("valueFrom")) for e in pod["containers"][0]["env"]}
        assert env["S3_BUCKET"] == "site-backups" and env["S3_PREFIX"] == f"hpc/{what}"
        assert env["AWS_SECRET_ACCESS_KEY"] == {"secretKeyRef": {"name": "hpcforge-backup-s3", "key": "secret-access-key"}}
        assert {"name": "backup", "emptyDir": {}} in pod["volumes"]


def test_prod_with_an_s3_target_is_schema_valid_and_keeps_credentials_secret(tmp_path: Path) -> None:
    from offline.program.documents import render_documents
    from offline.schema import validate as schema
    from tests.helpers import require_shared, run_stack_file, write_variant

    shared = require_shared("crds")

    def edit(values: dict[str, Any]) -> None:
        backups = values["hpcforge:backups"]
        backups.pop("volume")
        backups["s3"] = {
            "bucket": "site-backups",
            "endpoint": "minio.example.org:9000",
            "accessKeyId": "AKIA-x",
            "secretAccessKey": "s3cr3t-value",
        }

    recorded = run_stack_file(write_variant(tmp_path, "prod", edit), "prod")
    rendered = render_documents(recorded)
    report = schema.check_documents(rendered, "1.33", shared.parent)
    assert report.errors == []
    secrets = [r for r in recorded.kubernetes_objects() if r.name.endswith("/hpcforge-backup-s3")]
    assert {r.name for r in secrets} == {
        "database/hpcforge-backup-s3",
        "directory/hpcforge-backup-s3",
        "backups/hpcforge-backup-s3",
    }
    assert not any(r.name.endswith("/hpcforge-backups") for r in recorded.kubernetes_objects())  # no volumes
