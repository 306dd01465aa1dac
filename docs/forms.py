"""The accepted forms of the config models' validated types, as docs/configuration.md writes them (docs/reference.py).

tests/test_docs_reference.py checks that every validator of a documented field is named here.
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from pydantic import AnyUrl, HttpUrl, SecretBytes, SecretStr

# Human-readable names of the validated string types of the config models (keyed by the validator
# function's qualified name). A validator that is not listed here is named after its function.
NAMED_VALIDATORS: dict[str, str] = {
    "components.ground.base._dns_label": "Kubernetes name (DNS label, at most 63 characters)",
    "components.ground.base._dns_name": "DNS name",
    "components.ground.base._hostname": "host name (DNS label)",
    "components.ground.base._quantity": "Kubernetes quantity (e.g. 500m, 2, 4Gi, 1e3; not negative, at most 9.2e15)",
    "components.ground.base._label_key": "Kubernetes label or taint key ([prefix/]name, e.g. nvidia.com/gpu)",
    "components.ground.base._label_value": "Kubernetes label value (empty or at most 63 letters, digits, '-', '_', '.')",
    "components.ground.base._kernel_cmdline": "kernel command line (printable ASCII, one line, balanced {{ }})",
    "components.ground.base._no_space": "path or URL (no spaces)",
    "components.ground.base._linux_ifname": "Linux interface name (1 to 15 letters, digits, '_', '.', '-', '@')",
    "components.ground.base._ipv4": "IPv4 address",
    "components.ground.base._host_or_ipv4": "DNS name or IPv4 address",
    "components.ground.base._ipv4_network": "IPv4 network (CIDR)",
    "components.ground.base._ipv4_interface": "IPv4 address with prefix length (e.g. 10.0.0.5/24)",
    "components.ground.base._go_duration": "duration (e.g. 90s, 15m, 2160h)",
    "components.layers.slurm.slurm_types._slurm_k8s_name": "Slurm and Kubernetes name (DNS label, at most 40 characters, not a Slurm keyword)",
    "components.layers.slurm.slurm_types._slurm_time": "Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM:SS or UNLIMITED)",
    "components.layers.slurm.config._max_unavailable": "count or percentage (e.g. 2 or 25%)",
    "components.layers.slurm.config._cluster_name": "Slurm ClusterName (lowercase letters, digits and '_', starting with a letter, "
    "at most 40 characters)",
    "components.layers.slurm.slurm_types.config_key": "slurm.conf parameter name (letters and digits)",
    "components.layers.slurm.config._node_feature": "Slurm node feature (letters and digits, starting with a letter)",
    "components.layers.slurm.slurm_types._slurm_value": "slurm.conf value (one word: no spaces, '#', quotes or backslashes)",
    "components.layers.slurm.slurm_types._slurm_option": "slurm.conf list item (letters, digits and _ . : = / + -)",
    "components.layers.slurm.partitions._oversubscribe": "Slurm OverSubscribe value (NO, EXCLUSIVE, YES[:n] or FORCE[:n])",
    "components.layers.directory.config._posix_name": "POSIX user or group name",
    "components.layers.slurm.topology._unit_name": "switch or block name (letters, digits, '_', '.', '-')",
    "components.layers.slurm.topology._node_name": "node name or host list (e.g. cn[001-024])",
    "components.layers.storage.config._mount_option": "NFS mount option",
    "components.layers.storage.config._absolute_path": "absolute path",
    "components.ground.hosts._feature": "Slurm node feature",
    "components.ground.hosts._gres": "GRES entry (name[:type][:count], e.g. gpu:a100:4)",
    "components.layers.slurm.reservations._start_time": "start time (YYYY-MM-DDTHH:MM[:SS])",
    "components.ground.hosts._mac": "MAC address",
    "components.layers.devops.config._pinned_image": "container image pinned by tag or digest (never `latest`)",
    "components.layers.slurm.accounts._description": "text of at most 100 letters, digits, spaces and . _ , : ( ) / -",
    "components.layers.slurm.accounts._name": "Slurm accounting name (lowercase letters, digits, '_', '-', starting with a "
    "letter, at most 40 characters)",
    "components.layers.slurm.accounts._time": "Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)",
    "components.layers.slurm.accounts._tres": "TRES limits: cpu, mem, node, energy, billing, fs/disk, vmem, pages, "
    "license/<name> or gres/<name>[:<type>] to a whole count (mem: a size such as 512G), at most 2147483647",
    "components.layers.gpu.config._image_ref": "container image pinned by tag (registry/path:tag, lowercase registry and path)",
    "components.layers.gpu.config._plain_path": "command name or path (letters, digits, '.', '_', '/', '-')",
    "components.ground.gpus._core_list": "core list (e.g. 0-55 or 0-27,56-83)",
    "components.ground.gpus._gpu_type": "GPU type (lowercase letters, digits and '_', e.g. h100) or MIG profile (e.g. 1g.10gb)",
}

# The accepted form that a `@field_validator` method enforces, keyed by the method's qualified name: the
# generator adds it to the field's type (the type alone says "string"). tests/test_docs_reference.py
# checks that every validator of a documented field is named here or in NAMED_VALIDATORS.
FIELD_VALIDATORS: dict[str, str] = {
    "components.layers.gpu.config.ActiveCheck._name": "lowercase letters, digits and '-', at most 32, starting and "
    "ending alphanumeric",
    "components.layers.gpu.config.ActiveCheck._schedule": "a five-field cron schedule (minute hour day-of-month month "
    "day-of-week) of numbers, `*`, ranges, steps and lists",
    "components.layers.slurm.accounts.SlurmAccountsConfig._no_root": "no account named 'root' (slurmdbd's own)",
    "components.layers.backups.config.BackupsConfig._pem": "a PEM certificate (-----BEGIN CERTIFICATE----- ... "
    "-----END CERTIFICATE-----)",
    "components.layers.backups.config.BackupsConfig._cron": "a five-field cron schedule of numbers, ranges, steps, lists and "
    "`*` (e.g. '15 2 * * *')",
    "components.layers.backups.config.BackupsConfig._retention": "1h to 2562047h",
    "components.layers.gitops.config.GitOpsConfig._kinds": "each `group/Kind` (the core group empty: `/ConfigMap`), "
    "no RBAC or Argo CD kind",
    "components.layers.database.config.DatabaseStorage._not_zero": "more than 0",
    "components.layers.directory.config.PosixUser._keys": "each an OpenSSH public key line (`<type> <base64> [comment]`)",
    "components.layers.directory.config.PosixUser._absolute": "an absolute path",
    "components.layers.directory.config.DirectoryConfig._suffix": "a directory suffix of dc=, o= and ou= components (e.g. "
    "dc=hpc,dc=example,dc=org)",
    "components.layers.network.config.AddressPool._one_or_many": "one range or a list of ranges",
    "components.layers.network.config.AddressPool._valid_ranges": "each a CIDR block (10.0.0.0/28), a first-last "
    "range (10.0.0.10-10.0.0.20) or a single IPv4 address",
    "components.layers.bootstrap.config.Rke2Settings._keys": "each an OpenSSH public key line (`<type> <base64> [comment]`)",
    "components.layers.bootstrap.config.Rke2Settings._sans": "each a host name or address (letters, digits, '.', '*', ':', '-')",
    "components.ground.platform_core.KubernetesConfig._minor_version": "a Kubernetes minor version from 1.30 to 1.39 "
    "(e.g. '1.33')",
    "components.ground.platform_core.KubernetesConfig._api_versions": "each `group/version` or `group/version/Kind` "
    "(e.g. monitoring.coreos.com/v1)",
    "components.layers.certificates.config.Acme._https": "an https:// URL",
    "components.layers.certificates.config.CertificateAuthority._common_name": "not empty, at most 64 bytes in UTF-8",
    "components.layers.gitops.config.GitOpsApp._url": "a Git URL starting with https://, ssh:// or git@",
    "components.layers.provisioning.config.ProvisioningConfig._keys": "each an OpenSSH public key line (`<type> <base64> [comment]`)",
    "components.layers.rdma.config.Fabric._cidr": "an IPv4 or IPv6 network in CIDR form (host bits zero)",
    "components.site.model.PlatformModel._environment": "lowercase letters, digits and '-', starting with a letter, "
    "at most 20 characters, not true/false/null",
    "components.site.model.PlatformModel._site_domain": "a DNS name of at least two labels (e.g. hpc.example.org)",
    "components.layers.slurm.controller.ControllerConfig._port_range": "[first, last] with 1024 < first <= last <= 65535",
    "components.ground.gpus.GpuSpec._files": "a device file or bracketed range (e.g. /dev/nvidia[0-7])",
    "components.layers.slurm.config.NodeSetConfig._gres_form": "each name[:type][:count] (lowercase name; type letters, "
    "digits, '_' or a MIG profile; e.g. gpu:a100:8)",
    "components.layers.slurm.config.LoginConfig._keys": "each an OpenSSH public key line (`<type> <base64> [comment]`)",
}

# Other types the models may use, by class.
SIMPLE_TYPES: dict[type, str] = {
    SecretStr: "secret string (set it with `pulumi config set --secret`)",
    SecretBytes: "secret bytes (set it with `pulumi config set --secret`)",
    Path: "path",
    ipaddress.IPv4Address: "IPv4 address",
    ipaddress.IPv4Network: "IPv4 network (CIDR)",
    ipaddress.IPv4Interface: "IPv4 address with prefix length",
    ipaddress.IPv6Address: "IPv6 address",
    ipaddress.IPv6Network: "IPv6 network (CIDR)",
    AnyUrl: "URL",
    HttpUrl: "http(s) URL",
    datetime.timedelta: "duration",
    datetime.datetime: "date and time (ISO 8601)",
    datetime.date: "date (ISO 8601)",
}
