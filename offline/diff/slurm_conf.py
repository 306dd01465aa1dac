"""What a change of the Slurm configuration does to the running cluster, read from the outcomes table that a real Slurm
26.05.3 produced (slurm_outcomes.json, written by `python -m tests.daemons.slurm_change --write
offline/diff/slurm_outcomes.json`): each row is one change applied to a cluster with running and pending jobs, in the
two ways slurm-operator 1.2.1 applies it, and what happened.

A change is cut into items (`conf_items`, `file_items`): a slurm.conf parameter by name, `partition:added`,
`partition:removed`, `partition:<Attribute>`, `partition:Nodes+`/`Nodes-`, `nodeset:added`/`removed`,
`gres.conf:nodes`/`devices`, `topology.yaml`, `cgroup.conf`, `script:prolog`/`epilog`. Each item gets the verdict of
the table row that answers for it (`verdicts`), or `unassessed` when no row does. How the change is applied (the mode)
follows the render: `reconfigure` with the Controller's inplaceReconfigure, `restart` when the operator recreates the
slurmctld pod, `deferred` when nothing applies it until slurmctld restarts for some other reason.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .effects import CANNOT_UNDO, REVERT_SAFE, UNASSESSED, needs_step, rank

OUTCOMES = Path(__file__).with_name("slurm_outcomes.json")
PRODUCED_BY = "python -m tests.daemons.slurm_change --write offline/diff/slurm_outcomes.json"
SLURM_TAG = "slurm-26.05.3"
SLINKY_TAG = "v1.2.1"

MAN = f"doc/man/man5/slurm.conf.5@{SLURM_TAG}"
MAN_LINES: dict[str, tuple[int, str]] = {
    "DESCRIPTION": (23, 'of the command "scontrol reconfigure" unless otherwise noted.'),
    "LISTENING": (24, "Changes to TCP listening settings will require a daemon restart."),
    "AuthType": (591, "All Slurm daemons and commands must be terminated prior to changing"),
    "SelectType": (5019, "When changed, all job information (running and pending) will be"),
    "SwitchType": (6498, "value of \\fBSwitchType\\fR, records of all jobs in any state may be lost."),
    "StateSaveLocation": (6164, "Since all running and pending job information is stored here, the use of"),
    "partition:removed": (7681, "If a partition that is in use is deleted from the configuration and slurm"),
    "NODES": (7083, "Changes in node configuration (e.g. adding nodes, changing their"),
}
"""Line and words of slurm.conf(5) in the pinned tarball (tests/offline/diff/test_slurm_conf.py finds them there)."""

MAN_FOR = {
    "SlurmctldPort": "LISTENING",
    "SlurmdPort": "LISTENING",
    "partition:renamed": "partition:removed",
    "nodeset:removed": "NODES",
    "nodeset:added": "NODES",
}

MODE_EVIDENCE = {
    "reconfigure": (
        f"slurm-operator internal/builder/controllerbuilder/controller_app.go@{SLINKY_TAG}:107-112,164-168 (with inplaceReconfigure "
        "the slurmctld pod carries only the auth keys' hashes and a reconfigure sidecar) and "
        f"internal/builder/controllerbuilder/scripts/reconfigure.sh@{SLINKY_TAG}:13-25 (the sidecar hashes every file under "
        "/etc/slurm every 5 s and runs `scontrol reconfigure` until it succeeds)"
    ),
    "restart": (
        f"slurm-operator internal/builder/controllerbuilder/controller_app.go@{SLINKY_TAG}:113-118,349-369 (without "
        "inplaceReconfigure the pod template carries the hash of the slurm-config ConfigMap: a change recreates the slurmctld "
        f"pod) and controller_config.go@{SLINKY_TAG}:160-164 (reconfig_on_restart: the new slurmctld reconfigures every slurmd)"
    ),
    "deferred": (
        f"slurm-operator internal/builder/controllerbuilder/controller_config.go@{SLINKY_TAG}:131-147 (the hashed ConfigMap holds "
        "slurm.conf, and cgroup.conf only when no configFileRefs ConfigMap has one) and controller_app.go@"
        f"{SLINKY_TAG}:113-118,349-369 (without inplaceReconfigure only that ConfigMap's hash recreates the pod): a change to a "
        "configFileRefs or prolog/epilog ConfigMap neither recreates nor reconfigures slurmctld"
    ),
}

WIRING: dict[str, tuple[str, str, str]] = {
    "SlurmctldPort": (
        "outage",
        "slurm-operator keeps port 6817 everywhere else: the controller Service targets the named container port 6817, every "
        "slurmd's --conf-server names it and slurmctld's probes call it; once slurmctld listens elsewhere, nodes, clients and "
        "the probes cannot reach it",
        f"slurm-operator internal/builder/controllerbuilder/controller_service.go@{SLINKY_TAG}:32-37, controller_app.go@"
        f"{SLINKY_TAG}:264-298, internal/builder/common/common.go@{SLINKY_TAG}:24-36, internal/builder/common/const.go@"
        f"{SLINKY_TAG}:62",
    ),
    "SlurmdPort": (
        "outage",
        "slurm-operator keeps port 6818 as slurmd's container port and probe port: a slurmd pod that starts on the new port "
        "fails its startup and liveness probes",
        f"slurm-operator internal/builder/workerbuilder/worker_app.go@{SLINKY_TAG}:165-170,221-240, internal/builder/common/"
        f"const.go@{SLINKY_TAG}:49",
    ),
    "StateSaveLocation": (
        "data-loss",
        "slurm-operator mounts the state volume at /var/spool/slurmctld/<cluster>; a StateSaveLocation elsewhere is in the "
        "container's own files, lost with every slurmctld pod",
        f"slurm-operator internal/builder/controllerbuilder/controller_app.go@{SLINKY_TAG}:256-258,307",
    ),
}
"""Where slurm-operator fixes what a slurm.conf parameter would move (extraConf comes after the operator's lines and
the last value wins: controller_config.go@v1.2.1:241-246, src/common/parse_config.c@slurm-26.05.3:536,657): worse
than what Slurm alone does, which the table shows."""

NOTES: dict[str, str] = {
    "SwitchType": (
        "slurm.conf(5) warns that the records of all jobs may be lost; 26.05.3 packs a job's switch data with its plugin's "
        f"id and skips it when that plugin is gone (src/interfaces/switch.c@{SLURM_TAG}:306-327), and the table shows the "
        "jobs kept both ways"
    ),
}
"""Where the table and an older warning of the man page disagree: why the table is right."""

APPLIED = {
    "reconfigure": "the reconfigure sidecar runs `scontrol reconfigure`",
    "restart": "the operator recreates the slurmctld pod",
}

KILLED = ("NODE_FAIL", "CANCELLED", "FAILED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT", "REVOKED")
ROLES = {
    "running": "the running job",
    "gpu": "the running GPU job",
    "pending": "the pending job",
    "pending-gpu": "the pending GPU job",
}


@dataclass(frozen=True)
class ConfItem:
    item: str
    """The table's name for what changed (`SlurmdTimeout`, `partition:removed`, `gres.conf:devices` ...)."""
    label: str
    """What changed, for people (`SlurmdTimeout 600 -> 900`, `partition gpu removed`)."""


