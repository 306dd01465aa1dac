"""The desired state of slurmdbd (accounts, associations, QOS, coordinators) as JSON, for sacct_sync.py.

Pure: `desired_state` turns the typed config into the document that `scripts/slurm/sacct_sync.py`
reconciles slurmdbd towards; every default (descriptions, organizations, unset limits) is made explicit
here so the script compares like with like. JSON carries no structure the values could change.
"""

from __future__ import annotations

import json
from typing import Any

from ..directory.config import DirectoryConfig
from .accounts import DEFAULT_QOS, RESERVED_USERS, ROOT_ACCOUNT, SlurmAccountsConfig, resolve_associations

FORMAT_VERSION = 1


def desired_state(cluster: str, accounts: SlurmAccountsConfig, directory: DirectoryConfig) -> dict[str, Any]:
    """The document sacct_sync.py reads (`--desired FILE`)."""
    qos = [
        {
            "name": q.name,
            "description": (q.description or q.name).lower(),
            "priority": q.priority,
            "max_tres_per_user": dict(sorted(q.max_tres_per_user.items())),
            "max_tres_per_job": dict(sorted(q.max_tres_per_job.items())),
            "grp_tres": dict(sorted(q.grp_tres.items())),
            "max_wall": q.max_wall,
            "max_jobs_per_user": q.max_jobs_per_user,
            "max_submit_jobs_per_user": q.max_submit_jobs_per_user,
            "grp_jobs": q.grp_jobs,
            "preempt": sorted(q.preempt),
            "preempt_mode": q.preempt_mode,
        }
        for q in accounts.qos
    ]
    account_list = [
        {
            "name": a.name,
            "parent": a.parent,
            "description": (a.description or a.name).lower(),
            "organization": (a.organization or a.parent).lower(),
            "fairshare": a.fairshare,
            "qos": sorted(a.qos),
            "default_qos": a.default_qos,
            "coordinators": sorted(a.coordinators),
        }
        for a in accounts.accounts
    ]
    users = [{"name": name, **entry} for name, entry in sorted(resolve_associations(accounts, directory).items())]
    return {
        "version": FORMAT_VERSION,
        "cluster": cluster,
        "prune": accounts.prune,
        "root_account": ROOT_ACCOUNT,
        "default_qos": DEFAULT_QOS,
        "reserved_users": sorted(RESERVED_USERS),
        "qos": qos,
        "accounts": account_list,
        "users": users,
    }


def render_desired_state(cluster: str, accounts: SlurmAccountsConfig, directory: DirectoryConfig) -> str:
    return json.dumps(desired_state(cluster, accounts, directory), sort_keys=True, separators=(",", ":")) + "\n"


__all__ = ["FORMAT_VERSION", "desired_state", "render_desired_state"]
