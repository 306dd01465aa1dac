"""Program tier: URN stability against the snapshots in tests/urns/ (offline/urns/snapshot.py).

A URN that disappears (a renamed resource or component, a changed parent or type) makes
`pulumi up` delete the live resource; it fails here unless an alias covers it or the snapshot is
updated (`./hpcforge urns --update`, with the reason in the commit message). New URNs only
warn, so branches that add resources merge without touching the snapshot.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from offline.program.engine import RecordedStack, engine_urn, run_program
from offline.program.stackfile import StackFile
from offline.urns.snapshot import compare, read_snapshot, report, snapshot_path, stack_urns, write_snapshot
from tests.helpers import REPO

pytestmark = pytest.mark.program


@pytest.mark.parametrize("name", ["dev", "prod"])
def test_no_urn_of_the_snapshot_disappears_without_an_alias(name: str, request: pytest.FixtureRequest) -> None:
    stack: RecordedStack = request.getfixturevalue(f"{name}_stack")
    diff = compare(read_snapshot(snapshot_path(name)), stack)
    for line in report(name, diff):
        if "new URN" in line:
            warnings.warn(line, stacklevel=1)
    assert diff.removed == [], "\n".join(report(name, diff)) + (
        "\nadd a pulumi.Alias for each rename, or run `./hpcforge urns --update` and say why in the commit"
    )


def test_urns_are_the_engines_whole_parent_chain(dev_stack: RecordedStack) -> None:
    # pulumi/pulumi sdk/go/common/resource/urn.go NewURN(stack, project, parent.QualifiedType(), type, name);
    # the Python SDK's create_urn: parent_urn[: parent_urn.rfind("::")] + "$" + type.
    parent = "urn:pulumi:dev::hpcforge::hpcforge:platform:Platform$hpcforge:slurm:Slurm::slurm"
    assert engine_urn("dev", "hpcforge", parent, "random:index/randomBytes:RandomBytes", "slurm-key") == (
        "urn:pulumi:dev::hpcforge::hpcforge:platform:Platform$hpcforge:slurm:Slurm$random:index/randomBytes:RandomBytes::slurm-key"
    )
    stack_urn = "urn:pulumi:dev::hpcforge::pulumi:pulumi:Stack::hpcforge-dev"
    assert engine_urn("dev", "hpcforge", stack_urn, "a:b:C", "x") == "urn:pulumi:dev::hpcforge::a:b:C::x"
    key = next(r for r in dev_stack.resources if r.name == "slurm-key")
    assert key.urn.split("::")[2] == "hpcforge:platform:Platform$hpcforge:slurm:Slurm$random:index/randomBytes:RandomBytes"


PROGRAM = """
import pulumi
import pulumi_random as random

class Layer(pulumi.ComponentResource):
    def __init__(self, name, type_="hpcforge:test:Layer", aliases=None):
        super().__init__(type_, name, None, pulumi.ResourceOptions(aliases=aliases))
        random.RandomPassword("pw", length=8, opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({{}})

{body}
"""


def _run(tmp_path: Path, body: str) -> RecordedStack:
    directory = tmp_path / f"program-{abs(hash(body))}"
    directory.mkdir()
    (directory / "__main__.py").write_text(PROGRAM.format(body=textwrap.dedent(body)))
    return run_program(StackFile(name="dev", path=directory / "Pulumi.dev.yaml", config={}), directory)


@pytest.fixture
def snapshot(tmp_path: Path) -> list[str]:
    path = tmp_path / "dev.txt"
    write_snapshot(_run(tmp_path, 'Layer("old")'), path)
    urns = read_snapshot(path)
    assert len(urns) == 2
    return urns


def test_a_renamed_component_fails_without_an_alias(tmp_path: Path, snapshot: list[str]) -> None:
    diff = compare(snapshot, _run(tmp_path, 'Layer("new")'))
    assert diff.removed == ["urn:pulumi:dev::hpcforge::hpcforge:test:Layer::old"]
    assert diff.added == ["urn:pulumi:dev::hpcforge::hpcforge:test:Layer::new"]


def test_a_renamed_component_with_an_alias_passes(tmp_path: Path, snapshot: list[str]) -> None:
    diff = compare(snapshot, _run(tmp_path, 'Layer("new", aliases=[pulumi.Alias(name="old")])'))
    assert diff.ok
    assert diff.aliased == {
        "urn:pulumi:dev::hpcforge::hpcforge:test:Layer::old": "urn:pulumi:dev::hpcforge::hpcforge:test:Layer::new"
    }


def test_a_changed_component_type_moves_its_children_unless_aliased(tmp_path: Path, snapshot: list[str]) -> None:
    moved = compare(snapshot, _run(tmp_path, 'Layer("old", type_="hpcforge:test:Renamed")'))
    assert moved.removed == sorted(snapshot)  # the child's URN carries its parent's type
    aliased = compare(
        snapshot,
        _run(tmp_path, 'Layer("old", type_="hpcforge:test:Renamed", aliases=[pulumi.Alias(type_="hpcforge:test:Layer")])'),
    )
    assert aliased.ok, aliased  # the child inherits its parent's alias, as in the engine
    assert set(aliased.aliased) == set(snapshot)


def test_new_urns_do_not_fail(tmp_path: Path, snapshot: list[str]) -> None:
    diff = compare(snapshot, _run(tmp_path, 'Layer("old")\nLayer("extra", type_="hpcforge:test:Other")'))
    assert diff.ok and len(diff.added) == 2


def test_the_snapshot_lists_every_urn_once(dev_stack: RecordedStack) -> None:
    urns = read_snapshot(snapshot_path("dev"))
    assert urns == sorted(set(urns))
    assert len(stack_urns(dev_stack)) == len(dev_stack.resources)


def test_cli_compares_both_stacks_with_their_snapshots() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "offline", "urns"], check=False, cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "removed without an alias" not in result.stdout
