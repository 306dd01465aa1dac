"""The docs' generated blocks (docs/blocks.py, docs/examples.py): the committed text is what the generator writes
now from the real render and commands, a hand edit of a block fails the check, and the four claims issue 38 found
false are generated text now."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from docs import generate
from docs.blocks import Block, BlockError, body, find, refresh
from docs.examples import producer_for
from docs.generate import pages
from docs.sources import Sources
from tests.helpers import REPO

SLURM = REPO / "docs" / "layers" / "slurm.md"
OPERATIONS = REPO / "docs" / "operations.md"


def generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docs.generate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
        env={**os.environ, "PYTHONHASHSEED": "7"},
    )


# --- the markers ----------------------------------------------------------------------------------------------


def test_refresh_writes_each_block_at_its_marker_s_indent_and_keeps_the_prose() -> None:
    text = "prose\n\n   <!-- generated: one -->\n   ```text\n   stale\n   ```\n   <!-- end generated -->\n\nmore prose\n"
    done = refresh(text, lambda spec: Block("yaml", f"a: {spec}\n\nb: 2\n"))
    assert (
        done
        == "prose\n\n   <!-- generated: one -->\n   ```yaml\n   a: one\n\n   b: 2\n   ```\n   <!-- end generated -->\n\nmore prose\n"
    )
    assert refresh(done, lambda spec: Block("yaml", f"a: {spec}\n\nb: 2\n")) == done


def test_a_block_that_quotes_a_fence_gets_a_longer_fence() -> None:
    text = "<!-- generated: x -->\n<!-- end generated -->\n"
    done = refresh(text, lambda spec: Block("markdown", "```diff\n-a\n+b\n```\n"))
    assert done.split("\n")[1] == "````markdown" and done.split("\n")[-3] == "````"
    [marked] = find(done)
    assert body(done, marked).count("````") == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<!-- generated: a -->\ntext\n", "has no `<!-- end generated -->`"),
        ("text\n<!-- end generated -->\n", "without its begin marker"),
        ("<!-- generated: a -->\n<!-- generated: b -->\n<!-- end generated -->\n", "begins inside the one of line 1"),
    ],
)
def test_a_marker_without_its_pair_is_refused_with_its_line(text: str, message: str) -> None:
    with pytest.raises(BlockError, match=message):
        find(text, "page.md")


def test_an_unknown_producer_or_variant_is_refused_naming_the_known_ones() -> None:
    with Sources() as sources:
        produce = producer_for(sources)
        with pytest.raises(BlockError, match=r"unknown producer .*render, excerpt"):
            produce("rendr prod ConfigMap slurm/x data:y")
        with pytest.raises(BlockError, match=r"unknown stack or variant 'staging' .*prod\+l40s"):
            produce("render staging ConfigMap slurm/x data:y")


# --- the committed docs ---------------------------------------------------------------------------------------


def test_every_generated_block_names_a_producer_and_the_pages_are_found() -> None:
    from docs.examples import PRODUCERS

    found = {path.relative_to(REPO).as_posix(): find(path.read_text(encoding="utf-8"), str(path)) for path in pages()}
    assert "docs/configuration.md" not in found
    specs = [marked.spec for blocks in found.values() for marked in blocks]
    assert len(specs) >= 14
    assert {spec.split()[0] for spec in specs} <= set(PRODUCERS)


@pytest.mark.slow
def test_committed_generated_blocks_are_what_the_generator_writes_now() -> None:
    result = generator("--check", "--only", "examples")
    assert result.returncode == 0, f"{result.stderr[-6000:]}\n(run `make docs` and commit the pages)"
    assert "generated block(s) up to date" in result.stdout


def test_a_hand_edit_of_a_generated_block_fails_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docs/layers/slurm.md with one partition line of the generated extraConf edited by hand, and the page as
    # committed, checked together (as `make docs-check` checks every page)
    text = SLURM.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("PartitionName=h100 "))
    hand = line.replace(" AllowAccounts=llm,ops", "")
    edited, unedited = tmp_path / "edited.md", tmp_path / "unedited.md"
    edited.write_text(text.replace(line, hand), encoding="utf-8")
    unedited.write_text(text, encoding="utf-8")
    assert generate.main(["--check", "--only", "examples", str(edited), str(unedited)]) == 1
    err = capsys.readouterr().err
    assert f"{edited}: a generated block is stale (or was edited by hand): run make docs" in err
    assert f"  -{hand}" in err and f"  +{line}" in err
    assert f"{unedited}: a generated block is stale" not in err
    assert edited.read_text(encoding="utf-8") == text.replace(line, hand)  # --check writes nothing


# --- issue 38's four false claims -------------------------------------------------------------------------------


def _specs(path: Path) -> list[str]:
    return [marked.spec for marked in find(path.read_text(encoding="utf-8"), str(path))]


def test_the_false_claims_are_generated_text_now() -> None:
    slurm, operations, readme = SLURM.read_text(), OPERATIONS.read_text(), (REPO / "README.md").read_text()
    # 1. scripts are pointed at ./hpcforge: no doc says that make exits 1
    for name, text in (("operations", operations), ("README", readme)):
        assert "make diff` prints the plan and its site impact" not in text, name
        assert "exits 1 for an unacknowledged outage or data loss (`DIFF_FLAGS=--acknowledge`), 2" not in text, name
    assert "GNU make folds every failure into its own exit code 2" in " ".join(operations.split())
    # 2. gres.conf is the render's, not "AutoDetect=nvidia ... through NVML"
    assert "render prod ConfigMap slurm/slurm-config-extra data:gres.conf" in _specs(SLURM)
    assert "GPU devices are discovered through NVML" not in slurm
    # 3. the prod partition lines are the whole rendered extraConf
    assert "render prod Controller slurm/slurm spec:extraConf" in _specs(SLURM)
    # 4. the prod gpu-h100 NodeSet is the render's; no "becomes RealMemory" in the operations guide
    assert any(spec.startswith("excerpt prod NodeSet slurm/gpu-h100 ") for spec in _specs(SLURM))
    assert "RealMemory=1945600" not in slurm and "becomes RealMemory" not in operations
    assert "config-example" in _specs(OPERATIONS)