@dataclass(frozen=True)
class Verdict:
    severity: str
    what: str
    evidence: str
    rollback: str
    items: tuple[str, ...]
    row: str | None
    """The table row (None: unassessed)."""


@functools.cache
def outcome_table() -> dict[str, Any]:
    """slurm_outcomes.json as written by the harness."""
    return dict(json.loads(OUTCOMES.read_text()))


def rows() -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in outcome_table()["rows"]}


# --------------------------------------------------------------------------------------------------
# items


def slurm_conf_items(text: str) -> dict[str, str]:
    """`Key=Value` settings of a slurm.conf fragment (NodeSet=/PartitionName=/NodeName= lines by their name)."""
    items: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or "=" not in line:
            continue
        key, _, rest = line.partition("=")
        if key in ("NodeSet", "PartitionName", "NodeName"):
            items[f"{key}={rest.split()[0] if rest.split() else ''}"] = line
        else:
            items[key] = rest.strip()
    return items


def _attributes(line: str) -> dict[str, str]:
    return dict(token.split("=", 1) for token in line.split() if "=" in token)


def _unnamed(line: str) -> dict[str, str]:
    return {k: v for k, v in _attributes(line).items() if k != "PartitionName"}


def _partition_items(name: str, old: str, new: str) -> list[ConfItem]:
    a, b = _attributes(old), _attributes(new)
    out: list[ConfItem] = []
    for key in sorted((set(a) | set(b)) - {"PartitionName"}):
        if a.get(key) == b.get(key):
            continue
        label = f"slurm.conf partition {name}: {key} {a.get(key, '(unset)')} -> {b.get(key, '(unset)')}"
        if key == "Nodes":
            before, after = set(a.get(key, "").split(",")), set(b.get(key, "").split(","))
            out += [ConfItem("partition:Nodes-", label)] if before - after else []
            out += [ConfItem("partition:Nodes+", label)] if after - before else []
        else:
            out.append(ConfItem(f"partition:{key}", label))
    return out


