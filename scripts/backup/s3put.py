"""Upload one object to an S3-compatible bucket with AWS Signature Version 4 (Python standard library).

Shipped beside the backup scripts (ldif_backup.py, export_keys.py) in their ConfigMaps; they call
`upload_from_env(path, key)` when `S3_BUCKET` is set. Path-style URLs (`https://ENDPOINT/BUCKET/KEY`),
which MinIO, Ceph RGW and AWS all accept. The payload hash is signed (`x-amz-content-sha256`).

The restore runbook (docs/operations.md) uses the same client from the command line:
`python3 s3put.py latest PREFIX NAME-START` prints the key of the newest object under PREFIX whose name
starts with NAME-START (the names carry a UTC timestamp, so the newest sorts last);
`python3 s3put.py get KEY FILE` downloads one object.

Environment: S3_ENDPOINT (host[:port]), S3_BUCKET, S3_PREFIX, S3_REGION (default us-east-1),
S3_TLS (`true`/`false`, default true), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
"""

import datetime
import hashlib
import hmac
import os
import sys
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

ALGORITHM = "AWS4-HMAC-SHA256"


def _hmac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signed_headers(method, url, body, access_key, secret_key, region, amz_date):
    """The headers of a SigV4-signed request (host, x-amz-date, x-amz-content-sha256, authorization)."""
    parts = urllib.parse.urlsplit(url)
    payload_hash = hashlib.sha256(body).hexdigest()
    headers = {"host": parts.netloc, "x-amz-content-sha256": payload_hash, "x-amz-date": amz_date}
    names = sorted(headers)
    canonical = "\n".join(
        [
            method,
            parts.path or "/",
            "&".join(sorted(parts.query.split("&"))) if parts.query else "",
            "".join(f"{name}:{headers[name].strip()}\n" for name in names),
            ";".join(names),
            payload_hash,
        ]
    )
    day = amz_date[:8]
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret_key).encode(), day), region), "s3"), "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"{ALGORITHM} Credential={access_key}/{scope}, SignedHeaders={';'.join(names)}, Signature={signature}"
    )
    return headers


def object_url(endpoint, bucket, key, tls=True):
    return f"{'https' if tls else 'http'}://{endpoint}/{bucket}/{urllib.parse.quote(key, safe='/-_.~')}"


def put_object(endpoint, bucket, key, body, access_key, secret_key, region="us-east-1", tls=True, now=None):
    url = object_url(endpoint, bucket, key, tls)
    moment = now or datetime.datetime.now(datetime.timezone.utc)  # noqa: UP017 (image Python may predate 3.11)
    headers = signed_headers("PUT", url, body, access_key, secret_key, region, moment.strftime("%Y%m%dT%H%M%SZ"))
    headers.pop("host")
    # unsigned; without it urllib sends `application/x-www-form-urlencoded`, and a server may read the body as a
    # form (moto's did: it stored an empty object)
    headers["content-type"] = "application/octet-stream"
    request = urllib.request.Request(url, data=body, method="PUT", headers=headers)
    with urllib.request.urlopen(request, timeout=300) as response:
        if response.status not in (200, 201, 204):
            raise RuntimeError(f"PUT {url}: HTTP {response.status}")
    return url


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")  # noqa: UP017


def _get(url, access_key, secret_key, region):
    headers = signed_headers("GET", url, b"", access_key, secret_key, region, _now())
    headers.pop("host")
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=300) as response:
        return response.read()


def list_keys(endpoint, bucket, prefix, access_key, secret_key, region="us-east-1", tls=True):
    """Every key under `prefix` (ListObjectsV2, following continuation tokens)."""
    keys, token = [], None
    while True:
        query = {"list-type": "2", "prefix": prefix, **({"continuation-token": token} if token else {})}
        encoded = "&".join(f"{k}={urllib.parse.quote(v, safe='-_.~')}" for k, v in sorted(query.items()))
        url = f"{'https' if tls else 'http'}://{endpoint}/{bucket}?{encoded}"
        root = ET.fromstring(_get(url, access_key, secret_key, region))
        keys += [item.findtext("{*}Key") for item in root.findall("{*}Contents")]  # any namespace (Python 3.8+)
        if root.findtext("{*}IsTruncated") != "true":
            return keys
        token = root.findtext("{*}NextContinuationToken")


def _env():
    return (
        os.environ["S3_ENDPOINT"],
        os.environ["S3_BUCKET"],
        os.environ["AWS_ACCESS_KEY_ID"],
        os.environ["AWS_SECRET_ACCESS_KEY"],
        os.environ.get("S3_REGION", "us-east-1"),
        os.environ.get("S3_TLS", "true").lower() != "false",
    )


def main(argv):
    """`latest PREFIX NAME-START` or `get KEY FILE` (see the module's docstring)."""
    endpoint, bucket, access, secret, region, tls = _env()
    if len(argv) == 3 and argv[0] == "latest":
        prefix = argv[1].strip("/") + "/"
        names = sorted(
            k for k in list_keys(endpoint, bucket, prefix, access, secret, region, tls) if k[len(prefix) :].startswith(argv[2])
        )
        if not names:
            print(f"s3put: no object under {bucket}/{prefix} starts with {argv[2]!r}", file=sys.stderr)
            return 1
        print(names[-1])
        return 0
    if len(argv) == 3 and argv[0] == "get":
        body = _get(object_url(endpoint, bucket, argv[1], tls), access, secret, region)
        with open(argv[2], "wb") as handle:
            handle.write(body)
        return 0
    print("usage: s3put.py latest PREFIX NAME-START | get KEY FILE", file=sys.stderr)
    return 2


def upload_from_env(path, name):
    """Upload `path` as `<S3_PREFIX>/<name>` when S3_BUCKET is set; the object's URL, or None."""
    bucket = os.environ.get("S3_BUCKET")
    if not bucket:
        return None
    prefix = os.environ.get("S3_PREFIX", "").strip("/")
    key = f"{prefix}/{name}" if prefix else name
    with open(path, "rb") as handle:
        body = handle.read()
    return put_object(
        os.environ["S3_ENDPOINT"],
        bucket,
        key,
        body,
        os.environ["AWS_ACCESS_KEY_ID"],
        os.environ["AWS_SECRET_ACCESS_KEY"],
        os.environ.get("S3_REGION", "us-east-1"),
        os.environ.get("S3_TLS", "true").lower() != "false",
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
