"""One root cause reported once: the problems that a single fix repairs, folded into one message.

Two kinds of cascade are folded here (a third, an unknown `provisioning.defaultImage`, is reported
once at that key by the provisioning model itself):

- an unknown name referred to from many places (a renamed group that 200 users name as their
  primary group, a renamed nodeset that three partitions list, a QOS that five accounts use): the
  first reference is reported, with how many others name the same thing and where;
- a network that none of its members is in (a mistyped provisioning subnet makes Grendel's address,
  the gateway, the DHCP range and every host "outside" it): reported once at the subnet key, with
  the count of what is outside and the network they are all in, when there is one.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence

from .base import PathPart

SHOWN_REFERENCES = 3
"""Other places that name the same unknown thing, listed before they are only counted."""

_UNKNOWN = re.compile(r"\bunknown ([a-zA-Z][a-zA-Z ]{0,30}?) '([^']*)'")


def _file_of(where: str) -> str:
    """`inventory/prod/users.yaml` of `inventory/prod/users.yaml: users[3].primaryGroup` (else empty)."""
    head, sep, _ = where.partition(": ")
    return head if sep and not head.startswith("hpcforge") else ""


def fold_unknown_references(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(where, message) pairs with every `unknown <kind> '<name>'` named from several places folded into the first.

    `users[0].primaryGroup: user 'alice': unknown group 'hpc-users' (known: ...)` and 199 more
    become one message ending `; 199 more keys name group 'hpc-users' (users[1].primaryGroup, ...):
    one fix (define it, or correct the name) repairs them all`.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for index, (_, message) in enumerate(pairs):
        match = _UNKNOWN.search(message)
        if match is not None:
            groups.setdefault((match.group(1), match.group(2)), []).append(index)
    folded: dict[int, str] = {}
    dropped: set[int] = set()
    for (kind, name), members in groups.items():
        if len(members) < 2:
            continue
        first_where, first_message = pairs[members[0]]
        file = _file_of(first_where)
        others = [pairs[index][0] for index in members[1:]]
        shown = [where.removeprefix(f"{file}: ") if file else where for where in others[:SHOWN_REFERENCES]]
        listed = ", ".join(shown) + (", ..." if len(others) > SHOWN_REFERENCES else "")
        more = f"{len(others)} more {'key names' if len(others) == 1 else 'keys name'}"
        folded[members[0]] = (
            f"{first_message}; {more} {kind} '{name}' too ({listed}): one fix (define it, or correct the name) repairs them all"
        )
        dropped.update(members[1:])
    return [(where, folded.get(index, message)) for index, (where, message) in enumerate(pairs) if index not in dropped]


Problems = list[tuple[tuple[PathPart, ...], str]]


def fold_network(
    problems: Problems,
    key: Sequence[PathPart],
    network: ipaddress.IPv4Network,
    consequence: Callable[[tuple[PathPart, ...], str], bool],
    members_inside: int,
    hint: str,
    what: str,
) -> Problems:
    """Problems with every consequence of a network that holds none of its members folded into one, at `key`.

    `consequence(path, message)` says whether a problem is "X is not in / is outside this network";
    when there are at least two such problems and no member is inside the network (`members_inside`
    is 0), the network itself is the likely mistake: one message at `key` replaces them, counting
    them, with `hint` (e.g. which network the gateway is in) after it.
    """
    outside = [problem for problem in problems if consequence(*problem)]
    if members_inside or len(outside) < 2:
        return problems
    message = f"{network}: none of the {len(outside)} addresses that must be in {what} is in it ({_listed(outside)}); {hint}"
    kept = [problem for problem in problems if not consequence(*problem)]
    return [(tuple(key), message), *kept]


def _listed(problems: Problems) -> str:
    names = []
    for path, _ in problems:
        if path and path[0] == "hosts":
            continue
        names.append(".".join(str(part) for part in path))
    hosts = sum(1 for path, _ in problems if path and path[0] == "hosts")
    if hosts:
        names.append(f"{hosts} host {'address' if hosts == 1 else 'addresses'}")
    return ", ".join(names)
