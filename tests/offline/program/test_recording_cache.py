"""offline/program/recording.py: `offline check` reuses what `offline render` recorded only for the same inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.sitegen import write_site
from offline.program import recording
from offline.program.stackfile import read_stack_file
from tests.helpers import REPO


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small generated stack whose inventories live in files outside the repository."""
    return write_site(tmp_path_factory.mktemp("site") / "Pulumi.small.yaml", hosts=3, nodesets=4, users=5)


def _urns_and_inputs(stack: recording.RecordedStack) -> list[tuple[str, object]]:
    return [(r.urn, r.raw_inputs) for r in stack.resources]


def _store(site: Path, folder: Path, *, preview: bool = False) -> recording.RecordedStack:
    return recording.record_and_store(read_stack_file(site, name="small"), REPO, preview=preview, folder=folder)


def _reuse(site: Path, folder: Path, *, preview: bool = False) -> tuple[recording.RecordedStack, bool]:
    return recording.reuse_or_run(read_stack_file(site, name="small"), REPO, preview=preview, folder=folder)


def test_an_unchanged_run_is_reused_and_is_the_same_recording(site: Path, tmp_path: Path) -> None:
    stored = _store(site, tmp_path)
    reused, hit = _reuse(site, tmp_path)
    assert hit
    assert _urns_and_inputs(reused) == _urns_and_inputs(stored)
    assert reused.outputs == stored.outputs and reused.secret_outputs == stored.secret_outputs


def test_a_fresh_run_that_stores_is_reused_by_the_next_command(site: Path, tmp_path: Path) -> None:
    """`offline check` and `offline diff` keep their fresh run (store=True): the other one, with the same inputs, reuses
    it, so one pull-request job runs the head program once; without store, nothing is kept."""
    stack = read_stack_file(site, name="small")
    seen: list[str] = []
    _, hit = recording.reuse_or_run(stack, REPO, folder=tmp_path / "plain", on_resource=lambda r: seen.append(r.urn))
    assert not hit and seen and not list((tmp_path / "plain").glob("*.pickle"))
    first, hit = recording.reuse_or_run(stack, REPO, folder=tmp_path / "kept", store=True)
    assert not hit and len(list((tmp_path / "kept").glob("*.pickle"))) == 1
    again, hit = recording.reuse_or_run(stack, REPO, folder=tmp_path / "kept", store=True)
    assert hit and _urns_and_inputs(again) == _urns_and_inputs(first)


def test_the_recording_lists_the_inventory_files_the_program_read(site: Path, tmp_path: Path) -> None:
    _store(site, tmp_path)
    (entry_path,) = tmp_path.glob("*.pickle")
    entry = recording._load(entry_path.stem, tmp_path)
    assert entry is not None
    opened = {Path(path).name for path, _ in entry.files}
    assert {"Pulumi.small.hosts.yaml", "Pulumi.small.users.yaml"} <= opened


