"""The database layer's config: MariaDB (through mariadb-operator) for slurmdbd."""

from __future__ import annotations

from pydantic import Field, field_validator

from ...ground.base import DnsName, Quantity, StrictModel, quantity_value


class DatabaseStorage(StrictModel):
    """The MariaDB volume (`spec.storage` of the MariaDB object). mariadb-operator 26.6.0's webhook judges every change
    of it against what is deployed (see docs/layers/database.md, "What a later change may not do")."""

    size: Quantity = "20Gi"
    """Size of the volume, greater than zero. It may grow (the operator resizes the claim when its storage class allows
    expansion) but never shrink: mariadb-operator's webhook refuses a smaller size."""
    storage_class: DnsName | None = None
    """A storage class name (lowercase DNS name); null: `hpcforge:kubernetes.storageClass`, else the cluster default.
    Fixed after the first deploy: mariadb-operator's webhook refuses any change of the class the MariaDB was created
    with, also one that comes from `hpcforge:kubernetes.storageClass` while this is null."""

    @field_validator("size")
    @classmethod
    def _not_zero(cls, value: str) -> str:
        # mariadb-operator v26.6.0 api/v1alpha1/mariadb_types.go Storage.Validate: "greater than zero storage size
        # must be provided" (the CRD's schema accepts 0).
        if quantity_value(value) <= 0:
            raise ValueError(f"{value!r} is no size: mariadb-operator's webhook refuses a MariaDB volume of size 0")
        return value


class DatabaseConfig(StrictModel):
    """MariaDB (through mariadb-operator) for slurmdbd."""

    storage: DatabaseStorage = Field(default_factory=DatabaseStorage)
    """Volume of the MariaDB data."""
    cpu: Quantity = "1"
    """CPU request of the MariaDB server."""
    memory: Quantity = "6Gi"
    """Memory request of the MariaDB server (keep it above `innodbBufferPoolSize`)."""
    memory_limit: Quantity = "8Gi"
    """Memory limit of the MariaDB server: at least `memory`, and above `innodbBufferPoolSize` (else MariaDB is
    OOM-killed once the pool fills)."""
    innodb_buffer_pool_size: str = Field(default="4096M", pattern=r"^[0-9]+[KMG]?$")
    """`innodb_buffer_pool_size` (bytes, or K/M/G, powers of 1024), slurmdbd's recommended InnoDB tuning (SchedMD
    accounting guide); below `memoryLimit`."""
    innodb_log_file_size: str = Field(default="64M", pattern=r"^[0-9]+[KMG]?$")
    """`innodb_log_file_size` of the server."""
    innodb_lock_wait_timeout: int = Field(default=900, ge=50, le=3600)
    """`innodb_lock_wait_timeout` in seconds (SchedMD recommends 900 for slurmdbd)."""
    max_allowed_packet: str = Field(default="16M", pattern=r"^[0-9]+[KMG]?$")
    """`max_allowed_packet` of the server."""
