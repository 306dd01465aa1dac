"""The key export (scripts/backup/export_keys.py) with the real `openssl`: what it writes can only be
read with the recipient's private key, and holds the sealed-secrets keys and the CA's Secret.

The Kubernetes API cannot run here: a small HTTP stand-in answers the two requests the script makes,
in the API's JSON shape (`GET /api/v1/namespaces/NS/secrets?labelSelector=...` -> a SecretList,
`GET /api/v1/namespaces/NS/secrets/NAME` -> a Secret), and records what it was asked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, require_binaries

SCRIPT = REPO / "scripts" / "backup" / "export_keys.py"
TOKEN = "service-account-token"

SEALED = {
    "metadata": {
        "name": "sealed-secrets-keyabcde",
        "namespace": "kube-system",
        "labels": {"sealedsecrets.bitnami.com/sealed-secrets-key": "active"},
    },
    "type": "kubernetes.io/tls",
    "data": {"tls.crt": "Y2VydA==", "tls.key": "c2VhbGVkLWtleQ=="},
}
CA = {
    "metadata": {"name": "hpcforge-ca", "namespace": "cert-manager"},
    "type": "kubernetes.io/tls",
    "data": {"tls.crt": "Y2EtY2VydA==", "tls.key": "Y2Eta2V5"},
}


@pytest.fixture
def api() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append((self.path, self.headers.get("Authorization", "")))
            body: Any
            if self.path == "/api/v1/namespaces/kube-system/secrets?labelSelector=sealedsecrets.bitnami.com/sealed-secrets-key":
                body = {"kind": "SecretList", "items": [SEALED]}
            elif self.path == "/api/v1/namespaces/cert-manager/secrets/hpcforge-ca":
                body = CA
            else:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def make_recipient(tmp_path: Path, openssl: str, name: str) -> tuple[Path, Path]:
    key, cert = tmp_path / f"{name}.key", tmp_path / f"{name}.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            f"/CN={name}",
        ],
        capture_output=True,
        check=True,
        timeout=120,
    )
    return key, cert


def test_export_is_readable_only_with_the_recipients_key(tmp_path: Path, api: tuple[str, list[tuple[str, str]]]) -> None:
    openssl = require_binaries("openssl")["openssl"]
    url, seen = api
    key, cert = make_recipient(tmp_path, openssl, "recipient")
    other_key, _ = make_recipient(tmp_path, openssl, "other")
    token = tmp_path / "token"
    token.write_text(TOKEN)
    out = tmp_path / "backup"
    out.mkdir()
    stale = out / "keys-20000101T000000Z.cms"
    stale.write_bytes(b"old")
    os.utime(stale, (0, 0))
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--api",
            url,
            "--token-file",
            str(token),
            "--api-ca-file",
            "",
            "--recipient",
            str(cert),
            "--dir",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["secrets"] == ["kube-system/sealed-secrets-keyabcde", "cert-manager/hpcforge-ca"]
    assert summary["removed"] == [stale.name]
    assert all(auth == f"Bearer {TOKEN}" for _, auth in seen) and len(seen) == 2
    export = Path(summary["file"])
    assert b"c2VhbGVkLWtleQ" not in export.read_bytes()  # encrypted: the key's base64 is not in the file
    plain = subprocess.run(
        [openssl, "cms", "-decrypt", "-binary", "-inform", "DER", "-in", str(export), "-inkey", str(key)],
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    document = json.loads(plain)
    assert {s["name"]: s["data"] for s in document["secrets"]} == {
        "sealed-secrets-keyabcde": SEALED["data"],
        "hpcforge-ca": CA["data"],
    }
    wrong = subprocess.run(
        [openssl, "cms", "-decrypt", "-binary", "-inform", "DER", "-in", str(export), "-inkey", str(other_key)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert wrong.returncode != 0


def test_key_export_needs_a_pem_certificate() -> None:
    from components.layers.backups.config import BackupsConfig

    with pytest.raises(ValueError, match="not a PEM certificate"):
        BackupsConfig.model_validate({"volume": {}, "keyRecipient": "age1qyqszqgpqyqszqgpqyqszqgpqyqszqgp"})


def test_key_export_cronjob_runs_the_tested_script_with_its_service_account() -> None:
    from components.layers.backups.config import BackupsConfig
    from components.layers.backups.objects import KEYS_ACCOUNT, key_export_spec

    cfg = BackupsConfig.model_validate(
        {"volume": {}, "keyRecipient": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"}
    )
    pod = key_export_spec(cfg, labels={})["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == KEYS_ACCOUNT
    command = pod["containers"][0]["command"]
    assert command[:2] == ["python3", "/scripts/export_keys.py"]
    assert command[command.index("--recipient") + 1] == "/scripts/recipient.pem"
    assert command[command.index("--ca-secret") + 1] == "hpcforge-ca"


def test_only_the_recipient_certificate_may_span_lines() -> None:
    from components.site.loader import ConfigError, load_config
    from tests.helpers import config_values, raw_config

    values = config_values("prod")
    assert load_config(raw_config(values)).backups.key_recipient.count("\n") > 2  # type: ignore[union-attr]
    values["hpcforge:backups"]["schedule"] = "15 2 * *\n*"
    with pytest.raises(ConfigError, match=r"hpcforge:backups\.schedule: .* contains a line break"):
        load_config(raw_config(values))
