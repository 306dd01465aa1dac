"""Program tier: generated key material (components/k8s/generated.py) is protected where data is.

An edit of a generator's `length`, or a rename, replaces it: the value rotates in place under every
daemon that shares it. In `protect` mode Pulumi must refuse that (protect); nothing may hide the
edit (ignoreChanges)."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest

from offline.program.engine import RecordedStack
from tests.helpers import REPO, run_stack_file, write_variant

pytestmark = pytest.mark.program

GENERATORS = ("random:index/randomPassword:RandomPassword", "random:index/randomBytes:RandomBytes")


def _generators(stack: RecordedStack) -> list[Any]:
    found = [r for r in stack.resources if r.type in GENERATORS]
    assert found, "the program generates no key material"
    return found


def test_prod_protects_every_generator_and_ignores_no_change(prod_stack: RecordedStack) -> None:
    for generator in _generators(prod_stack):
        assert generator.protect is True, generator.urn
        assert generator.ignore_changes == [], generator.urn


def test_retain_mode_retains_every_generator(tmp_path: Path) -> None:
    def retain(config: dict[str, Any]) -> None:
        config["hpcforge:protection"] = {"mode": "retain"}

    stack = run_stack_file(write_variant(tmp_path, "dev", retain), "dev")
    for generator in _generators(stack):
        assert (generator.retain_on_delete, generator.protect) == (True, None), generator.urn


def test_dev_without_protection_leaves_generators_unprotected(dev_stack: RecordedStack) -> None:
    assert all(g.protect is None and g.retain_on_delete is None for g in _generators(dev_stack))


def test_no_generator_is_created_outside_the_helper() -> None:
    pattern = re.compile(r"\b(RandomPassword|RandomBytes|RandomString|RandomId)\(")
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "components").rglob("*.py"))
        if path.name != "generated.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == [], "create generated key material with components/k8s/generated.py"


@pytest.mark.parametrize(
    ("secret", "field", "key", "size"),
    [("slurm/slurm-auth-slurm", "data", "slurm.key", 1024), ("database/mariadb-root", "stringData", "password", 32)],
)
def test_generated_secret_carries_the_generated_value_as_a_secret(
    prod_stack: RecordedStack, secret: str, field: str, key: str, size: int
) -> None:
    obj = prod_stack.find("kubernetes:core/v1:Secret", secret)
    value = obj.inputs[field][key]
    assert len(base64.b64decode(value) if field == "data" else value) == size
    assert any(p in (field, f"{field}.{key}") for p in obj.secret_paths)
    assert obj.retain_on_delete is True  # key material (DeployContext.protection_options)
