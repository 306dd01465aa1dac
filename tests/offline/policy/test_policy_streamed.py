"""`offline check` hands each resource to the policy packs while the program still registers the others
(offline/policy/check.py `StreamedCheck`, fed by `run_program`'s `on_resource`): the answers and everything
printed must be those of `check_stack` over the finished recording, and anything that goes wrong must
leave the report to `check_stack`."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from offline.policy.packs import PackSpec
from offline.policy.session import EXIT_OK, EXIT_POLICY, check_stack
from offline.policy.stream import StreamedCheck
from offline.program.engine import RecordedResource, run_program
from offline.program.stackfile import read_stack_file
from tests.helpers import REPO, write_variant
from tests.offline.policy.test_policy_protocol import PACKS, root_app_on_a_branch

pytestmark = pytest.mark.policy_protocol


def _variant(config: dict[str, Any]) -> None:
    """What both policy configs flag: the root app on a branch (prod's mandatory git-revisions-pinned) and a NodeSet
    without disruption protection (nodeset-disruption-protection: advisory in dev, mandatory in prod)."""
    root_app_on_a_branch(config)
    config["hpcforge:slurm"]["nodesets"][0]["workloadDisruptionProtection"] = False


def _packs(config: str) -> list[PackSpec]:
    return [PackSpec(REPO / "policies" / name, REPO / "policies" / "config" / f"{config}.json") for name in PACKS]


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
@pytest.mark.parametrize(
    ("variant", "config", "exit_code"), [(False, "prod", EXIT_OK), (True, "prod", EXIT_POLICY), (True, "dev", EXIT_OK)]
)
def test_streamed_check_answers_as_check_stack(tmp_path: Path, preview: bool, variant: bool, config: str, exit_code: int) -> None:
    path = write_variant(tmp_path, "prod", _variant) if variant else REPO / "Pulumi.prod.yaml"
    stack_file = read_stack_file(path, name="prod")
    specs = _packs(config)
    streamed = StreamedCheck(stack_file, specs)
    seen: list[RecordedResource] = []

    def add(resource: RecordedResource) -> None:
        seen.append(resource)
        streamed.add(resource)

    recorded = run_program(stack_file, REPO, preview=preview, on_resource=add)
    assert len(seen) == len(recorded.resources) and all(a is b for a, b in zip(seen, recorded.resources, strict=True))
    out, err = io.StringIO(), io.StringIO()
    result = streamed.finish(recorded, out=out, err=err)
    assert result is not None, "the streamed check fell back"

    batch_out, batch_err = io.StringIO(), io.StringIO()
    batch = check_stack(recorded, stack_file, specs, out=batch_out, err=batch_err)
    assert result.exit_code == batch.exit_code == exit_code, out.getvalue()
    assert result.diagnostics == batch.diagnostics
    assert result.packs == batch.packs and result.analyzed == batch.analyzed == len(recorded.resources) + 1
    assert out.getvalue() == batch_out.getvalue()
    assert err.getvalue() == batch_err.getvalue()
    if variant:
        assert result.diagnostics, "the variant must give the comparison something to compare"


def test_a_streamed_check_that_cannot_start_a_pack_leaves_the_report_to_check_stack(tmp_path: Path) -> None:
    broken = tmp_path / "broken-pack"
    broken.mkdir()
    (broken / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (broken / "__main__.py").write_text("raise SystemExit('no policies here')\n")
    stack_file = read_stack_file(REPO / "Pulumi.dev.yaml", name="dev")
    streamed = StreamedCheck(stack_file, [PackSpec(broken), *_packs("dev")[:1]])
    recorded = run_program(stack_file, REPO, on_resource=streamed.add)
    out, err = io.StringIO(), io.StringIO()
    assert streamed.finish(recorded, out=out, err=err) is None
    assert out.getvalue() == "" and err.getvalue() == ""


def test_a_streamed_check_with_a_refused_policy_config_leaves_the_report_to_check_stack(tmp_path: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text('{"nodeset-rolling-update-bounded": {"enforcementLevel": "mandatory", "maxUnavailable": 3}}')
    stack_file = read_stack_file(REPO / "Pulumi.dev.yaml", name="dev")
    specs = [PackSpec(REPO / "policies" / "slurm-contract", config)]
    streamed = StreamedCheck(stack_file, specs)
    recorded = run_program(stack_file, REPO, on_resource=streamed.add)
    out, err = io.StringIO(), io.StringIO()
    assert streamed.finish(recorded, out=out, err=err) is None
    assert out.getvalue() == "" and err.getvalue() == ""
    batch_err = io.StringIO()
    assert check_stack(recorded, stack_file, specs, out=io.StringIO(), err=batch_err).errors
    assert "validating policy config" in batch_err.getvalue()


def test_an_abandoned_streamed_check_stops(tmp_path: Path) -> None:
    stack_file = read_stack_file(REPO / "Pulumi.dev.yaml", name="dev")
    streamed = StreamedCheck(stack_file, _packs("dev"))
    answer = streamed.abandon()
    assert streamed.process.returncode == 0
    assert answer is not None and not answer.analyzed
    # Each pack's peak memory is read when it is stopped, if it still runs: all three were started and stopped.
    assert sorted(answer.memory) == ["hpcforge-gitops-drift", "hpcforge-security", "hpcforge-slurm-contract"]
