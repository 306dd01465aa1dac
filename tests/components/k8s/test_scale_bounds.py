"""Bounds that must hold at any site size: chunked objects under the API server's limit, fast paths
that write the same bytes as the general ones."""

from __future__ import annotations

import json
import random
import string

import pytest

from components.k8s.chunks import MAP_PAYLOAD_LIMIT, OBJECT_LIMIT, PLAIN_LIMIT, encoded_entry_size, plan_parts
from components.layers.directory import ldif
from components.layers.directory.config import PosixUser


def _payload(data: dict[str, str], binary: dict[str, str]) -> int:
    return sum(encoded_entry_size(k, v) for k, v in {**data, **binary}.items())


def _incompressible(size: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choices(string.ascii_letters + string.digits, k=size))


CASES = {
    "small plain": {"a.json": "x" * 1000},
    # 400 KB raw but ~800 KB as JSON (every newline and quote is escaped): must not stay plain.
    "escape-heavy text": {"zone.hosts": '"\n' * 200_000},
    "incompressible 5 MB": {"hosts.json": _incompressible(5_000_000, 1)},
    "many files": {f"f{i:03d}.txt": _incompressible(40_000, i) for i in range(60)},
    "one huge and one small": {"big": _incompressible(3_000_000, 2), "small": "y"},
}


@pytest.mark.parametrize("files", list(CASES.values()), ids=list(CASES))
def test_every_map_payload_is_bounded_by_its_encoded_size(files: dict[str, str]) -> None:
    data_maps, binary_maps, _ = plan_parts(files)
    for data, binary in zip(data_maps, binary_maps, strict=True):
        assert _payload(data, binary) <= MAP_PAYLOAD_LIMIT
        if data:
            assert _payload(data, binary) <= PLAIN_LIMIT


_ROOM = PLAIN_LIMIT - encoded_entry_size("a", "")
"""Encoded bytes left for the value of a single file named `a`."""


@pytest.mark.parametrize(
    ("files", "plain"),
    [
        ({"a": "x" * _ROOM}, True),
        ({"a": "x" * (_ROOM + 1)}, False),
        ({"a": "é" * (_ROOM // 2)}, True),  # two UTF-8 bytes a character
        ({"a": "é" * (_ROOM // 2 + 1)}, False),
        ({"a": "\n" * (_ROOM // 2 + 1)}, False),  # fewer characters than the limit, escaped twice as many bytes
        ({"a": "x" * (_ROOM - 5), "b": "y"}, False),  # the second entry (8 bytes with its quotes) does not fit
        ({"a": "x" * PLAIN_LIMIT}, False),
    ],
    ids=["at the limit", "one over", "utf-8 at the limit", "utf-8 over", "escapes over", "two files over", "characters over"],
)
def test_files_stay_plain_exactly_when_their_encoded_size_fits(files: dict[str, str], plain: bool) -> None:
    assert (sum(encoded_entry_size(name, text) for name, text in files.items()) <= PLAIN_LIMIT) == plain
    data_maps, binary_maps, _ = plan_parts(files)
    assert (data_maps == [files] and binary_maps == [{}]) == plain


def test_the_payload_limit_leaves_room_for_any_metadata_under_the_object_limit() -> None:
    # The metadata hpcforge writes (name, namespace, labels, the inventory digest) is a few hundred
    # bytes; a third of the object limit is left for it.
    assert OBJECT_LIMIT - MAP_PAYLOAD_LIMIT > OBJECT_LIMIT // 3


def test_encoded_size_counts_escapes_and_utf8() -> None:
    assert encoded_entry_size("k", 'a"\n') == len(json.dumps({"k": 'a"\n'}, separators=(",", ":"))) - 2 + 1
    assert encoded_entry_size("k", "é") == len('"k":"é",'.encode())


@pytest.mark.parametrize(
    "fields",
    [
        {"name": "a", "uidNumber": 1000, "primaryGroup": "g"},
        {"name": "b", "uidNumber": 1001, "primaryGroup": "g", "fullName": "Bob B Builder", "mail": "b@example.org"},
        {"name": "c", "uidNumber": 1002, "primaryGroup": "g", "fullName": "Zoë Ünicode"},
        {"name": "d", "uidNumber": 1003, "primaryGroup": "g", "fullName": ":colon first"},
        {"name": "e", "uidNumber": 1004, "primaryGroup": "g", "fullName": "Single", "loginShell": "/bin/zsh"},
        {"name": "g", "uidNumber": 1006, "primaryGroup": "g", "fullName": "Trailing Space ", "mail": "<g@example.org>"},
        {
            "name": "f",
            "uidNumber": 1005,
            "primaryGroup": "g",
            "sshPublicKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGNpVwk5GtlYoRcwALqBEhl3uNHSUNDTgkF37upXaE/4 f@hpc"],
        },
    ],
    ids=["minimal", "full", "non-ascii name", "leading colon", "single word", "trailing space", "ssh key"],
)
def test_user_entry_fast_path_writes_the_general_paths_bytes(fields: dict[str, object]) -> None:
    user = PosixUser.model_validate(fields)
    people = "ou=People,dc=hpc,dc=example,dc=org"
    general = ldif._entry(f"uid={user.name},{people}", ldif._user_attributes(user, 5000))
    assert ldif._user_entry(people, user, 5000) == general


def test_grendel_host_fast_path_writes_what_json_dumps_writes() -> None:
    import json as json_module

    from components.ground.hosts import Host
    from components.layers.provisioning import grendel
    from components.site.loader import load_config
    from tests.helpers import config_values, raw_config

    prod = load_config(raw_config(config_values("prod")))
    assert prod.provisioning is not None
    hosts = [
        *prod.provisioning.hosts,
        Host.model_validate(
            {
                "name": "odd",
                "mac": "02:00:00:00:00:09",
                "ip": "10.20.0.9",
                "vlan": 12,
                "mtu": 9000,
                # the interface name is validated (Linux's rules); free-form tags still reach the JSON encoder
                "ifname": "bond0.20",
                "tags": ["ünï", 'q"uote'],
                "provision": False,
            }
        ),
    ]
    for host in hosts:
        general = json_module.dumps(
            grendel.host_record(host, prod.provisioning, "hpc.example.org", "img", 22), separators=(",", ":")
        )
        assert grendel._host_json(host, "hpc.example.org", "img", 22) == general
