"""Slurm accounting as code: the account tree, users' associations, QOS, fairshare and coordinators.

`slurm.accounts` describes what slurmdbd must hold; the Slurm layer renders it as JSON
(`components/layers/slurm/sacct.py`) and a Job reconciles slurmdbd with `sacctmgr`
(`scripts/slurm/sacct_sync.py`). Users are the directory's (`hpcforge:directory.users`): every user
named here must exist there. Slurm lowercases account, user and QOS names, so they are lowercase here.
"""

from __future__ import annotations

import re
import weakref
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from ...ground.base import ProblemCollector, StrictModel, as_written, duplicates, first_by_name

if TYPE_CHECKING:
    from ..directory.config import DirectoryConfig

#: The association tree's root account and the QOS that slurmdbd creates itself.
ROOT_ACCOUNT = "root"
DEFAULT_QOS = "normal"
#: Users the reconciler never touches (slurmdbd's own administrator).
RESERVED_USERS = frozenset({"root"})

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_TRES = re.compile(r"^(cpu|mem|node|energy|billing|fs/disk|vmem|pages|license/[a-z0-9_-]+|gres/[a-z0-9_]+(:[a-z0-9_]+)?)$")
_TRES_COUNT = re.compile(r"^[0-9]+$")
#: Largest limit taken here: Slurm keeps job counts in 32 bits and reserves the top values for INFINITE/NO_VAL.
MAX_LIMIT = 2**31 - 1
_TRES_MEM = re.compile(r"^[0-9]+[KMGT]?$")
# Slurm's time_str2mins forms (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS).
_TIME = re.compile(
    r"^([0-9]+|[0-9]+:[0-9]{2}|[0-9]+:[0-9]{2}:[0-9]{2}|[0-9]+-[0-9]+|[0-9]+-[0-9]+:[0-9]{2}|[0-9]+-[0-9]+:[0-9]{2}:[0-9]{2})$"
)


def known_names(names: set[str] | list[str]) -> str:
    """A readable "known: ..." list: the first ten names, then how many there are."""
    ordered = sorted(names)
    if not ordered:
        return "none"
    return ", ".join(ordered[:10]) + (f", ... ({len(ordered)} in all)" if len(ordered) > 10 else "")


def _name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(
            f"{value!r} is not a Slurm accounting name (lowercase letters, digits, '_' and '-', starting with a letter, "
            "at most 40 characters; sacctmgr lowercases names)"
        )
    return value


AcctName = Annotated[str, AfterValidator(_name)]


