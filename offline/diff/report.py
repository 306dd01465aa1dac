"""The diff report, as text (terminal) or markdown (pull-request comment, job summary): summary first, details after."""

from __future__ import annotations

from typing import Any

import yaml

from .effects import SEVERITIES, Impact
from .plan import MISSING, OPS, Change, Plan

SYMBOL = {"create": "+", "update": "~", "replace": "+-", "delete": "-"}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _value(value: Any, limit: int = 100) -> str:
    if value is MISSING:
        return "(none)"
    if isinstance(value, (dict, list)):
        text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    else:
        text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def summary_lines(plan: Plan, impact: Impact) -> list[str]:
    totals = plan.totals()
    if plan.empty:
        return [f"offline diff of stack {plan.stack}: {plan.base} -> {plan.head}", "No changes."]
    counts = impact.counts()
    lines = [
        f"offline diff of stack {plan.stack}: {plan.base} -> {plan.head}",
        f"Worst impact: {impact.worst}",
        "Resources: " + ", ".join(f"{totals[op]} to {op}" for op in OPS if totals[op]) + f", {totals['unchanged']} unchanged",
        "Effects: " + (", ".join(f"{counts[s]} {s}" for s in reversed(SEVERITIES) if counts[s]) or "none"),
    ]
    if impact.drained_nodes:
        lines.append(f"Slurm nodes drained or restarted now: {len(impact.drained_nodes)}")
    refused = [c for c in plan.changes if c.refusals]
    if refused:
        lines.append(f"Refused: {_plural(len(refused), 'resource')} (the deploy would stop there)")
    return lines


def _count_table(plan: Plan, markdown: bool) -> list[str]:
    header = ["layer", *OPS, "unchanged"]
    rows = [
        [layer, *(str(counts[op]) for op in (*OPS, "unchanged"))]
        for layer, counts in sorted(plan.counts.items())
        if any(counts[op] for op in OPS)
    ]
    if markdown:
        return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return [fmt.format(*header), *(fmt.format(*r) for r in rows)]


def _change_lines(change: Change) -> list[str]:
    head = f"{SYMBOL[change.op]} {change.op} {change.label}"
    renamed = change.renamed
    if renamed:
        head += f" (content-hashed: {renamed[0]} -> {renamed[1]})"
    if change.delete_before_replace:
        head += " [delete before replace]"
    lines = [head]
    for reason in change.replace_reasons:
        lines.append(f"    replace because {reason}")
    for refusal in change.refusals:
        lines.append(f"    REFUSED: {refusal}")
    for f in change.fields:
        if f.text:
            lines.append(f"    ~ {f.path}:")
            lines += [f"        {line}" for line in f.text]
        else:
            lines.append(f"    ~ {f.path}: {_value(f.old)} => {_value(f.new)}")
    return lines


def render(plan: Plan, impact: Impact, markdown: bool = False) -> str:
    lines = list(summary_lines(plan, impact))
    if markdown:
        lines = [f"### {lines[0]}", "", *(f"- {line}" for line in lines[1:])]
    if plan.empty:
        return "\n".join(lines) + "\n"
    lines += ["", "## Site impact" if markdown else "Site impact (worst first):"]
    for effect in impact.effects:
        radius = [", ".join(effect.resources), f"namespace {effect.namespace}" if effect.namespace else "", effect.application]
        if effect.nodes:
            radius.append(f"{_plural(len(effect.nodes), 'node')}")
        if effect.gpus:
            radius.append(f"{_plural(effect.gpus, 'GPU')} at once")
        if effect.users:
            radius.append("users " + ", ".join(effect.users))
        bullet = "- " if markdown else "  "
        lines.append(f"{bullet}[{effect.severity}] {effect.what}")
        lines.append(
            f"{'  ' if markdown else '      '}blast radius: {'; '.join(r for r in radius if r)}. rollback: {effect.rollback}."
        )
        lines.append(f"{'  ' if markdown else '      '}evidence: {effect.evidence}")
    named = [e for e in plan.entities if e.added or e.removed or e.changed]
    if named:
        lines += ["", "## Named changes" if markdown else "Named changes:"]
        for entity in named:
            parts = [*(f"+{n}" for n in entity.added), *(f"-{n}" for n in entity.removed), *(f"~{n}" for n in entity.changed)]
            lines.append(f"{'- ' if markdown else '  '}{entity.kind}: {', '.join(parts)}")
    lines += ["", "## Plan" if markdown else "Plan per layer:"]
    lines += _count_table(plan, markdown)
    lines.append("")
    body: list[str] = []
    for change in plan.changes:
        body += _change_lines(change)
    if markdown:
        lines += ["<details><summary>Changed resources</summary>", "", "```diff", *body, "```", "</details>"]
    else:
        lines += body
    return "\n".join(lines) + "\n"
