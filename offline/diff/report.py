"""The diff report as people read it, text (terminal) or markdown (pull-request comment, job summary), from the
report's data (offline/diff/verdicts.py), and as JSON for tools (offline/diff/report.schema.json).

Order: the summary line; the blast radius as counts; the risks, worst first, each one line with its evidence ids;
one verdict per changed resource; the named entities with what changed; the live view; the drift; the plan per
layer; each changed resource's fields; the evidence legend, once, at the end. A markdown comment that would not
fit (`limit`, GitHub's 65,536 characters for a comment) is cut from the bottom up (details first, then the rows
of the long tables) and says what was cut.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from ..program.words import plural
from .effects import Impact
from .plan import MISSING, OPS, Change, Plan
from .verdicts import build

SYMBOL = {"create": "+", "update": "~", "replace": "+-", "delete": "-"}
GITHUB_COMMENT_LIMIT = 65_536
"""GitHub refuses an issue comment body longer than this (characters)."""


def _value(value: Any, limit: int = 100) -> str:
    if value is MISSING:
        return "(none)"
    if isinstance(value, (dict, list)):
        text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    else:
        text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def change_lines(change: Change) -> list[str]:
    """A changed resource as `pulumi preview --diff` shows it: the operation, why it is replaced or refused, each field."""
    head = f"{SYMBOL[change.op]} {change.op} {change.label}"
    renamed = change.renamed
    if renamed:
        head += f" (content-hashed: {renamed[0]} -> {renamed[1]})"
    if change.delete_before_replace:
        head += " [delete before replace]"
    lines = [head]
    lines += [f"    replace because {reason}" for reason in change.replace_reasons]
    lines += [f"    REFUSED: {refusal}" for refusal in change.refusals]
    for f in change.fields:
        if f.text:
            lines.append(f"    ~ {f.path}:")
            lines += [f"        {line}" for line in f.text]
        else:
            lines.append(f"    ~ {f.path}: {_value(f.old)} => {_value(f.new)}")
    return lines


def _radius(report: dict[str, Any]) -> str:
    r = report["blast_radius"]
    parts = [
        f"{r['resources']} resource{'s' if r['resources'] != 1 else ''} in {r['namespaces']} namespace{'s' if r['namespaces'] != 1 else ''}"
    ]
    if r["applications"]:
        parts.append(f"{r['applications']} Argo CD application{'s' if r['applications'] != 1 else ''}")
    if r["slurm_nodes"]:
        verb = "drain or stop" if r["slurm_nodes"] != 1 else "drains or stops"
        parts.append(f"{plural(r['slurm_nodes'], 'Slurm node')} {verb} ({r['slurm_nodes_at_once']} at once)")
    if r["gpus_at_once"]:
        parts.append(f"{r['gpus_at_once']} GPUs out at once")
    if r["users"]:
        parts.append(f"{r['users']} user{'s' if r['users'] != 1 else ''}")
    if r["hosts_at_next_boot"]:
        parts.append(f"{r['hosts_at_next_boot']} bare-metal hosts at their next boot")
    return "; ".join(parts)


def _risk_line(risk: dict[str, Any]) -> str:
    where = ", ".join(risk["resources"])
    return f"[{risk['severity']}] {risk['what']} ({where}; {risk['rollback']}) [{', '.join(risk['evidence'])}]"


def _verdict_line(resource: dict[str, Any]) -> str:
    origin = "" if resource["origin"] == "change" else f" ({resource['origin']})"
    refused = " REFUSED" if resource["refusals"] else ""
    ids = f" [{', '.join(resource['evidence'])}]" if resource["evidence"] else ""
    return f"{resource['verdict']}{refused}: {SYMBOL[resource['op']]} {resource['name']}{origin}: {resource['changed']}{ids}"


def _entity_line(entity: dict[str, Any]) -> str:
    """`directory user bob: uidNumber 10002 → 20002`, `host cn097 added`."""
    if entity["op"] != "change":
        return f"{entity['kind']} {entity['name']} {'added' if entity['op'] == 'add' else 'removed'}"
    return f"{entity['kind']} {entity['name']}: {', '.join(entity['changes']) or 'changed'}"


def _count_rows(plan: Plan) -> list[list[str]]:
    return [
        [layer, *(str(counts[op]) for op in (*OPS, "unchanged"))]
        for layer, counts in sorted(plan.counts.items())
        if any(counts[op] for op in OPS)
    ]


def _table(header: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        cells = lambda row: "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"  # noqa: E731
        return [cells(header), "|" + "---|" * len(header), *(cells(r) for r in rows)]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return [fmt.format(*header).rstrip(), *(fmt.format(*r).rstrip() for r in rows)]


def _sections(report: dict[str, Any], plan: Plan | None, markdown: bool) -> list[tuple[str, list[str]]]:
    """(title, lines) in reading order; the first has no title (the summary)."""
    base = report["base"]
    top = [report["summary"], f"base: {base['name']} -> head: {report['head']}", *(f"note: {n}" for n in base["notes"])]
    sections: list[tuple[str, list[str]]] = [("", top)]
    if not report["resources"] and not report["entities"]:
        return sections
    sections.append(("Blast radius", [_radius(report)]))
    risky = [r for r in report["risks"] if r["severity"] != "none"]
    if risky:
        sections.append(("Risks (worst first)", [_risk_line(r) for r in risky]))
    if report["resources"]:
        sections.append(("Verdicts (one per changed resource)", [_verdict_line(r) for r in report["resources"]]))
    if report["entities"]:
        sections.append(("Named changes", [_entity_line(e) for e in report["entities"]]))
    if report.get("live"):
        sections.append(("Live impact", report["live"]["markdown" if markdown else "text"].rstrip("\n").split("\n")))
    if report.get("drift"):
        drift = report["drift"]
        title = f"Drift: the deployed state differs from {drift['against']} in {plural(len(drift['resources']), 'resource')}"
        sections.append((title, [f"{d['op']} {d['name']}: {d['changed']}" for d in drift["resources"]]))
    if plan is not None:
        rows = _count_rows(plan)
        if rows:
            sections.append(("Plan per layer", _table(["layer", *OPS, "unchanged"], rows, markdown)))
        details = [line for change in plan.changes for line in change_lines(change)]
        if details:
            sections.append(("Changed resources", details))
    if report["evidence"]:
        sections.append(("Evidence", [f"{e['id']} {e['text']}" for e in report["evidence"]]))
    return sections


def render_text(report: dict[str, Any], plan: Plan | None = None) -> str:
    lines: list[str] = []
    for title, body in _sections(report, plan, markdown=False):
        if title == "Live impact":
            lines += ["", *body]
        elif title:
            lines += ["", f"{title}:"]
            indent = "" if title in ("Plan per layer", "Changed resources", "Live impact") else "  "
            lines += [f"{indent}{line}" if line else line for line in body]
        else:
            lines += body
    return "\n".join(lines) + "\n"


_LISTS = ("Blast radius", "Risks (worst first)", "Verdicts (one per changed resource)", "Named changes")


def _markdown_section(title: str, body: list[str]) -> list[str]:
    if not title:
        return [f"### {body[0]}", "", *(f"_{line}_" for line in body[1:])]
    if title in _LISTS or title.startswith("Drift"):
        return ["", f"**{title}**", "", *(f"- {line}" for line in body)]
    if title == "Changed resources":
        return ["", "<details><summary>Changed resources</summary>", "", "```diff", *body, "```", "</details>"]
    if title == "Evidence":
        return ["", "<details><summary>Evidence</summary>", "", *(f"- {line}" for line in body), "</details>"]
    if title == "Live impact":
        return ["", *body]
    return ["", f"**{title}**", "", *body]


def render_markdown(report: dict[str, Any], plan: Plan | None = None, limit: int | None = None) -> str:
    """The markdown report; with `limit`, cut to at most that many characters, saying what was cut."""
    sections = _sections(report, plan, markdown=True)
    text = _join(sections)
    if limit is None or len(text) <= limit:
        return text
    cut: list[str] = []
    for title in CUT_ORDER:
        index = next((i for i, (t, _) in enumerate(sections) if t.partition(":")[0] == title), None)
        if index is None:
            continue
        body = sections[index][1]
        keep = len(body)
        name = sections[index][0]
        while keep > 0 and len(_join([*sections[:index], (name, body[:keep]), *sections[index + 1 :]], [*cut, title])) > limit:
            keep = keep // 2 if keep > 8 else keep - 1
        cut.append(f"{title}: {len(body) - keep} of {len(body)} line(s)")
        sections[index] = (name, body[:keep])
        if len(_join(sections, cut)) <= limit:
            break
    return _join(sections, cut)


CUT_ORDER = (
    "Changed resources",
    "Plan per layer",
    "Drift",
    "Named changes",
    "Verdicts (one per changed resource)",
    "Live impact",
    "Risks (worst first)",
    "Evidence",
)
"""What goes first when a comment is too long: the details, then the long lists; the summary never."""


def _join(sections: list[tuple[str, list[str]]], cut: list[str] | None = None) -> str:
    lines: list[str] = []
    for title, body in sections:
        if title and not body:
            continue
        lines += _markdown_section(title, body)
    if cut:
        lines += [
            "",
            f"_Cut to fit GitHub's {GITHUB_COMMENT_LIMIT:,}-character comment limit: {'; '.join(cut)}. "
            "The whole report is in the job summary and the `impact-report` artifact._",
        ]
    return "\n".join(lines) + "\n"


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1, ensure_ascii=False) + "\n"


def render(plan: Plan, impact: Impact, markdown: bool = False) -> str:
    """The report of `plan` and `impact` without a gate decision or live data (text, or markdown)."""
    report = build(plan, impact)
    return render_markdown(report, plan) if markdown else render_text(report, plan)
