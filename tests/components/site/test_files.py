"""The files a stack config names in the repository (components/site/files.py): each problem names the config key
and what is wrong with the file (a missing one: tests/test_layers.py, test_missing_script_file_is_refused)."""

from __future__ import annotations

from components.site.files import missing_files
from components.site.loader import load_config
from tests.helpers import REPO, config_values, raw_config


def test_a_directory_named_as_a_script_is_refused_as_a_directory() -> None:
    values = config_values("dev")
    values["hpcforge:slurm"]["prolog"][0]["file"] = "scripts/slurm/prolog"
    assert missing_files(load_config(raw_config(values)), REPO) == [
        "hpcforge:slurm.prolog[0].file: scripts/slurm/prolog is a directory, not a script file"
    ]
