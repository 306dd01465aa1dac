"""Directory renderer (pure): the bootstrap LDIF of the site's 389ds directory.

The LDIF holds the suffix, `ou=People`, `ou=Groups`, `ou=Services`, the POSIX groups and users
(RFC 2307: posixGroup with memberUid, inetOrgPerson + posixAccount; SSH keys in 389ds's own
`nsSshPublicKey` of the `nsAccount` class, because 389ds does not ship the OpenSSH-LPK schema), and the read-only bind account that SSSD uses. No password is in it: the bind
account's `userPassword` is the placeholder `SSSD_BIND_PASSWORD_PLACEHOLDER`, which the bootstrap
step replaces with the generated secret from its environment just before loading.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable

from .config import DirectoryConfig, PosixUser
from .face import SSH_KEY_ATTRIBUTE, groups_dn, people_dn

BIND_PASSWORD_PLACEHOLDER = "SSSD_BIND_PASSWORD_PLACEHOLDER"
SSSD_ACCOUNT = "sssd"


def services_dn(suffix: str) -> str:
    return f"ou=Services,{suffix}"


def sssd_bind_dn(suffix: str) -> str:
    return f"uid={SSSD_ACCOUNT},{services_dn(suffix)}"


def user_dn(suffix: str, name: str) -> str:
    return f"uid={name},{people_dn(suffix)}"


def group_dn(suffix: str, name: str) -> str:
    return f"cn={name},{groups_dn(suffix)}"


# RFC 2849 SAFE-STRING (restricted to printable ASCII), not ending in a space: written as is.
_SAFE_STRING = re.compile(r"(?![ :<])[^\r\n\x00\x7f-\U0010ffff]*(?<! )")


def _value(attribute: str, value: str) -> str:
    """One `attr: value` line, base64 (`attr:: ...`) when LDIF requires it (RFC 2849)."""
    if _SAFE_STRING.fullmatch(value):
        return f"{attribute}: {value}"
    return f"{attribute}:: {base64.b64encode(value.encode()).decode()}"


_UNSAFE_FIRST = ("", " ", ":", "<")


def _entry(dn: str, attributes: Iterable[tuple[str, str]]) -> str:
    lines = [_value("dn", dn)]
    append = lines.append
    for name, value in attributes:
        # Fast path (100,000 users are 1.5 million values): printable ASCII (a subset of
        # SAFE-STRING), not starting with a space, ':' or '<' and not ending in a space.
        if value.isascii() and value.isprintable() and value[:1] not in _UNSAFE_FIRST and value[-1] != " ":
            append(f"{name}: {value}")
        else:
            append(_value(name, value))
    return "\n".join(lines)


def _suffix_entry(suffix: str) -> list[tuple[str, str]]:
    first = suffix.split(",", maxsplit=1)[0]
    kind, _, value = first.partition("=")
    if kind == "dc":
        attrs = [("objectClass", "top"), ("objectClass", "domain"), ("dc", value)]
    elif kind == "o":
        attrs = [("objectClass", "top"), ("objectClass", "organization"), ("o", value)]
    else:
        attrs = [("objectClass", "top"), ("objectClass", "organizationalUnit"), ("ou", value)]
    # Only the SSSD account may read the directory; 389ds grants nothing without an ACI.
    attrs.append(
        (
            "aci",
            '(targetattr="*")(version 3.0; acl "hpcforge: sssd reads users and groups"; '
            f'allow (read, search, compare) userdn="ldap:///{sssd_bind_dn(suffix)}";)',
        )
    )
    attrs.append(
        (
            "aci",
            '(targetattr="userPassword")(version 3.0; acl "hpcforge: users change their own password"; '
            'allow (write) userdn="ldap:///self";)',
        )
    )
    return attrs


def _ou(name: str, description: str) -> list[tuple[str, str]]:
    return [("objectClass", "top"), ("objectClass", "organizationalUnit"), ("ou", name), ("description", description)]


def _surname(user: PosixUser) -> str:
    return (user.full_name or user.name).split()[-1]


def _user_attributes(user: PosixUser, gid_number: int) -> list[tuple[str, str]]:
    classes = ["top", "person", "organizationalPerson", "inetOrgPerson", "posixAccount"]
    if user.ssh_public_keys:
        classes.append("nsAccount")
    attrs = [("objectClass", c) for c in classes]
    attrs += [
        ("uid", user.name),
        ("cn", user.full_name or user.name),
        ("sn", _surname(user)),
        ("uidNumber", str(user.uid_number)),
        ("gidNumber", str(gid_number)),
        ("homeDirectory", user.home),
        ("loginShell", user.login_shell),
    ]
    if user.full_name and len(user.full_name.split()) > 1:
        attrs.append(("givenName", user.full_name.split()[0]))
    if user.mail:
        attrs.append(("mail", user.mail))
    attrs += [(SSH_KEY_ATTRIBUTE, key) for key in user.ssh_public_keys]
    return attrs


def render_directory_ldif(config: DirectoryConfig) -> str:
    """The complete bootstrap LDIF, parents before children, entries in a stable order."""
    suffix = config.suffix
    entries = [
        _entry(suffix, _suffix_entry(suffix)),
        _entry(people_dn(suffix), _ou("People", "POSIX users of the site")),
        _entry(groups_dn(suffix), _ou("Groups", "POSIX groups of the site")),
        _entry(services_dn(suffix), _ou("Services", "Service accounts (read-only binds)")),
        _entry(
            sssd_bind_dn(suffix),
            [
                ("objectClass", "top"),
                ("objectClass", "account"),
                ("objectClass", "simpleSecurityObject"),
                ("uid", SSSD_ACCOUNT),
                ("description", "Read-only bind account of SSSD on login and compute nodes"),
                ("userPassword", BIND_PASSWORD_PLACEHOLDER),
            ],
        ),
    ]
    members: dict[str, list[str]] = {group.name: [] for group in config.groups}
    for user in config.users:
        for group_name in user.groups:
            members[group_name].append(user.name)
    for group in config.groups:
        attrs = [("objectClass", "top"), ("objectClass", "posixGroup"), ("cn", group.name), ("gidNumber", str(group.gid_number))]
        if group.description:
            attrs.append(("description", group.description))
        attrs += [("memberUid", name) for name in sorted(members[group.name])]
        entries.append(_entry(group_dn(suffix, group.name), attrs))
    gids = {group.name: group.gid_number for group in config.groups}
    people = people_dn(suffix)
    people_plain = _plain_text(people)
    for user in config.users:
        entries.append(_user_entry(people, user, gids[user.primary_group], people_plain=people_plain))
    return "\n\n".join(entries) + "\n"


_PLAIN_CLASSES = "".join(
    f"objectClass: {c}\n" for c in ("top", "person", "organizationalPerson", "inetOrgPerson", "posixAccount")
)


def _plain_text(value: str) -> bool:
    return value.isascii() and value.isprintable() and value[:1] not in _UNSAFE_FIRST and value[-1] != " "


# Lines of printable ASCII, none starting with a space, ':' or '<' or ending in a space: one C-level
# match for all the values of an entry (each a subset of RFC 2849's SAFE-STRING).
_PLAIN_LINES = re.compile(r"(?:(?![ :<])[\x20-\x7e]*(?<! )\n)*")


def _user_entry(people: str, user: PosixUser, gid_number: int, *, people_plain: bool | None = None) -> str:
    """`_entry(user_dn, _user_attributes(user, gid))`, written in one piece when every value is plain text.

    Same bytes as the general path (a test compares them); 100,000 users render in about a second.
    """
    cn = user.full_name or user.name
    words = cn.split()
    given = words[0] if user.full_name and len(words) > 1 else None
    home = user.home  # a property: computed once here
    surname = words[-1] if words else cn
    values = [user.name, cn, surname, home, user.login_shell, *user.ssh_public_keys]
    if given is not None:
        values.append(given)
    if user.mail:
        values.append(user.mail)
    if people_plain is None:
        people_plain = _plain_text(people)
    if not people_plain or not _PLAIN_LINES.fullmatch("\n".join(values) + "\n"):
        return _entry(f"uid={user.name},{people}", _user_attributes(user, gid_number))
    text = f"dn: uid={user.name},{people}\n{_PLAIN_CLASSES}"
    if user.ssh_public_keys:
        text += "objectClass: nsAccount\n"
    text += (
        f"uid: {user.name}\ncn: {cn}\nsn: {surname}\nuidNumber: {user.uid_number}\ngidNumber: {gid_number}\n"
        f"homeDirectory: {home}\nloginShell: {user.login_shell}"
    )
    if given is not None:
        text += f"\ngivenName: {given}"
    if user.mail:
        text += f"\nmail: {user.mail}"
    for key in user.ssh_public_keys:
        text += f"\n{SSH_KEY_ATTRIBUTE}: {key}"
    return text
