"""Container image references (Docker's rules)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIGEST = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$")


@dataclass(frozen=True)
class ImageRef:
    registry: str
    repository: str
    tag: str | None
    digest: str | None

    @property
    def digest_valid(self) -> bool:
        return self.digest is not None and bool(_DIGEST.match(self.digest))


def parse_image(reference: str) -> ImageRef:
    """Split an image reference into registry, repository, tag and digest (Docker's rules)."""
    ref = reference.strip()
    digest: str | None = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    tag: str | None = None
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        ref, tag = ref.rsplit(":", 1)
    first, _, rest = ref.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, repository = first, rest
    else:
        registry, repository = "docker.io", ref
    return ImageRef(registry, repository, tag or None, digest)
