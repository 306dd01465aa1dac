"""Every admission family: each package of policies/admission/ that exports a `FAMILY` (family.py)."""

from __future__ import annotations

import importlib
import pkgutil

from .family import Family


def families() -> tuple[Family, ...]:
    """The `FAMILY` of every package of policies/admission/ that exports one, in their `order`. Read each time: a package
    added to the folder (or to this package's `__path__`) is a family from then on, with nothing else to change."""
    package = importlib.import_module(__package__ or "policies.admission")
    found: list[Family] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg:
            family = getattr(importlib.import_module(f"{package.__name__}.{info.name}"), "FAMILY", None)
            if isinstance(family, Family):
                found.append(family)
    return tuple(sorted(found, key=lambda family: (family.order, family.name)))
