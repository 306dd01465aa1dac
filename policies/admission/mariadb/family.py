"""mariadb-operator's webhook as an admission family (family.py), and the rule mariadb-operator-admission."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.knobs import ObjectSelector, RuleConfig, selector_list_knob
from ...rules.podtemplates import kind_of, name_of, namespace_of
from ...rules.view import StackView
from ..family import Cluster, Family, Judgement, Verdict
from ..rule import Finding, StackObjects, admission_rule, has_unknown
from .kinds import REPRODUCES
from .verdicts import MariadbVerdict, mariadb_verdicts, update_verdicts


@dataclass(frozen=True)
class MariadbAdmissionConfig(RuleConfig):
    exempt: tuple[ObjectSelector, ...] = selector_list_knob(
        "exempt", "mariadb-operator objects {namespace, kind, name} (globs) not judged."
    )


def judge_mariadb(stack: StackView, found: StackObjects, config: MariadbAdmissionConfig) -> Iterator[Finding]:
    for verdict in mariadb_verdicts(found.objects):
        if verdict.admitted:
            continue
        reasons = "; ".join(f"{r.path}: {r.detail} ({r.source})" for r in verdict.refusals)
        yield Finding(
            verdict.obj,
            f"mariadb-operator's webhook refuses {kind_of(verdict.obj)} {namespace_of(verdict.obj)}/"
            f"{name_of(verdict.obj)}: {reasons}.",
            has_unknown(verdict.obj.get("spec")),
        )


MARIADB_OPERATOR_ADMISSION = admission_rule(
    "mariadb-operator-admission",
    f"Every mariadb-operator object passes the operator's validating webhook (mariadb-operator {REPRODUCES.version}'s rules).",
    MariadbAdmissionConfig,
    judge_mariadb,
    "Change the config key that sets the refused field (docs/layers/database.md and backups.md name them); the "
    "config already refuses the values known to be refused.",
)

CONFIG_KEYS = {
    (
        "MariaDB",
        "spec.storage.storageClassName",
    ): "hpcforge:database.storage.storageClass (or hpcforge:kubernetes.storageClass while it is null)",
    ("MariaDB", "spec.storage"): "hpcforge:database.storage.size (it may only grow)",
    ("Backup", "spec.storage"): "hpcforge:backups.s3 or hpcforge:backups.volume (the target and the s3 keys but the credentials)",
    ("Backup", "spec.maxRetention"): "hpcforge:backups.maxRetention",
}
"""The config keys behind the fields mariadb-operator's webhook refuses to change (tests/policies/admission/test_admission_mariadb.py)."""


def config_keys(verdicts: Sequence[Verdict]) -> list[str]:
    """The config key behind each field the webhook refuses to change, once each."""
    keys = {
        CONFIG_KEYS[(kind_of(v.obj), r.path)]
        for v in verdicts
        if isinstance(v, MariadbVerdict)
        for r in v.refusals
        if (kind_of(v.obj), r.path) in CONFIG_KEYS
    }
    return [f"Set by {key}: fixed after the first deploy (docs/layers/database.md, backups.md)." for key in sorted(keys)]


def judge(objects: Sequence[Mapping[str, Any]], cluster: Cluster) -> Judgement:
    return Judgement(mariadb_verdicts(objects, cluster.previous))


FAMILY = Family(
    name="mariadb",
    order=70,
    title="mariadb-operator webhooks",
    heading=f"mariadb-operator webhooks (per k8s.mariadb.com object, as mariadb-operator {REPRODUCES.version} judges it):",
    summary="{refused} of {total} mariadb-operator objects refused",
    judge=judge,
    rule=MARIADB_OPERATOR_ADMISSION,
    reproduces=(__name__.rpartition(".")[0],),
    updates=update_verdicts,
    advice=config_keys,
)
