"""hpcforge: an HPC/AI site on Kubernetes from one typed description (see README.md)."""

import gc
from pathlib import Path

import pulumi

from components.config import ConfigError, load_config_from_pulumi
from components.config.files import missing_files
from components.errors import InvalidConfigError
from components.platform import Platform, PlatformArgs

# The config of a large site is millions of long-lived objects (100,000 hosts and users as models),
# and CPython's default thresholds (700, 10, 10) run a full collection over all of them again and
# again while the program builds and registers resources: 4-5 s of a 13 s run at 100,000 hosts and
# users (docs/performance.md). Collect young objects less often; what is garbage is still collected.
gc.set_threshold(50_000, 20, 20)

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
