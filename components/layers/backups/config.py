"""Backups: the accounting database (mariadb-operator `Backup`), the directory (LDIF) and the platform's keys
(encrypted), on a schedule, to one S3-compatible bucket or to volumes."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from pydantic import Field, SecretStr, field_validator, model_validator

from ...ground.base import MULTILINE, K8sName, Quantity, StrictModel

_CRON_FIELD = r"(\*|[0-9]+(-[0-9]+)?)(/[0-9]+)?(,(\*|[0-9]+(-[0-9]+)?)(/[0-9]+)?)*"
_CRON_ITEM = re.compile(r"(\*|([0-9]+)(?:-([0-9]+))?)(?:/([0-9]+))?")
# The bounds robfig/cron v3.0.1 (spec.go) holds each field to: the parser of mariadb-operator's Backup schedule
# (v26.6.0 api/v1alpha1/base_types.go CronParser) and of Kubernetes' CronJob schedule (the directory backup).
_CRON_BOUNDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 6))
EXAMPLE_KEY_RECIPIENT_SHA256 = "6977fcfdb56f3e86ab396436bea22aaeb04fa6e9eabdab0961d9c80e1ce4f6f8"
"""SHA-256 fingerprint (of the DER certificate, as `openssl x509 -noout -fingerprint -sha256` prints it, without the
colons) of the example `keyRecipient` in this repository's Pulumi.prod.yaml, whose private key exists nowhere: exports
encrypted to it can never be read back."""


def certificate_sha256(pem: str) -> str | None:
    """The SHA-256 fingerprint of the first certificate of a PEM text (None: its body is not base64)."""
    lines = pem.strip().splitlines()
    try:
        end = lines.index("-----END CERTIFICATE-----")
        der = base64.b64decode("".join(line.strip() for line in lines[1:end]), validate=True)
    except (ValueError, binascii.Error):
        return None
    return hashlib.sha256(der).hexdigest()


def is_example_key_recipient(pem: str) -> bool:
    """Whether `pem` is this repository's example backup recipient (`EXAMPLE_KEY_RECIPIENT_SHA256`)."""
    return certificate_sha256(pem) == EXAMPLE_KEY_RECIPIENT_SHA256


# The longest duration Go's time.Duration holds, in whole hours (2562047h47m16.854775807s).
MAX_RETENTION_HOURS = 2_562_047


def _cron_range_problem(item: str, field: str, low: int, high: int) -> str | None:
    """Why robfig/cron's getRange refuses one item of a field (None: it accepts it)."""
    match = _CRON_ITEM.fullmatch(item)
    if match is None:
        return f"{item!r} is not a number, range or step"
    if match.group(2) is None:
        start, end = low, high
    else:
        start = int(match.group(2))
        # "N/step" runs from N to the field's maximum
        end = int(match.group(3)) if match.group(3) is not None else (high if match.group(4) is not None else start)
    step = int(match.group(4)) if match.group(4) is not None else 1
    if start < low or start > high or end > high:
        return f"{field} {item!r} is outside {low}-{high}"
    if start > end:
        return f"{field} {item!r} runs backwards"
    if step == 0:
        return f"{field} {item!r} has a step of 0"
    return None


class S3Target(StrictModel):
    """An S3-compatible bucket."""

    bucket: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    """Bucket name. Fixed after the first deploy (see `s3`)."""
    endpoint: str = Field(pattern=r"^[A-Za-z0-9.-]+(:[0-9]{1,5})?$")
    """S3 endpoint `host[:port]` (no scheme), e.g. `s3.eu-west-1.amazonaws.com` or `minio.example.org:9000`. Fixed after
    the first deploy (see `s3`)."""
    region: str = "us-east-1"
    """Region of the bucket. Fixed after the first deploy (see `s3`)."""
    prefix: str = Field(default="hpcforge", pattern=r"^[A-Za-z0-9._/-]*$")
    """Folder in the bucket; each backup writes below `<prefix>/<what>/`. Fixed after the first deploy (see `s3`)."""
    access_key_id: SecretStr
    """Access key id; set it as a secret (`pulumi config set --secret --path 'hpcforge:backups.s3.accessKeyId' ...`)."""
    secret_access_key: SecretStr
    """Secret access key; set it as a secret."""
    tls: bool = True
    """Talk HTTPS to the endpoint. Fixed after the first deploy (see `s3`)."""


