"""hpcforge: an HPC/AI site on Kubernetes from one typed description (see README.md)."""

from pathlib import Path

import pulumi

from components.config import ConfigError, load_config_from_pulumi
from components.config.files import missing_files
from components.errors import InvalidConfigError
from components.platform import Platform, PlatformArgs

try:
    config = load_config_from_pulumi(Path(__file__).resolve().parent)
except ConfigError as error:
    # Refuse the whole stack before a single resource is registered.
    raise InvalidConfigError(error.messages) from None
if problems := missing_files(config, Path(__file__).resolve().parent):
    raise InvalidConfigError(problems)

platform = Platform("hpcforge", PlatformArgs(config=config))

for name, value in platform.outputs.items():
    pulumi.export(name, value)
