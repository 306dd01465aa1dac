"""scripts/ci/impact_gate.py: the gate of pull-request.yml and deploy.yml around `./hpcforge diff`.

`offline diff` (another module) is stood in for by a script that answers as its contract says: exit 0
fine or acknowledged, 1 gated, 2 config/usage; the markdown report in --out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

GATE = REPO / "scripts" / "ci" / "impact_gate.py"

FAKE_DIFF = """\
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
assert args[0] == "diff", args
stack = args[args.index("--stack") + 1]
acknowledged = "--acknowledge" in args
call = {"stack": stack, "against": args[args.index("--against") + 1], "acknowledge": acknowledged,
        "format": args[args.index("--format") + 1]}
if "--drift-against" in args:
    call["drift_against"] = args[args.index("--drift-against") + 1]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(call) + "\\n")
verdict = json.loads(os.environ["FAKE_VERDICTS"])[stack]
if verdict == "error":
    print(f"hpcforge:slurm.partitions[1]: bad in {stack}", file=sys.stderr)
    sys.exit(2)
size = int(os.environ.get("FAKE_SIZE", "0"))
Path(args[args.index("--out") + 1]).write_text(f"**{stack}**: {verdict}\\n" + "x" * size)
gated = verdict == "outage"
gate = {"exit": int(gated and not acknowledged), "status": ("acknowledged" if acknowledged else "gated") if gated else "pass",
        "reasons": ["the worst impact is outage"] if gated else []}
Path(args[args.index("--json") + 1]).write_text(json.dumps({"stack": stack, "summary": f"{stack}: {verdict}", "gate": gate}))
sys.exit(1 if verdict == "outage" and not acknowledged else 0)
"""


def gate(
    tmp_path: Path, verdicts: dict[str, str], *extra: str, body: str | None = None, size: int = 0
) -> tuple[int, str, list[dict]]:
    fake = tmp_path / "fake_hpcforge.py"
    fake.write_text(FAKE_DIFF)
    log = tmp_path / "log.jsonl"
    log.write_text("")
    argv = [sys.executable, str(GATE), "--against", "abc123", "--command", f"{sys.executable} {fake}"]
    argv += ["--summary", str(tmp_path / "summary.md"), "--comment", str(tmp_path / "comment.md"), *extra]
    if body is not None:
        (tmp_path / "body.txt").write_text(body)
        argv += ["--body-file", str(tmp_path / "body.txt")]
    env = {"FAKE_LOG": str(log), "FAKE_VERDICTS": json.dumps(verdicts), "FAKE_SIZE": str(size), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, env=env)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    return result.returncode, result.stdout, calls


def test_fine_changes_pass_and_every_stack_is_diffed_against_the_base(tmp_path: Path) -> None:
    rc, report, calls = gate(tmp_path, {"dev": "none", "prod": "reload"})
    assert rc == 0
    assert calls == [
        {"stack": "dev", "against": "abc123", "acknowledge": False, "format": "markdown"},
        {"stack": "prod", "against": "abc123", "acknowledge": False, "format": "markdown"},
    ]
    assert "## Change impact against `abc123`: fine" in report and "**prod**: reload" in report
    assert (tmp_path / "summary.md").read_text() == report
    assert (tmp_path / "comment.md").read_text() == "<!-- hpcforge-impact -->\n" + report


def test_an_outage_is_gated_until_acknowledged(tmp_path: Path) -> None:
    rc, report, calls = gate(tmp_path, {"dev": "none", "prod": "outage"})
    assert rc == 1 and "### `prod`: GATED: not acknowledged" in report
    assert "_Gate (gated): the worst impact is outage._" in report  # from the JSON report
    assert "add the label `impact-acknowledged` or a line `Impact-Acknowledged: <reason>`" in report
    assert not any(call["acknowledge"] for call in calls)


@pytest.mark.parametrize(
    ("extra", "body", "why"),
    [
        (["--label-acknowledged", "true"], None, "acknowledged by the label `impact-acknowledged`"),
        ([], "Moves the pool.\r\n\r\nImpact-Acknowledged: maintenance window 2026-12-01\r\n", "maintenance window 2026-12-01"),
        (["--reason", "redeploy after the outage"], None, "acknowledged when the deploy was started: redeploy after the outage"),
    ],
    ids=["label", "description", "dispatch-input"],
)
def test_a_label_a_description_line_or_a_dispatch_reason_acknowledges(
    tmp_path: Path, extra: list[str], body: str | None, why: str
) -> None:
    rc, report, calls = gate(tmp_path, {"dev": "none", "prod": "outage"}, *extra, body=body)
    assert rc == 0 and all(call["acknowledge"] for call in calls)
    assert why in report


@pytest.mark.parametrize(
    "body",
    ["Impact-Acknowledged:", "Impact-Acknowledged:    \n", "We have not Impact-Acknowledged: this", "impact acknowledged: yes"],
)
def test_an_empty_or_embedded_acknowledgement_line_does_not_count(tmp_path: Path, body: str) -> None:
    rc, _, calls = gate(tmp_path, {"dev": "none", "prod": "outage"}, body=body)
    assert rc == 1 and not any(call["acknowledge"] for call in calls)


def test_a_diff_that_cannot_run_fails_with_its_message(tmp_path: Path) -> None:
    rc, report, _ = gate(tmp_path, {"dev": "error", "prod": "outage"}, "--label-acknowledged", "true")
    assert rc == 2
    assert "### `dev`: ERROR: the diff could not run" in report and "hpcforge:slurm.partitions[1]: bad in dev" in report


def test_a_stack_with_its_deployed_state_is_diffed_against_it_with_the_drift_and_the_comment_says_which_base(
    tmp_path: Path,
) -> None:
    state = tmp_path / "prod-state.json"
    state.write_text("{}")
    rc, report, calls = gate(
        tmp_path,
        {"dev": "none", "prod": "reload"},
        "--state",
        f"prod={state}",
        "--state",
        f"dev={tmp_path / 'not-exported.json'}",
        "--no-state-reason",
        "the dev stack could not be exported",
        "--reports",
        str(tmp_path / "reports"),
    )
    assert rc == 0
    assert calls[0] == {"stack": "dev", "against": "abc123", "acknowledge": False, "format": "markdown"}
    assert calls[1] == {
        "stack": "prod",
        "against": str(state),
        "drift_against": "abc123",
        "acknowledge": False,
        "format": "markdown",
    }
    assert "_Base: `abc123`, not the deployed state (the dev stack could not be exported)._" in report
    assert "_Base: the deployed state (`pulumi stack export`), with its drift from `abc123`._" in report
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["dev.json", "dev.md", "prod.json", "prod.md"]


def test_the_comment_fits_github_s_limit_and_says_what_was_cut(tmp_path: Path) -> None:
    rc, report, _ = gate(tmp_path, {"dev": "none", "prod": "reload"}, size=40_000)
    comment = (tmp_path / "comment.md").read_text()
    assert rc == 0 and len(report) > 65_536
    assert len(comment) <= 65_536 and comment.startswith("<!-- hpcforge-impact -->\n## Change impact against `abc123`: fine")
    assert comment.rstrip().endswith("the rest is in the job summary and the `impact-report` artifact._")
    assert (tmp_path / "summary.md").read_text() == report  # the job summary keeps it whole
