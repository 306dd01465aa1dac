"""benchmarks/linearity.py at small sizes (not timed): every section's grown site is accepted at both sizes, and the
table has a row per section."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import linearity


@pytest.mark.parametrize("section", linearity.SECTIONS, ids=lambda section: section.label)
def test_each_grown_site_is_accepted_and_holds_the_entries_asked_for(section: linearity.Section, tmp_path: Path) -> None:
    small, large = linearity.site_config(section, 2), linearity.site_config(section, 20)
    assert small != large
    for config in (small, large):
        seconds, refused = linearity.time_load(config, tmp_path, 1)
        assert refused is None, refused
        assert seconds > 0


def test_the_table_has_a_verdict_per_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert linearity.main(["--scale", "0.002", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.split()[:1] and line.split()[0] in {s.label for s in linearity.SECTIONS}]
    assert [row.split()[0] for row in rows] == [s.label for s in linearity.SECTIONS]
    assert "REFUSED" not in out
