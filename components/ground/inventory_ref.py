"""A reference to an inventory file (`inventory: {file, sha256}`), the digest annotation of the objects made
from one, and where a config path points into one. The layers' configs import this, not the reader (inventory.py)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field

from .base import StrictModel


class InventoryRef(StrictModel):
    """A data file of the repository holding an inventory."""

    file: str = Field(min_length=1)
    """Path of the YAML file, relative to the project directory (the one with `Pulumi.yaml`)."""
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """Expected sha256 of the file (hex). When set, a file with another digest is refused; when not set, the digest is
    computed at load time. Either way the digest is written as the `hpcforge.io/inventory-sha256` annotation on the
    objects made from the file, so a change to the file is a change to the stack."""


INVENTORY_ANNOTATION = "hpcforge.io/inventory-sha256"
"""Annotation with the sha256 of the inventory file an object was made from."""


def digest_annotations(ref: InventoryRef | None) -> dict[str, str]:
    """`{hpcforge.io/inventory-sha256: <hex>}` for objects made from an inventory file (empty without one)."""
    return {INVENTORY_ANNOTATION: ref.sha256} if ref is not None and ref.sha256 else {}


def source_path(parts: list[str | int], sources: Mapping[tuple[str, str], tuple[str, str]]) -> tuple[str, list[str | int]] | None:
    """(file, path inside it) when `parts` points into an inventory file, else None."""
    if len(parts) >= 2 and isinstance(parts[0], str) and isinstance(parts[1], str):
        found = sources.get((parts[0], parts[1]))
        if found is not None:
            return found[0], [found[1], *parts[2:]]
    return None
