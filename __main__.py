"""hpcforge: an HPC/AI site on Kubernetes from one typed description (see README.md)."""

import gc
from pathlib import Path

import pulumi

from components.errors import InvalidConfigError
from components.platform import Platform, PlatformArgs
from components.site.deploy_guard import guard_deploy
from components.site.files import missing_files
from components.site.loader import ConfigError, load_config_from_pulumi

# The config of a large site is millions of long-lived objects (100,000 hosts and users as models),
# and CPython's collector walks them again and again while the program builds and registers
# resources (4-5 s of a 13 s run at 100,000 hosts and users with the default thresholds; still
# 1.6 s with thresholds raised to (50,000, 20, 20): docs/performance.md). The program is one short
# run that builds few reference cycles (at the 100k site, peak memory is 16 MiB higher without the
# collector, 850 MiB against 834), so it runs without it; reference counting still frees everything else.
gc.disable()

try:
    config = load_config_from_pulumi(Path(__file__).resolve().parent)
except ConfigError as error:
    # Refuse the whole stack before a single resource is registered.
    raise InvalidConfigError(error.messages) from None
if problems := missing_files(config, Path(__file__).resolve().parent):
    raise InvalidConfigError(problems)
# Refused by `pulumi up` only (a preview, and the offline runner, warn on stderr): the example backup recipient.
guard_deploy(config)

platform = Platform("hpcforge", PlatformArgs(config=config))

for name, value in platform.outputs.items():
    pulumi.export(name, value)
