"""The upstream release each reproduction was written against, tied to the pin in components/versions.py.

Every family (families.py) names the reproductions it is built on (`Family.reproduces`: a package, with one module per
kind or family of checks), and each of them declares `REPRODUCES = Pin(...)` (family.py; in its `__init__`, itself or
re-exported): the software, the version its code was read at (a literal, changed only by whoever checks the reproduction
against a new release), the upstream source it was read from, and where components/versions.py pins that software
(`Charts.KUEUE`, `Images.KUEUE`, `KUBERNETES_VERSION`, ...). `moved` compares the two: when a pin in versions.py moves
and the module's declared version does not, the reproduction no longer describes what is deployed, and
tests/policies/admission/test_admission_pins.py fails naming the module.

The policies read nothing outside the standard library (the packs run with the repository only on sys.path for
`policies`), so the versions module is passed in rather than imported here.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from .families import families
from .family import Pin


def reproductions() -> tuple[str, ...]:
    """The modules every family is built on (`Family.reproduces`), each once, in the families' order."""
    return tuple(dict.fromkeys(module for family in families() for module in family.reproduces))


def _bare(version: str) -> str:
    return version.removeprefix("v")


def pinned_version(versions: ModuleType | Any, where: str) -> str:
    """The version `where` (`Charts.KUEUE`, `KUBERNETES_VERSION`, ...) holds in the versions module `versions`."""
    value: Any = versions
    for part in where.split("."):
        value = getattr(value, part)
    for attribute in ("version", "tag"):
        if isinstance(getattr(value, attribute, None), str):
            return str(getattr(value, attribute))
    if isinstance(value, str):
        return value
    raise TypeError(f"{where} in {getattr(versions, '__name__', versions)} is not a version pin: {value!r}")


def moved(module: str, pin: Pin, versions: ModuleType | Any) -> list[str]:
    """One message per place in `versions` that pins `pin.software` at another version than the reproduction in
    `module` was written against (empty: in step)."""
    found: list[str] = []
    for where in pin.pinned:
        version = pinned_version(versions, where)
        if _bare(version) != _bare(pin.version):
            found.append(
                f"{module} reproduces {pin} ({pin.source}), but components/versions.py pins {where} at {version}: "
                f"check the reproduction against {pin.software} {version} upstream, then update its REPRODUCES"
            )
    return found


def reproduction(module: str) -> ModuleType:
    """A reproduction by its module name (`policies.admission.kueue`) or its name in this package (`kueue`)."""
    return importlib.import_module(module if "." in module else f"{__package__}.{module}")


def out_of_step(versions: ModuleType | Any) -> list[str]:
    """Every reproduction of every family whose pin moved in `versions` without it (`moved`)."""
    return [message for module in reproductions() for message in moved(module, reproduction(module).REPRODUCES, versions)]
