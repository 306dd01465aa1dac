"""What only a real deployment refuses: config that previews and renders, but must not be applied to a site.

`pulumi up` runs the program with the engine's dry run off; `pulumi preview`, and any run under mocks (the offline
runner: `./hpcforge render`, `check`, the tests), deploy nothing. There the same problems are warnings on stderr, so a
preview (and the pull request check that runs one) shows them while the repository's own example stack still previews.
"""

from __future__ import annotations

import sys
from typing import TextIO

import pulumi
from pulumi.runtime import mocks, settings

from ..errors import InvalidConfigError
from ..layers.backups.config import is_example_key_recipient
from .root import PlatformConfig


def deploy_problems(config: PlatformConfig) -> list[str]:
    """What a production deployment of `config` must not go ahead with, each naming its key."""
    problems = []
    recipient = config.backups.key_recipient if config.backups is not None else None
    if config.is_production and recipient is not None and is_example_key_recipient(recipient):
        problems.append(
            "hpcforge:backups.keyRecipient: this is the repository's EXAMPLE certificate, whose private key "
            "exists nowhere: the key exports encrypted to it could never be read back. Replace it with your "
            "backup officer's certificate (its private key kept offline), or remove keyRecipient to export no keys"
        )
    return problems


def deploying_for_real() -> bool:
    """Whether this run applies changes to a cluster: not a preview (dry run) and not under mocks."""
    return not pulumi.runtime.is_dry_run() and not isinstance(settings.get_monitor(), mocks.MockMonitor)


def guard_deploy(config: PlatformConfig, *, stderr: TextIO | None = None) -> None:
    """Refuse `deploy_problems` before any resource is registered when deploying for real; else warn on stderr."""
    problems = deploy_problems(config)
    if not problems:
        return
    if deploying_for_real():
        raise InvalidConfigError(problems)
    out = stderr if stderr is not None else sys.stderr
    for problem in problems:
        print(f"warning: {problem} (`pulumi up` refuses this)", file=out)
