"""DirectoryConfig's cross checks by hashing (components/layers/directory/config.py): each repeated group name is
reported at the repeat, and a group named like a user must be that user's private group; the messages name the key."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from components.ground.base import ConfigProblems
from components.layers.directory.config import DirectoryConfig


def _problems(groups: list[dict[str, Any]], users: list[dict[str, Any]]) -> list[tuple[tuple[Any, ...], str]]:
    with pytest.raises(ValidationError) as raised:
        DirectoryConfig.model_validate({"suffix": "dc=hpc,dc=test", "groups": groups, "users": users})
    [error] = raised.value.errors()
    cause = (error.get("ctx") or {}).get("error")
    assert isinstance(cause, ConfigProblems)
    return [(tuple(path), message) for path, message in cause.problems]


def test_each_repeat_of_a_group_name_is_reported_at_the_repeat() -> None:
    groups = [{"name": "a", "gidNumber": 5000}, {"name": "b", "gidNumber": 5001}, {"name": "a", "gidNumber": 5000}]
    groups.append({"name": "a", "gidNumber": 5000})
    assert _problems(groups, []) == [
        (("groups", 2, "name"), "duplicate group name 'a'"),
        (("groups", 3, "name"), "duplicate group name 'a'"),
    ]


def test_a_group_named_like_a_user_that_is_not_its_private_group_is_refused() -> None:
    groups = [{"name": "users", "gidNumber": 5000}, {"name": "ada", "gidNumber": 7000}, {"name": "bob", "gidNumber": 6001}]
    users = [
        {"name": "ada", "uidNumber": 6000, "primaryGroup": "users"},  # gid 7000 is not her uid, not her primary group
        {"name": "bob", "uidNumber": 6001, "primaryGroup": "users"},  # gid equals the uid: bob's private group
    ]
    assert _problems(groups, users) == [(("groups",), "group 'ada' has the name of a user but is not that user's private group")]


def test_the_first_group_and_user_of_a_name_decide_the_private_group() -> None:
    groups = [{"name": "ada", "gidNumber": 6000}, {"name": "ada", "gidNumber": 7000}]
    users = [{"name": "ada", "uidNumber": 6000, "primaryGroup": "ada"}, {"name": "ada", "uidNumber": 6002, "primaryGroup": "x"}]
    problems = _problems(groups, users)
    assert (("groups",), "group 'ada' has the name of a user but is not that user's private group") not in problems
    assert (("groups", 1, "name"), "duplicate group name 'ada'") in problems
