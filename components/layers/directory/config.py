"""Identity (389ds LDAP directory) and accounting database (MariaDB) configuration."""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from functools import cached_property
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator, model_validator

from ...ground.base import ProblemCollector, StrictModel, first_by_name
from ...ground.inventory_ref import InventoryRef
from ..storage.config import Storage

_POSIX_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_SSH_KEY_TYPES = (
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)
_DN_COMPONENT = re.compile(r"^(dc|o|ou)=[A-Za-z0-9-]+$")

# uid/gid numbers below this belong to the operating system images (root, daemons, slurm, munge).
MIN_ID_NUMBER = 1000
MAX_ID_NUMBER = 2**31 - 1


def validate_ssh_public_key(value: str) -> str:
    """Accept an OpenSSH public key line; refuse anything that is not `<type> <base64 blob> [comment]`."""
    parts = value.strip().split()
    if len(parts) < 2:
        raise ValueError(f"{_shorten(value)!r} is not an OpenSSH public key (expected '<type> <base64> [comment]')")
    key_type, blob = parts[0], parts[1]
    if key_type not in _SSH_KEY_TYPES:
        raise ValueError(f"{_shorten(value)!r}: unknown ssh key type {key_type!r} (known: {', '.join(_SSH_KEY_TYPES)})")
    try:
        raw = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{_shorten(value)!r}: the key body is not valid base64") from None
    # The blob starts with a length-prefixed copy of the key type; a mismatch means a corrupted paste.
    if len(raw) < 4 or raw[4 : 4 + int.from_bytes(raw[:4], "big")].decode(errors="replace") != key_type:
        raise ValueError(f"{_shorten(value)!r}: the key body does not match its type {key_type!r}")
    return value.strip()


def _shorten(value: str, limit: int = 40) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."


def _posix_name(value: str) -> str:
    if not _POSIX_NAME.match(value):
        raise ValueError(f"{value!r} is not a valid POSIX user/group name (lowercase, digits, '_', '-', max 32)")
    return value


PosixName = Annotated[str, AfterValidator(_posix_name)]


class PosixGroup(StrictModel):
    name: PosixName
    """Group name (LDAP `cn`)."""
    gid_number: int = Field(ge=MIN_ID_NUMBER, le=MAX_ID_NUMBER)
    """gidNumber, unique across groups (from 1000: lower ids belong to the OS images)."""
    description: str | None = None
    """Free text, stored as the group's LDAP `description`."""


