"""Observability: kube-prometheus-stack (Prometheus, Alertmanager, Grafana, node exporter,
kube-state-metrics), what it scrapes, the alert rules and where alerts go."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, model_validator

from ...ground.base import K8sName, StrictModel, duplicates
from ..storage.config import Storage

Severity = Literal["critical", "warning"]


class AlertReceiver(StrictModel):
    """Where Alertmanager sends alerts: a webhook (generic or Slack's incoming webhook) or e-mail."""

    name: K8sName
    """Receiver name (Alertmanager `receivers[].name`)."""
    webhook_url: SecretStr | None = None
    """Webhook URL; with `slackChannel`, a Slack incoming-webhook URL. It carries a token: set it as a secret
    (`pulumi config set --secret --path 'hpcforge:observability.receivers[0].webhookUrl' URL`)."""
    slack_channel: str | None = Field(default=None, pattern=r"^#[a-z0-9_-]{1,80}$")
    """Slack channel (`#ops`): send to Slack through `webhookUrl` instead of a generic webhook."""
    email_to: str | None = Field(default=None, pattern=r"^[^@\s]+@[^@\s]+$")
    """E-mail address to send alerts to (needs `smarthost` and `emailFrom`)."""
    email_from: str | None = Field(default=None, pattern=r"^[^@\s]+@[^@\s]+$")
    """Sender address of alert e-mails."""
    smarthost: str | None = Field(default=None, pattern=r"^[A-Za-z0-9.-]+:[0-9]{1,5}$")
    """SMTP server `host:port`."""
    auth_username: str | None = None
    """SMTP user name."""
    auth_password: SecretStr | None = None
    """SMTP password; set it as a secret."""
    severities: tuple[Severity, ...] = ("critical", "warning")
    """Alert severities routed to this receiver."""

    @model_validator(mode="after")
    def _one_kind(self) -> AlertReceiver:
        if (self.webhook_url is None) == (self.email_to is None):
            raise ValueError(f"receiver {self.name!r}: give exactly one of 'webhookUrl' or 'emailTo'")
        if self.email_to is not None and (self.smarthost is None or self.email_from is None):
            raise ValueError(f"receiver {self.name!r}: e-mail needs 'smarthost' and 'emailFrom'")
        if self.slack_channel is not None and self.webhook_url is None:
            raise ValueError(f"receiver {self.name!r}: 'slackChannel' needs 'webhookUrl'")
        return self


class ObservabilityConfig(StrictModel):
    """kube-prometheus-stack and hpcforge's scrape targets, alert rules and dashboards."""

    enabled: bool = True
    """Deploy the monitoring stack."""
    namespace: K8sName = "monitoring"
    """Namespace of Prometheus, Alertmanager and Grafana."""
    retention: str = Field(default="15d", pattern=r"^[0-9]+(h|d|w|y)$")
    """How long Prometheus keeps samples (`retention`)."""
    retention_size: str | None = Field(default=None, pattern=r"^[0-9]+(MB|GB|TB)$")
    """Size limit of Prometheus' data (`retentionSize`, e.g. `45GB`; keep it below the volume)."""
    storage: Storage = Field(default_factory=lambda: Storage(size="50Gi"))
    """Prometheus' volume (protected in prod)."""
    alertmanager_storage: Storage = Field(default_factory=lambda: Storage(size="2Gi"))
    """Alertmanager's volume (silences and notification state)."""
    scrape_interval: str = Field(default="30s", pattern=r"^[0-9]+(s|m)$")
    """Default scrape interval."""
    receivers: tuple[AlertReceiver, ...] = ()
    """Alert receivers (none: alerts are only visible in Alertmanager's UI)."""
    nodes_unavailable_ratio: float = Field(default=0.1, gt=0, le=1)
    """Share of Slurm nodes drained or down above which `SlurmNodesUnavailable` fires."""
    backup_max_age_hours: int = Field(default=26, ge=1)
    """A backup CronJob whose last success is older than this fires `BackupTooOld`."""

    @model_validator(mode="after")
    def _unique(self) -> ObservabilityConfig:
        twice = duplicates(r.name for r in self.receivers)
        if twice:
            raise ValueError(f"duplicate receiver name {twice[0]!r}")
        return self


__all__ = ["AlertReceiver", "ObservabilityConfig"]
