"""The diff report people read (offline/diff/report.py, verdicts.py, naming.py): issue 34's review findings on the
report, each failing on the code before the fix, and the JSON report against its schema (offline/diff/report.schema.json).

The changes are made on copies of prod's recorded state (the `prod_stack` fixture), so no program runs per test."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from offline.diff.base import State
from offline.diff.impact import assess
from offline.diff.plan import make_plan
from offline.diff.report import render
from offline.program.engine import RecordedStack


def _edited(stack: RecordedStack, **edits: Callable[[dict[str, Any]], None]) -> tuple[State, State]:
    """prod, and prod with `edits` (resource name -> change of its inputs) applied."""
    base = State.from_recorded(stack, "origin/main")
    head = copy.deepcopy(base)
    head.origin = "Pulumi.prod.yaml (working tree)"
    found = set()
    for resource in head.resources:
        if resource["name"] in edits:
            edits[resource["name"]](resource["inputs"])
            found.add(resource["name"])
    assert found == set(edits), f"not in prod: {set(edits) - found}"
    return base, head


def _report(stack: RecordedStack, **edits: Callable[[dict[str, Any]], None]) -> str:
    base, head = _edited(stack, **edits)
    plan = make_plan(base, head)
    return render(plan, assess(plan))


def _conf(old: str, new: str) -> Callable[[dict[str, Any]], None]:
    def edit(inputs: dict[str, Any]) -> None:
        assert old in inputs["spec"]["extraConf"]
        inputs["spec"]["extraConf"] = inputs["spec"]["extraConf"].replace(old, new)

    return edit


def test_evidence_is_given_once_as_short_ids_with_a_legend_at_the_end(prod_stack: RecordedStack) -> None:
    """Review: evidence strings of 300-600 characters repeated for each effect buried the summary."""
    text = _report(
        prod_stack,
        **{
            "slurm/controller-slurm": _conf("PartitionName=debug ", "PartitionName=debug2 "),
            "slurm/nodeset-cpu": lambda i: i["spec"]["slurmd"].update(image="ghcr.io/slinkyproject/slurmd:26.05.4-ubuntu24.04"),
            "slurm/nodeset-gpu-a100": lambda i: i["spec"]["slurmd"].update(
                image="ghcr.io/slinkyproject/slurmd:26.05.4-ubuntu24.04"
            ),
        },
    )
    lines = text.splitlines()
    # a partition renamed kills the jobs of the old name (offline/diff/slurm_outcomes.json, case partition-renamed)
    assert lines[0].startswith("prod: data-loss; 3 resources change (3 update)")
    legend_at = lines.index("Evidence:")
    legend = lines[legend_at + 1 :]
    assert legend and all(line.startswith("  E") for line in legend)
    claims = [line.split(" ", 3)[3] for line in legend]
    assert len(claims) == len(set(claims))
    for claim in claims:
        assert text.count(claim) == 1, f"evidence repeated: {claim[:80]}"
    risks = [line for line in lines[:legend_at] if line.startswith("  [rolling-drain] NodeSet")]
    assert len(risks) == 2 and all(line.endswith("]") and "[E" in line for line in risks)
    assert max(len(line) for line in lines[:legend_at] if line.startswith("  [")) < 500


def test_an_unchanged_stack_against_its_render_folder_says_no_changes(prod_stack: RecordedStack, tmp_path: Path) -> None:
    """Review: with a render folder as base and nothing changed, "Resources: , 367 unchanged" and 28 spurious
    "+Kubernetes node" entries (the render writes each NodePatch as a `kind: Node` object)."""
    from offline.diff.base import load_base
    from offline.program.documents import write_render

    write_render(prod_stack, tmp_path / "render")
    plan = make_plan(load_base(str(tmp_path / "render"), "prod"), State.from_recorded(prod_stack, "head"))
    text = render(plan, assess(plan))
    assert plan.empty
    assert "Resources: ," not in text and "Kubernetes node" not in text and "+k8s-" not in text
    assert "no resource changes" in text.splitlines()[0] or "No changes." in text


def test_a_partition_rename_shows_as_a_rename(prod_stack: RecordedStack) -> None:
    """Review: "PartitionName=gpu, PartitionName=gpu-all changed"."""
    text = _report(prod_stack, **{"slurm/controller-slurm": _conf("PartitionName=gpu ", "PartitionName=gpu-all ")})
    assert "PartitionName gpu renamed to gpu-all" in text
    assert "PartitionName=gpu, PartitionName=gpu-all changed" not in text


def test_a_changed_user_is_named_with_what_changed(prod_stack: RecordedStack) -> None:
    """Review: "~user bob" hid what changed about bob."""

    def uid(inputs: dict[str, Any]) -> None:
        ldif = inputs["data"]["bootstrap.ldif"]
        assert "uidNumber: 10002\n" in ldif
        inputs["data"]["bootstrap.ldif"] = ldif.replace("uidNumber: 10002\n", "uidNumber: 20002\n")

    name = next(r.name for r in prod_stack.resources if r.name.startswith("directory/dirsrv-ldif-"))
    text = _report(prod_stack, **{name: uid})
    assert "directory user bob: uidNumber 10002 → 20002" in text


def test_a_kueue_change_names_the_queue_not_its_pulumi_name(prod_stack: RecordedStack) -> None:
    """Review: a Kueue effect read "_cluster/…; namespace -"."""

    def quota(inputs: dict[str, Any]) -> None:
        inputs["spec"]["cohortName"] = "elsewhere"

    # by name: the recording lists resources in the order their registrations completed, which varies between runs
    name = next(r.name for r in prod_stack.resources if r.type.endswith(":ClusterQueue") and r.name.endswith("-research"))
    text = _report(prod_stack, **{name: quota})
    assert "ClusterQueue research" in text
    before_details = text.split("Changed resources:")[0]
    assert "_cluster/" not in before_details and "namespace -" not in text


# --- the JSON report and its schema ---------------------------------------------------------------------------------------

SCHEMA = Path(__file__).resolve().parents[3] / "offline" / "diff" / "report.schema.json"


def _validator() -> Any:
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _json_report(stack: RecordedStack, **edits: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    from offline.diff.command import Computed, report_of

    base, head = _edited(stack, **edits)
    plan = make_plan(base, head)
    report = report_of(Computed(plan, assess(plan), base), acknowledged=False, live=None)
    return json.loads(json.dumps(report))


def test_the_json_report_follows_its_schema(prod_stack: RecordedStack) -> None:
    validator = _validator()
    reports = [
        _json_report(prod_stack),
        _json_report(prod_stack, **{"slurm/controller-slurm": _conf("PartitionName=gpu ", "PartitionName=gpu-all ")}),
        _json_report(prod_stack, **{"slurm/nodeset-cpu": lambda i: i["spec"].update(replicas=0)}),
    ]
    for report in reports:
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
        assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    empty, renamed, scaled = reports
    assert empty["resources"] == [] and empty["summary"].startswith("prod: none; no resource changes")
    # a partition renamed kills the jobs of the old name (offline/diff/slurm_outcomes.json, case partition-renamed)
    assert renamed["worst"] == "data-loss"
    assert renamed["gate"] == {"exit": 1, "status": "gated", "reasons": ["the worst impact is data-loss"]}
    (controller,) = renamed["resources"]
    assert (
        controller["name"] == "Controller slurm/slurm"
        and controller["changed"] == "slurm.conf PartitionName gpu renamed to gpu-all"
    )
    ids = {e["id"] for e in renamed["evidence"]}
    assert set(controller["evidence"]) <= ids and all(set(r["evidence"]) <= ids for r in renamed["risks"])
    assert scaled["blast_radius"]["slurm_nodes"] == 16 and scaled["blast_radius"]["resources"] == 1


def test_a_roll_counts_the_nodes_out_at_once_not_all_of_them(prod_stack: RecordedStack) -> None:
    """Review: "16 drained now" was printed where NodeSet cpu (16 pods, maxUnavailable 2) drains 2 at a time."""
    image = "ghcr.io/slinkyproject/slurmd:26.05.4-ubuntu24.04"
    report = _json_report(prod_stack, **{"slurm/nodeset-cpu": lambda i: i["spec"]["slurmd"].update(image=image)})
    radius = report["blast_radius"]
    assert (radius["slurm_nodes"], radius["slurm_nodes_at_once"]) == (16, 2)
    base, head = _edited(prod_stack, **{"slurm/nodeset-cpu": lambda i: i["spec"]["slurmd"].update(image=image)})
    plan = make_plan(base, head)
    text = render(plan, assess(plan))
    assert "16 Slurm nodes drain or stop (2 at once)" in text and "drained or restarted now: 16" not in text


def test_the_schema_refuses_what_a_reader_could_not_use(prod_stack: RecordedStack) -> None:
    validator = _validator()
    report = _json_report(prod_stack, **{"slurm/nodeset-cpu": lambda i: i["spec"].update(replicas=8)})
    assert validator.is_valid(report)
    for broken in (
        {**report, "summary": "two\nlines"},
        {**report, "worst": "catastrophe"},
        {**report, "gate": {"exit": 3, "status": "pass", "reasons": []}},
        {**report, "risks": [{**report["risks"][0], "evidence": ["see slurm-operator's nodeset_sync.go"]}]},
        {k: v for k, v in report.items() if k != "predictions"},
    ):
        assert not validator.is_valid(broken)


def test_a_comment_too_long_for_github_is_cut_and_says_what_was_cut(prod_stack: RecordedStack) -> None:
    from offline.diff.report import GITHUB_COMMENT_LIMIT, render_markdown
    from offline.diff.verdicts import build

    def labelled(inputs: dict[str, Any]) -> None:
        inputs.setdefault("metadata", {}).setdefault("labels", {})["hpcforge.io/cost-centre"] = "research-computing-2027"

    names = {r.name: labelled for r in prod_stack.resources if r.is_kubernetes_object and not r.type.endswith("Patch")}
    base, head = _edited(prod_stack, **names)
    plan = make_plan(base, head)
    report = build(plan, assess(plan))
    whole = render_markdown(report, plan)
    assert len(whole) > GITHUB_COMMENT_LIMIT
    cut = render_markdown(report, plan, limit=GITHUB_COMMENT_LIMIT)
    assert len(cut) <= GITHUB_COMMENT_LIMIT
    assert cut.splitlines()[0] == f"### {report['summary']}"
    assert "Cut to fit GitHub's 65,536-character comment limit: Changed resources:" in cut
    assert "**Verdicts (one per changed resource)**" in cut
