"""Tier 4 (real daemons): the outcomes table behind the diff's Slurm verdicts (offline/diff/slurm_outcomes.json) is
what Slurm 26.05.3 does: every case of tests/daemons/slurm_change_cases.py runs again on real slurmctld, slurmd and
slurmdbd daemons, with a running and a pending job, applied as slurm-operator 1.2.1 applies it (in-place reconfigure,
or a recreated slurmctld pod), and what happened must equal the committed row.

Regenerate the table after a deliberate change: `python -m tests.daemons.slurm_change --write
offline/diff/slurm_outcomes.json`. Jobs run with proctrack/linuxproc (no usable freezer cgroup on these machines:
tests/daemons/slurm_change.py)."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import pytest

from offline.diff.slurm_conf import OUTCOMES
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import mariadb as mariadb_harness
from tests.daemons import slurm
from tests.daemons import slurmdbd as slurmdbd_harness
from tests.daemons.slurm_change import accounting, differences, print_table, run_cases, table
from tests.daemons.slurm_change_cases import CASES
from tests.helpers import require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(1200)]


def test_the_real_slurm_does_what_the_outcomes_table_says() -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES, *slurmdbd_harness.REQUIRED_BINARIES, *mariadb_harness.REQUIRED_BINARIES)
    started = time.monotonic()
    # not pytest's tmp_path: slurmstepd's sockets under it would pass the 108 bytes of a socket path
    with tempfile.TemporaryDirectory(prefix="slurm-change-") as name, accounting(Path(name)) as db:
        rows = run_cases(CASES, db, Path(name))
    got = table(rows, time.monotonic() - started)
    print_table(rows, sys.stdout)
    print(f"{len(rows)} changes x 2 modes in {got['seconds']} s")
    found = differences(json.loads(OUTCOMES.read_text()), got)
    assert found == [], "real Slurm 26.05.3 no longer does what offline/diff/slurm_outcomes.json says:\n" + "\n".join(found)
