"""Program tier: the real __main__.py run as `pulumi preview` of a new stack runs it (`--preview`).

In such a preview every output a provider computes on create is unknown (offline/program/engine.py
`preview_outputs`): generated passwords and keys, command output, object status, ids. The program
must register the same resources as under `pulumi up`, with the same known values; only what is
built from a computed output may be unknown, and that only inside a secret or an annotation.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from offline.program.engine import UNKNOWN, UNKNOWN_TEXT, RecordedStack, mock_secret, preview_outputs
from tests.components.layers.evidence.test_operations import _with_bootstrap
from tests.helpers import REPO, run_stack_file, write_variant

pytestmark = pytest.mark.program


def _differences(up: Any, preview: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(what, path) for every place where the preview value is not the `up` value."""
    if preview == UNKNOWN_TEXT and up != UNKNOWN_TEXT:
        yield "unknown", path
    elif isinstance(up, dict) and isinstance(preview, dict):
        for key in sorted(set(up) | set(preview)):
            where = f"{path}.{key}" if path else key
            if key not in preview:
                yield "missing", where
            elif key not in up:
                yield "added", where
            else:
                yield from _differences(up[key], preview[key], where)
    elif isinstance(up, list) and isinstance(preview, list) and len(up) == len(preview):
        for index, (a, b) in enumerate(zip(up, preview, strict=True)):
            yield from _differences(a, b, f"{path}[{index}]")
    elif up != preview:
        yield "changed", path


@pytest.fixture(params=["dev", "prod"])
def both(request: pytest.FixtureRequest) -> tuple[RecordedStack, RecordedStack]:
    """(up, preview) recordings of one stack."""
    name = request.param
    up = request.getfixturevalue(f"{name}_stack")
    preview = request.getfixturevalue(f"{name}_preview_stack")
    return up, preview


def test_preview_registers_the_same_resources_with_the_same_options(both: tuple[RecordedStack, RecordedStack]) -> None:
    up, preview = both
    assert preview.preview and not up.preview
    # Registration order follows when outputs resolve, so it may differ: compare by URN.
    assert sorted(r.urn for r in preview.resources) == sorted(r.urn for r in up.resources)
    by_urn = {r.urn: r for r in preview.resources}
    for a in up.resources:
        b = by_urn[a.urn]
        assert (b.protect, b.retain_on_delete, b.ignore_changes, sorted(b.depends_on), b.parent) == (
            a.protect,
            a.retain_on_delete,
            a.ignore_changes,
            sorted(a.depends_on),
            a.parent,
        ), a.urn


def test_preview_values_differ_only_where_unknown_inside_secrets_or_annotations(
    both: tuple[RecordedStack, RecordedStack],
) -> None:
    up, preview = both
    unknown = 0
    by_urn = {r.urn: r for r in preview.resources}
    for a in up.resources:
        b = by_urn[a.urn]
        for what, path in _differences(a.inputs, b.inputs):
            assert what == "unknown", f"{a.type} {a.name}: {path} is {what} in the preview"
            unknown += 1
            inside_secret = any(path == p or path.startswith((f"{p}.", f"{p}[")) for p in b.secret_paths)
            assert inside_secret or ".annotations." in f".{path}", (
                f"{a.type} {a.name}: {path} is unknown in a preview but neither secret nor an annotation"
            )
    # Generated key material does flow into the program: a preview that knew it would be wrong.
    assert unknown > 0


def test_preview_of_a_bootstrapped_cluster_keeps_every_known_value(tmp_path: Path) -> None:
    """With cluster.bootstrap the Kubernetes provider's kubeconfig is a command's stdout, unknown
    in a preview of a new stack: every object must still be registered with its known values."""
    path = write_variant(tmp_path, "dev", _with_bootstrap)
    up, preview = run_stack_file(path, "dev"), run_stack_file(path, "dev", preview=True)
    by_urn = {r.urn: r for r in preview.resources}
    assert set(by_urn) == {r.urn for r in up.resources}
    provider = by_urn[up.find("pulumi:providers:kubernetes", "kubernetes").urn]
    assert provider.inputs["kubeconfig"] == UNKNOWN_TEXT and "kubeconfig" in provider.secret_paths
    for a in up.resources:
        b = by_urn[a.urn]
        for what, where in _differences(a.inputs, b.inputs):
            inside_secret = any(where == p or where.startswith((f"{p}.", f"{p}[")) for p in b.secret_paths)
            assert what == "unknown" and (inside_secret or ".annotations." in f".{where}"), (a.urn, where, what)


def test_preview_never_shows_a_generated_value(both: tuple[RecordedStack, RecordedStack]) -> None:
    _, preview = both
    text = repr([r.raw_inputs for r in preview.resources])
    assert "MOCKSECRET" not in text
    generated = [r for r in preview.resources if r.type.startswith("random:")]
    assert generated, "the program generates no secrets"
    assert all(mock_secret(r.name)[:16] not in text for r in generated)


def test_preview_outputs_keep_inputs_and_unknown_what_providers_compute() -> None:
    password = preview_outputs("random:index/randomPassword:RandomPassword", {"length": 32}, True)
    assert password == {"length": 32, "result": UNKNOWN, "bcryptHash": UNKNOWN}
    secret = preview_outputs("kubernetes:core/v1:Secret", {"kind": "Secret", "type": "Opaque"}, True)
    assert secret == {"kind": "Secret", "type": "Opaque", "status": UNKNOWN}
    chart = preview_outputs("kubernetes:helm.sh/v4:Chart", {"kind": "x", "chart": "argo-cd"}, False)
    assert chart == {"kind": "x", "chart": "argo-cd"}


def _offline(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offline", *args], check=False, cwd=REPO, capture_output=True, text=True, timeout=600
    )


def test_cli_render_preview_marks_unknown_values(tmp_path: Path) -> None:
    result = _offline("render", "--stack", "prod", "--preview", "--out", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    key = (tmp_path / "slurm" / "Secret-slurm-auth-slurm.yaml").read_text()
    assert f"data: {UNKNOWN_TEXT}" in key
    assert "MOCKSECRET" not in "".join(p.read_text() for p in tmp_path.rglob("*.yaml"))
    printed = _offline("preview", "--stack", "dev", "--preview")
    assert printed.returncode == 0, printed.stderr
    assert "with unknown outputs (--preview)" in printed.stdout
