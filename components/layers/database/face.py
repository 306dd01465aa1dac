"""What the database layer publishes to the other layers (they import this module and the database config, nothing
else of the layer): the endpoint a client of the accounting database connects to."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class DatabaseEndpoint:
    """What the Slurm layer needs to point slurmdbd at the accounting database."""

    host: str
    port: int
    database: str
    user: str
    password: pulumi.Output[str]
    password_secret: str
    password_key: str
