"""mariadb-operator's webhook over a whole set of objects: each of its objects on create or, given the objects deployed
before, on update."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.podtemplates import display, group_of, kind_of, name_of, namespace_of
from ..family import mark
from .create import unmodelled, validate_create
from .kinds import GROUP, Refusal
from .stored import update_refusals


@dataclass(frozen=True)
class MariadbVerdict:
    obj: Mapping[str, Any]
    refusals: tuple[Refusal, ...]
    update: bool
    """Judged as an update of the same object among the previous ones (else as a create)."""
    unjudged: tuple[str, ...] = ()
    """What of the object the reproduction does not judge (`unmodelled`)."""

    @property
    def admitted(self) -> bool:
        return not self.refusals

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(str(refusal) for refusal in self.refusals)

    def lines(self) -> list[str]:
        return [
            f"  {mark(self.admitted)} {display(self.obj)} ({'update' if self.update else 'create'})",
            *(f"         {refusal}" for refusal in self.refusals),
            *(f"         not judged: {what}" for what in self.unjudged),
        ]


def object_key(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name): what the API server updates in place."""
    return (group_of(obj), kind_of(obj), namespace_of(obj), name_of(obj))


def mariadb_verdicts(
    objects: Sequence[Mapping[str, Any]],
    previous: Sequence[Mapping[str, Any]] = (),
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[MariadbVerdict]:
    """Every mariadb-operator object of `objects` as its validating webhook judges it: an update where `previous`
    (the objects deployed before) has the same object, else a create. `schemas`: the CRDs' openAPIV3Schemas by kind,
    for the API server's defaults in the stored object."""
    before = {object_key(o): o for o in previous if group_of(o) == GROUP}
    verdicts: list[MariadbVerdict] = []
    for obj in objects:
        if group_of(obj) != GROUP:
            continue
        old = before.get(object_key(obj))
        refusals = validate_create(obj) if old is None else update_refusals(old, obj, (schemas or {}).get(kind_of(obj)))
        verdicts.append(MariadbVerdict(obj, tuple(refusals), old is not None, tuple(unmodelled(obj))))
    return verdicts


def update_verdicts(old_objects: Sequence[Mapping[str, Any]], new_objects: Sequence[Mapping[str, Any]]) -> list[MariadbVerdict]:
    """The mariadb-operator objects of `new_objects` that `old_objects` already has, each judged as that UPDATE."""
    return [verdict for verdict in mariadb_verdicts(new_objects, old_objects) if verdict.update]