class VolumeTarget(StrictModel):
    """A PersistentVolumeClaim per backed-up namespace (protected in prod)."""

    size: Quantity = "50Gi"
    """Size of each backup volume."""
    storage_class: str | None = None
    """Storage class (null: the stack's `kubernetes.storageClass`)."""


class BackupsConfig(StrictModel):
    """Scheduled backups of the accounting database, the directory and the keys."""

    schedule: str = "15 2 * * *"
    """Cron schedule of every backup (in the cluster's time zone): minute 0-59, hour 0-23, day of month 1-31, month
    1-12, day of week 0-6 (0 is Sunday). May change at any time."""
    max_retention: str = Field(default="720h", pattern=r"^[0-9]+h$")
    """How long backups are kept (hours, 1h to 2562047h, e.g. `720h`), as mariadb-operator's `maxRetention`. Fixed after
    the first deploy: mariadb-operator's webhook refuses any change of a Backup's `maxRetention` once it is set."""
    s3: S3Target | None = None
    """Store backups in an S3-compatible bucket. Fixed after the first deploy, with every key under it except the
    credentials: a Backup's `spec.storage` is immutable, so mariadb-operator's webhook refuses switching between `s3`
    and `volume` and any change of `bucket`, `endpoint`, `region`, `prefix` or `tls`."""
    volume: VolumeTarget | None = None
    """Store backups on volumes in the cluster (one per namespace backed up). Fixed after the first deploy as the
    target: switching to `s3` is refused by mariadb-operator's webhook (a Backup's `spec.storage` is immutable)."""

    key_recipient: str | None = Field(default=None, json_schema_extra=MULTILINE)
    """PEM certificate that the sealed-secrets keys and the CA key are encrypted to (`openssl cms`) before they are
    written to the backup target; keep its private key offline. Null: the keys are not exported."""

    sealing_keys: tuple[K8sName, ...] = ()
    """Names of the sealed-secrets controller's keys (Secrets in kube-system) that the key export reads:
    `kubectl -n kube-system get secret -l sealedsecrets.bitnami.com/sealed-secrets-key -o name`. Its Role may `get`
    exactly these (resourceNames) and list no Secret. The controller makes a new key every 30 days unless its
    renewal is off: add each new name, or the export leaves it out (its summary says which it exported)."""

    @field_validator("key_recipient")
    @classmethod
    def _pem(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip()
        if not (text.startswith("-----BEGIN CERTIFICATE-----") and text.endswith("-----END CERTIFICATE-----")):
            raise ValueError("not a PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)")
        return text + "\n"

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str) -> str:
        fields = value.split()
        if len(fields) != 5 or not all(re.fullmatch(_CRON_FIELD, f) for f in fields):
            raise ValueError(f"{value!r} is not a five-field cron schedule (e.g. '15 2 * * *')")
        for text, (field, low, high) in zip(fields, _CRON_BOUNDS, strict=True):
            for item in text.split(","):
                problem = _cron_range_problem(item, field, low, high)
                if problem:
                    raise ValueError(f"{value!r}: {problem} (mariadb-operator's webhook and Kubernetes refuse the schedule)")
        return value

    @field_validator("max_retention")
    @classmethod
    def _retention(cls, value: str) -> str:
        hours = int(value[:-1])
        if hours == 0:
            # mariadb-operator v26.6.0 backup_types.go Backup.SetDefaults writes 720h over a zero maxRetention, and
            # the field is `webhook:"inmutableinit"`: the next apply of 0h is refused as a change of it.
            raise ValueError("'0h' keeps no backup: give at least 1h (mariadb-operator would write its 720h over 0h)")
        if hours > MAX_RETENTION_HOURS:
            # metav1.Duration is decoded with Go's time.ParseDuration, which refuses what overflows an int64 of ns.
            raise ValueError(
                f"{value!r} is longer than a Go duration holds (at most {MAX_RETENTION_HOURS}h): mariadb-operator's "
                "webhook cannot read it"
            )
        return value

    @model_validator(mode="after")
    def _one_target(self) -> BackupsConfig:
        if (self.s3 is None) == (self.volume is None):
            raise ValueError("give exactly one backup target: 's3' or 'volume'")
        return self


__all__ = ["MAX_RETENTION_HOURS", "BackupsConfig", "S3Target", "VolumeTarget"]
