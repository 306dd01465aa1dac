"""One root cause reported once: the problems that a single fix repairs, folded into one message.

Cascades folded here (an unknown `provisioning.defaultImage` is reported once at that key by the
provisioning model itself):

- an unknown name referred to from many places (a renamed group that 200 users name as their
  primary group, a renamed nodeset that three partitions list, a QOS that five accounts use): the
  first reference is reported, with how many others name the same thing and where; when nothing of
  that kind is defined at all, every reference is folded, whatever name it gives;
- fixed service addresses outside the MetalLB pool they name (a mistyped pool range);
- a DHCP dynamic range that covers the fixed addresses of many hosts: reported once at the range;
- a network that none of its members is in (a mistyped provisioning subnet makes Grendel's address,
  the gateway, the DHCP range and every host "outside" it): reported once at the subnet key, with
  the count of what is outside and the network the gateway is in.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence, Set

from .base import PathPart

SHOWN_REFERENCES = 3
"""Other places that name the same unknown thing, listed before they are only counted."""

_UNKNOWN = re.compile(r"\bunknown ([a-zA-Z][a-zA-Z ]{0,30}?) '([^']*)'")
_NONE_DEFINED = re.compile(r"\(known: none( defined)?\)")
_OUTSIDE_POOL = re.compile(r"^\S+ is not inside pool '([^']*)'")


def _file_of(where: str) -> str:
    """`inventory/prod/users.yaml` of `inventory/prod/users.yaml: users[3].primaryGroup` (else empty)."""
    head, sep, _ = where.partition(": ")
    return head if sep and not head.startswith("hpcforge") else ""


def _cause(message: str, none_defined: Set[str] = frozenset()) -> tuple[str, str, str] | None:
    """(group key, what the others name, the fix) of a message that one fix may repair together with others.

    `none_defined`: kinds of which some message says none is defined; every reference to them folds together.
    """
    match = _UNKNOWN.search(message)
    if match is not None:
        kind, name = match.group(1).removeprefix("directory "), match.group(2)
        if _NONE_DEFINED.search(message) or kind in none_defined:
            # Nothing of this kind is defined at all: every reference, whatever its name, has that one cause.
            return f"none:{kind}", f"a {kind}", f"no {kind} is defined: define them (or remove the references)"
        return f"unknown:{kind}:{name}", f"{kind} '{name}'", "one fix (define it, or correct the name) repairs them all"
    match = _OUTSIDE_POOL.search(message)
    if match is not None:
        name = match.group(1)
        return f"pool:{name}", f"an address outside pool '{name}'", f"is the address range of pool '{name}' right?"
    return None


def fold_unknown_references(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(where, message) pairs with the problems one fix repairs folded into the first of them.

    - `unknown <kind> '<name>'` from several keys: `users[0].primaryGroup: user 'alice': unknown group
      'hpc-users' (known: ...)` and 199 more become one message ending `; 199 more keys name group
      'hpc-users' too (users[1].primaryGroup, ...): one fix (define it, or correct the name) repairs them all`;
    - `unknown <kind> '...' (known: none)`, whatever the names: nothing of the kind is defined;
    - `<address> is not inside pool '<name>'` from several keys: the pool's range is the likely mistake.
    """
    none_defined = {
        match.group(1).removeprefix("directory ")
        for _, message in pairs
        if _NONE_DEFINED.search(message) and (match := _UNKNOWN.search(message)) is not None
    }
    groups: dict[str, list[int]] = {}
    causes: dict[str, tuple[str, str]] = {}
    for index, (_, message) in enumerate(pairs):
        cause = _cause(message, none_defined)
        if cause is not None:
            groups.setdefault(cause[0], []).append(index)
            causes[cause[0]] = (cause[1], cause[2])
    folded: dict[int, str] = {}
    dropped: set[int] = set()
    for key, members in groups.items():
        if len(members) < 2:
            continue
        what, fix = causes[key]
        first_where, first_message = pairs[members[0]]
        file = _file_of(first_where)
        others = [pairs[index][0] for index in members[1:]]
        shown = [where.removeprefix(f"{file}: ") if file else where for where in others[:SHOWN_REFERENCES]]
        listed = ", ".join(shown) + (", ..." if len(others) > SHOWN_REFERENCES else "")
        more = f"{len(others)} more {'key names' if len(others) == 1 else 'keys name'}"
        folded[members[0]] = f"{first_message}; {more} {what} too ({listed}): {fix}"
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


def fold_into(
    problems: Problems,
    key: Sequence[PathPart],
    consequence: Callable[[tuple[PathPart, ...], str], bool],
    describe: Callable[[Problems], str],
) -> Problems:
    """Problems with those that `consequence` picks (at least two) replaced by one, at `key`, saying `describe(them)`."""
    picked = [problem for problem in problems if consequence(*problem)]
    if len(picked) < 2:
        return problems
    return [(tuple(key), describe(picked)), *(problem for problem in problems if not consequence(*problem))]


def dhcp_range_message(span: str, picked: Problems) -> str:
    """The message of a DHCP dynamic range that covers the addresses of inventory hosts."""
    hosts = [path for path, _ in picked]
    shown = ", ".join(f"{path[0]}[{path[1]}]" for path in hosts[:SHOWN_REFERENCES])
    more = ", ..." if len(hosts) > SHOWN_REFERENCES else ""
    return (
        f"{span} covers the fixed addresses of {len(hosts)} inventory hosts ({shown}{more}); DHCP could hand them to "
        "other machines: shrink the range, or move the hosts out of it"
    )


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
