"""The bulk forms of validation checks (components/ground/base.py): `overlapping_pairs` finds exactly the pairs that
comparing every span with every later one finds, in that order; `bulk_clean` clears only input in which no model's
own structure check would find anything."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from components.ground.base import PRECHECKED, bulk_clean, overlapping_pairs
from components.ground.hosts import Host
from components.layers.directory.config import PosixUser

spans = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6)).map(lambda pair: (pair[0], pair[0] + pair[1])), max_size=14)


@given(spans)
def test_overlapping_pairs_are_the_nested_loops_pairs_in_their_order(found: list[tuple[int, int]]) -> None:
    expected = [
        (i, j)
        for i in range(len(found))
        for j in range(i + 1, len(found))
        if found[i][0] <= found[j][1] and found[j][0] <= found[i][1]
    ]
    assert overlapping_pairs(found) == expected


HOST = {"name": "cn1", "mac": "0c:c4:7a:00:00:01", "ip": "10.0.0.1", "bmc": {"mac": "0c:c4:7a:00:00:02", "ip": "10.0.0.2"}}


def test_clean_hosts_are_cleared() -> None:
    assert bulk_clean(Host, [HOST, {**HOST, "name": "cn2", "provision": False}])


@pytest.mark.parametrize("char", ["\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\u2028", "\u2029", "\u0085"])
def test_a_control_character_at_any_depth_is_found(char: str) -> None:
    assert not bulk_clean(Host, [HOST, {**HOST, "tags": [f"rack{char}1"]}])
    assert not bulk_clean(Host, [{**HOST, "bmc": {**HOST["bmc"], "ip": f"10.0.0.2{char}"}}])  # type: ignore[dict-item]


@pytest.mark.parametrize("key", ["vlan", "mtu"])
def test_a_boolean_for_an_integer_field_is_found(key: str) -> None:
    assert not bulk_clean(Host, [{**HOST, key: True}])


def test_a_boolean_for_a_boolean_field_is_not_a_problem() -> None:
    assert bulk_clean(Host, [{**HOST, "provision": True}])


def test_the_model_check_names_the_field_without_the_precheck_and_skips_it_with_it() -> None:
    user = {"name": "ada", "uidNumber": 2000, "primaryGroup": "users", "fullName": "Ada\tLovelace"}
    assert not bulk_clean(PosixUser, [user])
    with pytest.raises(ValidationError, match="'Ada\\\\tLovelace' contains a tab"):
        PosixUser.model_validate(user)
    # PRECHECKED is only ever given for input bulk_clean cleared: here it shows that the model's own check is skipped.
    assert PosixUser.model_validate(user, context={PRECHECKED: True}).full_name == "Ada\tLovelace"
