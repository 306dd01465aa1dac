"""`--against` a `pulumi stack export` file: the deployed state as the base (offline/diff/stack_export.py), and the
drift between it and main shown beside the change (`--drift-against`). The state files are shaped like the CLI's
(tests/offline/diff/stack_exports.py says from what)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from offline.cli import main
from offline.diff.base import BaseError, State, load_base
from offline.diff.impact import assess
from offline.diff.plan import make_plan
from offline.diff.stack_export import fill_encrypted
from offline.program.engine import RecordedStack
from tests.helpers import REPO
from tests.offline.diff.stack_exports import edit, export_of


def _write(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=4))
    return path


def test_a_state_file_of_what_the_head_deploys_plans_nothing(prod_stack: RecordedStack, tmp_path: Path) -> None:
    state = _write(tmp_path, "prod-state.json", export_of(prod_stack))
    base = load_base(str(state), "prod")
    assert base.kind == "state" and base.origin.startswith("deployed state of prod (prod-state.json, written 2026-11-30T09:12:44")
    types = {r["type"] for r in base.resources}
    assert "pulumi:pulumi:Stack" not in types and "pulumi:providers:random" not in types
    assert "kubernetes:apps/v1:Deployment" not in {r["type"] for r in base.resources if "argocd-server" in r["name"]}
    head = State.from_recorded(prod_stack, "head")
    assert base.export is not None
    filled = fill_encrypted(base.export, head.resources)
    assert filled > 0
    plan = make_plan(base, head)
    assert plan.changes == [] and plan.empty
    notes = base.export.notes
    assert any(n.startswith("1 object rendered by charts or manifests not compared") for n in notes)
    assert (
        f"{filled} secret values encrypted in the state file not compared (export with --show-secrets to compare them)" in notes
    )


def test_protect_in_the_state_refuses_a_delete_of_a_protected_resource(prod_stack: RecordedStack, tmp_path: Path) -> None:
    """What the engine recorded decides: `protect` on the deployed resource refuses its deletion (step_generator.go)."""
    export = export_of(prod_stack, show_secrets=True)
    edit(export, "slurm/nodeset-gpu-h100", lambda inputs: None)["protect"] = True
    base = load_base(str(_write(tmp_path, "s.json", export)), "prod")
    head = State.from_recorded(prod_stack, "head")
    head.resources = [r for r in head.resources if r["name"] != "slurm/nodeset-gpu-h100"]
    (change,) = make_plan(base, head).changes
    assert change.op == "delete" and change.refusals == [
        "Pulumi: the resource is protected; the engine refuses to delete it (protect: true)"
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"version": 2, "deployment": {"resources": []}}, "deployment version 2; this reads versions 3 and 4"),
        ({"version": 3, "deployment": {"resources": [{"type": "x"}]}}, r"deployment.resources\[0\] has no urn and type"),
        ({"version": 3, "deployment": {"resources": "all"}}, "no deployment with a list of resources"),
    ],
)
def test_a_state_file_this_does_not_read_is_a_clear_error(tmp_path: Path, data: dict[str, Any], message: str) -> None:
    with pytest.raises(BaseError, match=message):
        load_base(str(_write(tmp_path, "bad.json", data)), "prod")


def test_the_report_shows_the_change_and_the_drift_from_main(
    prod_stack: RecordedStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The deployed state differs from main (someone ran `pulumi up` of a branch, or edited the stack by hand): gpu-h100
    runs 3 pods where main says 4, and the CPU nodes' slurmd image is older. The pull request changes the CPU
    nodes' CPU limit. Against the state, the report shows what `pulumi up` will do, each resource marked as the
    change, the drift, or both, and the drift itself."""
    main_recording = _write(tmp_path, "main.json", {"stack": "prod", "resources": [r.to_json() for r in prod_stack.resources]})
    export = export_of(prod_stack)
    edit(export, "slurm/nodeset-gpu-h100", lambda inputs: inputs["spec"].update(replicas=3))
    old_image = "ghcr.io/slinkyproject/slurmd:26.05.2-ubuntu24.04"
    edit(export, "slurm/nodeset-cpu", lambda inputs: inputs["spec"]["slurmd"].update(image=old_image))
    state = _write(tmp_path, "prod-state.json", export)
    text = (REPO / "Pulumi.prod.yaml").read_text()
    head = tmp_path / "Pulumi.prod.yaml"
    assert '        cpu: "60"\n' in text
    head.write_text(text.replace('        cpu: "60"\n', '        cpu: "58"\n', 1))
    args = ["diff", "--stack", "prod", "--config", str(head), "--against", str(state), "--drift-against", str(main_recording)]
    assert main([*args, "--format", "json", "--out", str(tmp_path / "r.json")]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    origins = {r["name"]: r["origin"] for r in report["resources"]}
    assert origins["NodeSet slurm/gpu-h100"] == "drift"
    assert origins["NodeSet slurm/cpu"] == "change+drift"
    assert report["base"]["kind"] == "state" and report["drift"]["against"] == "main.json"
    drifted = {d["name"]: d["changed"] for d in report["drift"]["resources"]}
    assert drifted["NodeSet slurm/gpu-h100"] == "spec.replicas: 4 → 3"
    assert old_image in drifted["NodeSet slurm/cpu"]
    gpu = next(r for r in report["resources"] if r["name"] == "NodeSet slurm/gpu-h100")
    assert gpu["changed"] == "spec.replicas: 3 → 4"  # what `pulumi up` does: back to main's 4
    assert "drifted from main.json" in report["summary"]
    capsys.readouterr()
    assert main([*args, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "**Drift: the deployed state differs from main.json in 2 resources**" in markdown
    assert "- rolling-drain: ~ NodeSet slurm/cpu (change+drift): " in markdown
    assert str(tmp_path) not in markdown


def test_drift_against_needs_a_state_base(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--stack", "prod", "--against", "HEAD", "--drift-against", "HEAD"]) == 2
    assert "--drift-against needs a deployed-state base" in capsys.readouterr().err


def test_secrets_in_a_state_exported_with_show_secrets_are_compared_as_the_recording_keeps_them(
    prod_stack: RecordedStack, tmp_path: Path
) -> None:
    export = export_of(prod_stack, show_secrets=True)
    base = load_base(str(_write(tmp_path, "s.json", export)), "prod")
    assert base.export is not None and base.export.encrypted == {}
    head = State.from_recorded(prod_stack, "head")
    assert make_plan(base, head).changes == []
    secret = next(r for r in base.resources if r["type"] == "kubernetes:core/v1:Secret" and r["inputs"].get("stringData"))
    assert set(secret["inputs"]["stringData"].values()) == {"[secret]"}
    raw = json.dumps(export)
    assert "MOCKSECRET" in raw and "MOCKSECRET" not in json.dumps(base.resources)
    head_edited = copy.deepcopy(head)
    for resource in head_edited.resources:
        if resource["name"] == secret["name"]:
            resource["inputs"]["stringData"]["added.key"] = "[secret]"
    (change,) = make_plan(base, head_edited).changes
    assert change.op == "replace" and assess(make_plan(base, head_edited)).effects is not None
