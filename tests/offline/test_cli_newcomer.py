"""What a newcomer tripped on (issue 26, item 5): one way to run the tool, `make check`'s exit codes, `check` without
packs, what `admission` did not check, results on stdout and progress on stderr."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.timeout(600)


def hpcforge(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REPO / "hpcforge"), *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def make(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # -o: the shared virtualenv counts as installed (the recipe would recreate .venv)
    return subprocess.run(
        ["make", "--no-print-directory", "-o", ".venv/.installed", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, **(env or {})},
    )


def bad_kind(tmp_path: Path) -> Path:
    text = (REPO / "Pulumi.dev.yaml").read_text()
    assert "hpcforge:environmentKind: development" in text
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text.replace("hpcforge:environmentKind: development", "hpcforge:environmentKind: lab"))
    return path


def test_make_check_says_which_code_the_check_gave(tmp_path: Path) -> None:
    result = make("check", "STACK=dev", f"STACK_FILE={bad_kind(tmp_path)}")
    assert result.returncode == 2  # GNU make's own code for any failed recipe
    assert "hpcforge:environmentKind: 'lab'; expected production or development" in result.stderr
    assert "make check: exit 2: invalid configuration or policy packs (./hpcforge check exits 2)" in result.stderr
    direct = hpcforge("check", "--stack", "dev", "--config", str(bad_kind(tmp_path)))
    assert direct.returncode == 2 and direct.stdout == ""


def test_make_diff_folds_the_gate_and_a_broken_input_into_2_and_says_which(tmp_path: Path) -> None:
    # The Makefile's help and docs/operations.md: ./hpcforge diff exits 0, 1 (gated) or 2 (cannot run); make exits 2
    # for both failures and names the code on its last line. A stand-in for ./hpcforge exits with the code it is given.
    stand_in = tmp_path / "hpcforge"
    stand_in.write_text('#!/bin/sh\necho "$@" > "$ARGS"\nexit "$CODE"\n')
    stand_in.chmod(0o755)
    said = {0: "", 1: "make diff: exit 1: an unacknowledged outage or data loss (./hpcforge diff exits 1)"}
    said[2] = "make diff: exit 2: the diff could not run (./hpcforge diff exits 2)"
    for code, line in said.items():
        args = tmp_path / f"args-{code}"
        result = make(
            "diff", "STACK=prod", "AGAINST=origin/main", f"HPCFORGE={stand_in}", env={"CODE": str(code), "ARGS": str(args)}
        )
        assert result.returncode == (0 if code == 0 else 2), result.stderr
        assert args.read_text() == "diff --stack prod --config Pulumi.prod.yaml --against origin/main\n"
        assert (line in result.stderr.splitlines()) if line else "make diff:" not in result.stderr
    # the real command with a base it cannot find
    broken = make("diff", "STACK=dev", "AGAINST=no-such-ref-of-this-test")
    assert broken.returncode == 2
    assert said[2] in broken.stderr.splitlines()
    assert "no-such-ref-of-this-test" in broken.stderr


def test_check_without_packs_runs_the_three_with_the_environment_kind_s_config() -> None:
    result = hpcforge("check", "--stack", "dev")
    assert result.returncode == 0, result.stderr
    assert (
        "policy packs: policies/gitops-drift, policies/security, policies/slurm-contract with policies/config/dev.json"
        in result.stderr
    )
    assert "Previewing update (dev) offline, with 3 policy packs:" in result.stdout
    assert "Policy summary: 3 packs, " in result.stdout and "policy packs: policies/" not in result.stdout


def test_a_pack_config_without_its_pack_is_refused() -> None:
    result = hpcforge("check", "--stack", "dev", "--policy-pack-config", "policies/config/dev.json")
    assert result.returncode == 2 and "--policy-pack-config needs the --policy-pack it configures" in result.stderr


def test_admission_says_first_what_it_did_not_check() -> None:
    result = hpcforge("admission", "--stack", "dev")
    assert result.returncode in (0, 1), result.stderr
    lines = result.stdout.splitlines()
    notes = [i for i, line in enumerate(lines) if line.startswith("Not checked:")]
    assert len(notes) == 3
    first_verdict = next(i for i, line in enumerate(lines) if line.startswith("Pod Security"))
    assert max(notes) < first_verdict
    assert "the objects inside 11 Helm charts (argo-workflows, argocd," in lines[notes[0]]
    assert "what 2 Argo CD Applications (argocd/lab-tools, argocd/site-root) sync from their repositories" in lines[notes[1]]
    assert "add --previous-config FILE" in lines[notes[2]]
    with_previous = hpcforge("admission", "--stack", "dev", "--previous-config", str(REPO / "Pulumi.dev.yaml"))
    assert sum(line.startswith("Not checked:") for line in with_previous.stdout.splitlines()) == 2


def test_the_tool_runs_from_another_directory_with_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "my.yaml").write_bytes((REPO / "Pulumi.dev.yaml").read_bytes())
    result = hpcforge("preview", "--stack", "dev", "--config", "my.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Resources per layer (`./hpcforge preview --stack dev --tree` lists each one):" in result.stdout


def test_without_the_virtualenv_it_says_what_to_do(tmp_path: Path) -> None:
    copy = tmp_path / "hpcforge"
    copy.write_text((REPO / "hpcforge").read_text())
    copy.chmod(0o755)
    result = subprocess.run([str(copy), "--help"], capture_output=True, text=True, timeout=60, check=False, env=dict(os.environ))
    assert result.returncode == 2
    assert f"hpcforge: {tmp_path}/.venv/bin/python is missing: run `make install` in {tmp_path} first" in result.stderr