def conf_items(old: str, new: str) -> list[ConfItem]:
    """What changed between two slurm.conf fragments (the Controller's extraConf), as the table's items."""
    a, b = slurm_conf_items(old), slurm_conf_items(new)
    out: list[ConfItem] = []
    gone = sorted(k for k in a if k.startswith("PartitionName=") and k not in b)
    added = sorted(k for k in b if k.startswith("PartitionName=") and k not in a)
    renamed: dict[str, str] = {}
    for key in gone:
        # the same line under another name: a rename (Slurm sees a partition removed and one added)
        twin = next((n for n in added if n not in renamed.values() and _unnamed(b[n]) == _unnamed(a[key])), None)
        if twin is not None:
            renamed[key] = twin
    for key in sorted(set(a) | set(b)):
        if a.get(key) == b.get(key):
            continue
        kind, _, name = key.partition("=")
        if key in renamed:
            out.append(ConfItem("partition:renamed", f"slurm.conf partition {name} renamed {renamed[key].partition('=')[2]}"))
        elif key in renamed.values():
            continue
        elif kind == "PartitionName":
            if key not in a or key not in b:
                out.append(
                    ConfItem(
                        f"partition:{'added' if key not in a else 'removed'}",
                        f"slurm.conf partition {name} {'added' if key not in a else 'removed'}",
                    )
                )
            else:
                out += _partition_items(name, a[key], b[key])
        elif kind in ("NodeSet", "NodeName") and name:
            state = "added" if key not in a else "removed" if key not in b else "changed"
            out.append(ConfItem(f"{kind.lower()}:{state}", f"slurm.conf {kind} {name} {state}"))
        else:
            out.append(ConfItem(key, f"slurm.conf {key} {a.get(key, '(unset)')} -> {b.get(key, '(unset)')}"))
    return out


def _gres_devices(text: str) -> dict[str, set[str]]:
    """gres.conf: per nodeset (a NodeName host list without its numbers: `gpu-a100-[0-7]` -> `gpu-a100-`; `*` without
    NodeName=), its device lines without NodeName=."""
    out: dict[str, set[str]] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            tokens = line.split()
            hosts = [t.split("=", 1)[1] for t in tokens if t.startswith("NodeName=")]
            key = re.sub(r"(\[[^\]]*\]|\d+)$", "", hosts[0]) if hosts else "*"
            out.setdefault(key, set()).add(" ".join(t for t in tokens if not t.startswith("NodeName=")))
    return out


def _without(lines: set[str], keys: tuple[str, ...]) -> set[str]:
    return {" ".join(t for t in line.split() if t.split("=", 1)[0] not in keys) for line in lines}


