"""Typed stack configuration (`hpcforge:*` keys of `Pulumi.<stack>.yaml`)."""

from ..layers.certificates.config import TlsConfig
from ..layers.database.config import DatabaseConfig
from ..layers.directory.config import DirectoryConfig, PosixGroup, PosixUser
from ..layers.gitops.config import GitOpsConfig
from ..layers.network.config import NetworkConfig
from ..layers.provisioning.config import ProvisioningConfig
from ..layers.slurm.config import NodeSetConfig, SlurmConfig
from ..layers.slurm.partitions import PartitionConfig
from ..layers.storage.config import Storage
from .base import ConfigProblems, StrictModel
from .loader import ConfigError, load_config, load_config_from_pulumi, parse_config_values
from .platform_core import KubernetesConfig
from .pools import NodePool
from .root import PlatformConfig

__all__ = [
    "ConfigError",
    "ConfigProblems",
    "DatabaseConfig",
    "DirectoryConfig",
    "GitOpsConfig",
    "KubernetesConfig",
    "NetworkConfig",
    "NodePool",
    "NodeSetConfig",
    "PartitionConfig",
    "PlatformConfig",
    "PosixGroup",
    "PosixUser",
    "ProvisioningConfig",
    "SlurmConfig",
    "Storage",
    "StrictModel",
    "TlsConfig",
    "load_config",
    "load_config_from_pulumi",
    "parse_config_values",
]
