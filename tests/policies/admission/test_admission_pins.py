"""Each admission reproduction tied to its pin (policies/admission/pins.py): the release a module reproduces is the
one components/versions.py deploys, and moving a pin alone fails here, naming the module. The reproductions are those
the admission families name (`Family.reproduces`, policies/admission/families.py)."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from typing import Any

import pytest

from components import versions
from components.ground.platform_core import KubernetesConfig
from policies.admission import pins
from policies.admission.families import families
from policies.admission.family import Pin
from tests.helpers import REPO

PINS = [(name, pins.reproduction(name).REPRODUCES) for name in pins.reproductions()]
PLACES = [(name, pin, where) for name, pin in PINS for where in pin.pinned]


def bumped(version: str) -> str:
    """`version` with its last number plus one (`v0.19.2` -> `v0.19.3`, `1.33` -> `1.34`)."""
    head, last = version.rsplit(".", 1)
    return f"{head}.{int(last) + 1}"


def test_every_reproduction_declares_the_pin_it_reproduces() -> None:
    # A reproduction is a package (policies/admission/kueue/, its REPRODUCES in __init__.py and one module per kind or
    # family of rules beside it); each package of policies/admission/ is a family (FAMILY), a reproduction a family
    # names, or both. Only reachability/ (the NetworkPolicy API, nothing to pin) reproduces no release.
    admission = REPO / "policies" / "admission"
    packages = {f"policies.admission.{path.parent.name}" for path in admission.glob("*/__init__.py")}
    named = {f"policies.admission.{family.name}" for family in families()}
    assert packages == named | set(pins.reproductions())
    assert packages - set(pins.reproductions()) == {"policies.admission.reachability", "policies.admission.webhooks"}
    assert all(isinstance(pin, Pin) and pin.pinned for _, pin in PINS)
    # Every reproduced operator, and Pod Security as the Kubernetes version.
    assert {pin.software for _, pin in PINS} == {
        "argo-cd",
        "cert-manager",
        "kubernetes",
        "kueue",
        "mariadb-operator",
        "metallb",
        "slurm-operator",
    }


@pytest.mark.parametrize("name", [name for name, _ in PINS if hasattr(pins.reproduction(name), "__path__")])
def test_a_reproduction_package_declares_its_pin_once(name: str) -> None:
    """A package's modules hold no second `REPRODUCES` that could stay behind when the package's moves (pss/ keeps its
    in versions.py, which its checks read, and the package re-exports that one)."""
    package = pins.reproduction(name)
    modules = [importlib.import_module(f"{package.__name__}.{info.name}") for info in pkgutil.iter_modules(package.__path__)]
    assert modules
    for module in modules:
        assert vars(module).get("REPRODUCES", package.REPRODUCES) is package.REPRODUCES, module.__name__


@pytest.mark.parametrize(("name", "pin"), PINS, ids=[p[0] for p in PINS])
def test_the_module_says_which_upstream_tag_it_was_read_at(name: str, pin: Pin) -> None:
    [tag] = re.findall(r"\bv[0-9]+\.[0-9]+\.[0-9]+\b", pin.source)
    assert tag in (pins.reproduction(name).__doc__ or ""), f"{name}'s docstring does not name {tag}"


def test_every_reproduction_is_in_step_with_components_versions() -> None:
    assert pins.out_of_step(versions) == []


def test_the_stack_default_kubernetes_version_is_the_pinned_one() -> None:
    assert KubernetesConfig().version == versions.KUBERNETES_VERSION


def move(monkeypatch: pytest.MonkeyPatch, where: str, version: str) -> None:
    """Set the pin at `where` in components/versions.py to `version`, as a bump there would."""
    owner: Any = versions
    *path, last = where.split(".")
    for part in path:
        owner = getattr(owner, part)
    value = getattr(owner, last)
    if isinstance(value, versions.ChartPin):
        value = dataclasses.replace(value, version=version)
    elif isinstance(value, versions.ImagePin):
        value = dataclasses.replace(value, tag=version)
    else:
        value = version
    monkeypatch.setattr(owner, last, value)


@pytest.mark.parametrize(("name", "pin", "where"), PLACES, ids=[f"{p[0]}-{p[2]}" for p in PLACES])
def test_moving_a_pin_without_its_reproduction_fails_naming_the_module(
    monkeypatch: pytest.MonkeyPatch, name: str, pin: Pin, where: str
) -> None:
    moved_to = bumped(pins.pinned_version(versions, where))
    move(monkeypatch, where, moved_to)
    [message] = pins.out_of_step(versions)
    assert message.startswith(f"{name} reproduces {pin.software} {pin.version} ")
    assert f"components/versions.py pins {where} at {moved_to}" in message
    # Once the module says it reproduces the new release, it is in step again.
    monkeypatch.setattr(pins.reproduction(name), "REPRODUCES", dataclasses.replace(pin, version=moved_to))
    remaining = [other for other in pin.pinned if other != where]
    assert [m for m in pins.out_of_step(versions) if f"{name} " not in m] == []
    assert len(pins.out_of_step(versions)) == len(remaining)


def test_a_leading_v_is_not_a_move() -> None:
    pin = Pin("kueue", "0.19.2", ("Images.KUEUE",), "kubernetes-sigs/kueue v0.19.2")
    assert versions.Images.KUEUE.tag == "v0.19.2"
    assert pins.moved("m", pin, versions) == []
    assert pins.moved("m", dataclasses.replace(pin, version="0.19.1"), versions) != []
