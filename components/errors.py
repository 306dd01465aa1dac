"""Errors the program raises to the Pulumi engine."""

from __future__ import annotations

import pulumi


class InvalidConfigError(pulumi.RunError):
    """The stack configuration is invalid; raised before any resource is registered.

    A RunError is printed by the Pulumi CLI as a plain message, without a Python traceback.
    """

    def __init__(self, messages: list[str]) -> None:
        self.messages = messages
        super().__init__("invalid hpcforge configuration:\n" + "\n".join(f"  {m}" for m in messages))
