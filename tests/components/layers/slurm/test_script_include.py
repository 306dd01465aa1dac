"""Shared shell code of the GPU prolog and epilog (scripts/slurm/lib/gpu-common.sh): sourced from the repository,
inlined into the rendered ConfigMap scripts (components/layers/slurm/script_include.py), refused clearly when it
cannot be inlined."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from components.layers.slurm.config import Script
from components.layers.slurm.objects import script_text
from components.layers.slurm.script_include import IncludeError, inline_includes
from components.site.files import missing_files
from components.site.loader import load_config
from offline.program.engine import RecordedStack
from tests.helpers import REPO, config_values, raw_config, require_binaries
from tests.scripts.slurm.test_gpu_health import EPILOG, PROLOG, run_script
from tests.test_layers import objects

LIBRARY = "scripts/slurm/lib/gpu-common.sh"
SOURCE_LINE = '. "$(dirname "${BASH_SOURCE[0]}")/../lib/gpu-common.sh"'


@pytest.mark.parametrize("script", [PROLOG, EPILOG], ids=["prolog", "epilog"])
def test_repository_scripts_source_the_library(script: Path) -> None:
    text = script.read_text()
    assert SOURCE_LINE in text
    assert "fail() {" not in text and "file_order_bus_ids() {" not in text  # defined once, in the library


@pytest.mark.parametrize("configmap", ["slurm/slurm-prolog-scripts", "slurm/slurm-epilog-scripts"])
def test_rendered_scripts_carry_the_library_instead_of_sourcing_it(prod_stack: RecordedStack, configmap: str) -> None:
    text = objects(prod_stack, "ConfigMap")[configmap].inputs["data"]["10-gpu-check.sh"]
    assert SOURCE_LINE not in text and "# --- include " not in text
    assert text.count(f"# --- included from {LIBRARY} ---") == 1
    for function in ("fail() {", "require_gpus() {", "smi_ok() {", "file_order_bus_ids() {"):
        assert text.count(function) == 1, function


@pytest.mark.parametrize("script", [PROLOG, EPILOG], ids=["prolog", "epilog"])
def test_rendered_text_passes_shellcheck(script: Path, tmp_path: Path) -> None:
    shellcheck = require_binaries("shellcheck")["shellcheck"]
    rendered = tmp_path / script.name
    rendered.write_text(script_text(Script(name=script.name, file=str(script.relative_to(REPO)))))
    result = subprocess.run([shellcheck, str(rendered)], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("script", "fixture", "gpus", "code"),
    [
        (PROLOG, "healthy-h100x1.txt", "0", 0),
        (PROLOG, "healthy-h100x1.txt", "9", 1),
        (PROLOG, "pending-remap.txt", "0,1,2,3", 1),
        (PROLOG, "a100x8-driver535.txt", "0,1,2,3,4,5,6,7", 0),
        (PROLOG, "driver-failing.txt", "0", 1),
        (EPILOG, "leftover-process.txt", "0", 1),
        (EPILOG, "healthy-h100x1.txt", "0", 0),
    ],
)
def test_rendered_script_alone_answers_as_the_repository_script(
    script: Path, fixture: str, gpus: str, code: int, tmp_path: Path
) -> None:
    # The rendered text runs from a directory without the library (as on the node) and gives the same answer.
    alone = tmp_path / "alone" / script.name
    alone.parent.mkdir()
    alone.write_text(script_text(Script(name=script.name, file=str(script.relative_to(REPO)))))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    repository = run_script(script, fixture, tmp_path / "a", gpus=gpus)
    rendered = run_script(alone, fixture, tmp_path / "b", gpus=gpus)
    assert repository.returncode == code, repository.stderr
    assert (rendered.returncode, rendered.stdout, rendered.stderr) == (
        repository.returncode,
        repository.stdout,
        repository.stderr,
    )


def _project(tmp_path: Path) -> Path:
    """A copy of the repository's scripts/ under tmp_path (the project root of these tests)."""
    shutil.copytree(REPO / "scripts", tmp_path / "scripts")
    return tmp_path


def test_an_include_outside_the_project_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    (tmp_path / "outside.sh").write_text("#!/bin/bash\necho outside\n")
    script = root / "scripts/x.sh"
    script.write_text("#!/bin/bash\n# --- include ../../outside.sh ---\n. ../../outside.sh\n# --- end include ---\n")
    with pytest.raises(IncludeError, match=r"^includes \.\./\.\./outside\.sh, which is outside the project$"):
        inline_includes(script.read_text(), script, root)


def test_an_include_without_its_end_line_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    script = root / "scripts/slurm/prolog/x.sh"
    script.write_text("#!/bin/bash\n# --- include ../lib/gpu-common.sh ---\n. ../lib/gpu-common.sh\n")
    with pytest.raises(
        IncludeError, match=re.escape("line 2: the include of ../lib/gpu-common.sh has no '# --- end include ---' line")
    ):
        inline_includes(script.read_text(), script, root)


def test_an_included_file_may_not_include_another(tmp_path: Path) -> None:
    root = _project(tmp_path)
    library = root / LIBRARY
    library.write_text(library.read_text() + "# --- include other.sh ---\n# --- end include ---\n")
    with pytest.raises(IncludeError, match=re.escape("includes scripts/slurm/lib/gpu-common.sh, which includes another file")):
        inline_includes(PROLOG.read_text(), root / "scripts/slurm/prolog/10-gpu-check.sh", root)


def test_the_library_s_text_replaces_the_block_once(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / LIBRARY).write_text("#!/bin/bash\nshared() { :; }\n\n")
    text = inline_includes(PROLOG.read_text(), root / "scripts/slurm/prolog/10-gpu-check.sh", root)
    block = f"# --- included from {LIBRARY} ---\nshared() {{ :; }}\n# --- end included ---\n"
    assert text.count(block) == 1 and SOURCE_LINE not in text
    assert text.replace(block, "") == PROLOG.read_text().replace(
        "# --- include ../lib/gpu-common.sh ---\n# shellcheck source=SCRIPTDIR/../lib/gpu-common.sh\n"
        f"{SOURCE_LINE}\n# --- end include ---\n",
        "",
    )


def test_a_missing_library_is_refused_naming_the_config_key(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / LIBRARY).unlink()
    config = load_config(raw_config(config_values("prod")))
    problems = missing_files(config, root)
    assert problems == [
        "hpcforge:slurm.prolog[2].file: scripts/slurm/prolog/10-gpu-check.sh: includes ../lib/gpu-common.sh, "
        "which does not exist",
        "hpcforge:slurm.epilog[1].file: scripts/slurm/epilog/10-gpu-check.sh: includes ../lib/gpu-common.sh, "
        "which does not exist",
    ]
    shutil.copy(REPO / LIBRARY, root / LIBRARY)
    assert missing_files(config, root) == []


def test_an_include_of_a_directory_is_refused_as_a_directory(tmp_path: Path) -> None:
    root = _project(tmp_path)
    script = root / "scripts/slurm/prolog/10-gpu-check.sh"
    script.write_text("#!/bin/bash\n# --- include ../lib ---\n. ../lib\n# --- end include ---\n")
    with pytest.raises(IncludeError, match=r"^includes \.\./lib, which is a directory, not a file$"):
        inline_includes(script.read_text(), script, root)
