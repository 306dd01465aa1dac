"""Backups: the accounting database (mariadb-operator `Backup`), the directory (LDIF) and the platform's keys
(encrypted), on a schedule, to one S3-compatible bucket or to volumes."""

from __future__ import annotations

import re

from pydantic import Field, SecretStr, field_validator, model_validator

from .base import MULTILINE, Quantity, StrictModel

_CRON_FIELD = r"(\*|[0-9]+(-[0-9]+)?)(/[0-9]+)?(,(\*|[0-9]+(-[0-9]+)?)(/[0-9]+)?)*"


class S3Target(StrictModel):
    """An S3-compatible bucket."""

    bucket: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    """Bucket name."""
    endpoint: str = Field(pattern=r"^[A-Za-z0-9.-]+(:[0-9]{1,5})?$")
    """S3 endpoint `host[:port]` (no scheme), e.g. `s3.eu-west-1.amazonaws.com` or `minio.example.org:9000`."""
    region: str = "us-east-1"
    """Region of the bucket."""
    prefix: str = Field(default="hpcforge", pattern=r"^[A-Za-z0-9._/-]*$")
    """Folder in the bucket; each backup writes below `<prefix>/<what>/`."""
    access_key_id: SecretStr
    """Access key id; set it as a secret (`pulumi config set --secret --path 'hpcforge:backups.s3.accessKeyId' ...`)."""
    secret_access_key: SecretStr
    """Secret access key; set it as a secret."""
    tls: bool = True
    """Talk HTTPS to the endpoint."""


class VolumeTarget(StrictModel):
    """A PersistentVolumeClaim per backed-up namespace (protected in prod)."""

    size: Quantity = "50Gi"
    """Size of each backup volume."""
    storage_class: str | None = None
    """Storage class (null: the stack's `kubernetes.storageClass`)."""


class BackupsConfig(StrictModel):
    """Scheduled backups of the accounting database, the directory and the keys."""

    schedule: str = "15 2 * * *"
    """Cron schedule of every backup (in the cluster's time zone)."""
    max_retention: str = Field(default="720h", pattern=r"^[0-9]+h$")
    """How long backups are kept (hours, e.g. `720h`), as mariadb-operator's `maxRetention`."""
    s3: S3Target | None = None
    """Store backups in an S3-compatible bucket."""
    volume: VolumeTarget | None = None
    """Store backups on volumes in the cluster (one per namespace backed up)."""

    key_recipient: str | None = Field(default=None, json_schema_extra=MULTILINE)
    """PEM certificate that the sealed-secrets keys and the CA key are encrypted to (`openssl cms`) before they are
    written to the backup target; keep its private key offline. Null: the keys are not exported."""

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
        return value

    @model_validator(mode="after")
    def _one_target(self) -> BackupsConfig:
        if (self.s3 is None) == (self.volume is None):
            raise ValueError("give exactly one backup target: 's3' or 'volume'")
        return self


__all__ = ["BackupsConfig", "S3Target", "VolumeTarget"]
