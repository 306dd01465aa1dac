"""The report of a diff as data (the JSON that `--format json` writes, offline/diff/report.schema.json): one summary
line, one verdict per changed resource, the risks each with a one-line reason, the blast radius as counts, the
entities by name with what changed, the evidence as short ids with one legend, and the gate's decision.

offline/diff/report.py renders it as text or markdown; the deploy workflow reads it (scripts/ci/impact_gate.py) and
`--verify` checks its predictions after the deploy (offline/diff/verify.py).
"""

from __future__ import annotations

from typing import Any

from .effects import UNASSESSED, Effect, Impact, rank
from .naming import entity_changes, resource_name, what_changed
from .plan import OPS, Change, Plan, entities

FORMAT = "hpcforge-diff/1"
"""The `format` of the JSON report; bumped when offline/diff/report.schema.json changes incompatibly."""

NO_RULE = UNASSESSED
"""The verdict of a changed resource that no effect names (offline/diff/impact.py gives it an `unassessed` effect)."""


def split_evidence(text: str) -> list[str]:
    """An effect's evidence, one claim each: split at `; ` outside parentheses and quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == "'":
            before, after = text[i - 1 : i] or " ", text[i + 1 : i + 2] or " "
            if not quoted and not before.isalnum():
                quoted = True
            elif quoted and not after.isalnum():
                quoted = False
        elif char == ";" and not depth and not quoted and text[i + 1 : i + 2] == " ":
            parts.append(text[start:i].strip())
            start = i + 2
    parts.append(text[start:].strip())
    return [p for p in parts if p]


class _Legend:
    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def of(self, evidence: str) -> list[str]:
        out = []
        for claim in split_evidence(evidence):
            if claim not in self.ids:
                self.ids[claim] = f"E{len(self.ids) + 1}"
            out.append(self.ids[claim])
        return out

    def entries(self) -> list[dict[str, str]]:
        return [{"id": key, "text": text} for text, key in self.ids.items()]


def _one_line(text: str, limit: int = 400) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _nodes_out(impact: Impact) -> tuple[int, int]:
    """(Slurm nodes that drain or stop, of them at once): a scale-in takes some of its candidates, a roll goes in
    batches; other nodes (a NodeSet deleted, a host removed) all at once."""
    in_drains = {node for drain in impact.drains for node in drain.nodes}
    total = sum(min(d.take, len(d.nodes)) for d in impact.drains) + len(impact.drained_nodes - in_drains)
    at_once = sum(min(d.batch, d.take, len(d.nodes)) for d in impact.drains) + len(impact.drained_nodes - in_drains)
    return total, at_once


def _entities(plan: Plan) -> list[dict[str, Any]]:
    old, new = entities(plan.base_resources), entities(plan.head_resources)
    out: list[dict[str, Any]] = []
    for change in plan.entities:
        out += [{"kind": change.kind, "name": n, "op": "add", "changes": []} for n in change.added]
        out += [{"kind": change.kind, "name": n, "op": "remove", "changes": []} for n in change.removed]
        out += [
            {"kind": change.kind, "name": n, "op": "change", "changes": entity_changes(old[change.kind][n], new[change.kind][n])}
            for n in change.changed
        ]
    return out


def _resource(change: Change, index: int, effects: list[tuple[int, Effect]], origin: str, legend: _Legend) -> dict[str, Any]:
    verdict = max((e.severity for _, e in effects), key=rank, default=NO_RULE)
    evidence = list(dict.fromkeys(i for _, e in effects for i in legend.of(e.evidence)))
    return {
        "id": f"R{index}",
        "name": resource_name(change),
        "type": change.type,
        "urn": change.key,
        "op": change.op,
        "verdict": verdict,
        "origin": origin,
        "changed": what_changed(change),
        "fields": [f.path for f in change.fields],
        "risks": [number for number, _ in effects],
        "evidence": evidence,
        "refusals": list(change.refusals),
        "replace_reasons": list(change.replace_reasons),
        "delete_before_replace": change.delete_before_replace,
    }


def build(
    plan: Plan,
    impact: Impact,
    *,
    gate: dict[str, Any] | None = None,
    origins: dict[str, str] | None = None,
    base_kind: str = "",
    base_notes: list[str] | None = None,
) -> dict[str, Any]:
    """The report of `plan` and `impact`. `gate`: the command's decision (exit, status, reasons); `origins`: per
    resource key, `change`, `drift` or `change+drift` (a deployed-state base with drift, offline/diff/command's
    `--drift-against`); `base_kind`: git, recording, render or state."""
    legend = _Legend()
    labels = {change.label: change for change in plan.changes}
    risks: list[dict[str, Any]] = []
    by_label: dict[str, list[tuple[int, Effect]]] = {}
    for number, effect in enumerate(impact.effects, start=1):
        names = [resource_name(labels[r]) if r in labels else r for r in effect.resources]
        for label in effect.resources:
            by_label.setdefault(label, []).append((number, effect))
        risks.append(
            {
                "id": number,
                "severity": effect.severity,
                "what": _one_line(effect.what),
                "resources": names,
                "rollback": effect.rollback,
                "evidence": legend.of(effect.evidence),
                "nodes": len(effect.nodes),
                "gpus": effect.gpus,
                "users": list(effect.users),
                "namespace": "" if effect.namespace in ("", "-") else effect.namespace,
                "application": effect.application,
            }
        )
    resources = [
        _resource(change, index, by_label.get(change.label, []), (origins or {}).get(change.key, "change"), legend)
        for index, change in enumerate(sorted(plan.changes, key=lambda c: (-rank(_worst(c, by_label)), c.label)), start=1)
    ]
    counts = {op: 0 for op in (*OPS, "unchanged")}
    for layer in plan.counts.values():
        for op, n in layer.items():
            counts[op] = counts.get(op, 0) + n
    nodes, at_once = _nodes_out(impact)
    named = _entities(plan)
    users = sorted({u for e in impact.effects for u in e.users} | {e["name"] for e in named if "user" in e["kind"]})
    radius = {
        "resources": len(plan.changes),
        "namespaces": len({c.namespace for c in plan.changes if c.namespace}),
        "applications": len({e.application for e in impact.effects if e.application.startswith("Argo CD")}),
        "slurm_nodes": nodes,
        "slurm_nodes_at_once": at_once,
        "gpus_at_once": sum(e.gpus for e in impact.effects),
        "users": len(users),
        "hosts_at_next_boot": len(impact.reprovisioned_nodes),
    }
    worst = impact.worst if plan.changes or named else "none"
    decided = gate or {"exit": 0, "status": "pass", "reasons": []}
    report: dict[str, Any] = {
        "format": FORMAT,
        "stack": plan.stack,
        "base": {"name": plan.base, "kind": base_kind, "notes": list(base_notes or [])},
        "head": plan.head,
        "worst": worst,
        "gate": decided,
        "counts": {
            **counts,
            "refused": sum(1 for c in plan.changes if c.refusals),
            "unassessed": sum(1 for r in resources if any(risks[n - 1]["severity"] == UNASSESSED for n in r["risks"])),
        },
        "blast_radius": radius,
        "resources": resources,
        "risks": risks,
        "entities": named,
        "evidence": legend.entries(),
        "live": None,
        "drift": None,
        "predictions": [],
    }
    report["summary"] = summary_line(report)
    return report


def _worst(change: Change, by_label: dict[str, list[tuple[int, Effect]]]) -> str:
    return max((e.severity for _, e in by_label.get(change.label, [])), key=rank, default=NO_RULE)


def summary_line(report: dict[str, Any]) -> str:
    """`prod: singleton-restart; 5 resources change (1 create, 1 update, 3 replace), 401 unchanged; 2 risks; gate: pass`."""
    counts = report["counts"]
    ops = [f"{counts[op]} {op}" for op in OPS if counts.get(op)]
    changed = sum(counts.get(op, 0) for op in OPS)
    gate = report["gate"]
    parts = [f"{report['stack']}: {report['worst']}"]
    if changed:
        parts.append(
            f"{changed} resource{'s' if changed != 1 else ''} change ({', '.join(ops)}), {counts.get('unchanged', 0)} unchanged"
        )
    else:
        parts.append(f"no resource changes ({counts.get('unchanged', 0)} unchanged)")
    if report["entities"]:
        parts.append(f"{len(report['entities'])} named change{'s' if len(report['entities']) != 1 else ''}")
    risky = [r for r in report["risks"] if r["severity"] != "none"]
    parts.append(f"{len(risky)} risk{'s' if len(risky) != 1 else ''}")
    if counts.get("refused"):
        parts.append(f"{counts['refused']} refused")
    if counts.get("unassessed"):
        parts.append(f"{counts['unassessed']} unassessed")
    drift = report.get("drift")
    if drift:
        parts.append(f"{len(drift['resources'])} drifted from {drift['against']}")
    parts.append(f"gate: {gate['status']}")
    return "; ".join(parts)


def refresh_summary(report: dict[str, Any]) -> None:
    report["summary"] = summary_line(report)
