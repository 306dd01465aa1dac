"""Cross-layer: Slurm accounts against the directory's users and groups, partitions' QOS against slurm.accounts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...ground.base import ProblemCollector
from ...layers.slurm.accounts import ROOT_ACCOUNT, known_names, resolve_associations

if TYPE_CHECKING:
    from ..model import PlatformModel


def check_accounts(config: PlatformModel, problems: ProblemCollector) -> None:  # noqa: PLR0912 (one branch per cross-reference checked, each with its own message)
    """Cross-layer checks: users and groups against the directory, partitions' QOS against `slurm.accounts.qos`,
    partitions' `allowAccounts` against `slurm.accounts.accounts`."""
    slurm = config.slurm
    accounts = slurm.accounts
    for index, partition in enumerate(slurm.partitions):
        if partition.qos is None:
            continue
        if accounts is None:
            problems.add(
                ["slurm", "partitions", index, "qos"],
                f"partition {partition.name!r}: QOS {partition.qos!r} is not declared: declare it under slurm.accounts.qos",
            )
        elif partition.qos not in accounts.qos_names():
            problems.add(
                ["slurm", "partitions", index, "qos"],
                f"partition {partition.name!r}: unknown QOS {partition.qos!r} (declared: {', '.join(sorted(accounts.qos_names()))})",
            )
    if accounts is None:
        return
    # A partition's AllowAccounts names Slurm accounts; the reconcile prunes every account not declared, so an
    # undeclared one would be an empty promise (and declared accounts left out are refused at submit with
    # EnforcePartLimits=ALL).
    declared = {a.name for a in accounts.accounts} | {ROOT_ACCOUNT}
    for index, partition in enumerate(slurm.partitions):
        for a_index, name in enumerate(partition.allow_accounts):
            if name not in declared:
                problems.add(
                    ["slurm", "partitions", index, "allowAccounts", a_index],
                    f"partition {partition.name!r}: account {name!r} is not declared in slurm.accounts.accounts"
                    f" (declared: {known_names(declared)})",
                )
    base = ["slurm", "accounts"]
    if not slurm.accounting.enabled:
        problems.add(base, "Slurm accounts need slurmdbd: set slurm.accounting.enabled to true or remove slurm.accounts")
    users = {u.name for u in config.directory.users}
    groups = {g.name for g in config.directory.groups}
    resolved = resolve_associations(accounts, config.directory)
    known_users = known_names(users)
    for index, user in enumerate(accounts.users):
        if user.name not in users:
            problems.add([*base, "users", index, "name"], f"unknown directory user {user.name!r} (known: {known_users})")
    for index, account in enumerate(accounts.accounts):
        for g_index, group in enumerate(account.groups):
            if group not in groups:
                problems.add(
                    [*base, "accounts", index, "groups", g_index],
                    f"account {account.name!r}: unknown directory group {group!r} (known: {known_names(groups)})",
                )
        for c_index, coordinator in enumerate(account.coordinators):
            if coordinator not in users:
                problems.add(
                    [*base, "accounts", index, "coordinators", c_index],
                    f"account {account.name!r}: unknown directory user {coordinator!r} (known: {known_users})",
                )
            elif coordinator not in resolved:
                # sacctmgr adds coordinators only among users it knows, i.e. users with an association
                problems.add(
                    [*base, "accounts", index, "coordinators", c_index],
                    f"account {account.name!r}: coordinator {coordinator!r} has no association (give them an account)",
                )