def test_a_changed_inventory_file_is_run_again(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    site = write_site(tmp_path / "site" / "Pulumi.small.yaml", hosts=3, nodesets=4, users=5)
    folder = tmp_path / "cache"
    _store(site, folder)
    users = site.parent / "Pulumi.small.users.yaml"
    users.write_text(users.read_text().replace("User 1", "User One"))
    fresh, hit = _reuse(site, folder)
    assert not hit
    ldif = [r for r in fresh.kubernetes_objects() if r.name.startswith("directory/dirsrv-ldif")]
    assert ldif and any("User One" in str(r.inputs.get("data")) for r in ldif)


def test_a_changed_stack_file_is_run_again(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    site = write_site(tmp_path / "site" / "Pulumi.small.yaml", hosts=3, nodesets=4, users=5)
    folder = tmp_path / "cache"
    _store(site, folder)
    site.write_text(site.read_text() + "# a comment changes the bytes, and so the key\n")
    assert not _reuse(site, folder)[1]


def test_preview_and_plain_runs_are_kept_apart(site: Path, tmp_path: Path) -> None:
    _store(site, tmp_path)
    assert not _reuse(site, tmp_path, preview=True)[1]


def test_switched_off_nothing_is_stored_or_reused(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(recording.ENV_SWITCH, "off")
    _store(site, tmp_path)
    assert not list(tmp_path.glob("*.pickle"))
    monkeypatch.delenv(recording.ENV_SWITCH)
    _store(site, tmp_path)
    monkeypatch.setenv(recording.ENV_SWITCH, "off")
    assert not _reuse(site, tmp_path)[1]


def test_the_key_covers_program_sources_and_environment(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in recording.PROGRAM_FILES:
        shutil.copy(REPO / name, project / name)
    for tree in recording.PROGRAM_TREES:
        shutil.copytree(REPO / tree, project / tree, ignore=shutil.ignore_patterns("__pycache__"))
    stack = read_stack_file(site, name="small")
    key = recording.run_key(stack, project, preview=False)
    assert recording.run_key(stack, project, preview=False) == key
    layer = project / "components" / "layers" / "directory" / "layer.py"
    layer.write_text(layer.read_text() + "\n# changed\n")
    changed = recording.run_key(stack, project, preview=False)
    assert changed != key
    (project / "components" / "layers" / "new_template.txt").write_text("data\n")
    assert recording.run_key(stack, project, preview=False) != changed
    before = recording.run_key(stack, project, preview=False)
    monkeypatch.setenv("HPCFORGE_CHARTS", "/nowhere")
    assert recording.run_key(stack, project, preview=False) != before


def test_a_corrupt_entry_is_run_again(site: Path, tmp_path: Path) -> None:
    _store(site, tmp_path)
    (entry_path,) = tmp_path.glob("*.pickle")
    entry_path.write_bytes(b"not a pickle")
    assert not _reuse(site, tmp_path)[1]


def test_only_the_newest_entries_are_kept(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    (tmp_path / "site").mkdir()
    site = write_site(tmp_path / "site" / "Pulumi.small.yaml", hosts=3, nodesets=4, users=5)
    for index in range(recording.KEEP + 2):
        site.write_text(site.read_text() + f"# run {index}\n")
        _store(site, folder)
    assert len(list(folder.glob("*.pickle"))) == recording.KEEP


def test_offline_check_after_render_reuses_the_recording_and_reports_the_same(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "site").mkdir()
    site = write_site(tmp_path / "site" / "Pulumi.small.yaml", hosts=3, nodesets=4, users=5)
    stack = ["--stack", "small", "--config", str(site)]
    packs = ["--policy-pack", "policies/security", "--policy-pack-config", "policies/config/prod.json"]

    def offline(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "offline", *args], cwd=REPO, capture_output=True, text=True, timeout=600, check=False
        )

    assert offline("render", *stack, "--out", str(tmp_path / "out")).returncode == 0
    reused = offline("check", *stack, *packs)
    fresh = offline("check", *stack, *packs, "--no-reuse")
    assert "reusing the recording" in reused.stderr and "reusing the recording" not in fresh.stderr
    assert (reused.returncode, reused.stdout) == (fresh.returncode, fresh.stdout)


def test_recordings_go_where_hpcforge_recordings_dir_says_and_it_is_not_in_the_key(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = read_stack_file(site, name="small")
    key = recording.run_key(stack, REPO, preview=False)
    monkeypatch.setenv(recording.ENV_DIR, str(tmp_path / "elsewhere"))
    assert recording.cache_dir(REPO) == tmp_path / "elsewhere"
    assert recording.run_key(stack, REPO, preview=False) == key
    recording.record_and_store(stack, REPO)
    assert len(list((tmp_path / "elsewhere").glob("*.pickle"))) == 1
    monkeypatch.delenv(recording.ENV_DIR)
    assert recording.cache_dir(REPO) == REPO / ".offline" / "recordings"


def test_the_test_suite_keeps_its_recordings_out_of_the_working_tree() -> None:
    """tests/conftest.py points HPCFORGE_RECORDINGS_DIR at a temporary folder for the whole run (and its subprocesses)."""
    import os

    folder = Path(os.environ[recording.ENV_DIR])
    assert folder.is_dir() and not folder.is_relative_to(REPO)
    assert recording.cache_dir(REPO) == folder
