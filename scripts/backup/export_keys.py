#!/usr/bin/env python3
"""Export the platform's keys, encrypted to a recipient certificate, onto the backup volume.

Runs as the backups layer's key-export CronJob (Python standard library plus the `openssl` command):

1. reads, through the Kubernetes API with the pod's service account, the sealed-secrets controller's
   keys it is given by name (`--sealed-secret NAME`, hpcforge:backups.sealingKeys: its Role may `get`
   exactly those Secrets of kube-system, and list none) and the private CA's Secret (cert-manager namespace);
2. writes them as one JSON document (the Secrets' names, namespaces, labels, types and data) to
   `openssl cms -encrypt -aes256 -binary -outform DER -recip RECIPIENT.pem`, whose output becomes
   `<dir>/keys-<UTC time>.cms`; nothing unencrypted touches the disk;
3. uploads it to S3 when S3_BUCKET is set (s3put.py, beside this script);
4. removes local exports older than --keep-days.

Decrypt offline: `openssl cms -decrypt -binary -inform DER -in keys-....cms -inkey recipient.key`.
Prints a JSON summary on the last line (names only, never key material).
"""

import argparse
import datetime
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3put

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
SEALED_SECRETS_LABEL = "sealedsecrets.bitnami.com/sealed-secrets-key"


def api_get(api, path, token, ca_file):
    context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
    request = urllib.request.Request(
        api.rstrip("/") + path, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}
    )
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context))
    with opener.open(request, timeout=30) as response:
        return json.loads(response.read())


def keep(secret):
    meta = secret["metadata"]
    return {
        "name": meta["name"],
        "namespace": meta["namespace"],
        "labels": meta.get("labels", {}),
        "type": secret.get("type", "Opaque"),
        "data": secret.get("data", {}),
    }


def collect(api, token, ca_file, sealed_namespace, sealed_names, ca_namespace, ca_secret):
    """The named sealing keys and the CA's Secret, each read by name (the Role lists no Secret)."""
    found = []
    for name in sorted(sealed_names):
        secret = api_get(api, f"/api/v1/namespaces/{sealed_namespace}/secrets/{urllib.parse.quote(name)}", token, ca_file)
        if SEALED_SECRETS_LABEL not in secret["metadata"].get("labels", {}):
            raise RuntimeError(f"{sealed_namespace}/{name} is not a sealed-secrets key (no {SEALED_SECRETS_LABEL} label)")
        found.append(keep(secret))
    ca = api_get(api, f"/api/v1/namespaces/{ca_namespace}/secrets/{ca_secret}", token, ca_file)
    return [*found, keep(ca)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", default="https://kubernetes.default.svc")
    parser.add_argument("--token-file", default=f"{SA_DIR}/token")
    parser.add_argument("--api-ca-file", default=f"{SA_DIR}/ca.crt")
    parser.add_argument("--recipient", required=True, help="PEM certificate the export is encrypted to")
    parser.add_argument("--dir", required=True)
    parser.add_argument("--keep-days", type=int, default=30)
    parser.add_argument("--sealed-secrets-namespace", default="kube-system")
    parser.add_argument("--sealed-secret", action="append", default=[], help="name of a sealing key to export (repeat)")
    parser.add_argument("--ca-namespace", default="cert-manager")
    parser.add_argument("--ca-secret", default="hpcforge-ca")
    parser.add_argument("--openssl", default="openssl")
    args = parser.parse_args(argv)
    with open(args.token_file, encoding="utf-8") as handle:
        token = handle.read().strip()
    secrets = collect(
        args.api,
        token,
        args.api_ca_file or None,
        args.sealed_secrets_namespace,
        args.sealed_secret,
        args.ca_namespace,
        args.ca_secret,
    )
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")  # noqa: UP017 (image Python may predate 3.11)
    path = os.path.join(args.dir, f"keys-{stamp}.cms")
    partial = path + ".partial"
    document = json.dumps({"exported": stamp, "secrets": secrets}, sort_keys=True).encode()
    encrypt = [args.openssl, "cms", "-encrypt", "-aes256", "-binary", "-outform", "DER", "-out", partial, args.recipient]
    done = subprocess.run(encrypt, input=document, capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        if os.path.exists(partial):
            os.remove(partial)
        print(f"export_keys: openssl failed: {done.stderr.decode(errors='replace').strip()}", file=sys.stderr)
        return 1
    os.replace(partial, path)
    uploaded = s3put.upload_from_env(path, os.path.basename(path))
    removed = []
    cutoff = time.time() - args.keep_days * 86400
    for name in sorted(os.listdir(args.dir)):
        full = os.path.join(args.dir, name)
        if name.startswith("keys-") and name.endswith(".cms") and full != path and os.path.getmtime(full) < cutoff:
            os.remove(full)
            removed.append(name)
    summary = {
        "file": path,
        "secrets": [f"{s['namespace']}/{s['name']}" for s in secrets],
        "removed": removed,
        "uploaded": uploaded,
    }
    if not args.sealed_secret:
        summary["warning"] = "no sealing key named (hpcforge:backups.sealingKeys): sealed-secrets keys not exported"
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
