"""Upload one object to an S3-compatible bucket with AWS Signature Version 4 (Python standard library).

Shipped beside the backup scripts (ldif_backup.py, export_keys.py) in their ConfigMaps; they call
`upload_from_env(path, key)` when `S3_BUCKET` is set. Path-style URLs (`https://ENDPOINT/BUCKET/KEY`),
which MinIO, Ceph RGW and AWS all accept. The payload hash is signed (`x-amz-content-sha256`).

Environment: S3_ENDPOINT (host[:port]), S3_BUCKET, S3_PREFIX, S3_REGION (default us-east-1),
S3_TLS (`true`/`false`, default true), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
"""

import datetime
import hashlib
import hmac
import os
import urllib.parse
import urllib.request

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
    request = urllib.request.Request(url, data=body, method="PUT", headers=headers)
    with urllib.request.urlopen(request, timeout=300) as response:
        if response.status not in (200, 201, 204):
            raise RuntimeError(f"PUT {url}: HTTP {response.status}")
    return url


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