class PosixUser(StrictModel):
    name: PosixName
    """The login name (LDAP `uid`)."""
    uid_number: int = Field(ge=MIN_ID_NUMBER, le=MAX_ID_NUMBER)
    """uidNumber, unique across users (from 1000: lower ids belong to the OS images)."""
    primary_group: str
    """Name of the user's primary group (its gidNumber becomes the user's)."""
    groups: tuple[str, ...] = ()
    """Supplementary groups."""
    full_name: str | None = None
    """Full name: LDAP `cn` (default: the login name); its first word becomes `givenName`, its last `sn`."""
    mail: str | None = None
    """E-mail address (LDAP `mail`)."""
    home_directory: str | None = None
    """Default: /home/<name>."""
    login_shell: str = "/bin/bash"
    """Login shell (an absolute path)."""
    ssh_public_keys: tuple[str, ...] = ()
    """OpenSSH public keys, stored in 389ds's `nsSshPublicKey`; sshd on the login nodes reads them through SSSD. A key
    removed here is removed from the directory."""

    @field_validator("ssh_public_keys")
    @classmethod
    def _keys(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(validate_ssh_public_key(key) for key in value)

    @field_validator("home_directory", "login_shell")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError(f"{value!r} is not an absolute path")
        return value

    @property
    def home(self) -> str:
        return self.home_directory or f"/home/{self.name}"


class DirectoryConfig(StrictModel):
    """389 Directory Server holding the site's POSIX users and groups."""

    suffix: str
    """The directory suffix, e.g. `dc=hpc,dc=example,dc=org`."""
    storage: Storage = Field(default_factory=Storage)
    """Volume of the directory's data (`/data` of the 389ds StatefulSet)."""
    expose: bool = False
    """Also publish LDAPS outside the cluster through a Traefik TCP route (port 636)."""
    inventory: InventoryRef | None = None
    """The users and groups: a YAML file with the keys `groups` and `users` (lists, each entry with the keys below
    under `groups[]` and `users[]`), e.g. `{file: inventory/prod/users.yaml}`. Users and groups are not accepted inline
    in the stack config."""
    groups: tuple[PosixGroup, ...] = ()
    """POSIX groups (`posixGroup` entries under `ou=Groups`), from `inventory.file` (the loader fills this; the stack
    config may not set it); a group removed from the file is deleted from the directory."""
    users: tuple[PosixUser, ...] = ()
    """POSIX users (`inetOrgPerson` + `posixAccount` entries under `ou=People`), from `inventory.file` (the loader fills
    this; the stack config may not set it); a user removed from the file is deleted from the directory."""

    @field_validator("suffix")
    @classmethod
    def _suffix(cls, value: str) -> str:
        parts = [part.strip() for part in value.split(",")]
        if not parts or not all(_DN_COMPONENT.match(part) for part in parts):
            raise ValueError(f"{value!r} is not a directory suffix such as 'dc=hpc,dc=example,dc=org'")
        return ",".join(parts)

    def group(self, name: str) -> PosixGroup | None:
        return self._groups_by_name.get(name)

    @cached_property
    def _groups_by_name(self) -> dict[str, PosixGroup]:
        """The first group of each name (what a scan of `groups` finds), so that lookups cost one step each."""
        return first_by_name(self.groups)

    def _check_users(self, problems: ProblemCollector, group_names: set[str]) -> dict[str, PosixUser]:
        """Users one by one: duplicate names and uidNumbers, unknown groups. Returns the first user of each name."""
        seen_uids: dict[int, str] = {}
        seen_names: dict[str, PosixUser] = {}
        known = ", ".join(sorted(group_names)) or "none"
        for index, user in enumerate(self.users):
            if user.name in seen_names:
                problems.add(["users", index, "name"], f"duplicate user name {user.name!r}")
            seen_names.setdefault(user.name, user)
            if user.uid_number in seen_uids:
                problems.add(
                    ["users", index, "uidNumber"],
                    f"uidNumber {user.uid_number} of user {user.name!r} is already used by user {seen_uids[user.uid_number]!r}",
                )
            seen_uids.setdefault(user.uid_number, user.name)
            if user.primary_group not in group_names:
                problems.add(
                    ["users", index, "primaryGroup"], f"user {user.name!r}: unknown group {user.primary_group!r} (known: {known})"
                )
            for group_index, group_name in enumerate(user.groups):
                if group_name not in group_names:
                    problems.add(
                        ["users", index, "groups", group_index],
                        f"user {user.name!r}: unknown group {group_name!r} (known: {known})",
                    )
        return seen_names

    @model_validator(mode="after")
    def _cross_checks(self) -> DirectoryConfig:
        problems = ProblemCollector()
        group_names = {group.name for group in self.groups}
        first_group: dict[str, PosixGroup] = {}
        for index, group in enumerate(self.groups):
            if first_group.setdefault(group.name, group) is not group:
                problems.add(["groups", index, "name"], f"duplicate group name {group.name!r}")
        seen_gids: dict[int, str] = {}
        for index, group in enumerate(self.groups):
            if group.gid_number in seen_gids and seen_gids[group.gid_number] != group.name:
                problems.add(
                    ["groups", index, "gidNumber"],
                    f"gidNumber {group.gid_number} of group {group.name!r} is already used by group {seen_gids[group.gid_number]!r}",
                )
            seen_gids.setdefault(group.gid_number, group.name)
        users = self.users
        names = [user.name for user in users]
        used_groups = {user.primary_group for user in users}
        used_groups.update(itertools.chain.from_iterable(user.groups for user in users))
        if (
            len(set(names)) == len(users)
            and len({user.uid_number for user in users}) == len(users)
            and used_groups <= group_names
        ):
            # Nothing the loop of _check_users would report (100,000 users: sets in C, no dictionary per user).
            seen_names = dict(zip(names, users, strict=True))
        else:
            seen_names = self._check_users(problems, group_names)
        for name in group_names & seen_names.keys():
            # A user and a group of the same name is legal LDAP but confuses `id` output; keep it legal
            # only for user-private groups, where the gid equals the uid.
            same_name_group = first_group.get(name)
            user = seen_names[name]
            if same_name_group is not None and same_name_group.gid_number != user.uid_number and user.primary_group != name:
                problems.add(["groups"], f"group {name!r} has the name of a user but is not that user's private group")
        problems.raise_if_any()
        return self


__all__ = [
    "DirectoryConfig",
    "PosixGroup",
    "PosixUser",
    "validate_ssh_public_key",
]