def file_items(name: str, old: str | None, new: str | None) -> list[ConfItem]:
    """What changed in a file of the Controller's ConfigMaps (`name` its key there), as the table's items."""
    if old == new:
        return []
    if name == "gres.conf" and old is not None and new is not None:
        a, b = _gres_devices(old), _gres_devices(new)
        changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
        for item, what, drop in (
            ("devices", "device files or detection", ("Cores", "Type")),
            ("types", "GPU types", ("Cores",)),
            ("cores", "cores", ()),
        ):
            which = [k for k in changed if _without(a[k], drop) != _without(b[k], drop)]
            if which:
                return [ConfItem(f"gres.conf:{item}", f"gres.conf: the {what} of {', '.join(which)} change")]
        return [ConfItem("gres.conf:nodes", "gres.conf: the nodes or nodesets the GPU descriptions apply to change")]
    if name in ("topology.yaml", "cgroup.conf", "job_container.conf"):
        return [ConfItem(name, f"{name} {'added' if old is None else 'removed' if new is None else 'changed'}")]
    return [ConfItem(f"file:{name}", f"{name} {'added' if old is None else 'removed' if new is None else 'changed'}")]


# --------------------------------------------------------------------------------------------------
# verdicts


def row_for(item: str, present: set[str], mode: str = "reconfigure") -> dict[str, Any] | None:
    """The row that answers for `item` in a change of the items `present`: among the rows naming it, the most specific
    ones (those with most of the change's items, then the fewest others); of several, the one with the worst verdict
    in `mode` (e.g. SwitchType set, and unset under running jobs)."""
    candidates = [row for row in rows().values() if item in row["items"]]
    if not candidates:
        return None
    fit = {row["id"]: (len(set(row["items"]) & present), -len(row["items"])) for row in candidates}
    best = max(fit.values())
    return max((row for row in candidates if fit[row["id"]] == best), key=lambda row: rank(_cell(row, mode)[0]))


def judge(outcome: dict[str, Any], mode: str) -> tuple[str, str]:  # noqa: PLR0911 (one return per outcome, worst first)
    """(severity, what happened) of one cell of the table, applied in `mode` (reconfigure or restart)."""
    jobs, alive = outcome["jobs"], outcome["alive"]
    if outcome["controller"] == "down":
        stopped = "slurmctld stops" if outcome["applied"] != "did not start" else "slurmctld does not start"
        kept = " (the jobs' processes keep running)" if alive and all(alive.values()) else ""
        return "outage", f"{stopped}: no job is scheduled or answered{kept}"
    lost = [ROLES[r] for r, s in jobs.items() if s == "lost"]
    killed = [f"{ROLES[r]} ({s})" for r, s in jobs.items() if s.split()[0] in KILLED]
    if lost:
        return "data-loss", f"slurmctld forgets {', '.join(lost)}: their records are lost"
    if killed or not all(alive.values()):
        return "data-loss", f"jobs killed: {', '.join(killed) or 'a running job stops running'}"
    if outcome["nodes"]:
        return "outage", "nodes left unusable: " + ", ".join(f"{n} {f}" for n, f in outcome["nodes"].items())
    if outcome["probe"] != "COMPLETED":
        return "outage", f"new jobs do not start ({outcome['probe']})"
    if outcome["applied"] == "reconfigure refused" or outcome["live"] is False:
        return "singleton-restart", "not in force until the daemons restart; running and pending jobs kept"
    return ("reload" if mode == "reconfigure" else "singleton-restart"), "in force; running and pending jobs kept"


def _cell(row: dict[str, Any], mode: str) -> tuple[str, str]:
    """Severity and text of `row` applied in `mode` (deferred: not applied until slurmctld restarts, then the restart)."""
    if mode == "deferred":
        severity, text = judge(row["restart"], "restart")
        return max(severity, "singleton-restart", key=rank), f"not applied until slurmctld restarts; then: {text}"
    severity, text = judge(row[mode], mode)
    if mode == "reconfigure" and row[mode]["applied"] == "reconfigure refused":
        later, then = judge(row["restart"], "restart")
        return max(later, "singleton-restart", key=rank), (
            "the reconfigure sidecar's `scontrol reconfigure` fails on the new files and retries for ever; slurmctld keeps "
            f"the old configuration until it restarts; then: {then}"
        )
    return severity, f"{APPLIED[mode]}: {text}"


