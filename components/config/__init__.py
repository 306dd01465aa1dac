"""Typed stack configuration (`hpcforge:*` keys of `Pulumi.<stack>.yaml`)."""

from ..layers.directory.config import DatabaseConfig, DirectoryConfig, PosixGroup, PosixUser, Storage
from ..layers.network.config import NetworkConfig
from ..layers.provisioning.config import ProvisioningConfig
from ..layers.slurm.config import NodeSetConfig, PartitionConfig, SlurmConfig
from .base import ConfigProblems, StrictModel
from .loader import ConfigError, load_config, load_config_from_pulumi, parse_config_values
from .platform_core import GitOpsConfig, KubernetesConfig, TlsConfig
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
