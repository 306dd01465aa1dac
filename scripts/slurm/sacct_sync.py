#!/usr/bin/env python3
"""Reconcile slurmdbd's accounts, associations, QOS and coordinators with hpcforge's desired state.

Runs as the Slurm layer's accounting Job (in the Slinky login image, which has sacctmgr and squeue)
whenever the desired state (a JSON document rendered by components/layers/slurm/sacct.py) or this
script changes; the drift workflow runs it with --check. Python standard library only.

1. reads what slurmdbd holds with `sacctmgr -P -n show ...` (QOS, accounts with coordinators,
   associations, users);
2. computes a plan and prints it, one line per change (`+` create, `~` modify, `-` remove,
   `!` kept although undeclared);
3. unless --check, applies it with `sacctmgr -i`: QOS first (preemption lists once every QOS
   exists), then accounts parents first, users' associations, default accounts, coordinators; then
   removals, children first. An account, user, association or QOS that still has active jobs
   (`squeue -h -A/-u/-q`) is never removed: it is reported and kept;
4. a second run finds nothing to do and writes nothing.

Exit status: 0 converged (or, with --check, no drift); 1 drift found by --check, or a sacctmgr
write failed; 2 bad input, or slurmdbd/slurmctld could not be read (nothing was checked). The last
line of output is a JSON summary (not when reading failed).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

QOS_FIELDS = (
    "name",
    "description",
    "priority",
    "maxtrespu",
    "maxtres",
    "grptres",
    "maxwall",
    "maxjobspu",
    "maxsubmitpu",
    "grpjobs",
    "preempt",
    "preemptmode",
)
# desired key -> (sacctmgr option, kind)
QOS_OPTIONS = {
    "description": ("description", "text"),
    "priority": ("priority", "int"),
    "max_tres_per_user": ("maxtresperuser", "tres"),
    "max_tres_per_job": ("maxtresperjob", "tres"),
    "grp_tres": ("grptres", "tres"),
    "max_wall": ("maxwall", "time"),
    "max_jobs_per_user": ("maxjobsperuser", "int"),
    "max_submit_jobs_per_user": ("maxsubmitjobsperuser", "int"),
    "grp_jobs": ("grpjobs", "int"),
    "preempt_mode": ("preemptmode", "text"),
}
QOS_CURRENT = {
    "description": "description",
    "priority": "priority",
    "max_tres_per_user": "maxtrespu",
    "max_tres_per_job": "maxtres",
    "grp_tres": "grptres",
    "max_wall": "maxwall",
    "max_jobs_per_user": "maxjobspu",
    "max_submit_jobs_per_user": "maxsubmitpu",
    "grp_jobs": "grpjobs",
    "preempt_mode": "preemptmode",
}
_MEM_UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


class CommandError(RuntimeError):
    pass


# --- normalising what sacctmgr prints and what the config says ------------------------------------


def minutes(value):
    """Slurm time (time_str2mins forms, or sacctmgr's D-HH:MM:SS output) in minutes; None for unset."""
    if value in (None, "", "UNLIMITED", "INFINITE", "-1"):
        return None
    text = str(value)
    days = 0
    if "-" in text:
        day_text, text = text.split("-", 1)
        days = int(day_text)
        parts = [int(p) for p in text.split(":")]
        hours, mins, secs = [*parts, 0, 0][:3]
    else:
        parts = [int(p) for p in text.split(":")]
        if len(parts) == 1:
            hours, mins, secs = 0, parts[0], 0
        elif len(parts) == 2:
            hours, mins, secs = 0, parts[0], parts[1]
        else:
            hours, mins, secs = parts
    return days * 1440 + hours * 60 + mins + (1 if secs else 0)


def tres(value):
    """`cpu=4,gres/gpu=2,mem=100G` (or a dict) as {name: normalised count}; memory in MiB."""
    if isinstance(value, dict):
        items = [(k, str(v)) for k, v in value.items()]
    else:
        items = [tuple(part.split("=", 1)) for part in (value or "").split(",") if "=" in part]
    result = {}
    for name, raw in items:
        key = name.lower()
        if key == "mem":
            match = re.fullmatch(r"([0-9]+)([KMGT]?)", raw)
            result[key] = str(int(int(match.group(1)) * _MEM_UNITS[match.group(2) or "M"])) if match else raw
        else:
            result[key] = raw
    return result


def integer(value):
    if value in (None, ""):
        return None
    number = int(value)
    return None if number < 0 else number


def normal(kind, value):
    if kind == "time":
        return minutes(value)
    if kind == "tres":
        return tres(value)
    if kind == "int":
        return integer(value)
    return (value or "").strip().lower()


def names(value):
    return sorted({part.strip().lower() for part in (value or "").split(",") if part.strip()})


# --- talking to Slurm -----------------------------------------------------------------------------


class Slurm:
    def __init__(self, sacctmgr="sacctmgr", squeue="squeue", verbose=False):
        self.sacctmgr = sacctmgr
        self.squeue = squeue
        self.verbose = verbose
        self.writes = 0

    def _run(self, argv):
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise CommandError(f"{' '.join(argv)}: {error}") from None
        if result.returncode != 0:
            raise CommandError(f"{' '.join(argv)} exited {result.returncode}: {(result.stderr or result.stdout).strip()}")
        return result.stdout

    def show(self, entity, fields, *conditions):
        argv = [self.sacctmgr, "-P", "-n", "show", entity, *conditions, "format=" + ",".join(fields)]
        rows = []
        for line in self._run(argv).splitlines():
            if line.strip():
                values = line.split("|")
                rows.append(dict(zip(fields, [*values[: len(fields)], *[""] * (len(fields) - len(values))], strict=True)))
        return rows

    def write(self, *args):
        self.writes += 1
        output = self._run([self.sacctmgr, "-i", *args])
        if self.verbose:
            print(output.rstrip())

    def active_jobs(self, *, user=None, account=None, qos=None):
        """Job ids of jobs that are not finished (squeue lists pending, running, suspended, completing)."""
        argv = [self.squeue, "-h", "-o", "%i"]
        if user:
            argv += ["-u", user]
        if account:
            argv += ["-A", account]
        if qos:
            argv += ["-q", qos]
        return self._run(argv).split()


def read_current(slurm, cluster):
    qos = {row["name"].lower(): row for row in slurm.show("qos", QOS_FIELDS)}
    accounts = {
        row["account"].lower(): row
        for row in slurm.show("account", ("account", "description", "organization", "coordinators"), "withcoord")
    }
    assocs = slurm.show(
        "assoc", ("cluster", "account", "user", "partition", "parentname", "share", "qos", "defaultqos"), f"cluster={cluster}"
    )
    users = {row["user"].lower(): row for row in slurm.show("user", ("user", "defaultaccount", "admin"))}
    clusters = {row["cluster"].lower() for row in slurm.show("cluster", ("cluster",))}
    account_assoc = {}
    user_assoc = {}
    for row in assocs:
        if row["partition"]:
            continue
        if row["user"]:
            user_assoc.setdefault(row["user"].lower(), {})[row["account"].lower()] = row
        else:
            account_assoc[row["account"].lower()] = row
    return {
        "clusters": clusters,
        "qos": qos,
        "accounts": accounts,
        "account_assoc": account_assoc,
        "user_assoc": user_assoc,
        "users": users,
    }


# --- the plan -------------------------------------------------------------------------------------


class Plan:
    def __init__(self):
        self.steps = []  # (symbol, description, sacctmgr args or None)

    def add(self, symbol, text, args=None):
        self.steps.append((symbol, text, args))

    @property
    def changes(self):
        return [step for step in self.steps if step[2] is not None]

    @property
    def kept(self):
        return [step for step in self.steps if step[0] == "!"]


def qos_settings(desired, current=None):
    """`key=value` settings that bring `current` (a sacctmgr row, None: new) to `desired`; and what differs."""
    settings, diffs = [], []
    for key, (option, kind) in QOS_OPTIONS.items():
        want = desired.get(key)
        have = normal(kind, current.get(QOS_CURRENT[key])) if current is not None else None
        want_n = normal(kind, want)
        if kind == "tres":
            have = have or {}
            if want_n == have:
                continue
            parts = [f"{k}={v}" for k, v in sorted(want_n.items())] + [f"{k}=-1" for k in sorted(set(have) - set(want_n))]
            if parts:
                settings.append(f"{option}={','.join(parts)}")
                diffs.append(f"{option} {_fmt_tres(have)} -> {_fmt_tres(want_n)}")
            continue
        if current is None and want_n in (None, "", {}):
            continue
        if current is None and key == "preempt_mode" and want_n == "cluster":
            continue
        if want_n == have:
            continue
        if want_n is None:
            settings.append(f"{option}=-1")
        else:
            settings.append(f"{option}={want}")
        diffs.append(f"{option} {have if have not in (None, '') else 'unset'} -> {want if want is not None else 'unset'}")
    return settings, diffs


def _fmt_tres(value):
    return ",".join(f"{k}={v}" for k, v in sorted(value.items())) or "unset"


def account_order(accounts, root):
    """Accounts parents first."""
    by_name = {a["name"]: a for a in accounts}
    ordered, done = [], {root}
    while len(ordered) < len(accounts):
        progressed = False
        for account in accounts:
            if account["name"] not in done and (account["parent"] in done or account["parent"] not in by_name):
                ordered.append(account)
                done.add(account["name"])
                progressed = True
        if not progressed:
            raise ValueError("the account tree has a cycle")
    return ordered


def make_plan(desired, current, slurm):
    """The steps that bring slurmdbd (`current`, from read_current) to `desired`, in the order they must run."""
    plan = Plan()
    cluster = desired["cluster"]
    if cluster not in current["clusters"]:
        plan.add("+", f"cluster {cluster}", ["add", "cluster", cluster])
    _plan_qos(plan, desired, current)
    _plan_accounts(plan, desired, current)
    _plan_users(plan, desired, current)
    _plan_coordinators(plan, desired, current)
    if desired["prune"]:
        _plan_removals(plan, desired, current, slurm)
    return plan


def _plan_qos(plan, desired, current):
    """QOS: create or modify; preemption lists afterwards (they name other QOS)."""
    preempt_steps = []
    for qos in desired["qos"]:
        have = current["qos"].get(qos["name"])
        settings, diffs = qos_settings(qos, have)
        if have is None:
            plan.add(
                "+", f"qos {qos['name']}" + (f" ({', '.join(diffs)})" if diffs else ""), ["add", "qos", qos["name"], *settings]
            )
        elif settings:
            plan.add(
                "~", f"qos {qos['name']}: {'; '.join(diffs)}", ["modify", "qos", "where", f"name={qos['name']}", "set", *settings]
            )
        have_preempt = names(have.get("preempt")) if have else []
        if sorted(qos["preempt"]) != have_preempt:
            preempt_steps.append(
                (
                    "~",
                    f"qos {qos['name']}: preempt {','.join(have_preempt) or 'none'} -> {','.join(qos['preempt']) or 'none'}",
                    ["modify", "qos", "where", f"name={qos['name']}", "set", "preempt=" + ",".join(qos["preempt"])],
                )
            )
    for step in preempt_steps:
        plan.add(*step)


def _plan_accounts(plan, desired, current):
    """Accounts, parents first: create, or modify the association and the account's own fields."""
    cluster = desired["cluster"]
    for account in account_order(desired["accounts"], desired["root_account"]):
        name = account["name"]
        assoc = current["account_assoc"].get(name)
        info = current["accounts"].get(name)
        if assoc is None:
            args = [
                "add",
                "account",
                name,
                f"cluster={cluster}",
                f"parent={account['parent']}",
                f"description={account['description']}",
                f"organization={account['organization']}",
                f"fairshare={account['fairshare']}",
            ]
            if account["qos"]:
                args.append("qos=" + ",".join(account["qos"]))
            if account["default_qos"]:
                args.append(f"defaultqos={account['default_qos']}")
            plan.add("+", f"account {name} (parent {account['parent']}, fairshare {account['fairshare']})", args)
        else:
            settings, diffs = [], []
            if assoc["parentname"].lower() != account["parent"]:
                settings.append(f"parent={account['parent']}")
                diffs.append(f"parent {assoc['parentname']} -> {account['parent']}")
            if assoc["share"] != str(account["fairshare"]):
                settings.append(f"fairshare={account['fairshare']}")
                diffs.append(f"fairshare {assoc['share']} -> {account['fairshare']}")
            if account["qos"] and names(assoc["qos"]) != sorted(account["qos"]):
                settings.append("qos=" + ",".join(account["qos"]))
                diffs.append(f"qos {assoc['qos'] or 'none'} -> {','.join(account['qos'])}")
            if account["default_qos"] and assoc["defaultqos"].lower() != account["default_qos"]:
                settings.append(f"defaultqos={account['default_qos']}")
                diffs.append(f"defaultqos {assoc['defaultqos'] or 'none'} -> {account['default_qos']}")
            if settings:
                plan.add(
                    "~",
                    f"account {name}: {'; '.join(diffs)}",
                    ["modify", "account", "where", f"name={name}", f"cluster={cluster}", "set", *settings],
                )
        if info is not None:
            settings, diffs = [], []
            for key in ("description", "organization"):
                if info[key].strip().lower() != account[key]:
                    settings.append(f"{key}={account[key]}")
                    diffs.append(f"{key} {info[key]!r} -> {account[key]!r}")
            if settings:
                plan.add(
                    "~", f"account {name}: {'; '.join(diffs)}", ["modify", "account", "where", f"name={name}", "set", *settings]
                )


def _plan_users(plan, desired, current):
    """Users' associations, default account and admin level."""
    cluster = desired["cluster"]
    for user in desired["users"]:
        name = user["name"]
        have_assoc = current["user_assoc"].get(name, {})
        first = True
        ordered = [user["default_account"], *(a for a in user["accounts"] if a != user["default_account"])]
        for account in ordered:
            if account in have_assoc:
                if have_assoc[account]["share"] != str(user["fairshare"]):
                    plan.add(
                        "~",
                        f"user {name} in {account}: fairshare {have_assoc[account]['share']} -> {user['fairshare']}",
                        [
                            "modify",
                            "user",
                            "where",
                            f"name={name}",
                            f"account={account}",
                            f"cluster={cluster}",
                            "set",
                            f"fairshare={user['fairshare']}",
                        ],
                    )
                continue
            args = ["add", "user", name, f"account={account}", f"cluster={cluster}", f"fairshare={user['fairshare']}"]
            if first and not have_assoc:
                args.append(f"defaultaccount={user['default_account']}")
            first = False
            plan.add("+", f"user {name} in account {account}", args)
        have_user = current["users"].get(name)
        will_default = have_user["defaultaccount"].lower() if have_user else (user["default_account"] if user["accounts"] else "")
        if will_default != user["default_account"]:
            plan.add(
                "~",
                f"user {name}: default account {will_default or 'none'} -> {user['default_account']}",
                [
                    "modify",
                    "user",
                    "where",
                    f"name={name}",
                    f"cluster={cluster}",
                    "set",
                    f"defaultaccount={user['default_account']}",
                ],
            )
        have_admin = (have_user or {}).get("admin", "None") or "None"
        if have_admin.lower() != user["admin_level"].lower():
            plan.add(
                "~",
                f"user {name}: admin level {have_admin} -> {user['admin_level']}",
                ["modify", "user", "where", f"name={name}", "set", f"adminlevel={user['admin_level']}"],
            )


def _plan_coordinators(plan, desired, current):
    """Accounts' coordinators: add the missing, remove the undeclared."""
    for account in desired["accounts"]:
        info = current["accounts"].get(account["name"])
        have = set(names(info["coordinators"])) if info else set()
        want = set(account["coordinators"])
        for user in sorted(want - have):
            plan.add(
                "+",
                f"coordinator {user} of {account['name']}",
                ["add", "coordinator", f"account={account['name']}", f"names={user}"],
            )
        for user in sorted(have - want):
            plan.add(
                "-",
                f"coordinator {user} of {account['name']}",
                ["delete", "coordinator", f"account={account['name']}", f"names={user}"],
            )


def _plan_removals(plan, desired, current, slurm):
    """With prune: users' surplus associations and undeclared users, then accounts children first, then QOS; what
    has active jobs is kept (a `!` step)."""
    cluster = desired["cluster"]
    root = desired["root_account"]
    reserved = set(desired["reserved_users"])
    desired_users = {u["name"]: u for u in desired["users"]}
    declared_accounts = {a["name"] for a in desired["accounts"]} | {root}
    kept_accounts = set()
    for name in sorted(current["user_assoc"]):
        if name in reserved:
            continue
        want = set(desired_users[name]["accounts"]) if name in desired_users else set()
        surplus = sorted(set(current["user_assoc"][name]) - want)
        if not surplus:
            continue
        if not want:
            jobs = slurm.active_jobs(user=name)
            if jobs:
                plan.add("!", f"user {name}: not declared, kept while {len(jobs)} job(s) are active ({','.join(jobs[:5])})")
                kept_accounts.update(surplus)
                continue
            plan.add("-", f"user {name} (associations {', '.join(surplus)})", ["delete", "user", "where", f"name={name}"])
            continue
        for account in surplus:
            jobs = slurm.active_jobs(user=name, account=account)
            if jobs:
                plan.add("!", f"user {name} in {account}: not declared, kept while {len(jobs)} job(s) are active")
                kept_accounts.add(account)
                continue
            plan.add(
                "-",
                f"user {name} in account {account}",
                ["delete", "user", "where", f"name={name}", f"account={account}", f"cluster={cluster}"],
            )

    parents = {name: row["parentname"].lower() for name, row in current["account_assoc"].items()}
    for name in sorted(set(current["account_assoc"]) - declared_accounts):
        if slurm.active_jobs(account=name):
            kept_accounts.add(name)
    # an account kept keeps its ancestors
    for name in list(kept_accounts):
        parent = parents.get(name)
        while parent and parent not in declared_accounts:
            kept_accounts.add(parent)
            parent = parents.get(parent)

    def depth(name):
        level, parent = 0, parents.get(name)
        while parent:
            level, parent = level + 1, parents.get(parent)
        return level

    for name in sorted(set(current["account_assoc"]) - declared_accounts, key=lambda n: (-depth(n), n)):
        if name in kept_accounts:
            plan.add("!", f"account {name}: not declared, kept while it (or an account or user below it) has active jobs")
            continue
        plan.add("-", f"account {name}", ["delete", "account", "where", f"name={name}", f"cluster={cluster}"])

    declared_qos = {q["name"] for q in desired["qos"]} | {desired["default_qos"]}
    for name in sorted(set(current["qos"]) - declared_qos):
        jobs = slurm.active_jobs(qos=name)
        if jobs:
            plan.add("!", f"qos {name}: not declared, kept while {len(jobs)} job(s) use it")
            continue
        plan.add("-", f"qos {name}", ["delete", "qos", "where", f"name={name}"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--desired", required=True, help="the JSON document rendered by hpcforge")
    parser.add_argument("--check", action="store_true", help="report drift and exit 1 when there is any; write nothing")
    parser.add_argument("--sacctmgr", default="sacctmgr")
    parser.add_argument("--squeue", default="squeue")
    parser.add_argument("--verbose", action="store_true", help="print sacctmgr's own output")
    args = parser.parse_args(argv)
    try:
        with open(args.desired, encoding="utf-8") as handle:
            desired = json.load(handle)
        if desired.get("version") != 1:
            raise ValueError(f"unknown format version {desired.get('version')!r}")
    except (OSError, ValueError) as error:
        print(f"sacct_sync: cannot read {args.desired}: {error}", file=sys.stderr)
        return 2
    slurm = Slurm(args.sacctmgr, args.squeue, verbose=args.verbose)
    try:
        current = read_current(slurm, desired["cluster"])
        plan = make_plan(desired, current, slurm)
    except CommandError as error:
        print(f"sacct_sync: cannot read the current state: {error}", file=sys.stderr)
        return 2
    print(f"plan for cluster {desired['cluster']}: {len(plan.changes)} change(s), {len(plan.kept)} kept")
    for symbol, text, _ in plan.steps:
        print(f"  {symbol} {text}")
    failed = []
    if not args.check:
        for symbol, text, command in plan.steps:
            if command is None:
                continue
            try:
                slurm.write(*command)
            except CommandError as error:
                failed.append(text)
                print(f"sacct_sync: {symbol} {text}: {error}", file=sys.stderr)
    summary = {
        "cluster": desired["cluster"],
        "check": args.check,
        "changes": len(plan.changes),
        "kept": len(plan.kept),
        "writes": slurm.writes,
        "failed": len(failed),
    }
    print(json.dumps(summary, sort_keys=True))
    if failed:
        return 1
    if args.check and (plan.changes or plan.kept):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
