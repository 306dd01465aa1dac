"""Helpers of the site-layout tests: load a stack's config after an edit, inventories included."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.site.loader import ConfigError, load_config
from components.site.root import PlatformConfig

from .helpers import config_values, inline_inventories, inventory_file, outline_inventories, raw_config

Edit = Callable[[dict[str, Any]], Any]


def load_edited(tmp_path: Path, edit: Edit, stack: str = "prod") -> PlatformConfig:
    """The stack's config after `edit`, which sees the inventories inline; they are written back to
    inventory files under `tmp_path` as the loader wants them."""
    values = inline_inventories(config_values(stack))
    edit(values)
    tmp_path.mkdir(parents=True, exist_ok=True)
    outline_inventories(values, tmp_path)
    return load_config(raw_config(values))


def refusal(tmp_path: Path, edit: Edit, expected: str, stack: str = "prod") -> None:
    """Loading after `edit` fails with a message that starts with `expected` (`{hosts}`, `{users}`: the
    variant's inventory files)."""
    with pytest.raises(ConfigError) as raised:
        load_edited(tmp_path, edit, stack)
    wanted = expected.format(hosts=inventory_file(tmp_path, "provisioning"), users=inventory_file(tmp_path, "directory"))
    assert any(message.startswith(wanted) for message in raised.value.messages), raised.value.messages