def _tres(value: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, raw in value.items():
        if not _TRES.match(key):
            raise ValueError(f"{key!r} is not a TRES name (cpu, mem, node, billing, gres/<name>[:<type>], license/<name>)")
        if isinstance(raw, bool):
            raise ValueError(f"{key}: {as_written(raw)} is not a count")
        text = str(raw)
        pattern = _TRES_MEM if key == "mem" else _TRES_COUNT
        if not pattern.match(text):
            raise ValueError(f"{key}: {as_written(raw)} is not a {'memory size (e.g. 512G)' if key == 'mem' else 'whole count'}")
        if int(text.rstrip("KMGT")) > MAX_LIMIT:
            raise ValueError(f"{key}: {as_written(raw)} is out of range (at most {MAX_LIMIT})")
        out[key] = text
    return out


TresLimits = Annotated[dict[str, Any], AfterValidator(_tres)]


def _time(value: Any) -> str:
    text = str(value)
    if not _TIME.match(text):
        raise ValueError(f"{value!r} is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)")
    return text


AcctTime = Annotated[str, AfterValidator(_time)]


def _description(value: str | None) -> str | None:
    # sacctmgr stores descriptions lowercased and splits its own arguments on '=' and quotes.
    if value is not None and not re.fullmatch(r"[A-Za-z0-9 ._,:()/-]{1,100}", value):
        raise ValueError(f"{value!r}: use letters, digits, spaces and . _ , : ( ) / - (at most 100 characters)")
    return value


Text = Annotated[str | None, AfterValidator(_description)]


class QosConfig(StrictModel):
    """A Slurm QOS (`sacctmgr add qos`)."""

    name: AcctName
    """QOS name (partitions' `qos` and accounts' `qos` refer to it)."""
    description: Text = None
    """`Description` (default: the name)."""
    priority: int = Field(default=0, ge=0, le=2**31 - 1)
    """`Priority`: added to a job's priority through `PriorityWeightQOS`."""
    max_tres_per_user: TresLimits = Field(default_factory=dict)
    """`MaxTRESPerUser`, e.g. `{cpu: 256, gres/gpu: 16}`; jobs over it wait with reason `QOSMax*PerUserLimit`."""
    max_tres_per_job: TresLimits = Field(default_factory=dict)
    """`MaxTRESPerJob`, e.g. `{gres/gpu: 8}`."""
    grp_tres: TresLimits = Field(default_factory=dict)
    """`GrpTRES`: what all running jobs of the QOS together may use."""
    max_wall: AcctTime | None = None
    """`MaxWall` of a job in this QOS (null: no limit)."""
    max_jobs_per_user: int | None = Field(default=None, ge=0, le=MAX_LIMIT)
    """`MaxJobsPerUser`: running jobs per user (null: no limit)."""
    max_submit_jobs_per_user: int | None = Field(default=None, ge=0, le=MAX_LIMIT)
    """`MaxSubmitJobsPerUser`: queued and running jobs per user (null: no limit)."""
    grp_jobs: int | None = Field(default=None, ge=0, le=MAX_LIMIT)
    """`GrpJobs`: running jobs of the QOS together (null: no limit)."""
    preempt: tuple[AcctName, ...] = ()
    """`Preempt`: QOS whose jobs this QOS's jobs may preempt (needs `PreemptType=preempt/qos` in slurm.conf)."""
    preempt_mode: Literal["cluster", "cancel", "requeue", "suspend", "off"] = "cluster"
    """`PreemptMode` of jobs in this QOS when they are preempted (`cluster`: slurm.conf's)."""


class AccountConfig(StrictModel):
    """A Slurm account: a node of the association tree."""

    name: AcctName
    """Account name (`sacctmgr add account`)."""
    parent: AcctName = ROOT_ACCOUNT
    """Parent account (`root`, or another account here)."""
    description: Text = None
    """`Description` (default: the name)."""
    organization: Text = None
    """`Organization` (default: the parent's name)."""
    fairshare: int = Field(default=1, ge=1, le=2**31 - 1)
    """`Fairshare`: the account's shares among its siblings."""
    qos: tuple[AcctName, ...] = ()
    """QOS the account's jobs may use (empty: inherit the parent's; slurmdbd's default is `normal`)."""
    default_qos: AcctName | None = None
    """`DefaultQOS` of the account's jobs (must be one of `qos`)."""
    groups: tuple[str, ...] = ()
    """Directory groups whose members (primary or supplementary) get an association in this account."""
    coordinators: tuple[str, ...] = ()
    """Directory users who coordinate the account (may manage its users and jobs with sacctmgr/scontrol)."""


class UserAssociations(StrictModel):
    """One directory user's associations, beyond those its groups give."""

    name: str
    """The directory user (`hpcforge:directory.users[].name`)."""
    default_account: AcctName
    """`DefaultAccount`: the account of jobs submitted without `-A`."""
    accounts: tuple[AcctName, ...] = ()
    """Further accounts the user may charge (`sbatch -A`)."""
    fairshare: int = Field(default=1, ge=1, le=2**31 - 1)
    """`Fairshare` of each of the user's associations."""
    admin_level: Literal["None", "Operator", "Administrator"] = "None"
    """`AdminLevel` in slurmdbd."""


class SlurmAccountsConfig(StrictModel):
    """Slurm accounting as code: what slurmdbd must hold (reconciled by a Job running `sacctmgr`)."""

    qos: tuple[QosConfig, ...] = ()
    """QOS beyond slurmdbd's own `normal` (which may be listed to set its limits)."""
    accounts: tuple[AccountConfig, ...] = ()
    """The account tree under `root` (parents are listed before or after their children, any order)."""
    users: tuple[UserAssociations, ...] = ()
    """Users' default account and further accounts."""
    default_account: AcctName | None = None
    """Account of every directory user that neither `users` nor an account's `groups` gives one (null: such users
    get no association and cannot submit jobs)."""
    prune: bool = True
    """Remove accounts, users, associations and QOS that are not declared here (never one with active jobs, never
    `root`/`normal`)."""

    @field_validator("accounts")
    @classmethod
    def _no_root(cls, value: tuple[AccountConfig, ...]) -> tuple[AccountConfig, ...]:
        for account in value:
            if account.name == ROOT_ACCOUNT:
                raise ValueError("'root' is slurmdbd's own root account: do not declare it")
        return value

    def qos_names(self) -> set[str]:
        return {DEFAULT_QOS} | {q.name for q in self.qos}

    def account(self, name: str) -> AccountConfig | None:
        return self._accounts_by_name.get(name)

    @cached_property
    def _accounts_by_name(self) -> dict[str, AccountConfig]:
        """The first account of each name (what a scan finds), so that a lookup costs one step, not one per account."""
        return first_by_name(self.accounts)

    @model_validator(mode="after")
    def _cross_checks(self) -> SlurmAccountsConfig:  # noqa: PLR0912 (one branch per cross-reference checked, each with its own message)
        problems = ProblemCollector()
        qos_names = self.qos_names()
        known_qos = known_names(qos_names)
        for name in duplicates(q.name for q in self.qos):
            problems.add(["qos"], f"duplicate QOS {name!r}")
        for index, qos in enumerate(self.qos):
            for p_index, other in enumerate(qos.preempt):
                if other not in qos_names:
                    problems.add(
                        ["qos", index, "preempt", p_index], f"QOS {qos.name!r}: unknown QOS {other!r} (known: {known_qos})"
                    )
                elif other == qos.name:
                    problems.add(["qos", index, "preempt", p_index], f"QOS {qos.name!r} cannot preempt itself")
        accounts = {a.name for a in self.accounts}
        known_accounts = known_names(accounts | {ROOT_ACCOUNT})
        for name in duplicates(a.name for a in self.accounts):
            problems.add(["accounts"], f"duplicate account {name!r}")
        for index, account in enumerate(self.accounts):
            if account.parent != ROOT_ACCOUNT and account.parent not in accounts:
                problems.add(
                    ["accounts", index, "parent"],
                    f"account {account.name!r}: unknown parent {account.parent!r} (known: {known_accounts})",
                )
            for q_index, qos_name in enumerate(account.qos):
                if qos_name not in qos_names:
                    problems.add(
                        ["accounts", index, "qos", q_index],
                        f"account {account.name!r}: unknown QOS {qos_name!r} (known: {known_qos})",
                    )
            if account.default_qos is not None and account.default_qos not in (account.qos or qos_names):
                problems.add(
                    ["accounts", index, "defaultQos"],
                    f"account {account.name!r}: default QOS {account.default_qos!r} is not one of its QOS",
                )
        # A parent cycle would make the tree unbuildable (sacctmgr refuses to move an account below itself).
        parents = {a.name: a.parent for a in self.accounts}
        for index, account in enumerate(self.accounts):
            seen = {account.name}
            current = account.parent
            while current in parents:
                if current in seen:
                    problems.add(
                        ["accounts", index, "parent"], f"account {account.name!r}: the parent chain loops through {current!r}"
                    )
                    break
                seen.add(current)
                current = parents[current]
        for name in duplicates(u.name for u in self.users):
            problems.add(["users"], f"duplicate user {name!r}")
        for index, user in enumerate(self.users):
            for key, name in [("defaultAccount", user.default_account), *(("accounts", a) for a in user.accounts)]:
                if name not in accounts:
                    problems.add(["users", index, key], f"user {user.name!r}: unknown account {name!r} (known: {known_accounts})")
        if self.default_account is not None and self.default_account not in accounts:
            problems.add(["defaultAccount"], f"unknown account {self.default_account!r} (known: {known_accounts})")
        problems.raise_if_any()
        return self


_RESOLVED: dict[int, tuple[weakref.ref[Any], weakref.ref[Any], dict[str, dict[str, Any]]]] = {}
"""The last `resolve_associations` result per accounts model (by identity, while both models live): the
config's cross-layer check and the sacct renderer both need it for the same two frozen models."""


def resolve_associations(accounts: SlurmAccountsConfig, directory: DirectoryConfig) -> dict[str, dict[str, Any]]:
    """User -> {default_account, accounts (sorted), fairshare, admin_level}, from `users`, accounts' `groups` and
    `default_account`, for the directory's users (pure; the order of accounts in the config breaks ties).

    The result is shared between calls with the same two (frozen) models: do not modify it."""
    cached = _RESOLVED.get(id(accounts))
    if cached is not None and cached[0]() is accounts and cached[1]() is directory:
        return cached[2]
    result = _resolve_associations(accounts, directory)
    key = id(accounts)
    _RESOLVED[key] = (weakref.ref(accounts), weakref.ref(directory), result)
    weakref.finalize(accounts, _RESOLVED.pop, key, None)
    return result


def _resolve_associations(accounts: SlurmAccountsConfig, directory: DirectoryConfig) -> dict[str, dict[str, Any]]:
    explicit = {u.name: u for u in accounts.users}
    # group -> indexes of the accounts that name it: one pass over the users, not users x accounts
    by_group_index: dict[str, list[int]] = {}
    for index, account in enumerate(accounts.accounts):
        for group in account.groups:
            by_group_index.setdefault(group, []).append(index)
    result: dict[str, dict[str, Any]] = {}
    # Users share a few group combinations (100,000 users, ~1,000 projects): resolve each once.
    resolved: dict[tuple[str, tuple[str, ...]], tuple[list[str], list[str]]] = {}
    for user in directory.users:
        combination = (user.primary_group, user.groups)
        found = resolved.get(combination)
        if found is None:
            indexes = {i for group in (user.primary_group, *user.groups) for i in by_group_index.get(group, ())}
            names = [accounts.accounts[i].name for i in sorted(indexes)]
            found = resolved[combination] = (names, sorted(set(names)))
        by_group, by_group_sorted = found
        entry = explicit.get(user.name)
        if entry is not None:
            default = entry.default_account
            names = sorted({default, *entry.accounts, *by_group})
        elif by_group:
            default = by_group[0]
            names = list(by_group_sorted)
        elif accounts.default_account is not None:
            default = accounts.default_account
            names = [default]
        else:
            continue
        result[user.name] = {
            "default_account": default,
            "accounts": names,
            "fairshare": entry.fairshare if entry else 1,
            "admin_level": entry.admin_level if entry else "None",
        }
    return result


__all__ = [
    "DEFAULT_QOS",
    "RESERVED_USERS",
    "ROOT_ACCOUNT",
    "AccountConfig",
    "QosConfig",
    "SlurmAccountsConfig",
    "UserAssociations",
    "resolve_associations",
]