def _man(item: str) -> str:
    key = MAN_FOR.get(item, item)
    if key not in MAN_LINES:
        return ""
    line, words = MAN_LINES[key]
    return f"; {MAN}:{line} '{words}'"


def _facts(row: dict[str, Any], mode: str) -> str:
    cells = [mode] if mode != "deferred" else ["restart"]
    if mode == "reconfigure" and row[mode]["applied"] == "reconfigure refused":
        cells.append("restart")
    parts = []
    for cell in cells:
        o = row[cell]
        jobs = ", ".join(f"{r}={s}" for r, s in o["jobs"].items())
        parts.append(
            f"{cell}: {o['applied']}, slurmctld {o['controller']}, in force {o['live']}, {jobs}, nodes {o['nodes'] or 'usable'}, "
            f"new job {o['probe']}" + (f" ({o['note'][:160]})" if o["note"] else "")
        )
    return f"real Slurm 26.05.3, tests/daemons/slurm_change.py case {row['id']} ({row['what']}): " + "; ".join(parts)


def verdicts(items: list[ConfItem], mode: str) -> list[Verdict]:
    """One verdict per table row that answers for some of `items` (applied in `mode`), and one `unassessed` verdict
    for the items no row answers for."""
    present = {i.item for i in items}
    by_row: dict[str, list[ConfItem]] = {}
    unknown: list[ConfItem] = []
    for item in items:
        row = row_for(item.item, present, mode)
        (by_row.setdefault(row["id"], []) if row is not None else unknown).append(item)
    out = []
    for row_id, its in by_row.items():
        row = rows()[row_id]
        severity, text = _cell(row, mode)
        evidence = _facts(row, mode) + "".join(dict.fromkeys(_man(i.item) for i in its)) + "; " + MODE_EVIDENCE[mode]
        evidence += "".join(dict.fromkeys(f"; {NOTES[i.item]}" for i in its if i.item in NOTES))
        for wired in (WIRING[i.item] for i in its if i.item in WIRING):
            if rank(wired[0]) > rank(severity):
                severity, text = wired[0], f"{text}; and {wired[1]}"
            evidence += "; " + wired[2]
        rollback = (
            CANNOT_UNDO
            if severity == "data-loss"
            else REVERT_SAFE
            if rank(severity) < rank("outage")
            else needs_step("revert the change (and restart slurmctld if it stopped)")
        )
        labels = "; ".join(dict.fromkeys(i.label for i in its))
        out.append(Verdict(severity, f"{labels}: {text}", evidence, rollback, tuple(i.item for i in its), row_id))
    if unknown:
        labels = "; ".join(i.label for i in unknown)
        out.append(
            Verdict(
                UNASSESSED,
                f"unassessed: {labels}: no change of this kind has been run through the real Slurm 26.05.3 table",
                f"offline/diff/slurm_outcomes.json has no row for {', '.join(sorted({i.item for i in unknown}))} ({PRODUCED_BY})",
                needs_step("find out what it does (add a case to tests/daemons/slurm_change_cases.py)"),
                tuple(i.item for i in unknown),
                None,
            )
        )
    return out


def applied_by(key: str) -> str:
    """How a change of slurm.conf parameter `key` takes effect on a running slurmctld per the table: `reconfigure` when
    `scontrol reconfigure` puts it in force, `restart` when it needs a restart (or is not in the table)."""
    row = row_for(key, {key}, "reconfigure")
    if row is None:
        return "restart"
    cell = row["reconfigure"]
    return "reconfigure" if cell["applied"] == "reconfigured" and cell["controller"] == "up" and cell["live"] else "restart"
