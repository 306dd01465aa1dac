"""Typed stack configuration (`hpcforge:*` keys of `Pulumi.<stack>.yaml`)."""

from .base import ConfigProblems, StrictModel
from .identity import DatabaseConfig, DirectoryConfig, PosixGroup, PosixUser, Storage
from .loader import ConfigError, load_config, load_config_from_pulumi, parse_config_values
from .network import NetworkConfig
from .platform_core import GitOpsConfig, KubernetesConfig, TlsConfig
from .pools import NodePool
from .provisioning import ProvisioningConfig
from .root import PlatformConfig
from .slurm import NodeSetConfig, PartitionConfig, SlurmConfig

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
